"""The folder MNN keeps its caches in (`tmp_path`): the app's own, or a private temporary one.

MNN's cache is an optimisation. A cache folder that cannot be written (left root-owned by one `sudo`
run, a read-only home) stopped all analysis with "[Errno 13] Permission denied"; now the model loads
with a private folder that lives as long as the engine, and a note says why once.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


def usable_cache(wanted: Path) -> tuple[Path, str]:
    """(`wanted`, "") when it can be made and written, else (a new private temporary folder, the note
    that says so). The caller removes a temporary folder with `remove_temporary`."""
    try:
        wanted.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=wanted):  # writable, not only present
            pass
        return wanted, ""
    except OSError as exc:
        fallback = Path(tempfile.mkdtemp(prefix="keyframe-mnn-"))  # 0700: this user's only
        where, why = exc.filename or wanted, exc.strerror or str(exc)
        return fallback, f"the cache folder {where} cannot be written ({why}); a temporary one is used this time"


def remove_temporary(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
