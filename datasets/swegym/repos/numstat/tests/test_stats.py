import unittest

from numstat.stats import (EmptyDataError, clamp, mean, median, mode, moving_average, normalize,
                           percentile, value_range, variance)


class CentralTests(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_mean_empty(self):
        with self.assertRaises(EmptyDataError):
            mean([])

    def test_median_odd(self):
        self.assertEqual(median([5, 1, 3]), 3)

    def test_median_even(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_mode_tie(self):
        self.assertEqual(mode([3, 1, 3, 1, 2]), 1)


class SpreadTests(unittest.TestCase):
    def test_sample_variance(self):
        self.assertEqual(variance([2, 4, 4, 4, 5, 5, 7, 9]), 32 / 7)

    def test_population_variance(self):
        self.assertEqual(variance([2, 4, 4, 4, 5, 5, 7, 9], sample=False), 4.0)

    def test_variance_needs_two(self):
        with self.assertRaises(EmptyDataError):
            variance([1])

    def test_range(self):
        self.assertEqual(value_range([3, -2, 8]), 10)


class ClampTests(unittest.TestCase):
    def test_inside(self):
        self.assertEqual(clamp(5, 0, 10), 5)

    def test_below_and_above(self):
        self.assertEqual(clamp(-3, 0, 10), 0)
        self.assertEqual(clamp(12, 0, 10), 10)

    def test_bounds_are_inclusive(self):
        self.assertEqual(clamp(10, 0, 10), 10)

    def test_bad_bounds(self):
        with self.assertRaises(ValueError):
            clamp(1, 5, 2)


class PercentileTests(unittest.TestCase):
    def test_median_rank(self):
        self.assertEqual(percentile([15, 20, 35, 40, 50], 40), 20)

    def test_extremes(self):
        self.assertEqual(percentile([3, 1, 2], 0), 1)
        self.assertEqual(percentile([3, 1, 2], 100), 3)

    def test_out_of_range(self):
        with self.assertRaises(ValueError):
            percentile([1, 2], 101)


class SeriesTests(unittest.TestCase):
    def test_moving_average(self):
        self.assertEqual(moving_average([1, 2, 3, 4], 2), [1.5, 2.5, 3.5])

    def test_window_equal_to_length(self):
        self.assertEqual(moving_average([2, 4], 2), [3.0])

    def test_normalize(self):
        self.assertEqual(normalize([10, 20, 30]), [0.0, 0.5, 1.0])

    def test_normalize_constant(self):
        self.assertEqual(normalize([4, 4]), [0.0, 0.0])
