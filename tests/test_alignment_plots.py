"""sim.plots.alignment: the live frame's panels carry the run's own curves, the mask figure the mask, the table the
answers and the rule's marks."""
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sim.alignment import task as tk
from sim.alignment.pipeline import STAGES, PipelineRun
from sim.plots.alignment import mask_figure, pipeline_frame, side_by_side_rows
from ui.components import component_script

UI = Path(__file__).resolve().parent.parent / "ui"

LABELS = {k: k for k in ("step", "loss", "share", "reward", "kl", "loss_title", "share_title", "reward_title",
                         "kl_title", "format", "follows", "accuracy", *STAGES)} | {"caption": "{step}/{total} {stage}",
                                                                                "dpo_loss": "dpo + nll"}
SHORT = {"pretrain": 12, "sft": 11, "reward": 10, "dpo": 12, "rlhf": 11, "hack": 12}


def test_the_frame_draws_the_runs_curves():
    run = PipelineRun(0, steps=SHORT)
    run.advance(40)  # in DPO
    f = run.frame()
    d = pipeline_frame(f, LABELS)
    assert d["epoch"] == 40 and d["caption"] == "40/68 dpo"
    shares, loss, reward, kl = d["panels"]  # the shares first: the live view's figure, drawn larger than the others
    assert all(p["x_range"] == [0.0, 40.0] for p in d["panels"])
    assert all(shares["width"] > p["width"] and shares["height"] > p["height"]
               and shares["width"] / shares["height"] >= p["width"] / p["height"] for p in (loss, reward, kl))
    lines = {s["label"]: s for s in loss["series"] if s["label"]}
    assert set(lines) == {"pretrain", "sft", "reward", "dpo + nll"}  # the DPO loss curve is named as its label says
    x, y = run.curves["sft"]["loss"]
    assert lines["sft"]["x"] == [float(v) for v in x] and np.allclose(lines["sft"]["y"], y, atol=1e-4)
    # stage boundaries drawn up to the step reached: sft, reward, dpo start at 12, 23, 33
    bounds = sorted(s["x"][0] for s in loss["series"] if not s["label"])
    assert bounds == [12.0, 23.0, 33.0]
    assert {s["label"] for s in shares["series"] if s["label"]} == {
        "pretrain: format", "sft: format", "sft: follows", "dpo: follows", "reward: accuracy"}
    assert [s["label"] for s in reward["series"]] == ["dpo"] and [s["label"] for s in kl["series"]] == ["dpo"]
    assert kl["series"][0]["y"][0] == 0.0  # the DPO model is the SFT model when it starts


def test_the_mask_figure_and_the_table():
    seq = "abcd=aef."
    fig = mask_figure(list(seq[:-1]), list(seq[1:]), tk.sft_mask().numpy(), {k: k for k in
                                                                             ("title", "input", "target", "mask")})
    z = np.asarray(fig.data[0].z)
    assert z.tolist() == [[0, 0, 0, 0, 1, 1, 1, 1]] and fig.data[0].text[0][4].startswith("= → a")
    rows = side_by_side_rows(["dhfg="], {"sft": ["abc."], "dpo": ["dab."]}, {"sft": [False], "dpo": [True]},
                             {"sft": "SFT", "dpo": "DPO"}, "prompt")
    assert rows == [{"prompt": "dhfg=", "SFT": "abc. ✗", "DPO": "dab. ✓"}]


def _drawn_legend(panel, tmp_path):
    """Draw `panel` with ui/live_common.js's drawXY on a recording 2-D context (text 6 px a character) in node; the
    plot area (its frame, the first strokeRect) and where each series' label was written."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    ctx = """const calls = [];
const ctx = new Proxy({}, {get: (o, k) => (k in o ? o[k] : (k === 'measureText' ? (t) => ({width: 6 * t.length})
  : (...a) => { calls.push([k, ...a]); })), set: (o, k, v) => { o[k] = v; return true; }});"""
    module = tmp_path / "legend.mjs"
    module.write_text("globalThis.window = {};\n" + component_script(UI / "live_plots.js", UI / "live_plots.css")
                      + f"\n{ctx}\ndrawXY(ctx, {json.dumps(panel)});\nconsole.log(JSON.stringify(calls));\n")
    result = subprocess.run([node, str(module)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    calls = json.loads(result.stdout)
    frame = next(c[1:] for c in calls if c[0] == "strokeRect")
    labels = {s["label"] for s in panel["series"] if s["label"]}
    return frame, {c[1]: (c[2], c[3]) for c in calls if c[0] == "fillText" and c[1] in labels}


def test_the_pipeline_legends_sit_below_their_plot_areas(tmp_path):
    """Up to seven stages' lines: a legend in the plot area's corner covered the shares where they reach 1. Every
    panel's legend is drawn below its plot area (and its x axis), inside the panel, each label once."""
    run = PipelineRun(0, steps=SHORT)
    run.advance(67)  # every stage has its lines
    en = {**LABELS, "pretrain": "pretrained", "reward": "reward model", "hack": "RLHF, KL weight 0",
          "format": "format", "follows": "follows the rule", "accuracy": "held-out accuracy"}
    for panel in pipeline_frame(run.frame(), en)["panels"]:
        assert panel["legend"] == "below"
        (left, top, width, height), legend = _drawn_legend(panel, tmp_path)
        assert set(legend) == {s["label"] for s in panel["series"] if s["label"]} and legend
        for x, y in legend.values():
            assert top + height + 20 < y <= panel["height"] and 0 <= x < panel["width"]  # under the x axis' numbers
        assert height >= 0.55 * panel["height"]  # the plot keeps most of the panel
    inside = {**pipeline_frame(run.frame(), en)["panels"][0], "legend": "inside"}  # what it was: over the data
    (left, top, width, height), legend = _drawn_legend(inside, tmp_path)
    assert all(top < y < top + height for _, y in legend.values())
