"""The language-model lab's live run (sim.language.lm.LMRun) on shared trajectories: what any cursor sees and
probes is what a private run shows at the same step."""
import numpy as np
import torch

from labs.lm.training import bench_spec
from sim.core.live import Runs, Scheduler
from sim.language.lm import generate, next_token_probs, prompt_logits


def same_frame(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        all(np.array_equal(x, y) for x, y in zip(a[k], b[k], strict=True)) if isinstance(a[k], tuple) else a[k] == b[k]
        for k in a)


def private(spec, steps: int):
    run = spec.build()
    run.advance(steps)
    return run


def probe(run) -> tuple:
    """What the page reads of the model at a step: the next-token distribution after a prompt, and a sample."""
    ids = run.task.tokenizer.encode("the ")
    return next_token_probs(prompt_logits(run.trainer, ids), 1.0, 0, 1.0), generate(run.trainer, "", 30, 1.0, 0, 1.0,
                                                                                     seed=1)


def test_grouping_of_steps_does_not_change_the_run():
    spec, _ = bench_spec()
    one, other = spec.build(), spec.build()
    one.advance(7)
    for n in (3, 1, 3):
        other.advance(n)
    assert same_frame(one.frame(), other.frame())
    assert all(torch.equal(p, q) for p, q in zip(one.trainer.model.parameters(), other.trainer.model.parameters(),
                                                 strict=True))


def test_two_cursors_on_one_run_see_and_probe_what_a_private_run_shows():
    spec, _ = bench_spec(seed=3)
    runs = Runs(Scheduler(workers=1))
    a, b = runs.open(spec), runs.open(spec)
    assert a.traj is b.traj
    a.advance(60)  # past a validation step (50) and a curve decimation
    for _ in range(4):
        b.step_once()
    b.reset()
    b.advance(9)
    seen = a.frames(-1) + b.frames(-1) + [(s, f) for s, f in a.traj.frames.items() if s in (0, 1, 50, 59)]
    for step, frame in seen:
        assert same_frame({k: frame[k] for k in frame if k not in ("step", "run", "n")}, private(spec, step).frame())
    for cursor in (a, b):
        with cursor.model() as run:
            got = probe(run)
        want = probe(private(spec, cursor.pos))
        assert cursor.pos in (60, 9) and torch.equal(got[0], want[0]) and got[1] == want[1]
