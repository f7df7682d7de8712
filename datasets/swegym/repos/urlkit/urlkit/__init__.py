"""urlkit: URL helpers."""

__version__ = "0.7.2"
