"""The attention lab against the article's §5.5 (issue 22): the dot product of random unit vectors has variance
1/d_k, not d_k; d_k is the variance for vectors whose entries each have variance 1. Measured, drawn, and written
beside the article's sentence on the page."""
import numpy as np
import pytest

from apptools import open_lab, texts
from sim.plots.attention import variance_figure
from sim.transformers.attention import dot_variance
from ui.i18n import catalogue

PAGE = "labs/attention/page.py"
DIMS = [1, 2, 4, 8, 16, 32, 64, 128]


def test_unit_vectors_give_one_over_d_and_unit_entries_give_d():
    v = dot_variance(DIMS, 4096, seed=1)
    np.testing.assert_allclose(v["unit"], 1 / np.array(DIMS), rtol=0.1)
    np.testing.assert_allclose(v["entries"], DIMS, rtol=0.1)
    assert v["unit"][0] == pytest.approx(1.0, abs=1e-3)  # d = 1: ±1 each, a product of two signs


def test_the_variance_figure_draws_the_measured_values_and_both_formulas():
    v = dot_variance(DIMS, 256)
    labels = {k: k for k in ("d_h", "variance", "unit", "entries", "inverse", "width")}
    fig = variance_figure(DIMS, v, labels, current=8)
    assert [tr.name for tr in fig.data] == ["unit", "inverse", "entries", "width"]
    np.testing.assert_allclose(fig.data[0].y, v["unit"])
    np.testing.assert_allclose(fig.data[1].y, 1 / np.array(DIMS))
    np.testing.assert_allclose(fig.data[3].y, DIMS)
    assert fig.layout.yaxis.type == "log"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("d_model,heads", [(16, 2), (32, 1)])
def test_the_page_writes_the_measured_variance_beside_the_article(lang, d_model, heads):
    cat = catalogue(lang)
    at = open_lab(PAGE, lang, d_model=str(d_model), heads=str(heads))
    assert not at.exception
    d = d_model // heads
    dims = sorted({*DIMS, d})
    v = dot_variance(dims, 4096)
    i = dims.index(d)
    text = texts(at)
    assert cat["att.course.dk.says"] in text
    assert cat["att.course.dk.shows.inverse"].format(d=d, pairs="4,096", unit=f"{v['unit'][i]:.4g}", inv=f"{1 / d:.4g}",
                                             entries=f"{v['entries'][i]:.4g}") in text
    assert at.get_by_key("att.fig.variance")
