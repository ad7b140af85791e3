"""memdir's version, in one place (the package and the servers report it)."""

__version__ = "0.1.0"
