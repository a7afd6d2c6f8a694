"""The assistant lab (paradigms and data sections): the cleaning steps' precision and recall at the defaults over
seeds, MinHash's error against the exact Jaccard, what the page's engine work costs, and the raw-vs-clean training
outcome.

    python -m benchmarks assistant [--seeds 10]        # cleaning scores, MinHash error, costs
    python -m benchmarks assistant --train 1500 --seeds 3   # + the live run to N steps: held-out vs test loss per seed
"""
import argparse
import os
import statistics
import time

import numpy as np

from sim.core.threads import configure_threads


def timed(f, repeats: int = 5) -> float:
    """Median seconds of f()."""
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def cleaning(seeds: int) -> None:
    from sim.dedup.clean import clean
    from sim.dedup.corpus import make_corpus

    rows = {}
    for seed in range(seeds):
        r = clean(make_corpus(seed))
        for s in r.steps:
            rows.setdefault(s.name, []).append((s.precision, s.recall))
    print(f"cleaning at the defaults, seeds 0-{seeds - 1}: precision / recall (least, median)")
    for name, v in rows.items():
        p, rc = [x[0] for x in v], [x[1] for x in v]
        print(f"  {name:14s} precision {min(p):.3f} / {statistics.median(p):.3f}   "
              f"recall {min(rc):.3f} / {statistics.median(rc):.3f}")


def minhash_error(pairs: int = 2000) -> None:
    from sim.dedup import jaccard, jaccard_estimate, minhash, shingles
    from sim.dedup.corpus import make_corpus

    rng = np.random.default_rng(0)
    c = make_corpus(0)
    err = []
    near = c.near_pairs()
    random_pairs = [tuple(rng.choice(len(c), 2, replace=False)) for _ in range(pairs - len(near))]
    for k, (a, b) in enumerate(near + random_pairs):
        sa, sb = shingles(c.lines[a]), shingles(c.lines[b])
        err.append(abs(jaccard_estimate(minhash(sa, 128, k), minhash(sb, 128, k)) - jaccard(sa, sb)))
    err = np.array(err)
    print(f"MinHash at 128 permutations over {len(err)} line pairs ({len(near)} injected near-duplicates): "
          f"{np.mean(err <= 0.1):.1%} within ±0.1, mean error {err.mean():.3f}, largest {err.max():.3f}")


def costs() -> None:
    from labs.assistant.data import FRAME_LABELS, drawn
    from sim.dedup.clean import clean
    from sim.dedup.corpus import make_corpus
    from sim.dedup.live import cleaning_run
    from sim.paradigms.bandit import train_bandit
    from sim.paradigms.generative import fit_gaussians, fit_logistic, grid, two_classes
    from ui.i18n import language

    c = make_corpus(0)
    print(f"corpus generated: {timed(lambda: make_corpus(0)) * 1e3:.0f} ms; all four steps: "
          f"{timed(lambda: clean(c)) * 1e3:.0f} ms")

    def models():
        X, y = two_classes(100, 2.0, 0)
        _, _, pts = grid(X)
        fit_logistic(X, y).proba(pts), fit_gaussians(X, y).proba(pts)
    print(f"paradigms: both models fitted and drawn on the grid {timed(models) * 1e3:.0f} ms; bandit 300 plays "
          f"{timed(lambda: train_bandit(300, 0.2, 0)) * 1e3:.0f} ms")
    run = cleaning_run(c, clean(c), 0)
    run.advance(30)
    step = timed(lambda: run.advance(1), 20)
    f = {**run.frame(), "step": run.steps, "run": 0, "n": 1}
    labels = {k: k for k in FRAME_LABELS}
    with language("en"):
        draw = timed(lambda: drawn(f, labels), 20)
    print(f"live run: a step (both models) {step * 1e3:.1f} ms, a frame drawn {draw * 1e3:.2f} ms")


def train(steps: int, seeds: int) -> None:
    from sim.dedup.clean import clean
    from sim.dedup.corpus import make_corpus
    from sim.dedup.live import cleaning_run

    print(f"raw vs cleaned, {steps} steps: held-out − test loss (nats/char; > 0: the test looks easier than new text)")
    for seed in range(seeds):
        c = make_corpus(seed)
        run = cleaning_run(c, clean(c), seed, max_steps=steps)
        t = time.process_time()
        run.advance(steps)
        f = run.frame()["models"]
        gap = {m: float(f[m]["heldout"][-1] - f[m]["test"][-1]) for m in f}
        print(f"  seed {seed}: raw held-out {f['raw']['heldout'][-1]:.3f} test {f['raw']['test'][-1]:.3f} "
              f"(gap {gap['raw']:+.3f}); cleaned held-out {f['clean']['heldout'][-1]:.3f} "
              f"test {f['clean']['test'][-1]:.3f} (gap {gap['clean']:+.3f}); {time.process_time() - t:.0f} s CPU")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks assistant", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--train", type=int, default=0, help="also train the live run this many steps per seed")
    args = parser.parse_args(argv)
    configure_threads()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    cleaning(args.seeds)
    minhash_error()
    costs()
    if args.train:
        train(args.train, args.seeds)
