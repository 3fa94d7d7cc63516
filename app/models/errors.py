"""The model store's errors (their own module, so the store's parts can share them without a cycle)."""

from __future__ import annotations


class StoreError(Exception):
    pass


class NoMirror(StoreError):
    """Neither the manifest nor the user names a server to download the model from."""

    def __init__(self, model_id: str) -> None:
        super().__init__(f"{model_id}: no mirror to download from")
