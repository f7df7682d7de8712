"""cartcalc: shopping cart arithmetic in integer cents."""

__version__ = "0.9.0"
