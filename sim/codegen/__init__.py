""""Show me the code": one standalone PyTorch file per lab run, with the page's settings and seed.

Each lab's module here, sim.codegen.<module>, has `script(params, link) -> str`: `params` are the page's values (its
SCHEMA parsed by ui.schema's rules, defaults filled, the section included where the lab has sections) and `link` is
the page's share link, written into the file's header. The text is a template filled in, cheap to make on every page
run. It raises LookupError when the params name a section that has no live run.

The file imports only the standard library, numpy and torch, and builds what the lab's engine builds from the seed:
the data (the generator's code is in the file), the model and its initial weights, the batches, the optimiser;
`python run.py --steps N` trains N steps (epochs where the lab counts epochs) and prints one JSON line per step, at
least {"step": k, "loss": the training loss the lab shows at step k} (a race of several runs: "loss" maps each run
to its loss). tests/test_codegen.py runs the files and compares their losses with the engines'.

No Streamlit, no labs/ and no ui/ here (the CLI, sim/codegen/__main__.py, reads a lab's schema: the one exception,
tests/test_layers.py).
"""
from __future__ import annotations

import importlib

# the lab's URL path (main.py's routes) -> its module in this package, imported when first asked for
LABS = {
    "foundations": "foundations",
    "classification": "classification",
    "regression": "regression",
    "generalization": "generalization",
    "optimizers": "optimizers",
    "sequence": "sequence",
    "attention": "attention",
    "shapes": "shapes",
    "blocks": "blocks",
    "lm": "lm",
    "assistant": "assistant",
}
# a page's key prefix (labs/<lab>/schema.py's PAGE) -> its URL path: what the page's frame knows of itself
PAGES = {"fnd": "foundations", "cls": "classification", "reg": "regression", "gen": "generalization",
         "opt": "optimizers", "seq": "sequence", "att": "attention", "shp": "shapes", "blk": "blocks", "lm": "lm",
         "asst": "assistant"}


class UnknownLab(ValueError):
    """A URL path that names no lab of LABS."""

    def __init__(self, lab: str):
        super().__init__(f"unknown lab {lab!r}; one of {', '.join(LABS)}")
        self.lab = lab


class NoScript(LookupError):
    """The lab (or the section its params name) has no live run to write out."""


def section(params: dict, sections, lab: str, default: str | None = None) -> str:
    """The section the params name (`default` when they name none), if it is one of `sections`, the lab's sections
    with a live run; NoScript otherwise."""
    name = params.get("section", default)
    if name not in sections:
        raise NoScript(f"the {lab} lab's {name} section has no live run")
    return name


def _module(lab: str):
    if lab not in LABS:
        raise UnknownLab(lab)
    name = f"{__name__}.{LABS[lab]}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name:  # a module it imports is missing: a real error
            raise
        raise NoScript(f"no script for the {lab} lab yet") from None


def script(lab: str, params: dict, link: str) -> str:
    """The file that reproduces lab `lab`'s run at the page's values `params`, made from `link`.

    Raises UnknownLab for a path that is no lab, LookupError where there is no live run to write (NoScript: no module
    for the lab), ValueError on settings that cannot train (no input feature)."""
    return _module(lab).script(params, link)


def available(lab: str, params: dict) -> bool:
    """Whether script(lab, params, ...) gives a file (the page shows its Code button only then)."""
    try:
        script(lab, params, "")
    except (LookupError, ValueError):  # no live run here, no such lab (UnknownLab), settings that cannot train
        return False
    return True


def header(title: str, link: str, steps_are: str = "step") -> str:
    """The file's first lines: the link it was made from, what it is and how to run it."""
    return (f"# {title}\n"
            f"# The ML Visual Simulator's run of this link, in plain PyTorch: {link or '(no link)'}\n"
            f"# Run: python run.py --steps N  (one JSON line per {steps_are}: its number and the training loss)\n")


def main_block(default_steps: int) -> str:
    """The argument parsing every file ends with: --steps N."""
    return ("\n\nif __name__ == \"__main__\":\n"
            "    parser = argparse.ArgumentParser()\n"
            f"    parser.add_argument(\"--steps\", type=int, default={default_steps})\n"
            "    main(parser.parse_args().steps)\n")
