"""The web page is only served when it can keep its promises (and when Flet's server is there)."""

from __future__ import annotations

import importlib.util

import pytest

from app.ui.shell import web_shell


def test_the_shipped_page_passes_the_check() -> None:
    web_shell.check()


def test_without_flets_web_server_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "flet_web" else real(name, *a))
    with pytest.raises(web_shell.WebShellError, match=r"desktop extra.*pip install -e '\.\[desktop\]'"):
        web_shell.check()
