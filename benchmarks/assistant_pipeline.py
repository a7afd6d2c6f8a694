"""Assistant lab, pipeline section: the whole pipeline at the page's defaults, seed by seed: its wall time and its
outcome (the format share before and after SFT, the reward model's held-out accuracy, the rule-following share of
SFT, DPO, RLHF and RLHF without the KL penalty, and reward hacking), and how many seeds meet each target.

    python -m benchmarks assistant_pipeline --seeds 10 [--json FILE]

The run is built exactly as the page builds it (labs.assistant.pipeline.pipeline_spec at the schema's defaults).
"""
import argparse
import json
import os
import statistics
import time

from labs.assistant.pipeline import PARAMS, pipeline_spec
from sim.alignment.pipeline import outcome
from sim.core.threads import configure_threads

TARGETS = {  # name: (what it says, test of an outcome)
    "sft_format": ("SFT raises the format share from ~0 (pretrained <= 5 %) to >= 90 %",
                   lambda o: o["pretrain_format"] <= 0.05 and o["sft_format"] >= 0.9),
    "rm": ("reward model >= 85 % held-out accuracy", lambda o: o["rm_accuracy"] >= 0.85),
    "dpo": ("DPO's rule share >= SFT's + 30 points", lambda o: o["dpo_follows"] >= o["sft_follows"] + 0.3),
    "rlhf": ("RLHF's rule share >= SFT's + 30 points", lambda o: o["rlhf_follows"] >= o["sft_follows"] + 0.3),
    "hacking": ("KL weight 0: reward above SFT's (0) while the rule share falls below SFT's and the answers lose "
                "their distinct letters (< 50 %)",
                lambda o: o["hack_reward"] > 0 and o["hack_follows"] < o["sft_follows"] and o["hack_distinct"] < 0.5),
}


def run_seed(seed: int) -> dict:
    v = {p.name: p.default for p in PARAMS} | {"pipe_seed": seed}
    t0 = time.perf_counter()
    run = pipeline_spec(v).build()
    run.advance(run.total)
    o = outcome(run)
    return {"seed": seed, "seconds": time.perf_counter() - t0, **o}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks assistant_pipeline",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--json", help="write the per-seed results here")
    args = parser.parse_args(argv)
    configure_threads()
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    for seed in range(args.first, args.first + args.seeds):
        r = run_seed(seed)
        rows.append(r)
        print(f"seed {seed}: {r['seconds']:.1f} s | format {r['pretrain_format']:.0%} -> {r['sft_format']:.0%} | "
              f"RM {r['rm_accuracy']:.0%} | rule: SFT {r['sft_follows']:.0%}, DPO {r['dpo_follows']:.0%}, "
              f"RLHF {r['rlhf_follows']:.0%} (reward {r['rlhf_reward']:.2f}, KL {r['rlhf_kl']:.2f}), "
              f"KL 0 {r['hack_follows']:.0%} (reward {r['hack_reward']:.2f}, KL {r['hack_kl']:.2f}, "
              f"distinct {r['hack_distinct']:.0%}) | " + " ".join(k for k, (_, ok) in TARGETS.items() if ok(r)),
              flush=True)
    n = len(rows)
    print(f"\nwhole pipeline: median {statistics.median(r['seconds'] for r in rows):.1f} s, "
          f"max {max(r['seconds'] for r in rows):.1f} s (target <= 180 s)")
    for says, ok in TARGETS.values():
        print(f"{sum(ok(r) for r in rows)}/{n} seeds: {says}")
    for stage in ("dpo", "rlhf"):
        gain = [r[f"{stage}_follows"] - r["sft_follows"] for r in rows]
        print(f"{stage.upper()} - SFT rule share: median {statistics.median(gain):+.0%}, min {min(gain):+.0%}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
