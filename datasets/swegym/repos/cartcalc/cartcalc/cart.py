"""A shopping cart. All amounts are integers in cents."""

FREE_SHIPPING_FROM = 5000
SHIPPING_FEE = 499
# (minimum subtotal, percent off), highest threshold first
DISCOUNT_TIERS = [(20000, 15), (10000, 10), (5000, 5)]


class CartError(ValueError):
    """Raised for an invalid cart operation."""


class Cart:
    def __init__(self):
        self.items = {}

    def add(self, name, price, quantity=1):
        if quantity <= 0:
            raise CartError("quantity must be positive")
        if price < 0:
            raise CartError("price must not be negative")
        if name in self.items:
            old_price, old_quantity = self.items[name]
            self.items[name] = (price, old_quantity + quantity)
        else:
            self.items[name] = (price, quantity)

    def remove(self, name, quantity=None):
        """Remove `quantity` units of `name` (all of them when None)."""
        if name not in self.items:
            raise CartError("no item named %r" % name)
        price, have = self.items[name]
        if quantity is None or quantity >= have:
            del self.items[name]
        else:
            self.items[name] = (price, have - quantity)

    def item_count(self):
        return sum(q for _, q in self.items.values())

    def subtotal(self):
        return sum(p * q for p, q in self.items.values())

    def discount(self):
        """The tier discount on the subtotal, rounded down to a cent."""
        sub = self.subtotal()
        for threshold, percent in DISCOUNT_TIERS:
            if sub >= threshold:
                return sub * percent // 100
        return 0

    def shipping(self):
        if not self.items:
            return 0
        if self.subtotal() - self.discount() >= FREE_SHIPPING_FROM:
            return 0
        return SHIPPING_FEE

    def tax(self, rate_percent):
        """Tax on the discounted subtotal, rounded half up to a cent."""
        base = self.subtotal() - self.discount()
        return (base * rate_percent + 50) // 100

    def total(self, rate_percent=0):
        return self.subtotal() - self.discount() + self.tax(rate_percent) + self.shipping()

    def most_expensive(self):
        """Name of the item with the highest unit price (first added wins ties)."""
        if not self.items:
            return None
        best = None
        for name, (price, _) in self.items.items():
            if best is None or price > self.items[best][0]:
                best = name
        return best


def apply_coupon(amount, code):
    """`SAVE10` takes 10 percent off, `MINUS500` takes 5.00 off (never below zero)."""
    code = code.strip().upper()
    if code == "SAVE10":
        return amount - amount // 10
    if code == "MINUS500":
        return max(0, amount - 500)
    raise CartError("unknown coupon %r" % code)
