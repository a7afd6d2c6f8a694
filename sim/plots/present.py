"""Figures for slides: the presenter view's style for Plotly figures and Altair charts (pure: figure in, copy out).

A presenter figure is a white card with black text on the black presenter page: type about 1.6x larger (never
under MIN_FONT px), lines about 1.5x thicker and markers larger, axes, ticks and grid in high contrast. The
colours of the data are kept; only text colours change (to black where they would be hard to read on the card).
Contrast is WCAG's (relative luminance), so a test can check every text colour against the card.
"""
from __future__ import annotations

import copy
import re

import altair as alt
import plotly.graph_objects as go

from sim.plots.palette import PALETTE, rgb

TEXT_SCALE = 1.6  # type, relative to the normal figure
LINE_SCALE = 1.5  # line widths and marker sizes
HEIGHT_SCALE = 1.25  # a figure's height, where it sets one (its width is its column's)
MIN_FONT = 18  # px: none of a figure's own text (titles, axes, legends, notes) smaller on a slide
MIN_DATA_FONT = 16  # px: text on the data (numbers in heatmap cells), which must also fit its cell
MIN_CONTRAST = 7.0  # WCAG AAA for normal text
CARD, INK = PALETTE["white"], PALETTE["black"]  # the figure's background and its text
# axis lines and ticks; grid lines (visible on a projector, still lighter than any data line); zero lines
AXIS, GRID, ZERO = PALETTE["black"], PALETTE["line"], PALETTE["neutral"]
PLOTLY_FONT = 12  # Plotly's default font size (what a figure without one inherits)
PLOTLY_TITLE = 17  # Plotly's default title size
AXIS_TITLE = 14  # Streamlit's chart theme draws axis titles at 14 px (tick labels at 12)
PLOTLY_LINE, PLOTLY_MARKER = 2.0, 6.0  # Plotly's default scatter line width and marker size

# ---------- WCAG contrast ----------
_NAMED = {"white": (255, 255, 255), "black": (0, 0, 0), "gray": (128, 128, 128), "grey": (128, 128, 128),
          "red": (255, 0, 0), "blue": (0, 0, 255), "green": (0, 128, 0)}
_RGB = re.compile(r"rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*(?:,\s*([\d.]+)\s*)?\)")


def parse_colour(colour: str, background: tuple[int, int, int] = (255, 255, 255)) -> tuple[float, float, float] | None:
    """'#rgb', '#rrggbb', 'rgb(..)', 'rgba(..)' (composited on `background`) or a few names, as RGB; None if unknown."""
    if not isinstance(colour, str):
        return None
    c = colour.strip().lower()
    if c in _NAMED:
        return _NAMED[c]
    if re.fullmatch(r"#[0-9a-f]{3}", c):
        return tuple(int(ch * 2, 16) for ch in c[1:])
    if re.fullmatch(r"#[0-9a-f]{6}", c):
        return rgb(c)
    m = _RGB.fullmatch(c)
    if m:
        r, g, b = (float(v) for v in m.groups()[:3])
        a = float(m.group(4)) if m.group(4) is not None else 1.0
        return tuple(a * v + (1 - a) * w for v, w in zip((r, g, b), background, strict=True))
    return None


def luminance(colour: tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0-255 channels)."""
    def lin(v: float) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4
    r, g, b = (lin(v) for v in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    """WCAG contrast ratio (1 to 21) of two colours (strings or RGB tuples)."""
    la, lb = (luminance(parse_colour(c) if isinstance(c, str) else c) for c in (a, b))
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def readable(colour, background: str = CARD) -> bool:
    """True when `colour` is a known colour with at least MIN_CONTRAST against `background`."""
    if isinstance(colour, (list, tuple)):
        return all(readable(c, background) for c in colour)
    rgb_ = parse_colour(colour, parse_colour(background))
    return rgb_ is not None and contrast(rgb_, background) >= MIN_CONTRAST


def font_size(size, default: float, least: float = MIN_FONT) -> float:
    """A font size for a slide: TEXT_SCALE times the figure's (or `default` when unset), at least `least`."""
    if isinstance(size, (list, tuple)):
        return [font_size(s, default, least) for s in size]
    return max(least, round((size if isinstance(size, (int, float)) else default) * TEXT_SCALE, 1))


# ---------- Plotly ----------
def _font(font: dict | None, default: float, force: bool = True) -> dict:
    """A font dict made large and black (force: a layout part) or, for text on the data, large and readable."""
    out = dict(font or {})
    if force or "size" in out:
        out["size"] = font_size(out.get("size"), default, MIN_FONT if force else MIN_DATA_FONT)
    if force or ("color" in out and not readable(out["color"])):
        out["color"] = INK  # the figure's own text black; text on the data keeps a colour that reads on the card
    return out


