import unittest

from urlkit.urls import (build_query, host_of, is_absolute, join_path, parse_query, port_of, quote,
                         scheme_of, strip_fragment, unquote)


class QuoteTests(unittest.TestCase):
    def test_quote(self):
        self.assertEqual(quote("a b/c"), "a%20b%2Fc")

    def test_quote_unicode(self):
        self.assertEqual(quote("é"), "%C3%A9")

    def test_unquote(self):
        self.assertEqual(unquote("a%20b%2Fc"), "a b/c")

    def test_unquote_plus_is_kept(self):
        self.assertEqual(unquote("a+b"), "a+b")


class QueryTests(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_query("?a=1&b=x%20y"), {"a": "1", "b": "x y"})

    def test_parse_repeated_and_empty(self):
        self.assertEqual(parse_query("a=1&&a=2&c"), {"a": "2", "c": ""})

    def test_build(self):
        self.assertEqual(build_query({"q": "rust lang", "page": 2}), "page=2&q=rust%20lang")


class PathTests(unittest.TestCase):
    def test_join(self):
        self.assertEqual(join_path("https://x.org/api/", "/v1/", "users"), "https://x.org/api/v1/users")

    def test_join_root(self):
        self.assertEqual(join_path("/", ""), "/")

    def test_strip_fragment(self):
        self.assertEqual(strip_fragment("/a#top"), "/a")


class HostTests(unittest.TestCase):
    def test_scheme(self):
        self.assertEqual(scheme_of("HTTPS://x.org"), "https")
        self.assertIsNone(scheme_of("/relative"))
        self.assertFalse(is_absolute("x.org/a"))

    def test_host(self):
        self.assertEqual(host_of("https://user@Example.COM:8443/a"), "example.com")

    def test_ports(self):
        self.assertEqual(port_of("https://x.org/a"), 443)
        self.assertEqual(port_of("http://x.org:8080"), 8080)
