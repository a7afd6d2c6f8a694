"""python -m benchmarks SUBCOMMAND: the labs' speed benchmarks (see benchmarks/__init__.py)."""
import argparse
import importlib
import sys

from sim.core.threads import configure_threads

# name -> "module.function" (args), imported when run: the GPU machine has torch and Triton but not the app's
# plotting libraries, and `gpu` must run there; a new benchmark is a new entry
SUBCOMMANDS = {"engine": "classification.engine", "shapes": "shapes.shapes", "attention": "attention.attention",
               "optimizers": "optimizers.optimizers", "blocks": "blocks.blocks",
               "optimizers_race": "optimizers.race_costs", "optimizers_race_browser": "optimizers.race_browser",
               "regression": "regression.regression", "generalization": "generalization.generalization",
               "memsim": "gpu.memsim", "attention_cpu": "gpu.attention_cpu", "gpu": "gpu.gpu",
               "gpu_page": "gpu.gpu_page", "gpu_ncu_detail": "gpu.gpu_ncu_detail"}
# benchmarks with options of their own (python -m benchmarks NAME --help): K sessions through the page's code
# (classroom), K student sessions following a teacher (classroom_follow), the language-model lab (--sweep, --seconds),
# the foundations lab (--no-matmul, --no-sweep, --drag), the assistant lab (its data section) and its pipeline over
# seeds (assistant_pipeline), a mischievous student and a careless deployment against one app process (reliability),
# the server's CPU for an idle class of K students in real browsers (classroom_idle)
OWN_OPTIONS = ("classroom", "classroom_follow", "lm", "sequence", "foundations", "assistant", "assistant_pipeline",
               "reliability", "classroom_idle")


def main() -> None:
    if sys.argv[1:2] and sys.argv[1] in OWN_OPTIONS:  # a benchmark with options of its own: its main(argv)
        return importlib.import_module(f"benchmarks.{sys.argv[1]}").main(sys.argv[2:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("subcommand", choices=sorted(SUBCOMMANDS) + sorted(OWN_OPTIONS))
    parser.add_argument("--epochs", type=int, default=20, help="epochs per timed repeat (engine)")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats; the best one is reported")
    parser.add_argument("--out", help="JSON file the measurement set is written to (gpu)")
    parser.add_argument("--quick", action="store_true", help="smallest sizes, for the tests (gpu)")
    args = parser.parse_args()
    configure_threads()  # as the app does: one intra-op thread per process
    module, function = SUBCOMMANDS[args.subcommand].split(".")
    getattr(importlib.import_module(f"benchmarks.{module}"), function)(args)


if __name__ == "__main__":
    main()
