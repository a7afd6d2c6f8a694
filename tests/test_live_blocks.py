"""The transformer-block lab's live runs ("blk.depth": Pre-LN and Post-LN with and without warmup, and "blk.moe": the
three balancing modes; sim.transformers.live, models stepped in turn) against the live-run contract."""
import numpy as np
import pytest
import torch
from live_contract import assert_grouping_invariant, check_two_cursors

from labs.blocks.live import depth_spec
from labs.blocks.moe import moe_spec
from labs.blocks.schema import SCHEMA
from sim.transformers.blocks import init_gradient_ratio
from sim.transformers.moe import flops_per_token, param_counts

DEFAULTS = {p.name: p.default for p in SCHEMA}
DEPTH = {"r_layers": 2, "r_width": 16, "r_warmup": 50, "r_speed": 2}
MOE = {"m_experts": 4, "m_speed": 2}


def depth_probe(run):
    """What the page reads of the model at the step shown: the ratio of the gradients at initialisation, and each
    model's logits on a fixed batch."""
    pre, post = (next(tr for tr in run.trainers if tr.config.ln == ln) for ln in ("pre", "post"))
    x, _ = pre.task.batch(4, torch.Generator().manual_seed(5))
    with torch.no_grad():
        logits = [tr.model(x).numpy() for tr in run.trainers]
    return init_gradient_ratio(pre, post), logits


def moe_probe(run):
    """The parameter and FLOP counts the page writes, and each model's routing of a fixed batch (its experts and
    what it keeps)."""
    tr = run.trainers[0]
    x, _, _ = tr.task.batch(64, torch.Generator().manual_seed(5))
    routes = []
    with torch.no_grad():
        for t in run.trainers:
            t.model(x)
            r = t.model.moe.last
            routes.append((r.index.numpy(), r.keep.numpy(), r.probs.numpy()))
            t.model.moe.last = None
    return param_counts(tr.model), flops_per_token(tr.model), routes


SPECS = {"depth": (lambda: depth_spec({**DEFAULTS, **DEPTH}), depth_probe),
         "moe": (lambda: moe_spec({**DEFAULTS, **MOE}), moe_probe)}


@pytest.mark.parametrize("name", SPECS)
def test_advance_grouping_changes_nothing(name):
    make, probe = SPECS[name]
    assert_grouping_invariant(make(), [(5, 14)], probe)  # 5: a turn in the middle of a round


@pytest.mark.parametrize("name", SPECS)
def test_two_cursors_see_what_a_private_run_shows(name):
    make, probe = SPECS[name]
    check_two_cursors(make(), probe)


def test_speed_and_step_keep_the_labs_meaning():
    s = depth_spec({**DEFAULTS, **DEPTH})
    assert (s.unit, s.speed, s.step_size) == (1, 2, 8)  # a tick: 2 steps in turn; Step: every model 2 steps
    run = s.build()
    run.advance(s.step_size)
    assert [tr.steps for tr in run.trainers] == [2, 2, 2, 2]
    run.advance(3)
    assert [tr.steps for tr in run.trainers] == [3, 3, 3, 2]
    m = moe_spec({**DEFAULTS, **MOE})
    assert (m.speed, m.step_size) == (2, 6)


def test_the_moe_frame_is_compact():
    run = moe_spec({**DEFAULTS, **MOE}).build()
    run.advance(9)
    f = run.frame()
    assert f["steps"] == 9 and [r["mode"] for r in f["runs"]] == ["none", "aux", "bias"]
    for r in f["runs"]:
        assert r["steps"] == 3 and r["load"].dtype == np.uint8 and r["load"].shape == (4, 3)
        assert r["by_cluster"].dtype == np.float32 and r["by_cluster"].sum() == 256  # the last batch's tokens


def test_a_run_stops_when_every_model_has_diverged():
    run = depth_spec({**DEFAULTS, **DEPTH}).build()
    for tr in run.trainers:
        tr.model.head.weight.data[0, 0] = float("nan")
    run.advance(3)
    assert not run.stopped and [tr.diverged for tr in run.trainers] == [True, True, True, False]
    run.advance(10)
    assert run.stopped and run.steps == 4
