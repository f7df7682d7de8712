"""caldate: calendar arithmetic on (year, month, day) tuples."""

__version__ = "2.0.2"
