"""Show me the code (sim.codegen), part A: the classification, regression, generalisation, optimiser-race and
foundations files. Each generated file runs in a subprocess with `python -I` (no project on the path) and its losses
at 3 steps must equal the lab's engine's at the same settings, to 1e-6 relative, for the defaults and three other
settings; each file is at most 150 lines at the defaults and passes ruff; and the CLI prints the file, or exits 2
with the page's message on a bad lab or value."""
from __future__ import annotations

import math
import subprocess
import sys

import pytest
from codegentools import ROOT, assert_short_plain_clean, page_values, relative_error, run_file

import sim.codegen as codegen
from labs.classification.live import live_spec as cls_spec
from labs.foundations.embeddings import embed_spec
from labs.generalization.live import live_spec as gen_spec
from labs.optimizers.race import race_spec
from labs.regression.live import live_spec as reg_spec
from sim.autograd.loop import train as loop_train
from sim.autograd.network import NetConfig
from sim.fitting import regression as reg
from sim.fitting.fit import FitConfig
from sim.fitting.generalization import curve_data, noisy_points
from sim.fitting.regression_data import make_dataset

STEPS = 3
RTOL = 1e-6
# per lab: the defaults (of the section with a live run, where the lab has sections) and three other settings
SETTINGS = {
    "classification": ["",
                       "dataset=spiral&seed=3&hidden=6,6&optimizer=adam&activation=relu&dropout=0.2"
                       "&regularization=l2&reg_rate=0.01",
                       "problem=regression&dataset=gauss_multi&features=x1,x2,sinx1&optimizer=adamw&noise=0.2"
                       "&batch_size=7&weight_decay=0.1",
                       "dataset=spiral3&hidden=5,3&n=300&activation=sigmoid&loss=squared_error&optimizer=momentum"
                       "&regularization=l1&reg_rate=0.003&seed=11"],
    "regression": ["",
                   "solver=gd&dataset=sine&degree=5&standardize=1&seed=4&batch_size=8&lr=0.3",
                   "dataset=temperature&n=100&loss=huber&delta=0.5&batch_size=16&lr=0.0001&outliers=3&seed=2",
                   "dataset=area_price&loss=mae&outliers=2&outlier_size=-4&lr=0.0001&seed=9&n=50"],
    "generalization": ["section=capacity",
                       "section=capacity&seed=5&width=16&lr=0.03&n=100&noise=0.2&patience=50",
                       "section=regularization&l2=0.01&l1=0.001&dropout=0.3&width=32&seed=2",
                       "section=label_noise&dataset=xor&flip=0.35&width=8&seed=3&lr=0.01"],
    "optimizers": ["section=race",
                   "section=race&r_opts=sgd,adam,muon&r_data=moons&r_width=16&r_batch=200&r_seed=4",
                   "section=race&r_opts=lion,adamw,momentum&r_data=xor&r_batch=8&r_wd=0.1&r_lion_lr=0.01",
                   "section=race&r_opts=muon&r_data=circle&r_width=64&r_seed=9&r_adamw_lr=0.01"],
    "foundations": ["section=embeddings",
                    "section=embeddings&lang=zh&emb_dim=16&emb_lr=0.3&emb_seed=5",
                    "section=embeddings&emb_dim=2&emb_lr=3.0&emb_seed=1",
                    "section=loop",
                    "section=loop&n_in=3&layers=2&width=3&act=relu&seed=4&l_lr=0.3",
                    "section=loop&act=sigmoid&seed=7&l_lr=2.0&l_steps=100"],
}
CASES = [(lab, q) for lab, queries in SETTINGS.items() for q in queries]
DEFAULTS = [(lab, queries[0]) for lab, queries in SETTINGS.items()] + [("foundations", "section=loop")]




def engine_losses(lab: str, v: dict, link: str, steps: int) -> list:
    """The losses the lab shows at steps 1..steps, from the run its page builds (its live spec's build)."""
    if lab == "classification":
        run = cls_spec(v).build()
        run.advance(steps)
        return [h["train_loss"] for h in run.trainer.history]
    if lab == "regression":
        data_key = tuple(v[k] for k in ("dataset", "n", "noise", "seed", "outliers", "outlier_size"))
        data = make_dataset(*data_key)
        model = reg.ModelConfig(degree=v["degree"], standardize=v["standardize"], loss=v["loss"],
                                delta=v["delta"] * data.scale)
        gd = reg.GDConfig(model=model, lr=v["lr"], batch_size=None if v["batch_size"] == "full" else v["batch_size"],
                          seed=v["seed"])
        run = reg_spec(data, data_key, gd, 1).build()
        run.advance(steps)
        return run.gd.history[1:]
    if lab == "generalization":
        hidden, section = (v["width"],) * 2, v["section"]
        if section == "label_noise":
            config = FitConfig(task="binary", hidden=hidden, lr=v["lr"], seed=v["seed"])
            key, make = (v["dataset"], v["flip"], v["seed"]), lambda: noisy_points(v["dataset"], v["flip"], v["seed"])
        else:
            extra = {"patience": v["patience"]} if section == "capacity" else {
                "l2": v["l2"], "l1": v["l1"], "dropout": v["dropout"]}
            config = FitConfig(hidden=hidden, lr=v["lr"], seed=v["seed"], **extra)
            key = (v["n"], v["noise"], v["train"], v["val"], v["seed"])
            make = lambda: curve_data(*key)  # noqa: E731
        name = {"capacity": "cap", "regularization": "reg", "label_noise": "noise"}[section]
        run = gen_spec(name, config, key, lambda: make().train_val(), 1).build()
        run.advance(steps)
        return [h["train_loss"] for h in run.trainer.history[1:]]
    if lab == "optimizers":
        run = race_spec(v, tuple(v["r_opts"])).build()
        run.advance(steps)
        return [{r.name: r.columns["loss"][i] for r in run.racers} for i in range(1, steps + 1)]
    if lab == "foundations" and v["section"] == "embeddings":
        run = embed_spec(v, "zh" if "lang=zh" in link else "en").build()
        run.advance(steps)
        return [h["loss"] for h in run.history]
    if lab == "foundations":
        config = NetConfig(v["n_in"], v["layers"], v["width"], v["act"], v["seed"])
        runs = {f"with{'' if z else 'out'}_zero_grad": loop_train(config, v["l_lr"], steps, zero_grad=z)
                for z in (True, False)}
        return [{name: float(r.loss[i]) for name, r in runs.items() if not math.isnan(r.loss[i])} for i in range(steps)]
    raise AssertionError(lab)






