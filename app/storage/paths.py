"""Where the app's own read-only resources sit (next to the `app` package)."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MODEL_STORE = PROJECT_ROOT / "model_store"
MANIFESTS = MODEL_STORE / "manifests"
PROFILES = MODEL_STORE / "profiles"
ASSETS = PROJECT_ROOT / "assets"
EXAMPLES = ASSETS / "examples"
# Compared across backends before a non-CPU backend is trusted (any fixed image would do).
REFERENCE_IMAGE = ASSETS / "reference.jpg"
