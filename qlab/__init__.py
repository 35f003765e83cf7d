"""qlab: reproducible experiments for queue disciplines."""

__version__ = "0.1.0"
