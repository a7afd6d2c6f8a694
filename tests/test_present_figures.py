"""Figures for slides: sim.plots.present (the presenter style of Plotly figures and Altair charts) and ui.charts
(every lab's charts go through it) on every lab's page, in and out of the presenter view."""
import json

import altair as alt
import numpy as np
import plotly.graph_objects as go
import pyarrow as pa
import pytest
from plotly.subplots import make_subplots

from apptools import open_lab, shared_lab
from labs import LABS
from sim.plots import present as pr
from sim.plots.curves import loss_curves
from sim.plots.evaluation import confusion_figure, roc_figure
from sim.plots.palette import BLUE, GUIDE, ORANGE, TEXT

SECTION = ("section", "view")  # the parameter that switches a lab's sections (the GPU lab's is "view")
FONT_KEYS = ("font", "tickfont", "textfont", "insidetextfont", "outsidetextfont")


# ---------- WCAG contrast, written out from the definition (independent of sim.plots.present) ----------
def wcag_luminance(hex_colour: str) -> float:
    """Relative luminance (WCAG 2.x, 'relative luminance' in its glossary) of '#rrggbb'."""
    channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def wcag_contrast(a: str, b: str) -> float:
    la, lb = sorted((wcag_luminance(a), wcag_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@pytest.mark.parametrize("a,b,ratio", [
    ("#000000", "#ffffff", 21.0), ("#ffffff", "#ffffff", 1.0), ("#595959", "#ffffff", 7.0),  # WebAIM's AAA grey
    ("#767676", "#ffffff", 4.54), ("#0000ff", "#ffffff", 8.59), ("#ff0000", "#ffffff", 4.0),
    ("#777777", "#ffffff", 4.48)])
def test_contrast_formula_against_known_pairs(a, b, ratio):
    assert wcag_contrast(a, b) == pytest.approx(ratio, abs=0.01)
    assert wcag_contrast(b, a) == pytest.approx(ratio, abs=0.01)
    assert pr.contrast(a, b) == pytest.approx(wcag_contrast(a, b), abs=0.005)


def test_colour_parsing():
    assert pr.parse_colour("#fff") == (255, 255, 255) and pr.parse_colour("black") == (0, 0, 0)
    assert pr.parse_colour("rgb(1, 2, 3)") == (1, 2, 3)
    assert pr.parse_colour("rgba(0,0,0,0.5)") == pytest.approx((127.5, 127.5, 127.5))  # over white
    assert pr.parse_colour("papayawhip") is None and not pr.readable("papayawhip")
    assert pr.readable("#000000") and pr.readable(TEXT) and not pr.readable(GUIDE)  # 7.46:1 and 2.7:1


# ---------- what every presenter figure must satisfy ----------
def as_hex(colour) -> str:
    rgb = pr.parse_colour(colour)
    assert rgb is not None, f"unknown colour {colour!r}"
    return "#" + "".join(f"{round(v):02x}" for v in rgb)


def fonts(spec, path=""):
    """(path, font dict) of every font in a Plotly figure's JSON (hover labels left out: not on the slide; the
    template too: its defaults are what the figure's own values override)."""
    if isinstance(spec, dict):
        for k, v in spec.items():
            here = f"{path}.{k}"
            if here == ".layout.template":
                continue
            if k in FONT_KEYS and isinstance(v, dict) and "hoverlabel" not in path:
                yield here, v
            yield from fonts(v, here)
    elif isinstance(spec, list):
        for i, v in enumerate(spec):
            yield from fonts(v, f"{path}[{i}]")


def presenter_problems(spec: dict) -> list[str]:
    """Everything that breaks the presenter style in a Plotly figure's JSON ({"data", "layout"})."""
    layout, bad = spec["layout"], []
    card = layout.get("paper_bgcolor")
    if card is None or as_hex(card) != pr.CARD or as_hex(layout.get("plot_bgcolor", "black")) != pr.CARD:
        bad.append(f"background {card!r}")
        card = pr.CARD
    base = layout.get("font", {})
    if "color" not in base or "size" not in base:
        bad.append(f"layout.font {base}")
    for path, font in fonts(spec):
        on_data = path.startswith(".data") and path.rsplit(".", 1)[-1] != "tickfont" and "colorbar" not in path
        least = pr.MIN_DATA_FONT if on_data else pr.MIN_FONT  # text on the data (cells) must also fit them
        colours = font.get("color")
        for c in colours if isinstance(colours, list) else [colours]:
            if c is not None and wcag_contrast(as_hex(c), as_hex(card)) < 7:
                bad.append(f"{path}.color {c} on {card}")
        sizes = font.get("size")
        for s in sizes if isinstance(sizes, list) else [sizes]:
            if s is not None and s < least:
                bad.append(f"{path}.size {s}")
    return bad


def sample_figures() -> dict[str, go.Figure]:
    """Figures with every kind of text the builders use: titles, axis titles, subplot titles, annotations in grey,
    small tick fonts, heatmap cell text, a colourbar, a legend, shapes."""
    sub = make_subplots(rows=1, cols=2, subplot_titles=("left", "right"))
    sub.add_trace(go.Scatter(x=[0, 1], y=[1, 0], name="a", line=dict(color=ORANGE, width=2)), row=1, col=1)
    sub.add_trace(go.Scatter(x=[0, 1], y=[0, 1], name="b", mode="markers", marker=dict(color=BLUE, size=8)),
                  row=1, col=2)
    sub.add_annotation(x=0.5, y=0.5, text="note", font=dict(size=11, color=GUIDE), showarrow=False)
    sub.add_shape(type="line", x0=0, x1=1, y0=0.5, y1=0.5, line=dict(color=GUIDE, width=1, dash="dot"))
    sub.update_layout(title=dict(text="title", font=dict(size=13)),
                      xaxis=dict(tickfont=dict(size=9), title=dict(text="x")),
                      legend=dict(font=dict(size=10, color=TEXT)))
    heat = go.Figure(go.Heatmap(z=np.arange(6).reshape(2, 3), texttemplate="%{z}", textfont=dict(size=10),
                                colorbar=dict(title=dict(text="value"))))
    heat.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="text", text=["x", "y"], textfont=dict(size=9, color="#555")))
    history = [{"epoch": e, "train_loss": 1 / (e + 1), "val_loss": 1.2 / (e + 1)} for e in range(5)]
    labels = {"epoch": "epoch", "loss": "loss", "accuracy": "acc", "train": "train", "val": "val", "test": "test",
              "true": "true", "predicted": "pred", "count": "n", "fpr": "fpr", "tpr": "tpr", "chance": "chance",
              "threshold": "thr"}
    return {"subplots": sub, "heatmap": heat, "loss_curves": loss_curves(history, labels, held_out="val"),
            "confusion": confusion_figure([[5, 1], [2, 7]], ["a", "b"], labels),
            "roc": roc_figure(np.array([0, 0.2, 1]), np.array([0, 0.8, 1]), 0.8, (0.2, 0.8), labels)}


