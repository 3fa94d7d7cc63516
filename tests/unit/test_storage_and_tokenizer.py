from __future__ import annotations

from pathlib import Path

import pytest

from app.engine.tokenizer_header import TokenizerHeaderError, read_tokenizer_header
from app.storage.locations import data_dir, engine_cache_dir, models_dir


def test_flet_storage_wins_over_platformdirs(tmp_path: Path) -> None:
    env = {"FLET_APP_STORAGE_DATA": str(tmp_path / "d"), "FLET_APP_STORAGE_CACHE": str(tmp_path / "c")}
    assert data_dir(env) == tmp_path / "d"
    assert models_dir(env) == tmp_path / "d" / "models"
    assert engine_cache_dir("m", "cpu", env) != engine_cache_dir("m", "metal", env)
    assert engine_cache_dir("m", "cpu", env) != engine_cache_dir("n", "cpu", env)


def test_platformdirs_without_flet() -> None:
    assert "Keyframe" in str(data_dir({}))


def test_tokenizer_header_text_format(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.txt"
    path.write_text("430 3\n4 2 1\n10 11 12 13 12 13 7\nvocab...\n")
    header = read_tokenizer_header(path)
    assert header.special_ids == (10, 11, 12, 13)
    assert header.stop_ids == (12, 13)
    assert header.prefix_ids == (7,)


@pytest.mark.parametrize("content", [b"", b"hello\n", b"999 1\n0 0 0\n\n", b"430 3\n2 1 0\n5\n"])
def test_tokenizer_header_rejects_other_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "t"
    path.write_bytes(content)
    with pytest.raises(TokenizerHeaderError):
        read_tokenizer_header(path)
