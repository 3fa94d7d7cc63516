"""Moved to app.core.notice (frames and sessions need it too); this name goes once every import moved."""

from app.core.notice import Notice

__all__ = ["Notice"]