@pytest.mark.parametrize("name", list(sample_figures()))
def test_presenter_figure_is_readable_and_the_input_is_kept(name):
    fig = sample_figures()[name]
    before = json.dumps(fig.to_plotly_json(), sort_keys=True, default=str)
    assert presenter_problems(fig.to_plotly_json()) != []  # the normal figure is not in presenter style
    out = pr.presenter_figure(fig)
    assert presenter_problems(out.to_plotly_json()) == []
    assert json.dumps(fig.to_plotly_json(), sort_keys=True, default=str) == before  # not mutated
    assert out is not fig
    assert len(out.data) == len(fig.data)
    for a, b in zip(fig.data, out.data, strict=True):  # the data's colours are the same
        assert a.type == b.type
        for part in ("line", "marker"):
            if getattr(a, part, None) is not None and getattr(a, part).color is not None:
                assert getattr(b, part).color == getattr(a, part).color


def test_presenter_figure_sizes_and_widths():
    sub = sample_figures()["subplots"]
    out = pr.presenter_figure(sub)
    assert out.layout.font.size == pytest.approx(12 * 1.6)  # Plotly's default 12 px, 1.6x
    assert out.layout.title.font.size == pytest.approx(13 * 1.6)
    assert out.layout.xaxis.title.font.size == pytest.approx(14 * 1.6)  # as Streamlit's theme, 14 px, 1.6x
    assert out.layout.xaxis.tickfont.size == pr.MIN_FONT  # 9 px * 1.6 = 14.4: raised to the minimum
    assert out.layout.legend.font.color == pr.INK and sub.layout.legend.font.color == TEXT
    note = [a for a in out.layout.annotations if a.text == "note"][0]
    assert note.font.color == pr.INK and note.font.size == pr.MIN_FONT
    assert {a.text for a in out.layout.annotations} == {"left", "right", "note"}  # subplot titles kept
    assert out.data[0].line.width == pytest.approx(3.0) and out.data[0].line.color == ORANGE
    assert out.data[1].marker.size == pytest.approx(12.0) and out.data[1].marker.color == BLUE
    assert out.layout.shapes[0].line.width == pytest.approx(1.5) and out.layout.shapes[0].line.color == GUIDE
    assert out.layout.xaxis.linecolor == pr.AXIS and out.layout.xaxis2.tickcolor == pr.AXIS
    sized = go.Figure(layout=dict(height=300, margin=dict(l=40, r=10, t=30, b=20, pad=2)))
    big = pr.presenter_figure(sized).layout
    assert big.height == 375 and (big.margin.l, big.margin.t, big.margin.pad) == (64, 48, 2)
    heat = pr.presenter_figure(sample_figures()["heatmap"])
    assert heat.data[0].colorbar.tickfont.size >= pr.MIN_FONT and heat.data[0].colorbar.title.font.color == pr.INK
    assert heat.data[0].textfont.size == 16 and heat.data[0].textfont.color is None  # 10 px * 1.6; Plotly picks colours
    assert heat.data[1].textfont.color == "#555"  # 7.46:1 on white: readable, kept
    assert heat.to_plotly_json()["data"][0]["z"] == sample_figures()["heatmap"].to_plotly_json()["data"][0]["z"]


