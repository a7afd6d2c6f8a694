"""sim.plots.alignment: the live frame's panels carry the run's own curves, the mask figure the mask, the table the
answers and the rule's marks."""
import numpy as np

from sim.alignment import task as tk
from sim.alignment.pipeline import STAGES, PipelineRun
from sim.plots.alignment import mask_figure, pipeline_frame, side_by_side_rows

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
