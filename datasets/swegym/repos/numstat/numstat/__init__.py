"""numstat: descriptive statistics for plain lists."""

__version__ = "1.4.0"
