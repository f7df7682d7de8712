import unittest

from csvlite.reader import (CsvError, column_sum, filter_rows, first_row, parse, records, split_line,
                            to_number)

DATA = "name,city,amount\nAda,London,10\nGrace,New York,2.5\nalan, london ,\n"


class SplitTests(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(split_line("a,b,c"), ["a", "b", "c"])

    def test_quoted_delimiter(self):
        self.assertEqual(split_line('a,"b,c",d'), ["a", "b,c", "d"])

    def test_escaped_quote(self):
        self.assertEqual(split_line('"say ""hi""",x'), ['say "hi"', "x"])

    def test_trailing_empty_field(self):
        self.assertEqual(split_line("a,"), ["a", ""])

    def test_unterminated(self):
        with self.assertRaises(CsvError):
            split_line('"abc')

    def test_other_delimiter(self):
        self.assertEqual(split_line("a;b", ";"), ["a", "b"])


class ParseTests(unittest.TestCase):
    def test_skips_blank_lines(self):
        self.assertEqual(parse("a,b\n\n c,d\n"), [["a", "b"], [" c", "d"]])

    def test_records(self):
        self.assertEqual(records(DATA)[1], {"name": "Grace", "city": "New York", "amount": "2.5"})

    def test_short_rows_are_padded(self):
        self.assertEqual(records("a,b,c\n1,2\n"), [{"a": "1", "b": "2", "c": None}])

    def test_long_row(self):
        with self.assertRaises(CsvError):
            records("a\n1,2\n")


class ValueTests(unittest.TestCase):
    def test_numbers(self):
        self.assertEqual(to_number(" 42 "), 42)
        self.assertEqual(to_number("2.5"), 2.5)
        self.assertIsNone(to_number(""))

    def test_column_sum(self):
        self.assertEqual(column_sum(records(DATA), "amount"), 12.5)

    def test_filter(self):
        self.assertEqual([r["name"] for r in filter_rows(records(DATA), "city", "LONDON")], ["Ada", "alan"])

    def test_first_row(self):
        self.assertEqual(first_row(DATA)["name"], "Ada")
        self.assertIsNone(first_row("a,b\n"))