def sample_chart():
    rows = [{"x": i, "y": i * i, "k": "ab"[i % 2]} for i in range(6)]
    line = alt.Chart(alt.Data(values=rows)).mark_line(strokeWidth=2, color=BLUE).encode(x="x:Q", y="y:Q")
    dots = alt.Chart(alt.Data(values=rows)).mark_point(size=40).encode(
        x="x:Q", y="y:Q", color=alt.Color("k:N", scale=alt.Scale(range=[ORANGE, BLUE])))
    text = alt.Chart(alt.Data(values=rows)).mark_text(color=GUIDE, fontSize=10).encode(x="x:Q", y="y:Q", text="k:N")
    return (line + dots + text).properties(title="chart").configure_axis(grid=False)


def test_presenter_chart_configures_fonts_and_keeps_data_colours():
    chart = sample_chart()
    before = chart.to_dict()
    spec = pr.presenter_chart(chart).to_dict()
    assert chart.to_dict() == before  # not mutated
    cfg = spec["config"]
    assert cfg["background"] == pr.CARD and cfg["axis"]["grid"] is False  # the chart's own config kept
    for part in ("axis", "legend", "header"):
        for what in ("label", "title"):
            assert cfg[part][f"{what}FontSize"] >= pr.MIN_FONT
            assert wcag_contrast(cfg[part][f"{what}Color"], pr.CARD) >= 7
    assert cfg["axis"]["labelFontSize"] == pytest.approx(12 * 1.6)  # Streamlit's 12 px labels, 1.6x
    assert cfg["axis"]["titleFontSize"] == pytest.approx(14 * 1.6)
    assert cfg["title"]["fontSize"] == pytest.approx(16 * 1.6) and cfg["title"]["color"] == pr.INK
    line, dots, text = spec["layer"]
    assert line["mark"] == {"type": "line", "strokeWidth": 3.0, "color": BLUE}
    assert dots["mark"]["size"] == pytest.approx(40 * 1.5 ** 2)  # an area: 1.5x across
    assert dots["encoding"]["color"]["scale"]["range"] == [ORANGE, BLUE]
    assert text["mark"]["fontSize"] == pr.MIN_FONT and text["mark"]["color"] == pr.INK


# ---------- every lab's page (AppTest): the charts as Streamlit sends them ----------
def plotly_specs(at) -> list[tuple[dict, dict]]:
    """(figure JSON, Plotly config) of every Plotly chart on the page, from the element's proto."""
    return [(json.loads(e.proto.spec), json.loads(e.proto.config)) for e in at.get("plotly_chart")]


def vega_specs(at) -> list[dict]:
    return [json.loads(e.proto.spec) for e in at.get("vega_lite_chart")]


def sections(lab) -> list:
    """The values of a lab's `section` parameter ([None] for a lab of one page): every section's charts."""
    import importlib

    schema = importlib.import_module(f"labs.{lab.name}.schema").SCHEMA
    return next(([(p.name, c) for c in p.choices] for p in schema if p.name in SECTION and p.choices), [None])


def open_sections(lab, **query):
    """Each section's page (the tests here only read them: shared with the other tests that read the same page)."""
    for section in sections(lab):
        yield section, shared_lab(lab.file, "en", **query, **(dict([section]) if section else {}))


