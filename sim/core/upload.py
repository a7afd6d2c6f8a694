"""Parse and validate a user's CSV of 2-D points into the app's coordinate frame.

Errors are `UploadError(code, params)` with no English text: the page translates `code`.
Codes and their params (row is the 1-based data row, header excluded, blank rows counted):
  too_large {size, limit}        not_text {}                     empty {}
  malformed {row}                no_header {}                    missing_columns {found, min}
  too_many_columns {columns, extra} (the first SHOWN_COLUMNS extra names; extra: how many in all)
  ragged_row {row, expected, found}
  too_few_rows {found, min}      too_many_rows {found, max}
  non_numeric {row, column, value}   nan {row, column}           label_not_numeric {row, column, value}
  single_class {name}            too_many_classes {found, max}
  constant_feature {column}      constant_label {column}
"""

import csv
import io
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from sim.core.errors import CodedError

MB = 1_000_000  # a megabyte as the texts say it and as Streamlit's file widget counts it (10⁶ bytes; on Windows 2²⁰)
MAX_BYTES = 2 * MB  # one limit: the widget's (max_upload_size=2), the check here and the texts' "2 MB" agree
MIN_ROWS = 10
MAX_ROWS = 10_000
MAX_CLASSES = 5
SHOWN_COLUMNS = 5  # extra column names a "too many columns" message lists (a file may have a million)
FEATURE_HALF_RANGE = 5.0  # features land on [-5, 5], inside the app's [-6, 6] plane
LABEL_NAMES = ("label", "y", "class", "target")  # header names taken as the label column
DELIMITERS = (",", ";", "\t")
MAX_VALUE_CHARS = 40  # an offending cell is echoed back, cut to this length

Problem = Literal["classification", "regression"]
ERROR_CODES = ("too_large", "not_text", "empty", "malformed", "no_header", "missing_columns", "too_many_columns",
               "ragged_row", "too_few_rows", "too_many_rows", "non_numeric", "nan", "label_not_numeric",
               "single_class", "too_many_classes", "constant_feature", "constant_label")


class UploadError(CodedError):
    """A rejected upload: `code` names the reason, `params` fills the translated message."""

    CODES = ERROR_CODES


@dataclass(frozen=True)
class UploadedData:
    """Validated points, rescaled into the app's frame, with what the page needs to explain it."""

    X: np.ndarray  # (n, 2) float32, each feature mapped affinely onto [-5, 5]
    y: np.ndarray  # (n,) int64 class index, or float32 on [-1, 1] for regression
    feature_names: tuple[str, str]
    label_name: str
    class_names: tuple[str, ...]  # class index -> original label, sorted; () for regression
    feature_ranges: tuple[tuple[float, float], tuple[float, float]]  # original (min, max)
    label_range: tuple[float, float] | None  # original (min, max) of a regression label


def parse_points_csv(raw: bytes, problem: Problem = "classification") -> UploadedData:
    """Validate `raw` CSV bytes (header row, two features and a label) and rescale them."""
    if problem not in ("classification", "regression"):
        raise ValueError(f"unknown problem {problem!r}")
    header, rows = read_table(raw)
    label_col, feature_cols = pick_columns(header, 2, 2)
    rows = data_rows(rows, len(header))
    names = (header[feature_cols[0]], header[feature_cols[1]])
    features = [numbers(rows, c, header[c], "non_numeric") for c in feature_cols]
    X = np.column_stack([_rescale(f, name, "constant_feature") for f, name in zip(features, names, strict=True)])
    label_name = header[label_col]
    if problem == "regression":
        target = numbers(rows, label_col, label_name, "label_not_numeric")
        y = _rescale(target, label_name, "constant_label").astype(np.float32)
        class_names: tuple[str, ...] = ()
        label_range: tuple[float, float] | None = _span(target)
    else:
        y, class_names = _classes(rows, label_col, label_name)
        label_range = None
    return UploadedData(
        X=(FEATURE_HALF_RANGE * X).astype(np.float32),
        y=y,
        feature_names=names,
        label_name=label_name,
        class_names=class_names,
        feature_ranges=(_span(features[0]), _span(features[1])),
        label_range=label_range,
    )


