import unittest

from caldate.calendar import (InvalidDate, add_days, day_of_year, days_in_month, format_iso,
                              is_leap_year, is_weekend, parse_iso, quarter)


class LeapYearTests(unittest.TestCase):
    def test_ordinary_years(self):
        self.assertTrue(is_leap_year(2024))
        self.assertFalse(is_leap_year(2023))

    def test_centuries(self):
        self.assertFalse(is_leap_year(1900))
        self.assertTrue(is_leap_year(2000))


class MonthTests(unittest.TestCase):
    def test_february(self):
        self.assertEqual(days_in_month(2024, 2), 29)
        self.assertEqual(days_in_month(2023, 2), 28)

    def test_december(self):
        self.assertEqual(days_in_month(2023, 12), 31)

    def test_bad_month(self):
        with self.assertRaises(InvalidDate):
            days_in_month(2023, 13)


class DayOfYearTests(unittest.TestCase):
    def test_first_day(self):
        self.assertEqual(day_of_year((2023, 1, 1)), 1)

    def test_after_leap_day(self):
        self.assertEqual(day_of_year((2024, 3, 1)), 61)

    def test_last_day(self):
        self.assertEqual(day_of_year((2023, 12, 31)), 365)


class AddDaysTests(unittest.TestCase):
    def test_within_month(self):
        self.assertEqual(add_days((2023, 5, 10), 5), (2023, 5, 15))

    def test_across_year_end(self):
        self.assertEqual(add_days((2023, 12, 30), 3), (2024, 1, 2))

    def test_backwards(self):
        self.assertEqual(add_days((2024, 3, 1), -1), (2024, 2, 29))

    def test_to_month_end(self):
        self.assertEqual(add_days((2023, 4, 29), 1), (2023, 4, 30))


class IsoTests(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_iso("2023-07-04"), (2023, 7, 4))

    def test_parse_invalid_day(self):
        with self.assertRaises(InvalidDate):
            parse_iso("2023-02-29")

    def test_format(self):
        self.assertEqual(format_iso((987, 3, 9)), "0987-03-09")


class MiscTests(unittest.TestCase):
    def test_quarter(self):
        self.assertEqual(quarter((2023, 3, 31)), 1)
        self.assertEqual(quarter((2023, 4, 1)), 2)
        self.assertEqual(quarter((2023, 12, 1)), 4)

    def test_weekend(self):
        self.assertTrue(is_weekend(5))
        self.assertFalse(is_weekend(4))
