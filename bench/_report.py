"""How every benchmark reports: a table of figures, each beside its goal and whether it was met,
and optionally the same as a JSON receipt with the machine it ran on."""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import TextIO

from app.commands.bench import cpu_name
from app.core.figures import Spread


@dataclass(frozen=True)
class Row:
    name: str
    figure: str
    goal: str = ""  # empty: reported, no goal
    met: bool | None = None  # None: no goal, or nothing to judge


def spread_text(s: Spread, unit: str = "ms", digits: int = 2) -> str:
    """`median (min–max, n, p95)`, the form every receipt quotes."""
    f = f"{{:.{digits}f}}"
    return f"{f.format(s.median)} {unit} ({f.format(s.low)}–{f.format(s.high)}, n={s.n}, p95 {f.format(s.p95)})"


def add_receipt_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--receipt", type=Path, default=None, help="also write the figures as JSON to this file")


def machine() -> str:
    try:
        mnn = metadata.version("MNN")
    except metadata.PackageNotFoundError:
        mnn = "not installed"
    return f"{platform.system()} {platform.release()}, {cpu_name()}, Python {platform.python_version()}, MNN {mnn}"


def report(out: TextIO, title: str, rows: Sequence[Row], receipt: Path | None = None, notes: Sequence[str] = ()) -> int:
    """Print the table; write the receipt if asked. Returns 0 when every goal with a verdict was met, else 1."""
    width = max(len(r.name) for r in rows)
    fig_width = max(len(r.figure) for r in rows)
    out.write(f"{title}\n{machine()}\n")
    for r in rows:
        verdict = "" if r.met is None else ("  met" if r.met else "  MISSED")
        goal = f"   [goal {r.goal}{verdict}]" if r.goal else ""
        out.write(f"  {r.name:<{width}}  {r.figure:<{fig_width}}{goal}\n")
    for note in notes:
        out.write(f"  note: {note}\n")
    out.flush()
    if receipt is not None:
        receipt.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "bench": title,
            "machine": machine(),
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": " ".join(["python -m bench." + Path(sys.argv[0]).stem, *sys.argv[1:]]),
            "rows": [asdict(r) for r in rows],
            "notes": list(notes),
        }
        receipt.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0 if all(r.met is not False for r in rows) else 1
