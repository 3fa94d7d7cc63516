"""labels.csv for testers' mode: one row per image, `file name, expected value`.

- UTF-8 (with or without a byte-order mark) or UTF-16 with its mark (Excel's
  "Unicode text", tab-separated).
- The header is optional: a first row whose name cell is a heading ("file",
  "file name", "filename", "name", "image") and whose value is not an answer is
  skipped. Whitespace around cells is ignored; blank lines are skipped. Comma
  is the separator; a file with no comma in its first row but a semicolon or
  tab there uses that instead.
- A name is matched against the images by file name only (a path in the cell is
  cut to its last part), Unicode-normalised (NFC) as macOS and Windows may
  write the same name differently.
- A value must be one of the profile's values, compared case-insensitively
  ("Yes" is yes); anything else is an error for that row naming the allowed ones.
- The same name twice with the same value is a note; with different values it
  is an error for the later row, and that image counts as unlabelled (which
  label is right cannot be guessed).
- A row error never stops the run: the other rows still count.

A checklist's file has a column per signal, and its header is required (`file,hands_visible,
hand_position_correct,hands_stacked`, the columns in any order, the file column among them): a header
cell that names no signal of the checklist, or a signal twice, makes the file unusable (its labels
could not be told apart). A signal without a column is unlabelled on every image, an empty cell
unlabelled for that image; a value is checked against its own signal's answers, and a bad cell is an
error of that cell only. Every rule above holds per signal (a repeat disagreeing on one signal makes
the image unlabelled for that signal only).

Which names have no image and which images have no label is decided against
the images found (`app.evaluation.report.match_labels`).
"""

from __future__ import annotations

import csv
import os
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.sizes import over_limit
from app.storage.small_file import NotAFile, TooLarge, read_small_file

if TYPE_CHECKING:
    from _csv import Reader

MAX_LABELS_BYTES = 16 * 1024 * 1024
HEADER_NAMES = frozenset({"file", "file name", "filename", "file_name", "name", "image", "image name", "path"})


class LabelsFileError(Exception):
    """The file as a whole cannot be used (missing, unreadable, not text)."""