def read_table(raw: bytes) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header cells and the numbered non-blank data rows of the decoded CSV."""
    if len(raw) > MAX_BYTES:
        raise UploadError("too_large", {"size": len(raw), "limit": MAX_BYTES})
    try:
        text = raw.decode("utf-8-sig")  # drops a BOM
    except UnicodeDecodeError:
        raise UploadError("not_text") from None
    if "\x00" in text:
        raise UploadError("not_text")
    if not text.strip():
        raise UploadError("empty")
    first_line = next(line for line in text.splitlines() if line.strip())
    delimiter = max(DELIMITERS, key=first_line.count)  # ties go to the comma
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, skipinitialspace=True)
    records: list[list[str]] = []
    try:
        for cells in reader:
            records.append([cell.strip() for cell in cells])
    except csv.Error:
        raise UploadError("malformed", {"row": len(records)}) from None
    start = next((i for i, cells in enumerate(records) if any(cells)), None)
    if start is None:  # only delimiters and blanks
        raise UploadError("empty")
    header, data = records[start], records[start + 1:]
    while not header[-1]:  # a trailing delimiter after the last name
        header.pop()
    if all(_is_number(cell) for cell in header):
        raise UploadError("no_header")
    numbered = [(i, cells) for i, cells in enumerate(data, start=1) if any(cells)]
    return header, numbered


def pick_columns(header: list[str], fewest: int, most: int) -> tuple[int, list[int]]:
    """Index of the label column (named as in LABEL_NAMES, else the last) and of `fewest`..`most` features."""
    if len(header) < fewest + 1:
        raise UploadError("missing_columns", {"found": len(header), "min": fewest + 1})
    names = [name.lower() for name in header]
    label = next((i for i, name in enumerate(names) if name in LABEL_NAMES), len(header) - 1)
    others = [i for i in range(len(header)) if i != label]
    if len(others) > most:
        extra = others[most:]
        raise UploadError("too_many_columns", {"columns": [header[i][:MAX_VALUE_CHARS] for i in extra[:SHOWN_COLUMNS]],
                                               "extra": len(extra)})
    return label, others


def data_rows(rows: list[tuple[int, list[str]]], width: int) -> list[tuple[int, list[str]]]:
    """Check the row count and pad short rows (their missing cells are empty)."""
    if len(rows) < MIN_ROWS:
        raise UploadError("too_few_rows", {"found": len(rows), "min": MIN_ROWS})
    if len(rows) > MAX_ROWS:
        raise UploadError("too_many_rows", {"found": len(rows), "max": MAX_ROWS})
    for row, cells in rows:
        if any(cells[width:]):
            found = max(i for i, cell in enumerate(cells) if cell) + 1
            raise UploadError("ragged_row", {"row": row, "expected": width, "found": found})
    return [(row, (cells + [""] * width)[:width]) for row, cells in rows]


def _to_float(cell: str) -> float | None:
    """The cell as a number (inf and nan included), or None if it is not one."""
    try:
        return float(cell)
    except ValueError:
        return None


def _is_number(cell: str) -> bool:
    return _to_float(cell) is not None


def numbers(rows: list[tuple[int, list[str]]], col: int, name: str, code: str) -> np.ndarray:
    """Column `col` as finite float64, raising `code` for text and `nan` for gaps or non-finite."""
    values = np.empty(len(rows))
    for i, (row, cells) in enumerate(rows):
        cell = cells[col]
        value = _to_float(cell)
        if value is None and cell:
            raise UploadError(code, {"row": row, "column": name, "value": cell[:MAX_VALUE_CHARS]})
        if value is None or not math.isfinite(value):
            raise UploadError("nan", {"row": row, "column": name})
        values[i] = value
    return values


def _span(v: np.ndarray) -> tuple[float, float]:
    return float(v.min()), float(v.max())


def _rescale(v: np.ndarray, name: str, code: str) -> np.ndarray:
    """Affine map of v onto [-1, 1]; halves first so that huge ranges cannot overflow."""
    lo, hi = v.min() / 2, v.max() / 2
    if hi - lo == 0:
        raise UploadError(code, {"column": name})
    return np.clip((v / 2 - lo) / (hi - lo), 0.0, 1.0) * 2 - 1


def _classes(rows: list[tuple[int, list[str]]], col: int, name: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Class indices 0..k-1 and the sorted class names (numerically, if every label is a number)."""
    cells = [cells[col] for _, cells in rows]
    values = [_to_float(cell) for cell in cells]
    for (row, _), cell, value in zip(rows, cells, values, strict=True):
        if not cell or (value is not None and not math.isfinite(value)):
            raise UploadError("nan", {"row": row, "column": name})
    numbers = [value for value in values if value is not None]
    if len(numbers) == len(cells):
        keys = [_number_name(value) for value in numbers]  # "1", "1.0" and "01" are one class
        names = tuple(sorted(set(keys), key=float))
    else:
        keys = cells
        names = tuple(sorted(set(keys)))
    if len(names) == 1:
        raise UploadError("single_class", {"name": names[0]})
    if len(names) > MAX_CLASSES:
        raise UploadError("too_many_classes", {"found": len(names), "max": MAX_CLASSES})
    index = {key: i for i, key in enumerate(names)}
    return np.array([index[key] for key in keys], dtype=np.int64), names


def _number_name(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)