def _axis(axis: dict, base: float) -> dict:
    axis = dict(axis)
    axis["tickfont"] = _font(axis.get("tickfont"), base)
    title, size = axis.get("title"), base * AXIS_TITLE / PLOTLY_FONT
    if isinstance(title, dict):
        axis["title"] = {**title, "font": _font(title.get("font"), size)}
    elif title is not None:
        axis["title"] = {"text": title, "font": _font(None, size)}
    axis.update(linecolor=AXIS, tickcolor=AXIS, gridcolor=GRID, zerolinecolor=ZERO,
                linewidth=LINE_SCALE * axis.get("linewidth", 1), gridwidth=LINE_SCALE * axis.get("gridwidth", 1))
    return axis


def _colorbar(cb: dict | None, base: float) -> dict:
    cb = dict(cb or {})
    cb["tickfont"] = _font(cb.get("tickfont"), base)
    title = cb.get("title")
    if isinstance(title, dict):
        cb["title"] = {**title, "font": _font(title.get("font"), base)}
    cb["outlinecolor"] = AXIS
    return cb


def _trace(tr: dict, base: float) -> dict:
    tr = dict(tr)
    for part in ("textfont", "insidetextfont", "outsidetextfont"):
        if part in tr or (part == "textfont" and ("text" in tr or "texttemplate" in tr)):
            # text on the data (heatmap cells, bars): sized up; an explicit colour kept only when readable
            tr[part] = _font(tr.get(part), base, force=False)
            tr[part].setdefault("size", font_size(None, base, MIN_DATA_FONT))
    kind = tr.get("type", "scatter")
    if kind in ("scatter", "scattergl", "scatterpolar", "scatterternary"):
        mode = tr.get("mode", "lines+markers")
        line = dict(tr.get("line") or {})
        if "lines" in mode or "width" in line:
            line["width"] = LINE_SCALE * line.get("width", PLOTLY_LINE)
            tr["line"] = line
        marker = dict(tr.get("marker") or {})
        if "markers" in mode and not isinstance(marker.get("size"), (list, tuple)):
            marker["size"] = LINE_SCALE * marker.get("size", PLOTLY_MARKER)
        tr["marker"] = marker
    else:
        line = tr.get("line")
        if isinstance(line, dict) and isinstance(line.get("width"), (int, float)):
            tr["line"] = {**line, "width": LINE_SCALE * line["width"]}
    marker = tr.get("marker")
    if isinstance(marker, dict):
        if isinstance(marker.get("line"), dict) and isinstance(marker["line"].get("width"), (int, float)):
            line = {**marker["line"], "width": LINE_SCALE * marker["line"]["width"]}
            tr["marker"] = marker = {**marker, "line": line}
        if "colorbar" in marker:
            tr["marker"] = {**marker, "colorbar": _colorbar(marker["colorbar"], base)}
    if "colorbar" in tr or kind in ("heatmap", "contour", "surface", "histogram2d", "histogram2dcontour"):
        tr["colorbar"] = _colorbar(tr.get("colorbar"), base)
    return tr


def presenter_figure(fig: go.Figure) -> go.Figure:
    """A copy of `fig` in the presenter style (white card, black text 1.6x larger, thicker lines); `fig` is kept."""
    spec = copy.deepcopy(fig.to_plotly_json())
    layout = dict(spec.get("layout") or {})
    base = (layout.get("font") or {}).get("size", PLOTLY_FONT)  # other defaults are relative to the figure's own
    layout["font"] = _font(layout.get("font"), PLOTLY_FONT)
    layout.update(paper_bgcolor=CARD, plot_bgcolor=CARD)
    if isinstance(layout.get("height"), (int, float)):  # room for the larger type
        layout["height"] = round(layout["height"] * HEIGHT_SCALE)
    if isinstance(layout.get("margin"), dict):  # margins hold the tick labels and titles: as much larger
        layout["margin"] = {k: round(v * TEXT_SCALE) if k in ("l", "r", "t", "b") and isinstance(v, (int, float)) else v
                            for k, v in layout["margin"].items()}
    title = layout.get("title")
    if isinstance(title, dict) and title.get("text"):
        layout["title"] = {**title, "font": _font(title.get("font"), base * PLOTLY_TITLE / PLOTLY_FONT)}
    for name in list(layout):
        if re.fullmatch(r"[xy]axis\d*", name) and isinstance(layout[name], dict):
            layout[name] = _axis(layout[name], base)
    for name in ("xaxis", "yaxis"):  # axes a figure never configured still get the contrast
        layout.setdefault(name, _axis({}, base))
    legend = dict(layout.get("legend") or {})
    legend["font"] = _font(legend.get("font"), base)
    if isinstance(legend.get("title"), dict):
        legend["title"] = {**legend["title"], "font": _font(legend["title"].get("font"), base)}
    layout["legend"] = legend
    layout["hoverlabel"] = {**(layout.get("hoverlabel") or {}),
                            "font": {**((layout.get("hoverlabel") or {}).get("font") or {}),
                                     "size": font_size(None, base)}}
    layout["annotations"] = [{**a, "font": _font(a.get("font"), base)} for a in layout.get("annotations") or ()]
    layout["shapes"] = [{**s, "line": {**s["line"], "width": LINE_SCALE * s["line"]["width"]}}
                        if isinstance((s.get("line") or {}).get("width"), (int, float)) else s
                        for s in layout.get("shapes") or ()]
    layout["sliders"] = [{**sl, "font": _font(sl.get("font"), base),
                          "currentvalue": {**(sl.get("currentvalue") or {}),
                                           "font": _font((sl.get("currentvalue") or {}).get("font"), base)}}
                         for sl in layout.get("sliders") or ()]
    layout["updatemenus"] = [{**m, "font": _font(m.get("font"), base)} for m in layout.get("updatemenus") or ()]
    for name in list(layout):
        if name.startswith("coloraxis") and isinstance(layout[name], dict):
            layout[name] = {**layout[name], "colorbar": _colorbar(layout[name].get("colorbar"), base)}
    spec["layout"] = layout
    spec["data"] = [_trace(tr, base) for tr in spec.get("data") or ()]
    return go.Figure(spec)


