"""Figure for 'why cross-entropy': gradient size at the logit against the predicted probability."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from sim.plots.palette import BLUE, NEUTRAL, ORANGE

COLOURS = {"cross_entropy": BLUE, "squared_error": ORANGE}


def gradient_figure(p: np.ndarray, grads: dict[str, np.ndarray], marker: float, labels: dict) -> go.Figure:
    """|dL/dz| for each loss against p (label y = 1), with the chosen p marked.

    labels: "p", "grad", and one per loss name ("cross_entropy", "squared_error").
    """
    fig = go.Figure()
    for name, colour in COLOURS.items():
        g = np.abs(grads[f"{name}_grad"])
        fig.add_scatter(x=p, y=g, name=labels[name], line={"color": colour, "width": 2.5},
                        hovertemplate=f"p=%{{x:.3f}}<br>{labels['grad']}=%{{y:.4f}}<extra>{labels[name]}</extra>")
    fig.add_vline(x=marker, line={"dash": "dot", "color": NEUTRAL})
    fig.update_layout(height=300, margin={"l": 50, "r": 10, "t": 10, "b": 40},
                      xaxis_title=labels["p"], yaxis_title=labels["grad"], legend={"orientation": "h", "y": 1.1})
    return fig
