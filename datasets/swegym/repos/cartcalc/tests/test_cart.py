import unittest

from cartcalc.cart import Cart, CartError, apply_coupon


def cart_with(*items):
    c = Cart()
    for name, price, quantity in items:
        c.add(name, price, quantity)
    return c


class AddRemoveTests(unittest.TestCase):
    def test_add_merges_quantities(self):
        c = cart_with(("pen", 150, 2), ("pen", 150, 3))
        self.assertEqual(c.item_count(), 5)

    def test_add_rejects_zero_quantity(self):
        with self.assertRaises(CartError):
            Cart().add("pen", 150, 0)

    def test_remove_some(self):
        c = cart_with(("pen", 150, 4))
        c.remove("pen", 1)
        self.assertEqual(c.item_count(), 3)

    def test_remove_all_units(self):
        c = cart_with(("pen", 150, 2))
        c.remove("pen", 2)
        self.assertEqual(c.items, {})

    def test_remove_unknown(self):
        with self.assertRaises(CartError):
            Cart().remove("pen")


class PriceTests(unittest.TestCase):
    def test_subtotal(self):
        self.assertEqual(cart_with(("pen", 150, 2), ("book", 1200, 1)).subtotal(), 1500)

    def test_discount_tiers(self):
        self.assertEqual(cart_with(("tv", 10000, 1)).discount(), 1000)
        self.assertEqual(cart_with(("tv", 25000, 1)).discount(), 3750)

    def test_no_discount_below_tiers(self):
        self.assertEqual(cart_with(("pen", 4999, 1)).discount(), 0)

    def test_shipping(self):
        self.assertEqual(cart_with(("pen", 100, 1)).shipping(), 499)
        self.assertEqual(Cart().shipping(), 0)

    def test_free_shipping_threshold(self):
        self.assertEqual(cart_with(("lamp", 5300, 1)).shipping(), 0)

    def test_tax_rounds_half_up(self):
        self.assertEqual(cart_with(("pen", 150, 1)).tax(7), 11)

    def test_total(self):
        self.assertEqual(cart_with(("pen", 1000, 2)).total(10), 2000 + 200 + 499)

    def test_most_expensive(self):
        c = cart_with(("pen", 150, 1), ("book", 1200, 1), ("atlas", 1200, 1))
        self.assertEqual(c.most_expensive(), "book")
        self.assertIsNone(Cart().most_expensive())


class CouponTests(unittest.TestCase):
    def test_percent_coupon(self):
        self.assertEqual(apply_coupon(2500, "save10"), 2250)

    def test_fixed_coupon_floor(self):
        self.assertEqual(apply_coupon(300, " MINUS500 "), 0)
        self.assertEqual(apply_coupon(1300, "MINUS500"), 800)

    def test_unknown_coupon(self):
        with self.assertRaises(CartError):
            apply_coupon(100, "FREE")