@dataclass(frozen=True)
class LabelRowError:
    line: int  # 1-based line of the file
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class Labels:
    expected: dict[str, str] = field(default_factory=dict)  # file name -> expected value
    errors: tuple[LabelRowError, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChecklistLabels:
    expected: dict[str, dict[str, str]] = field(default_factory=dict)  # signal -> file name -> expected value
    errors: tuple[LabelRowError, ...] = ()
    notes: tuple[str, ...] = ()


def normalise_name(name: str) -> str:
    """How a name is compared: its last path part, NFC, without surrounding whitespace."""
    name = name.strip().replace("\\", "/").rsplit("/", 1)[-1]
    return unicodedata.normalize("NFC", name)


def _delimiter(text: str) -> str:
    first = next((line for line in text.splitlines() if line.strip()), "")
    if "," in first:
        return ","
    if ";" in first:
        return ";"
    return "\t" if "\t" in first else ","


def _rows(reader: Reader, errors: list[LabelRowError]) -> Iterator[list[str]]:
    """The reader's rows; a row it cannot parse (a cell over csv's 128 KB field limit) is that row's error."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # the reader starts afresh on the next line
            errors.append(LabelRowError(reader.line_num, f"not a CSV row ({exc})"))
            continue
        yield row


def _lines(text: str, errors: list[LabelRowError]) -> Iterator[tuple[int, list[str]]]:
    """Every row that is not blank: its line and its cells, without the whitespace around them."""
    text = text.removeprefix("\ufeff")
    reader = csv.reader(text.splitlines(), delimiter=_delimiter(text), skipinitialspace=True)
    for row in _rows(reader, errors):
        cells = [c.strip() for c in row]
        if any(cells):
            yield reader.line_num, cells  # the row's last line: right even after a quoted cell over several lines


class _Column:
    """One signal's labels as the rows give them. The same name again with the same value is a note; with
    another value an error, and the name counts unlabelled (which label is right cannot be guessed)."""

    def __init__(self, signal: str = "") -> None:
        self.signal = signal  # "" in a one-signal file: its messages name no signal
        self.expected: dict[str, str] = {}
        self._first_line: dict[str, int] = {}
        self._conflicted: set[str] = set()

    def add(self, line: int, name: str, value: str, errors: list[LabelRowError], notes: list[str]) -> None:
        who = f"{name} ({self.signal})" if self.signal else name
        if name in self._conflicted:
            errors.append(LabelRowError(line, f"{who}: labelled again; its labels disagree, so it counts unlabelled"))
        elif name not in self.expected:
            self.expected[name] = value
            self._first_line[name] = line
        elif self.expected[name] == value:
            notes.append(f"line {line}: {who} is listed again (line {self._first_line[name]}) with the same value")
        else:
            first, earlier = self._first_line[name], self.expected.pop(name)
            errors.append(
                LabelRowError(line, f"{who}: {value} here but {earlier} on line {first}; it counts unlabelled")
            )
            self._conflicted.add(name)


def parse_labels(text: str, values: Sequence[str]) -> Labels:
    """Labels from the text of a labels file; `values` are the profile's answers."""
    allowed = {v.casefold(): v for v in values}
    column = _Column()
    errors: list[LabelRowError] = []
    notes: list[str] = []
    for index, (line, cells) in enumerate(_lines(text, errors)):
        name_cell = cells[0]
        value_cell = cells[1] if len(cells) > 1 else ""
        if index == 0 and name_cell.casefold() in HEADER_NAMES and value_cell.casefold() not in allowed:
            continue  # a header
        if any(cells[2:]):
            errors.append(LabelRowError(line, f"{len(cells)} cells; expected two: file name, expected value"))
            continue
        name = normalise_name(name_cell)
        if not name:
            errors.append(LabelRowError(line, "no file name"))
            continue
        if not value_cell:
            errors.append(LabelRowError(line, f"{name}: no expected value (one of {', '.join(values)})"))
            continue
        value = allowed.get(value_cell.casefold())
        if value is None:
            errors.append(
                LabelRowError(line, f"{name}: {value_cell!r} is not an answer of this profile ({', '.join(values)})")
            )
            continue
        column.add(line, name, value, errors, notes)
    return Labels(column.expected, tuple(errors), tuple(notes))


def parse_checklist_labels(
    text: str, signals: Mapping[str, Sequence[str]], shown: str = "labels file"
) -> ChecklistLabels:
    """A checklist's labels from the text of its file; `signals` are its signals with their answers, in order.

    LabelsFileError when the header cannot be used: its columns would be guesses.
    """
    errors: list[LabelRowError] = []
    lines = _lines(text, errors)
    where, by_column = _header(next(lines, None), signals, shown)
    notes = [f"has no column for {s}: it is unlabelled on every image" for s in signals if s not in by_column]
    columns = {signal: _Column(signal) for signal in signals}
    allowed = {signal: {v.casefold(): v for v in values} for signal, values in signals.items()}
    for line, cells in lines:
        if any(cells[len(by_column) :]):
            errors.append(LabelRowError(line, f"{len(cells)} cells; the header has {len(by_column)} columns"))
            continue
        name = normalise_name(cells[where]) if where < len(cells) else ""
        if not name:
            errors.append(LabelRowError(line, "no file name"))
            continue
        for cell, signal in zip(cells, by_column, strict=False):  # a short row: the cells it lacks are empty
            if signal is None or not cell:
                continue  # the file column, or no label for this signal
            value = allowed[signal].get(cell.casefold())
            if value is None:
                answers = ", ".join(signals[signal])
                errors.append(LabelRowError(line, f"{name}: {cell!r} is not an answer of {signal} ({answers})"))
                continue
            columns[signal].add(line, name, value, errors, notes)
    return ChecklistLabels({s: c.expected for s, c in columns.items()}, tuple(errors), tuple(notes))


def _header(
    first: tuple[int, list[str]] | None, signals: Mapping[str, Sequence[str]], shown: str
) -> tuple[int, list[str | None]]:
    """The file column's index and each column's signal (None for the file column) from the header row."""
    need = f"a checklist's labels need a header row: file, then a column per signal ({', '.join(signals)})"
    if first is None:
        raise LabelsFileError(f"{shown}: no rows; {need}")
    line, cells = first
    while not cells[-1]:  # a trailing separator names no column
        cells = cells[:-1]
    by_name = {s.casefold(): s for s in signals}
    heads = [c.casefold() for c in cells]
    where = next((i for i, h in enumerate(heads) if h in HEADER_NAMES and h not in by_name), None)
    if where is None:
        raise LabelsFileError(f"{shown} line {line}: not a header; {need}")
    by_column: list[str | None] = []
    for i, (cell, head) in enumerate(zip(cells, heads, strict=True)):
        signal = None if i == where else by_name.get(head)
        if i != where and signal is None:
            what = (
                f"column {i + 1} has no name" if not cell else f"the column {cell!r} names no signal of this checklist"
            )
            raise LabelsFileError(f"{shown} line {line}: {what} ({', '.join(signals)})")
        if signal is not None and signal in by_column:
            raise LabelsFileError(f"{shown} line {line}: {signal} is a column twice")
        by_column.append(signal)
    return where, by_column


def _text(data: bytes, shown: str) -> str:
    """The text of a labels file's bytes; LabelsFileError when it is not text in an encoding we read."""
    if len(data) > MAX_LABELS_BYTES:
        raise _too_large(shown, len(data))
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # Excel's "Unicode text" (tab-separated UTF-16)
            return data.decode("utf-16")
        if b"\x00" in data:
            raise LabelsFileError(f"{shown}: not a text file")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LabelsFileError(f"{shown}: not UTF-8 text (byte {exc.start}); save it as CSV UTF-8") from None


def decode_labels(data: bytes, values: Sequence[str], shown: str = "labels file") -> Labels:
    """Labels from the bytes of a file (an upload, or `read_labels`)."""
    return parse_labels(_text(data, shown), values)


def decode_checklist_labels(
    data: bytes, signals: Mapping[str, Sequence[str]], shown: str = "labels file"
) -> ChecklistLabels:
    """A checklist's labels from the bytes of a file; `signals` as for `parse_checklist_labels`."""
    return parse_checklist_labels(_text(data, shown), signals, shown)


def _too_large(shown: str, size: int) -> LabelsFileError:
    return LabelsFileError(f"{over_limit(shown, size, MAX_LABELS_BYTES)}; is it really a labels file?")


def read_labels(path: str | os.PathLike[str], values: Sequence[str]) -> Labels:
    return decode_labels(read_labels_bytes(path), values, os.fspath(path))


def read_labels_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes, or a LabelsFileError in one sentence (missing, a folder, unreadable)."""
    shown = os.fspath(path)
    try:
        return read_small_file(path, MAX_LABELS_BYTES)
    except FileNotFoundError:
        raise LabelsFileError(f"{shown}: no such file") from None
    except NotAFile as exc:
        raise LabelsFileError(f"{shown}: {exc.strerror}") from None
    except TooLarge as exc:
        raise _too_large(shown, exc.size) from None
    except OSError as exc:
        raise LabelsFileError(f"{shown}: cannot be read ({exc.strerror or exc})") from None
