"""intervals: half-open integer intervals."""

__version__ = "1.1.0"
