"""textkit: small string helpers."""

__version__ = "0.3.1"
