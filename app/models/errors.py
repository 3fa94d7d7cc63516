"""The model store's base error (its own module, so the store's parts can share it without a cycle)."""

from __future__ import annotations


class StoreError(Exception):
    pass
