"""The network isolation leaves a user's own permission bits in force.

As a normal user the isolated commands enter a new user namespace, which grants every capability
inside it, CAP_DAC_OVERRIDE over the user's own files among them. These tests run the commands as a
user without capabilities: the test's own uid when it is not root; as root, uid 1000 of a user
namespace made by `unshare` (root's files are that user's own files there, and the interpreter stays
reachable where it sits in a folder only root may enter, such as /root/.pyenv).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import held_out_scenes, write_scenes

pytestmark = pytest.mark.netns

ROOT = Path(__file__).resolve().parents[2]
AS_USER = [] if os.geteuid() != 0 else ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
READ_ONLY = b"kept\n"

# A plain append first (the user may not write the file), then the same after the isolation.
TRY_WRITES = (
    "import os, sys\n"
    "from app.privacy.isolation import isolate_this_process\n"
    "def attempt(stage):\n"
    "    acts = {'write': lambda: open(sys.argv[1], 'ab').close(), 'mkdir': lambda: os.mkdir(sys.argv[2])}\n"
    "    for what, act in acts.items():\n"
    "        try:\n"
    "            act()\n"
    "            print(stage, what, 'done')\n"
    "        except OSError as exc:\n"
    "            print(stage, what, exc.strerror)\n"
    "attempt('outside')\n"
    "print('isolation', isolate_this_process().level)\n"
    "attempt('inside')\n"
)


def _as_user(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AS_USER, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def _read_only_file(path: Path) -> Path:
    path.write_bytes(READ_ONLY)
    path.chmod(0o444)
    return path


def test_the_isolated_process_may_not_write_what_its_user_may_not(netns: None, tmp_path: Path) -> None:
    kept = _read_only_file(tmp_path / "keep.csv")
    closed = tmp_path / "data"
    closed.mkdir(mode=0o555)
    proc = _as_user(sys.executable, "-c", TRY_WRITES, str(kept), str(closed / "sessions"))
    assert proc.returncode == 0, proc.stderr
    denied = "Permission denied"
    assert proc.stdout.splitlines() == [
        f"outside write {denied}",
        f"outside mkdir {denied}",
        "isolation os-isolated",  # the network is still cut ...
        f"inside write {denied}",  # ... and the permission bits still hold
        f"inside mkdir {denied}",
    ]
    assert kept.read_bytes() == READ_ONLY and list(closed.iterdir()) == []


def test_eval_does_not_replace_a_read_only_csv(netns: None, tmp_path: Path) -> None:
    folder = tmp_path / "scenes"
    folder.mkdir()
    write_scenes(folder, held_out_scenes(count_per_kind=1, seed=91)[:1])
    kept = _read_only_file(tmp_path / "keep.csv")
    proc = _as_user(sys.executable, "-m", "app", "eval", str(folder), "--csv", str(kept))
    assert proc.returncode == 1, proc.stderr
    assert "keep.csv: the CSV cannot be written (Permission denied)" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert kept.read_bytes() == READ_ONLY
    assert stat.S_IMODE(kept.stat().st_mode) == 0o444


def test_a_cache_folder_that_cannot_be_written_costs_a_note_not_the_analysis(netns: None, tmp_path: Path) -> None:
    # As left by one `sudo` run: the cache folder is not the user's to write. MNN's cache is an optimisation.
    folder = tmp_path / "scenes"
    folder.mkdir()
    (image,) = (str(p) for p, _ in write_scenes(folder, held_out_scenes(count_per_kind=1, seed=93)[:1]))
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o555)
    env = [f"FLET_APP_STORAGE_DATA={tmp_path / 'data'}", f"FLET_APP_STORAGE_CACHE={cache}"]
    proc = _as_user("env", *env, sys.executable, "-m", "app", "analyze", image)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True
    notes = [line for line in proc.stderr.splitlines() if "cache folder" in line]
    said = f"the cache folder {cache / 'mnn'} cannot be written (Permission denied); a temporary one is used this time"
    assert notes == [f"note: {said}"]
    assert "Traceback" not in proc.stderr and list(cache.iterdir()) == []
