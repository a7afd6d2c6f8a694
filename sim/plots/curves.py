"""Training curves: loss and accuracy against epoch, train in orange and the held-out set (validation
or test, by the caller's history keys) in blue.

Also holds the compact layout the other metric figures share.
"""

import plotly.graph_objects as go
import plotly.io as pio

from sim.core.history import decimate
from sim.plots.palette import BLUE, GUIDE, ORANGE

TRAIN_COLOR = ORANGE  # TensorFlow Playground's colours
TEST_COLOR = BLUE
GUIDE_COLOR = GUIDE  # reference lines (chance diagonal)
HEIGHT = 280
# plotly_white's layout (white background, light grid) without its per-trace-type defaults: the named template is
# validated and deep-copied into every figure (about 11 ms each; a page run builds five), this one in about 4 ms
WHITE = go.layout.Template(layout=pio.templates["plotly_white"].layout)


def with_white(fig: go.Figure) -> go.Figure:
    """fig's template set to WHITE without Plotly validating the template again (it was built from Plotly's own
    plotly_white): Plotly does the same when it gives a new figure its default template. 0.6 ms instead of
    4.8 ms a figure, which a classroom feels: each of 30 following students' pages builds five of them."""
    layout = fig._layout_obj
    validate, layout._validate = layout._validate, False
    try:
        layout.template = WHITE
    finally:
        layout._validate = validate
    return fig


def compact_layout(fig: go.Figure, x_title: str, y_title: str, height: int = HEIGHT) -> go.Figure:
    """Small white layout with tight margins, the legend in one row above the plot."""
    with_white(fig).update_layout(
        height=height,
        margin=dict(l=55, r=10, t=30, b=45),
        legend=dict(orientation="h", x=0, y=1.0, yanchor="bottom"),
        xaxis_title=x_title,
        yaxis_title=y_title,
    )
    return fig


def _train_test_figure(
    history: list[dict], key: str, name: str, value_format: str, labels: dict, held_out: str = "test"
) -> go.Figure:
    """Lines of history[f"train_{key}"] and history[f"{held_out}_{key}"] against epoch; labels[held_out] names
    the second ("test", or "val" for a run monitored on its validation set).

    A series with no value at all (no test split, empty history) is left out; None or NaN
    inside a series leaves a gap. A long history is min–max decimated, so the figure stays small.
    """
    fig = go.Figure()
    history = decimate(history, "epoch", (f"train_{key}", f"{held_out}_{key}"))
    epochs = [entry["epoch"] for entry in history]
    for split, colour in (("train", TRAIN_COLOR), (held_out, TEST_COLOR)):
        values = [entry.get(f"{split}_{key}") for entry in history]
        if all(v is None for v in values):
            continue
        fig.add_trace(go.Scatter(
            x=epochs, y=values, mode="lines", name=labels[split], line=dict(color=colour, width=2),
            hovertemplate=(f"{labels['epoch']}: %{{x}}<br>{labels[split]} · {name}: "
                           f"%{{y:{value_format}}}<extra></extra>"),
        ))
    return compact_layout(fig, labels["epoch"], name)


def loss_curves(history: list[dict], labels: dict, log_y: bool = False, held_out: str = "test") -> go.Figure:
    """Train and held-out loss per epoch. labels: "epoch", "loss", "train", and held_out ("test" or "val")."""
    fig = _train_test_figure(history, "loss", labels["loss"], ".4g", labels, held_out)
    fig.update_yaxes(type="log" if log_y else "linear")
    return fig


def accuracy_curves(history: list[dict], labels: dict, held_out: str = "test") -> go.Figure:
    """Train and held-out accuracy per epoch on a fixed 0-100 % axis.

    labels: "epoch", "accuracy", "train", and held_out ("test" or "val").
    """
    fig = _train_test_figure(history, "acc", labels["accuracy"], ".1%", labels, held_out)
    fig.update_yaxes(range=[0, 1], tickformat=".0%")
    return fig
