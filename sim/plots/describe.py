"""A short text summary of a Plotly or Altair chart, computed from the figure object itself: what a screen reader
reads in place of the picture (ui/charts.py attaches it next to the chart).

describe(fig, words) -> "Line chart “Loss”. x axis step, 0 to 300; y axis loss, 0.12 to 2.3. Series: Adam, SGD.
600 points." The kind of chart, its title, each axis's title and the range of the data shown on it (or how many
categories it has), the series' names and the number of points. sim/ has no i18n: the page passes the words
(templates with {placeholders}, see WORDS for the keys and the English texts).
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

# The words a summary is made of, with their English texts (the page passes its own language's). {kind}: a kind's
# name; {title}: the chart's title; {axis}: "x" or "y"; {name}: the axis's title; {lo}, {hi}: the data's range;
# {n}: a count; {names}: the series, separated by `sep`; "end" closes each sentence (". ", or "。" in Chinese).
# "range0", "categories0": an axis without a title. The summary's first letter is made upper case (the kinds are
# written as they read inside a sentence).
WORDS = {
    "kind.line": "line chart", "kind.scatter": "scatter plot", "kind.bar": "bar chart", "kind.area": "area chart",
    "kind.heatmap": "heat map", "kind.histogram": "histogram", "kind.pie": "pie chart", "kind.box": "box plot",
    "kind.text": "text chart", "kind.rule": "chart with lines", "kind.other": "chart",
    "and": " and ", "sep": ", ", "end": ". ",
    "titled": "{kind} “{title}”", "untitled": "{kind}",
    "axis": "{axis} axis {name}", "range": "{axis} axis {name}, {lo} to {hi}", "range0": "{axis} axis, {lo} to {hi}",
    "categories": "{axis} axis {name}, {n} categories", "categories0": "{axis} axis, {n} categories",
    "values": "values from {lo} to {hi}",
    "axes_sep": "; ", "series": "Series: {names}", "more": "and {n} more", "points": "{n} points",
}
MAX_SERIES = 8  # series named in the summary; more are counted
_TAGS = re.compile(r"<[^>]+>")


def fmt(v: float) -> str:
    """A number as the summary writes it: 4 significant digits (what the tests compare the data's range with)."""
    return f"{v:.4g}"


def describe(fig: Any, words: dict[str, str] | None = None) -> str:
    """The summary of a Plotly figure (plotly.graph_objects.Figure, or its dict) or an Altair chart."""
    w = {**WORDS, **(words or {})}
    if hasattr(fig, "to_plotly_json") or (isinstance(fig, dict) and "data" in fig):
        parts = _plotly(fig)
    else:
        parts = _altair(fig)
    return _sentence(parts, w)


# ---------- one model of a chart: kinds, title, axes, series, points ----------

class _Axis:
    def __init__(self, axis: str, name: str):
        self.axis, self.name = axis, name
        self.numbers: list[float] = []
        self.categories: dict[str, None] = {}

    def add(self, values: Iterable) -> None:
        for v in values:
            if v is None or isinstance(v, bool):
                continue
            if isinstance(v, (int, float)) or _is_number(v):
                f = float(v)
                if math.isfinite(f):
                    self.numbers.append(f)
            elif isinstance(v, str):
                self.categories[v] = None
            else:  # dates and other values: named as text
                self.categories[str(v)] = None


def _is_number(v) -> bool:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return False
    return isinstance(v, np.number) and not isinstance(v, np.bool_)


class _Parts:
    def __init__(self):
        self.kinds: list[str] = []
        self.title = ""
        self.axes: dict[tuple[str, str], _Axis] = {}  # (axis's reference: "x", "x2", ...; its title) -> its data
        self.values = _Axis("z", "")  # a heat map's colour values
        self.series: list[str] = []
        self.points = 0

    def kind(self, k: str) -> None:
        if k not in self.kinds:
            self.kinds.append(k)

    def axis(self, axis: str, name: str, ref: str = "") -> _Axis:
        return self.axes.setdefault((ref or axis, name), _Axis(axis, name))

    def name(self, s) -> None:
        s = _plain(s)
        if s and s not in self.series:
            self.series.append(s)


def _plain(s) -> str:
    return _TAGS.sub("", str(s or "")).strip()


def _sentence(p: _Parts, w: dict[str, str]) -> str:
    said = [w.get(f"kind.{k}", w["kind.other"]) for k in p.kinds] or [w["kind.other"]]
    kinds = w["sep"].join(said[:-1]) + w["and"] + said[-1] if len(said) > 1 else said[0]  # "a, b and c"
    head = w["titled"].format(kind=kinds, title=p.title) if p.title else w["untitled"].format(kind=kinds)
    head = head[:1].upper() + head[1:]
    axes = []
    for a in p.axes.values():
        bare = "" if a.name else "0"
        if a.numbers:
            axes.append(w["range" + bare].format(axis=a.axis, name=a.name, lo=fmt(min(a.numbers)),
                                                 hi=fmt(max(a.numbers))))
        elif a.categories:
            axes.append(w["categories" + bare].format(axis=a.axis, name=a.name, n=len(a.categories)))
        elif a.name:
            axes.append(w["axis"].format(axis=a.axis, name=a.name))
    if p.values.numbers:
        axes.append(w["values"].format(lo=fmt(min(p.values.numbers)), hi=fmt(max(p.values.numbers))))
    out = [head + w["end"]]
    if axes:
        out.append(w["axes_sep"].join(axes) + w["end"])
    if p.series:
        names = w["sep"].join(p.series[:MAX_SERIES])
        if len(p.series) > MAX_SERIES:
            names += w["sep"] + w["more"].format(n=len(p.series) - MAX_SERIES)
        out.append(w["series"].format(names=names) + w["end"])
    if p.points:
        out.append(w["points"].format(n=p.points) + w["end"])
    return "".join(out).strip()


# ---------- Plotly ----------

def _get(obj, key, default=None):
    if isinstance(obj, dict):
        return obj.get(key, default)
    try:
        v = obj[key]
    except (KeyError, TypeError, ValueError, AttributeError):
        return default
    return default if v is None else v


def _text_of(title) -> str:
    if title is None:
        return ""
    if isinstance(title, str):
        return _plain(title)
    return _plain(_get(title, "text", "") or "")


def _seq(v) -> list:
    if v is None:
        return []
    if isinstance(v, dict):  # a typed array as JSON ({"dtype", "bdata"}): decoded by plotly's figure
        return []
    try:
        import numpy as np

        return np.asarray(v, dtype=object).reshape(-1).tolist()
    except (TypeError, ValueError):
        return list(v)


_PLOTLY_KIND = {"bar": "bar", "heatmap": "heatmap", "contour": "heatmap", "histogram": "histogram",
                "histogram2d": "heatmap", "pie": "pie", "box": "box", "violin": "box", "table": "other"}


def _plotly_kind(trace) -> str:
    typ = _get(trace, "type", "scatter") or "scatter"
    if typ in ("scatter", "scattergl"):
        mode = _get(trace, "mode", "") or ""
        if _get(trace, "fill") not in (None, "none", ""):
            return "area"
        return "line" if "lines" in mode or not mode else "scatter" if "markers" in mode else "text"
    return _PLOTLY_KIND.get(typ, "other")


def _plotly(fig) -> _Parts:
    if isinstance(getattr(fig, "_data", None), list) and isinstance(getattr(fig, "_layout", None), dict):
        # a go.Figure's own dicts, read without copying or validating (its properties cost ~20 times more: this runs
        # on every page run, for every chart)
        data, layout = fig._data, fig._layout
    elif hasattr(fig, "to_plotly_json") and not isinstance(fig, dict):
        data, layout = list(fig.data), fig.layout
    else:
        data, layout = list(fig.get("data", [])), fig.get("layout", {}) or {}
    p = _Parts()
    p.title = _text_of(_get(layout, "title"))
    for tr in data:
        kind = _plotly_kind(tr)
        p.kind(kind)
        if _get(tr, "showlegend", True) is not False or len(data) > 1:
            p.name(_get(tr, "name"))
        if kind == "pie":
            p.points += len(_seq(_get(tr, "values")) or _seq(_get(tr, "labels")))
            continue
        refs = {"x": _get(tr, "xaxis", "x") or "x", "y": _get(tr, "yaxis", "y") or "y"}
        z = _seq(_get(tr, "z"))
        for axis in ("x", "y"):
            values = _seq(_get(tr, axis))
            if not values and not (kind == "heatmap" and z):
                continue
            lay = _get(layout, refs[axis].replace("x", "xaxis").replace("y", "yaxis"), {})  # x2 -> xaxis2
            a = p.axis(axis, _text_of(_get(lay, "title")), refs[axis])
            a.add(values)
        if z:
            p.values.add(z)
            p.points += len(z)
        else:
            p.points += max(len(_seq(_get(tr, "x"))), len(_seq(_get(tr, "y"))))
    return p


# ---------- Altair ----------

_ALTAIR_KIND = {"line": "line", "trail": "line", "point": "scatter", "circle": "scatter", "square": "scatter",
                "tick": "scatter", "bar": "bar", "area": "area", "rect": "heatmap", "arc": "pie", "boxplot": "box",
                "text": "text", "rule": "rule"}


def _rows(data) -> list[dict]:
    """The rows of an Altair chart's data: a DataFrame, alt.Data / InlineData values, or a list of dicts."""
    if data is None or type(data).__name__ == "UndefinedType":
        return []
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # a pandas DataFrame
        return data.to_dict("records")
    values = _get(data, "values") if not isinstance(data, list) else data
    if isinstance(values, list):
        return [r for r in values if isinstance(r, dict)]
    return []


def _undefined(v) -> bool:
    return v is None or type(v).__name__ == "UndefinedType"


def _altair(chart) -> _Parts:
    p = _Parts()
    title = getattr(chart, "title", None)
    p.title = "" if _undefined(title) else _text_of(title if isinstance(title, str) else _get(title, "text", ""))
    if isinstance(p.title, list):  # pragma: no cover  (a title of several lines)
        p.title = " ".join(p.title)
    _altair_walk(chart, [], p)
    return p


def _altair_walk(chart, inherited: list[dict], p: _Parts) -> None:
    own = getattr(chart, "data", None)
    rows = inherited if _undefined(own) else _rows(own)
    for attr in ("layer", "hconcat", "vconcat", "concat"):
        subs = getattr(chart, attr, None)
        if not _undefined(subs) and isinstance(subs, list):
            for sub in subs:
                _altair_walk(sub, rows, p)
            return
    spec = getattr(chart, "spec", None)  # a facet chart
    if not _undefined(spec) and hasattr(spec, "mark"):
        _altair_walk(spec, rows, p)
        return
    spec_dict = _altair_spec(chart)
    if spec_dict is None:
        return
    mark = spec_dict.get("mark")
    mark = mark.get("type") if isinstance(mark, dict) else mark
    if mark:
        p.kind(_ALTAIR_KIND.get(mark, "other"))
    enc = spec_dict.get("encoding", {}) or {}
    shown = 0
    for axis in ("x", "y"):
        e = enc.get(axis)
        if not isinstance(e, dict):
            continue
        field, title = e.get("field"), e.get("title")
        name = _plain(title) if isinstance(title, str) else _plain(field or "")
        a = p.axis(axis, name)
        if field and not e.get("aggregate") and not e.get("bin") and rows and field in rows[0]:
            a.add(r.get(field) for r in rows)
            shown = len(rows)
    colour = enc.get("color")
    if isinstance(colour, dict) and colour.get("type") in ("nominal", "ordinal") and rows \
            and colour.get("field") in rows[0]:
        for r in rows:
            p.name(r.get(colour["field"]))
    p.points += shown


def _altair_spec(chart) -> dict | None:
    """The chart's Vega-Lite spec (its encodings' shorthands parsed): written without its data where it can be (Altair
    refuses to write more than 5000 rows), else with it (a shorthand's type comes from the data); None if neither."""
    import altair as alt

    bare = chart.copy(deep=False)
    bare.data = alt.Undefined
    for one in (bare, chart):
        try:
            return one.to_dict(validate=False)
        except Exception:  # noqa: BLE001, S112 - Altair raises many kinds here; the next way, or no spec
            continue
    return None
