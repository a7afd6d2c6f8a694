"""python -m benchmarks SUBCOMMAND: the labs' speed benchmarks (see benchmarks/__init__.py)."""
import argparse
import sys

from benchmarks import attention, blocks, classification, generalization, gpu, optimizers, regression, shapes
from sim.threads import configure_threads

# name -> function(args); a new benchmark is a new entry
SUBCOMMANDS = {"engine": classification.engine, "shapes": shapes.shapes, "attention": attention.attention,
               "optimizers": optimizers.optimizers, "blocks": blocks.blocks,
               "optimizers_race": optimizers.race, "optimizers_race_browser": optimizers.race_browser,
               "regression": regression.regression, "generalization": generalization.generalization,
               "memsim": gpu.memsim, "attention_cpu": gpu.attention_cpu, "gpu": gpu.gpu, "gpu_page": gpu.gpu_page}


def main() -> None:
    if sys.argv[1:2] == ["classroom"]:  # K sessions through the page's code: its own options (--sessions K ...)
        from benchmarks import classroom

        return classroom.main(sys.argv[2:])
    if sys.argv[1:2] == ["classroom_follow"]:  # K student sessions following a teacher: its own options
        from benchmarks import classroom_follow

        return classroom_follow.main(sys.argv[2:])
    if sys.argv[1:2] == ["lm"]:  # the language-model lab: its own options (--sweep, --seconds)
        from benchmarks import lm

        return lm.main(sys.argv[2:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("subcommand", choices=sorted(SUBCOMMANDS) + ["classroom", "classroom_follow"])
    parser.add_argument("--epochs", type=int, default=20, help="epochs per timed repeat (engine)")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats; the best one is reported")
    parser.add_argument("--out", help="JSON file the measurement set is written to (gpu)")
    parser.add_argument("--quick", action="store_true", help="smallest sizes, for the tests (gpu)")
    args = parser.parse_args()
    configure_threads()  # as the app does: one intra-op thread per process
    SUBCOMMANDS[args.subcommand](args)


if __name__ == "__main__":
    main()
