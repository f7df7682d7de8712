import unittest

from textkit.core import (count_words, initials, is_palindrome, pad_left, slugify, strip_prefix,
                          title_case, truncate, wrap_words)


class SlugifyTests(unittest.TestCase):
    def test_basic(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_punctuation(self):
        self.assertEqual(slugify("  Rust, Python & Go!  "), "rust-python-go")

    def test_separator(self):
        self.assertEqual(slugify("a b c", sep="_"), "a_b_c")


class TruncateTests(unittest.TestCase):
    def test_short_text_is_kept(self):
        self.assertEqual(truncate("hello", 5), "hello")

    def test_cut_with_ellipsis(self):
        self.assertEqual(truncate("hello world", 8), "hello...")

    def test_tiny_width(self):
        self.assertEqual(truncate("hello", 2), "..")


class WrapTests(unittest.TestCase):
    def test_exact_width(self):
        self.assertEqual(wrap_words("aa bb cc", 5), ["aa bb", "cc"])

    def test_long_word(self):
        self.assertEqual(wrap_words("abcdefgh ij", 4), ["abcdefgh", "ij"])

    def test_empty(self):
        self.assertEqual(wrap_words("", 10), [])


class TitleCaseTests(unittest.TestCase):
    def test_small_words(self):
        self.assertEqual(title_case("the lord of the rings"), "The Lord of the Rings")

    def test_mixed_case(self):
        self.assertEqual(title_case("hELLO wORLD"), "Hello World")


class PaddingTests(unittest.TestCase):
    def test_pad(self):
        self.assertEqual(pad_left("7", 3, "0"), "007")

    def test_no_pad_when_wide(self):
        self.assertEqual(pad_left("1234", 3), "1234")


class PrefixTests(unittest.TestCase):
    def test_strip(self):
        self.assertEqual(strip_prefix("v1.2.3", "v"), "1.2.3")

    def test_absent_prefix(self):
        self.assertEqual(strip_prefix("1.2.3", "v"), "1.2.3")

    def test_empty_prefix(self):
        self.assertEqual(strip_prefix("abc", ""), "abc")


class MiscTests(unittest.TestCase):
    def test_count_words(self):
        self.assertEqual(count_words("  one two\tthree \n"), 3)

    def test_palindrome(self):
        self.assertTrue(is_palindrome("A man, a plan, a canal: Panama"))
        self.assertFalse(is_palindrome("abca"))

    def test_initials(self):
        self.assertEqual(initials("ada  lovelace"), "A.L.")