# ---------- Altair (Vega-Lite) ----------
VEGA_AXIS, VEGA_TITLE, VEGA_CHART_TITLE = 12, 14, 16  # label / axis title / title sizes of Streamlit's chart theme
VEGA_LINE, VEGA_POINT = 2.0, 30.0  # its default line width and point area (px²)


def _scale_mark(mark):
    """A mark definition with its stroke widths and point sizes scaled (data colours untouched)."""
    if isinstance(mark, str):
        mark = alt.MarkDef(type=mark)
    else:
        mark = copy.deepcopy(mark)
    d = mark.to_dict()
    kind = d.get("type")
    if kind in ("line", "rule", "trail") or "strokeWidth" in d:
        mark.strokeWidth = LINE_SCALE * d.get("strokeWidth", VEGA_LINE)
    if kind in ("point", "circle", "square") or "size" in d:
        mark.size = LINE_SCALE ** 2 * d.get("size", VEGA_POINT)  # an area: markers 1.5x across
    if kind == "text":
        mark.fontSize = font_size(d.get("fontSize"), 11)
        if "color" in d and not readable(d["color"]):
            mark.color = INK
    if isinstance(d.get("point"), dict):
        mark.point = {**d["point"], "size": LINE_SCALE ** 2 * d["point"].get("size", VEGA_POINT)}
    elif d.get("point") is True:
        mark.point = {"size": LINE_SCALE ** 2 * VEGA_POINT}
    return mark


def _scale_marks(chart):
    for attr in ("layer", "hconcat", "vconcat", "concat"):
        parts = getattr(chart, attr, alt.Undefined)
        if parts is not alt.Undefined:
            for part in parts:
                _scale_marks(part)
    spec = getattr(chart, "spec", alt.Undefined)  # facet / repeat
    if spec is not alt.Undefined and not isinstance(spec, dict):
        _scale_marks(spec)
    mark = getattr(chart, "mark", alt.Undefined)
    if mark is not alt.Undefined:
        chart.mark = _scale_mark(mark)


def presenter_chart(chart):
    """A copy of an Altair chart in the presenter style (configured fonts, sizes and colours; data colours kept)."""
    out = chart.copy(deep=True)
    _scale_marks(out)
    label, title = font_size(None, VEGA_AXIS), font_size(None, VEGA_TITLE)
    text = dict(labelFontSize=label, titleFontSize=title, labelColor=INK, titleColor=INK)
    ours = {"background": CARD,
            "axis": {**text, "tickColor": AXIS, "domainColor": AXIS, "gridColor": GRID, "tickWidth": LINE_SCALE,
                     "domainWidth": LINE_SCALE},
            "legend": {**text, "symbolSize": LINE_SCALE ** 2 * 100, "symbolStrokeWidth": LINE_SCALE * 1.5},
            "header": text, "title": {"fontSize": font_size(None, VEGA_CHART_TITLE), "color": INK, "subtitleColor": INK,
                                      "subtitleFontSize": label},
            "text": {"fontSize": label, "color": INK}, "view": {"stroke": AXIS}}
    given = out.config.to_dict() if out.config is not alt.Undefined else {}
    for part, values in ours.items():  # merged into the chart's own configuration, ours winning
        given[part] = {**given[part], **values} if isinstance(values, dict) and isinstance(given.get(part), dict) \
            else values
    out.config = alt.Config.from_dict(given)
    return out
