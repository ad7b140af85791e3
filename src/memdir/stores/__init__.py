"""Storage backends: one module per backend behind the `Store` protocol."""

from .base import Blob, Change, Record, Store

__all__ = ["Blob", "Change", "Record", "Store"]