@pytest.mark.parametrize(("lab", "query"), CASES)
def test_the_file_trains_as_the_lab(lab, query, tmp_path):
    """The file, run alone (python -I: no project on the path), prints the lab's losses at steps 1..3."""
    v, link = page_values(lab, query)
    path = tmp_path / "run.py"
    path.write_text(codegen.script(lab, v, link), encoding="utf-8")
    records = run_file(path, STEPS)
    assert [r["step"] for r in records] == list(range(1, STEPS + 1))
    want = engine_losses(lab, v, link, STEPS)
    assert len(want) == STEPS
    errors = [relative_error(r["loss"], w) for r, w in zip(records, want, strict=True)]
    assert max(errors) <= RTOL, (records, want)




@pytest.mark.parametrize(("lab", "query"), DEFAULTS)
def test_the_file_is_short_plain_and_clean(lab, query, tmp_path):
    """At the defaults: at most 150 lines, the link in its first lines, only the standard library, numpy and torch
    imported, and `ruff check` (the repository's rules) finds nothing; every other setting tested is clean too."""
    assert_short_plain_clean(lab, [query, *SETTINGS[lab]], tmp_path)


def test_the_classification_file_is_the_engine_in_pytorch(tmp_path):
    """The classification engine is compiled loops (sim.nets.fastnet), not PyTorch: its file is the PyTorch equivalent
    in float64, and over 10 epochs of Adam with dropout and L1 both give the same losses."""
    query = "dataset=moons&noise=0.2&hidden=5,4&optimizer=adam&dropout=0.1&regularization=l1&reg_rate=0.001&seed=2"
    v, link = page_values("classification", query)
    path = tmp_path / "run.py"
    path.write_text(codegen.script("classification", v, link), encoding="utf-8")
    got = [r["loss"] for r in run_file(path, 10)]
    want = engine_losses("classification", v, link, 10)
    assert max(relative_error(a, b) for a, b in zip(got, want, strict=True)) <= 1e-9
    assert "import torch" in path.read_text()


@pytest.mark.parametrize(("lab", "query"), [("generalization", "section=split"), ("foundations", "section=backprop"),
                                            ("optimizers", "section=paths"), ("optimizers", "section=race&r_opts=")])
def test_a_section_without_a_live_run_has_no_file(lab, query):
    v, link = page_values(lab, query.replace("&r_opts=", ""))
    if query.endswith("r_opts="):
        v["r_opts"] = ()
    with pytest.raises(LookupError):
        codegen.script(lab, v, link)
    assert not codegen.available(lab, v)


def test_the_registry():
    """Every lab of main.py's routes with a live run is in LABS; its pages' prefixes name it; an unknown lab is
    UnknownLab."""
    from labs import LABS

    paths = {lab.url_path for lab in LABS} - {"gpu", "classroom"}
    assert set(codegen.LABS) == paths
    assert set(codegen.PAGES.values()) == paths
    with pytest.raises(codegen.UnknownLab, match="unknown lab 'nope'"):
        codegen.script("nope", {}, "")
    v, link = page_values("classification", "")
    assert codegen.available("classification", v)


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.codegen", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_the_command_line_prints_the_file():
    out = cli("classification", "dataset=spiral&seed=3&hidden=6,6")
    assert out.returncode == 0, out.stderr
    v, _ = page_values("classification", "dataset=spiral&seed=3&hidden=6,6")
    lines = out.stdout.splitlines()
    assert "/classification?" in lines[1] and "dataset=spiral" in lines[1] and "hidden=6,6" in lines[1]
    body = codegen.script("classification", v, "LINK").splitlines()
    assert lines[2:] == body[2:]  # the file the page's button gives for these values, but for the link


@pytest.mark.parametrize(("args", "message"), [
    (("classificatio", "seed=3"), "unknown lab 'classificatio'"),
    (("classification", "seed=abc"), "The link's value for “Seed” (abc) is not valid here."),
    (("classification", "hidden=9,9"), "“Hidden layers” (9,9) is not valid"),
    (("foundations", "section=vectors"), "the vectors section has no training"),
    ((), "usage:"),
])
def test_the_command_line_says_what_is_wrong(args, message):
    out = cli(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_the_page_side_knows_which_pages_have_a_file():
    """ui.code_button (what PageState.frame calls): a file for a page whose section has a live run, None elsewhere;
    cheap enough to make on every page run."""
    import time

    from ui.code_button import run_file

    v, link = page_values("generalization", "section=label_noise")
    name, text = run_file("gen", v, link)
    assert name == "generalization_run.py" and link in text
    v["section"] = "split"
    assert run_file("gen", v, link) is None
    assert run_file("gpu", {}, link) is None and run_file("room", {}, link) is None
    v, link = page_values("optimizers", "section=race")
    start = time.perf_counter()
    for _ in range(100):
        run_file("opt", v, link)
    assert time.perf_counter() - start < 1.0
