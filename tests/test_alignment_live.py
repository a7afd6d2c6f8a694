"""The assistant lab's pipeline run ("asst.pipe.run", sim.alignment.pipeline.PipelineRun) against the live-run
contract (tests/live_contract.py), across every stage change, and what its frame holds."""
import numpy as np
from live_contract import assert_grouping_invariant, check_two_cursors

from labs.assistant.pipeline import PARAMS, pipeline_spec
from sim.alignment.pipeline import EVAL_EVERY, STAGES, outcome

DEFAULTS = {p.name: p.default for p in PARAMS}
SHORT = {"pretrain": 12, "sft": 11, "reward": 10, "dpo": 12, "rlhf": 11, "hack": 12}  # every stage in 68 steps


def spec(**v):
    return pipeline_spec({**DEFAULTS, "pipe_speed": 2, **v}, steps=SHORT)


def probe(run):
    """What the page reads of the run at the step shown: the side-by-side answers and the summary's figures."""
    return run.side_by_side(3), outcome(run)


def test_advance_grouping_changes_nothing_across_stage_changes():
    assert_grouping_invariant(spec(), [(11, 3), (30, 25), (5, 63)], probe)


def test_two_cursors_see_what_a_private_run_shows():
    frames, probes = check_two_cursors(spec(), probe)
    assert frames > 10 and probes > 5


def test_the_frame_holds_every_stage_and_the_run_ends():
    s = spec()
    assert (s.unit, s.speed, s.step_size) == (1, 2, 20)
    run = s.build()
    run.advance(1000)
    f = run.frame()
    assert run.stopped and f["steps"] == f["total"] == sum(SHORT.values()) and f["stage"] == "hack"
    assert [x["stage"] for x in f["stages"]] == list(STAGES)
    by = {x["stage"]: x for x in f["stages"]}
    assert by["sft"]["start"] == 12 and by["hack"]["start"] == 56
    for x in f["stages"]:
        steps, loss = x["curves"]["loss"]
        assert steps.dtype == np.int32 and loss.dtype == np.float32 and len(steps) == SHORT[x["stage"]]
        assert steps[0] == x["start"] and steps[-1] == x["start"] + x["steps"] - 1
    assert set(by["reward"]["curves"]) == {"loss", "accuracy"}
    for st in ("dpo", "rlhf", "hack"):
        assert {"format", "distinct", "follows", "reward", "kl"} <= set(by[st]["curves"])
        # measured when the stage starts, every EVAL_EVERY of its steps, and when it ends
        assert len(by[st]["curves"]["follows"][0]) == 1 + SHORT[st] // EVAL_EVERY + (SHORT[st] % EVAL_EVERY > 0)
    assert set(run.snapshots) == {"pretrain", "sft", "dpo", "rlhf", "hack"}


def test_other_settings_are_another_run():
    assert spec().settings != spec(pipe_kl=0.0).settings != spec(pipe_seed=1).settings
