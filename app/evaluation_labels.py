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

Which names have no image and which images have no label is decided against
the images found (`app.core.evaluation.match_labels`).
"""

from __future__ import annotations

import csv
import os
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from app.core.sizes import over_limit
from app.small_file import NotAFile, TooLarge, read_small_file

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


def parse_labels(text: str, values: Sequence[str]) -> Labels:
    """Labels from the text of a labels file; `values` are the profile's answers."""
    allowed = {v.casefold(): v for v in values}
    text = text.removeprefix("\ufeff")
    expected: dict[str, str] = {}
    first_line: dict[str, int] = {}
    conflicted: set[str] = set()
    errors: list[LabelRowError] = []
    notes: list[str] = []
    seen_row = False
    reader = csv.reader(text.splitlines(), delimiter=_delimiter(text), skipinitialspace=True)
    for row in _rows(reader, errors):
        line = reader.line_num  # the row's last line: right even after a quoted cell over several lines
        cells = [c.strip() for c in row]
        if not any(cells):
            continue
        first_row, seen_row = not seen_row, True
        name_cell = cells[0]
        value_cell = cells[1] if len(cells) > 1 else ""
        if first_row and name_cell.casefold() in HEADER_NAMES and value_cell.casefold() not in allowed:
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
        if name in conflicted:
            errors.append(LabelRowError(line, f"{name}: labelled again; its labels disagree, so it counts unlabelled"))
            continue
        if name in expected:
            if expected[name] == value:
                notes.append(f"line {line}: {name} is listed again (line {first_line[name]}) with the same value")
                continue
            errors.append(
                LabelRowError(
                    line,
                    f"{name}: {value} here but {expected[name]} on line {first_line[name]}; it counts unlabelled",
                )
            )
            del expected[name]
            conflicted.add(name)
            continue
        expected[name] = value
        first_line[name] = line
    return Labels(expected, tuple(errors), tuple(notes))


def decode_labels(data: bytes, values: Sequence[str], shown: str = "labels file") -> Labels:
    """Labels from the bytes of a file (an upload, or `read_labels`)."""
    if len(data) > MAX_LABELS_BYTES:
        raise _too_large(shown, len(data))
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # Excel's "Unicode text" (tab-separated UTF-16)
            text = data.decode("utf-16")
        elif b"\x00" in data:
            raise LabelsFileError(f"{shown}: not a text file")
        else:
            text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LabelsFileError(f"{shown}: not UTF-8 text (byte {exc.start}); save it as CSV UTF-8") from None
    return parse_labels(text, values)


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
