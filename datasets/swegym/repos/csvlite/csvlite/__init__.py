"""csvlite: a small CSV reader."""

__version__ = "0.5.3"
