"""One schema per page: builds the widgets, writes the URL, validates what is read from it.

Pure Python (no Streamlit) so the parsing rules are unit-tested on their own.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    name: str  # URL key and i18n suffix
    kind: str  # "int" | "float" | "choice" | "bool" | "multi" | "ints" | "text"
    default: Any
    lo: float | None = None  # inclusive bounds for int / float, and for each item of "ints"
    hi: float | None = None
    choices: tuple = ()  # allowed values for "choice" and "multi"
    max_len: int | None = None  # longest list for "ints", most characters for "text"
    min_len: int = 0  # shortest list for "ints"
    step: float | None = None  # slider step for int / float
    widget: str | None = None  # a non-default widget: "segmented" for a choice shown as buttons


def _parse_number(raw: str, integer: bool) -> float | int:
    value = float(raw)
    if not math.isfinite(value):
        raise ValueError(raw)
    if integer:
        if value != int(value):
            raise ValueError(raw)
        return int(value)
    return value


def _parse_choice(p: Param, raw: str) -> Any:
    for c in p.choices:
        if str(c) == raw:
            return c
    # numeric choices written in another form ("3e-2" for 0.03)
    if all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in p.choices):
        value = float(raw)
        for c in p.choices:
            if math.isclose(value, c, rel_tol=1e-9):
                return c
    raise ValueError(raw)


def parse_value(p: Param, raw: str) -> Any:
    """Parse one URL value; raise ValueError if it is malformed or out of range."""
    raw = raw.strip()
    if p.kind in ("int", "float"):
        value = _parse_number(raw, p.kind == "int")
        if not p.lo <= value <= p.hi:
            raise ValueError(raw)
        return value
    if p.kind == "bool":
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(raw)
    if p.kind == "choice":
        return _parse_choice(p, raw)
    if p.kind == "multi":
        items = [s for s in raw.split(",") if s]
        if not items or len(set(items)) != len(items) or any(s not in p.choices for s in items):
            raise ValueError(raw)
        return tuple(c for c in p.choices if c in items)  # canonical order
    if p.kind == "text":  # typed text (a question): kept as it is, up to max_len characters
        if len(raw) > p.max_len:
            raise ValueError(raw[:40])
        return raw
    if p.kind == "ints":
        # "none" (and "", and "0" where 0 cannot be an item: no hidden layers) is the empty list; where it can, "0"
        # is the list holding 0 (the embedding lookup's one id 0)
        empty = ("", "none") if p.lo <= 0 else ("", "0", "none")
        items = [] if raw in empty else [_parse_number(s, True) for s in raw.split(",")]
        if not p.min_len <= len(items) <= p.max_len or any(not p.lo <= v <= p.hi for v in items):
            raise ValueError(raw)
        return tuple(items)
    raise ValueError(f"unknown kind {p.kind}")


def check_value(p: Param, value: Any) -> Any:
    """A value the app sets (a preset), held to the rules a URL value meets; ValueError if it breaks them."""
    parsed = parse_value(p, format_value(p, value))
    same = abs(parsed - value) <= 1e-5 * abs(value) if p.kind == "float" else parsed == value
    if not same:
        raise ValueError(f"{p.name}={value!r}")
    return value


def format_value(p: Param, value: Any) -> str:
    if p.kind == "bool":
        return "1" if value else "0"
    if p.kind in ("multi", "ints"):
        return ",".join(str(v) for v in value) if value else ("none" if p.kind == "ints" else "")
    if p.kind == "float" or isinstance(value, float):
        return f"{value:g}"
    return str(value)


def read_query(schema: list[Param], query: dict[str, str]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Values for every parameter, and (name, raw) for each URL value replaced by its default."""
    values, rejected = {}, []
    for p in schema:
        if p.name not in query:
            values[p.name] = p.default
            continue
        try:
            values[p.name] = parse_value(p, query[p.name])
        except (ValueError, TypeError, OverflowError):
            values[p.name] = p.default
            rejected.append((p.name, query[p.name]))
    return values, rejected


def write_query(schema: list[Param], values: dict[str, Any]) -> dict[str, str]:
    return {p.name: format_value(p, values[p.name]) for p in schema}