@pytest.mark.parametrize("lab", LABS, ids=lambda lab: lab.url_path)
def test_every_lab_in_the_presenter_view_has_slide_ready_charts(lab):
    n_plotly = n_vega = 0
    for section, at in open_sections(lab, present="1", figures="svg"):
        specs = plotly_specs(at)
        for spec, config in specs:
            name = config["toImageButtonOptions"]["filename"]
            assert presenter_problems(spec) == [], (section, name, presenter_problems(spec))
            assert config.get("displayModeBar") is not False and config["displaylogo"] is False
            options = config["toImageButtonOptions"]
            assert options["format"] == "svg" and name.startswith(lab.url_path + "-")
        for spec in vega_specs(at):
            cfg = spec["config"]
            assert cfg["background"] == pr.CARD
            assert min(cfg["axis"]["labelFontSize"], cfg["axis"]["titleFontSize"], cfg["legend"]["labelFontSize"]) >= 18
            assert wcag_contrast(cfg["axis"]["labelColor"], pr.CARD) >= 7
        assert at.query_params["figures"] == "svg"  # the session's choice stays in the URL
        n_plotly, n_vega = n_plotly + len(specs), n_vega + len(vega_specs(at))
    print(f"{lab.url_path}: {n_plotly} Plotly and {n_vega} Altair charts checked")
    if lab.url_path not in ("classification", "classroom"):  # those two draw charts only after training / a vote
        assert n_plotly + n_vega > 0, "no chart on the page to check"


@pytest.mark.parametrize("lab", [lab for lab in LABS if lab.url_path in ("optimizers", "lm", "gpu")],
                         ids=lambda lab: lab.url_path)
def test_outside_the_presenter_view_figures_are_as_before(lab):
    n = 0
    for _, at in open_sections(lab):
        specs, vega = plotly_specs(at), vega_specs(at)
        for spec, config in specs:
            assert spec["layout"].get("font", {}).get("size", 12) < pr.MIN_FONT  # no presenter style
            assert config["toImageButtonOptions"]["format"] == "png" and config["toImageButtonOptions"]["scale"] == 2
            assert config.get("displayModeBar") is not False
        for spec in vega:
            assert spec.get("config", {}).get("background") != pr.CARD
        n += len(specs) + len(vega)
        assert "figures" not in at.query_params  # the default is not written into the URL
    assert n > 0


def test_the_classrooms_answer_histogram_is_a_presenter_chart(monkeypatch):
    """The histogram of answers (labs/classroom) goes through ui.charts like every chart; the projector shows it once
    the teacher reveals (before, a vote shown while it runs would sway it)."""
    from apptools import open_app
    from ui import classroom

    monkeypatch.setenv(classroom.STORE_ENV, "memory")
    classroom._room.clear()
    try:
        t = open_lab("labs/classroom/page.py", "en", present="1")
        t.button(key="room.start_btn").click().run()
        code = t.session_state["_cls.code"]
        t.text_input(key="room.own_q").input("Will it curve?")
        t.text_area(key="room.own_opts").input("yes\nno\nit depends")
        t.button(key="room.pose_own").click().run()
        s = open_app("en")
        s.query_params.update({"class": code})
        s.run()
        s.button(key="room.opt.1").click().run()
        t.run()
        assert not t.exception and not s.exception
        assert vega_specs(t) == []  # the projector: no count while the vote runs
        t.button(key="room.reveal").click().run()
        assert not t.exception
        (spec,) = vega_specs(t)
        assert spec["config"]["background"] == pr.CARD and spec["config"]["axis"]["labelFontSize"] >= pr.MIN_FONT
        (chart,) = t.get("vega_lite_chart")  # Streamlit sends the rows as Arrow
        rows = pa.ipc.open_stream(chart.proto.data.data).read_all().to_pydict()
        assert sorted(rows["answers"]) == [0] * (len(rows["answers"]) - 1) + [1]
    finally:
        classroom._room.clear()


def test_every_lab_chart_goes_through_ui_charts():
    """No lab calls Streamlit's chart elements itself: ui.charts gives every chart the presenter style and its
    download (a new chart that skipped it would stay grey-on-white in the presenter view)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    direct = re.compile(r"(?<!charts)\.(plotly_chart|altair_chart|vega_lite_chart|bar_chart|line_chart|area_chart"
                        r"|scatter_chart|pyplot)\(")
    found = [f"{p.relative_to(root)}:{i}" for p in (root / "labs").rglob("*.py")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if direct.search(line)]
    assert found == []
