"""AppTest: the foundations lab's CPU-vs-GPU section in both languages: the intensities from the sizes, the sweep
on its button (small sizes) with its two figures, the published GPU table, bad URL values."""
import json

import pytest

from apptools import open_lab, texts
from labs.foundations.hardware import sweeps
from sim.gpu.memsim import GPUS
from sim.linalg import roofline as rf
from ui.i18n import catalogue

P = "labs/foundations/page.py"


def head(key: str, cat) -> str:
    return cat[key].split("{")[0].strip()[:20]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_sweep_runs_on_its_button_and_places_the_operations_on_the_roofline(lang):
    cat = catalogue(lang)
    sweeps().pop(256, None)  # as in a fresh app process
    at = open_lab(P, lang, section="hardware", hw_max="256")
    assert not at.exception and not at.error
    text = texts(at)
    assert f"**{rf.matmul_intensity(256):.4g}" in text and f"**{rf.add_intensity():.4g}" in text  # 42.67 and 0.08333
    table = at.dataframe[0].value
    assert len(table) == len(GPUS) and set(table[cat["fnd.hw.col.source"]]) == {cat["fnd.hw.published"]}
    assert head("fnd.hw.course.says", cat) in text and head("fnd.hw.not_yet", cat) in text
    (published,) = at.get("plotly_chart")  # until the sweep: the published GPUs' rooflines
    names = [d["name"] for d in json.loads(published.proto.spec)["data"] if d.get("showlegend") is not False]
    assert names == [cat["fnd.hw.fig.published"].format(name=g.name) for g in GPUS.values()]
    at.button(key="fnd.hw_run").click().run(timeout=120)
    assert not at.exception
    s = sweeps()[256]  # the sweep the page ran, kept for every session
    assert [p.n for p in s.matmul_at(1)] == [64, 128, 256]
    figures = at.get("plotly_chart")
    assert len(figures) == 2  # the roofline (in the stage, first) and the throughput sweep below it
    traces = json.loads(figures[0].proto.spec)["data"]
    names = [d["name"] for d in traces]
    assert names == [cat["fnd.hw.fig.roof"], *(cat["fnd.hw.fig.matmul"].format(threads=k) for k in s.threads),
                     cat["fnd.hw.fig.add"]]
    add = traces[-1]  # the addition's points: at 1/12 FLOP/byte, at the GFLOP/s timed
    assert add["x"] == pytest.approx([1 / 12] * len(s.threads)) and add["y"] == [p.flops_per_s / 1e9 for p in s.add]
    text = texts(at)
    assert f"{s.peak_flops / 1e9:.1f}" in text and f"{s.bandwidth / 1e9:.1f}" in text and f"{s.ridge:.3g}" in text
    big = s.matmul_at(s.all_threads)[-1]  # right or left of the ridge, said as it is
    assert head("fnd.hw.placed.compute" if big.intensity >= s.ridge else "fnd.hw.placed.memory", cat) in text
    table = at.dataframe[0].value
    assert len(table) == len(GPUS) + 1 and cat["fnd.hw.measured"] in set(table[cat["fnd.hw.col.source"]])
    at.run()  # measured once per process: the figures stay, with nothing to press again
    assert "fnd.hw_run" not in [b.key for b in at.button] and len(at.get("plotly_chart")) == 2


def test_a_bad_size_in_the_url_gets_a_notice_and_the_default():
    at = open_lab(P, "en", section="hardware", hw_max="99999")
    assert not at.exception and at.warning
    assert f"**{rf.matmul_intensity(rf.SWEEP_SIZES[-1]):.4g}" in texts(at)
