"""Every module logs under the app's logger, whose handlers write keyframe.log.

A logger named `__name__` ("app.ui.practice.latest_only") is outside the `keyframe` hierarchy: its lines,
a worker-restart failure among them, never reached the file, while caplog (on the root) still saw them.
"""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest

from app import logs

APP = Path(__file__).resolve().parents[2] / "app"
ROOT_LOGGER_CALLS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}


def _module_strings(tree: ast.Module) -> dict[str, str]:
    """Module-level `NAME = "text"` assignments (such as logs.LOGGER)."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.update({t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)})
    return found


def _is_logging_attr(func: ast.expr, names: set[str]) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and func.attr in names
        and isinstance(func.value, ast.Name)
        and func.value.id == "logging"
    )


def _logger_name(call: ast.Call, strings: dict[str, str]) -> str | None:
    """The logger a getLogger() call names, when it is a constant; None otherwise (no argument: the root)."""
    if not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return strings.get(arg.id) if isinstance(arg, ast.Name) else None


def _outside_the_app_logger(source: str, where: str) -> list[str]:
    tree = ast.parse(source)
    strings = _module_strings(tree)
    wrong = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if _is_logging_attr(node.func, {"getLogger"}) or (
            isinstance(node.func, ast.Name) and node.func.id == "getLogger"
        ):
            name = _logger_name(node, strings)
            if name is None or not (name == logs.LOGGER or name.startswith(logs.LOGGER + ".")):
                wrong.append(f"{where}:{node.lineno}: getLogger({ast.unparse(node.args[0]) if node.args else ''})")
        elif _is_logging_attr(node.func, ROOT_LOGGER_CALLS):
            wrong.append(f"{where}:{node.lineno}: logging.{ast.unparse(node.func).split('.')[-1]}() on the root logger")
    return wrong


def test_every_module_logs_under_the_app_logger() -> None:
    # app/logs.py sets the handlers up; it names Flet's and asyncio's loggers (logs.LIBRARY_LOGGERS) to
    # send their lines to the app's file, and logs nothing on them itself.
    wrong = [
        line
        for path in sorted(APP.rglob("*.py"))
        if path != APP / "logs.py"
        for line in _outside_the_app_logger(path.read_text(encoding="utf-8"), str(path.relative_to(APP.parent)))
    ]
    assert wrong == []
    here = _outside_the_app_logger((APP / "logs.py").read_text(encoding="utf-8"), "app/logs.py")
    assert len(here) == 2 and all(line.endswith("getLogger(name)") for line in here), here


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("import logging\nlog = logging.getLogger(__name__)\n", 1),
        ("import logging\nlog = logging.getLogger()\n", 1),
        ("import logging\nlog = logging.getLogger('app.x')\n", 1),
        ("import logging\nlogging.warning('x')\n", 1),
        ("from logging import getLogger\nlog = getLogger('keyframe2')\n", 1),
        ("import logging\nlog = logging.getLogger('keyframe.ui')\n", 0),
        ("import logging\nLOGGER = 'keyframe'\nlog = logging.getLogger(LOGGER)\n", 0),
    ],
)
def test_the_check_sees_loggers_outside_the_hierarchy(source: str, found: int) -> None:
    assert len(_outside_the_app_logger(source, "m.py")) == found


def test_a_line_of_each_formerly_stray_module_reaches_keyframe_log(tmp_path: Path) -> None:
    from app.privacy import guard
    from app.ui.models import controller as models_controller
    from app.ui.practice import latest_only

    modules = (guard, latest_only, models_controller)
    logs.setup(folder=tmp_path)
    try:
        for module in modules:
            (logger,) = [v for v in vars(module).values() if isinstance(v, logging.Logger)]
            logger.error("a line from %s", module.__name__)
    finally:
        logs.reset()
    text = (tmp_path / logs.APP_LOG).read_text(encoding="utf-8")
    assert [m.__name__ for m in modules if f"a line from {m.__name__}" in text] == [m.__name__ for m in modules]
