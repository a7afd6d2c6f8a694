"""Sessions are threads of one server process: what one builds or trains must not depend on what the others do."""
import sys
import threading

import numpy as np
import pytest
import torch

from sim.core.threads import configure_threads
from sim.fitting.fit import FitConfig, FitTrainer
from sim.nets.training import ClassifierConfig, Trainer
from sim.transformers.tasks import make_task
from sim.transformers.transformer import LMTrainer, TransformerConfig

THREADS, BUILDS = 8, 20
TASK = make_task("copy", 4)
X_FIT = np.linspace(-1, 1, 24)


def lm(seed: int) -> LMTrainer:
    config = TransformerConfig(len(TASK.vocab), TASK.block_size, n_layer=2, n_head=2, d_model=16, d_ff=32,
                               dropout=0.1)
    return LMTrainer(config, TASK, batch_size=4, seed=seed)


def classifier(seed: int) -> Trainer:
    return Trainer(ClassifierConfig(n=100, hidden=(6, 3), dropout=0.2, seed=seed))


def fit(seed: int) -> FitTrainer:
    return FitTrainer(FitConfig(hidden=(8, 8), dropout=0.2, seed=seed), X_FIT[::2], np.sin(3 * X_FIT[::2]),
                      X_FIT[1::2], np.sin(3 * X_FIT[1::2]))


BUILDERS = {"lm": lm, "classifier": classifier, "fit": fit}


def parameters(trainer) -> list[tuple[str, torch.Tensor]]:
    if isinstance(trainer, Trainer):  # the compiled engine's flat parameter vector
        return [("params", torch.from_numpy(trainer.net.params.copy()))]
    return [(name, p.detach().clone()) for name, p in trainer.model.named_parameters()]


def in_threads(work, n: int = THREADS) -> list:
    """work(i) in n threads started together, switching between them often; the results in thread order."""
    results, errors, start = [None] * n, [], threading.Barrier(n)

    def run(i: int) -> None:
        try:
            start.wait()
            results[i] = work(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the threads as a busy server would
    try:
        threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    if errors:
        raise errors[0]
    return results


@pytest.mark.parametrize("kind", BUILDERS)
def test_models_built_at_once_equal_the_one_at_a_time_builds(kind):
    build = BUILDERS[kind]
    seeds = [[t * BUILDS + b for b in range(BUILDS)] for t in range(THREADS)]
    alone = {s: parameters(build(s)) for row in seeds for s in row}
    together = in_threads(lambda i: [(s, parameters(build(s))) for s in seeds[i]])
    for row in together:
        for seed, params in row:
            assert [n for n, _ in params] == [n for n, _ in alone[seed]]
            for (name, p), (_, q) in zip(params, alone[seed], strict=True):
                assert torch.equal(p, q), f"{kind} seed {seed}: {name} differs"
    assert not torch.equal(alone[0][0][1], alone[1][0][1])  # and the seed matters


def test_runs_trained_at_once_equal_the_one_at_a_time_runs():
    def run(seed: int) -> tuple:
        a, b, c = lm(seed), classifier(seed), fit(seed)
        a.step(5)  # dropout masks drawn while training
        b.step(3)
        c.step(5)
        return [h["loss"] for h in a.history], b.history, c.history

    alone = [run(i) for i in range(THREADS)]
    assert in_threads(run) == alone


def test_training_from_several_threads_leaves_the_thread_count_alone():
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # anything but the 1 a per-call setting would leave behind
    models = [(lm(i), classifier(i), fit(i)) for i in range(THREADS)]
    try:
        def train(i: int) -> None:
            # a thread's first torch call here: it takes the process-wide setting of that moment, as a
            # Streamlit script thread does (a per-call set-and-restore could then restore another's 1)
            a, b, c = models[i]
            for _ in range(3):
                a.step(2)
                a.attention("abcd|ab")
                a.complete("abcd|", 4)
                b.step(1)
                b.predict_grid(10)
                c.step(2)
                c.predict(X_FIT)

        in_threads(train)
        # the main thread, and a thread started now (it takes torch's process-wide setting)
        assert torch.get_num_threads() == 2
        assert in_threads(lambda i: torch.get_num_threads(), n=1) == [2]
    finally:
        torch.set_num_threads(before)


def test_configure_threads_sets_one_thread_once():
    before = torch.get_num_threads()
    configure_threads.cache_clear()  # as in a fresh process
    try:
        configure_threads()
        assert torch.get_num_threads() == 1
        torch.set_num_threads(2)
        configure_threads()  # already done: a later call (another session's rerun of main.py) changes nothing
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
