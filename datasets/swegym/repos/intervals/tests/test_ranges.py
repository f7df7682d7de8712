import unittest

from intervals.ranges import (contains, gaps, intersect, is_empty, length, make, merge, overlaps, shift,
                              split_at, total_covered)


class BasicTests(unittest.TestCase):
    def test_make_rejects_reversed(self):
        with self.assertRaises(ValueError):
            make(5, 2)

    def test_length_and_empty(self):
        self.assertEqual(length((3, 8)), 5)
        self.assertTrue(is_empty((4, 4)))
        self.assertFalse(is_empty((4, 5)))

    def test_contains_is_half_open(self):
        self.assertTrue(contains((1, 5), 1))
        self.assertFalse(contains((1, 5), 5))

    def test_shift(self):
        self.assertEqual(shift((1, 4), 3), (4, 7))


class OverlapTests(unittest.TestCase):
    def test_overlap(self):
        self.assertTrue(overlaps((1, 5), (4, 9)))

    def test_touching_do_not_overlap(self):
        self.assertFalse(overlaps((1, 5), (5, 9)))

    def test_intersect(self):
        self.assertEqual(intersect((1, 5), (3, 9)), (3, 5))
        self.assertIsNone(intersect((1, 3), (3, 9)))


class MergeTests(unittest.TestCase):
    def test_merge_overlapping(self):
        self.assertEqual(merge([(5, 8), (1, 3), (2, 4)]), [(1, 4), (5, 8)])

    def test_merge_touching(self):
        self.assertEqual(merge([(1, 3), (3, 6)]), [(1, 6)])

    def test_merge_nested(self):
        self.assertEqual(merge([(1, 10), (2, 3)]), [(1, 10)])

    def test_total_covered(self):
        self.assertEqual(total_covered([(0, 2), (1, 4), (10, 11)]), 5)


class GapTests(unittest.TestCase):
    def test_gaps(self):
        self.assertEqual(gaps([(2, 4), (6, 7)], (0, 10)), [(0, 2), (4, 6), (7, 10)])

    def test_no_gaps(self):
        self.assertEqual(gaps([(0, 10)], (0, 10)), [])

    def test_split(self):
        self.assertEqual(split_at((0, 10), 4), [(0, 4), (4, 10)])
        self.assertEqual(split_at((0, 10), 0), [(0, 10)])
