"""A chart's text summary (sim.plots.describe) says what the figure object holds: its kind, title, axes with the range
of their data, series and number of points; in the words it is given (the page's language)."""
import re

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from sim.plots.describe import WORDS, describe, fmt
from ui.i18n import catalogue


def numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)]


def words(lang: str) -> dict[str, str]:
    """What ui.charts.chart_words gives the describer, read straight from the catalogue."""
    cat = catalogue(lang)
    return {k: cat[f"chart.desc.{k}"] for k in WORDS}


def test_a_plotly_line_chart_says_its_title_axes_range_series_and_points():
    rng = np.random.default_rng(0)
    x = np.arange(3, 250)
    a, b = rng.normal(1.0, 0.3, x.size), rng.normal(-2.0, 5.0, x.size)
    fig = go.Figure([go.Scatter(x=x, y=a, mode="lines", name="Adam"), go.Scatter(x=x, y=b, mode="lines", name="SGD")])
    fig.update_layout(title="Loss per step", xaxis_title="step", yaxis_title="loss")
    text = describe(fig)
    assert text.startswith("Line chart “Loss per step”.")
    assert f"x axis step, {fmt(x.min())} to {fmt(x.max())}" in text
    y = np.concatenate([a, b])
    assert f"y axis loss, {fmt(y.min())} to {fmt(y.max())}" in text
    assert "Series: Adam, SGD." in text and f"{2 * x.size} points." in text
    # the numbers in the sentence are the data's: min and max of each axis, then the count
    assert numbers(text.split("Series")[0]) == pytest.approx([x.min(), x.max(), y.min(), y.max()], rel=1e-3)


def test_the_range_follows_the_data_shown():
    fig = go.Figure(go.Scatter(x=[0.25, 1, 12.5], y=[-7, 3, 4], mode="markers"))
    assert "x axis, 0.25 to 12.5; y axis, -7 to 4." in describe(fig)
    fig.data[0].y = [-70, 3, 40]
    assert "y axis, -70 to 40." in describe(fig)


def test_plotly_kinds_categories_heatmap_values_and_subplots():
    bars = go.Figure(go.Bar(x=["a", "b", "c"], y=[1, 5, 2]))
    assert describe(bars).startswith("Bar chart.") and "x axis, 3 categories" in describe(bars)
    heat = go.Figure(go.Heatmap(z=[[0.5, 2], [-3, 1]]))
    assert "values from -3 to 2" in describe(heat) and describe(heat).startswith("Heat map.")
    sub = make_subplots(rows=1, cols=2)
    sub.add_scatter(x=[1, 2], y=[3, 4], row=1, col=1)
    sub.add_scatter(x=[10, 20], y=[30, 40], row=1, col=2)
    sub.update_xaxes(title_text="width", row=1, col=2)
    text = describe(sub)
    assert "x axis, 1 to 2; y axis, 3 to 4; x axis width, 10 to 20; y axis, 30 to 40." in text  # each subplot's own


def test_an_altair_chart_is_described_from_its_data_even_past_5000_rows():
    df = pd.DataFrame({"step": np.arange(6000), "loss": np.linspace(0.125, 9.5, 6000),
                       "optimiser": ["Adam", "SGD", "Lion"] * 2000})
    chart = alt.Chart(df).mark_line().encode(x="step:Q", y=alt.Y("loss:Q", title="training loss"),
                                             color="optimiser:N").properties(title="Race")
    text = describe(chart)
    assert text == ("Line chart “Race”. x axis step, 0 to 5999; y axis training loss, 0.125 to 9.5. "
                    "Series: Adam, SGD, Lion. 6000 points.")


def test_an_altair_layer_and_bars_from_inline_values():
    values = [{"n": 3, "word": "a"}, {"n": 11, "word": "b"}, {"n": 7, "word": "c"}]
    bars = alt.Chart(alt.Data(values=values)).mark_bar().encode(x="n:Q", y="word:N")
    rule = alt.Chart(alt.Data(values=[{"v": 5}])).mark_rule().encode(x="v:Q")
    text = describe(alt.layer(bars, rule))
    assert text.startswith("Bar chart and chart with lines.")
    three = alt.layer(bars, rule, alt.Chart(alt.Data(values=values)).mark_text().encode(x="n:Q", text="word:N"))
    assert describe(three).startswith("Bar chart, chart with lines and text chart.")
    assert "x axis n, 3 to 11; y axis word, 3 categories; x axis v, 5 to 5." in text


@pytest.mark.parametrize("make", ["plotly", "altair"])
def test_the_summary_is_in_the_words_it_is_given(make):
    if make == "plotly":
        fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[0.5, 0.25, 0.75], mode="lines", name="训练"))
        fig.update_layout(title="损失", xaxis_title="步数")
    else:
        df = pd.DataFrame({"x": [1, 2, 3], "y": [0.5, 0.25, 0.75]})
        fig = alt.Chart(df).mark_line().encode(x=alt.X("x:Q", title="步数"), y="y:Q").properties(title="损失")
    zh = describe(fig, words("zh"))
    assert zh.startswith("折线图“损失”。x 轴：步数，从 1 到 3；y 轴")
    assert "0.25" in zh and "0.75" in zh and "共 3 个点。" in zh
    assert "axis" not in zh and "Line" not in zh  # no English word left
    assert describe(fig, words("en")) == describe(fig)  # the catalogue's English is the describer's own
