"""CSV text a spreadsheet opens as data, never as formulas.

Every export the app writes (sessions, rhythm samples, testers' reports) carries text a person
chose: file names, examiners' names and notes. A cell that starts with `=`, `+`, `-`, `@`, a tab
or a carriage return runs as a formula in Excel and LibreOffice (`=HYPERLINK(…)`, `+1+1.avi`), so
such a cell gets a leading `'` as OWASP's "CSV Injection" page recommends; a plain number
(`-0.25`, `1e-3`) is left as it is, since it cannot be a formula. The JSONL export stays exact.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def inert(cell: object) -> object:
    """The cell as a spreadsheet must show it: text that would start a formula gets a leading `'`."""
    if isinstance(cell, str) and cell.startswith(FORMULA_START) and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def table_csv(columns: Sequence[str], rows: Iterable[Mapping[str, object]]) -> str:
    """RFC 4180 text: CRLF line ends, so a name holding CR or LF is quoted (csv quotes only the
    terminator's characters), every cell made inert; spreadsheets open it as it is."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows({key: inert(value) for key, value in row.items()} for row in rows)
    return buf.getvalue()
