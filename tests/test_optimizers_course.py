"""The optimiser lab's texts against what its engine computes (issue 22): the gradient ratio of the scaled quadratic,
Muon's Newton–Schulz products, where each path's rule comes from, the convergence rate ρ, which optimisers keep a
step counter, and Muon's real state memory (4 B on hidden matrices, AdamW's 8 B on the rest)."""
import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

from apptools import open_lab, texts
from sim.optim.optimizers import (
    NS_PRODUCTS,
    NS_STEPS,
    OPTIMIZERS,
    RULE_SOURCE,
    STATE_BYTES,
    gradient_ratio,
    mlp_muon_split,
    muon_state_bytes,
    scaled_quadratic,
)
from sim.optim.race import RaceConfig, Racer, race
from sim.transformers.shapes import PRESETS, build_model, hidden_matrix_params, param_counts
from ui.i18n import catalogue

PAGE = "labs/optimizers/page.py"
EN, ZH = catalogue("en"), catalogue("zh")


# ---------- 2. the scaled quadratic: curvatures s² and 1/s², gradients s⁴ apart ----------
@pytest.mark.parametrize("s", [1.0, 3.0, 10.0, 30.0])
def test_the_gradient_ratio_is_s_to_the_fourth(s):
    assert gradient_ratio(scaled_quadratic(s)) == pytest.approx(s ** 4)
    assert "s⁴" in EN["opt.d_scale.help"] and "s⁴" in ZH["opt.d_scale.help"]
    assert "10⁴" in EN["opt.d_scale.help"] and "10⁴" in ZH["opt.d_scale.help"]


def test_the_adamw_section_writes_the_ratio():
    at = open_lab(PAGE, "en", section="adamw", d_scale="10")
    assert not at.exception and any("s^4 = 1e+4" in x.value for x in at.latex)


# ---------- 3. Muon's Newton–Schulz: NS_STEPS iterations of NS_PRODUCTS matrix products ----------
class Products(TorchFunctionMode):
    """Counts the matrix products torch runs."""

    def __init__(self):
        super().__init__()
        self.n = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.n += getattr(func, "__name__", "") in ("matmul", "mm", "addmm", "bmm", "baddbmm")
        return func(*args, **(kwargs or {}))


def test_muons_step_in_the_race_makes_the_products_the_text_counts():
    racer = Racer("muon", RaceConfig(width=16), 0.05)
    x, y = racer.batch()
    from sim.optim.muon import mlp_loss

    mlp_loss(racer.params, x, y).backward()
    muon = racer.optimizers[0]
    assert type(muon).__name__ == "Muon"
    with Products() as counted:
        muon.step()
    assert counted.n == NS_STEPS * NS_PRODUCTS == 15
    at = open_lab(PAGE, "en", section="race", r_opts="sgd,muon", r_width="16")
    assert EN["opt.race.explain"].format(steps=5, per=3, products=15) in texts(at)


# ---------- 4. which rules follow torch.optim, which one a paper ----------
def test_every_rule_names_a_source_that_exists():
    assert set(RULE_SOURCE) == set(OPTIMIZERS)
    for opt, source in RULE_SOURCE.items():
        if source.startswith("torch.optim."):
            assert hasattr(torch.optim, source.removeprefix("torch.optim.")), opt
        else:  # a rule from a paper: torch has no class of that name
            assert not hasattr(torch.optim, opt.capitalize()) and not hasattr(torch.optim, opt.upper()), opt
    assert RULE_SOURCE["lion"].startswith("Chen et al. 2023")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_about_fold_says_lion_follows_its_paper(lang):
    cat = catalogue(lang)
    at = open_lab(PAGE, lang)
    intro = next(m.value for m in at.markdown if "float64" in m.value)  # the page's "About this lab" fold
    torch_part, paper_part = intro.split("torch.optim", 1)
    assert cat["opt.opts.sgd"] in torch_part and cat["opt.opts.lion"] not in torch_part
    assert cat["opt.opts.lion"] in paper_part and "Chen et al. 2023" in paper_part


# ---------- 5. ρ is a contraction factor: smaller is faster ----------
def test_the_rate_is_named_as_a_factor_smaller_is_faster():
    assert "smaller" in EN["opt.phase.rate"] and "越小越快" in ZH["opt.phase.rate"]
    assert "smaller ρ" in EN["opt.phase.help"] and "ρ 越小" in ZH["opt.phase.help"]
    assert "faster" in EN["opt.mom.optimal"] and "ρ 越小收敛越快" in ZH["opt.mom.optimal"]


# ---------- 6. only Adam and AdamW keep step counters ----------
def test_only_adam_and_adamw_keep_a_step_counter():
    racers = {r.name: r for r in race(("sgd", "momentum", "adam", "adamw", "lion", "muon"), RaceConfig(width=8), {})}
    for r in racers.values():
        r.step(1)
    counted = {name: r.step_counters() for name, r in racers.items()}
    tensors = len(racers["adam"].params)  # 3 weights and 3 biases
    assert counted["sgd"] == counted["momentum"] == counted["lion"] == (0, 0)
    assert counted["adam"][0] == counted["adamw"][0] == tensors
    assert counted["muon"][0] == tensors - 1  # its AdamW's tensors; Muon's hidden matrix has none
    assert "step counter" not in EN["opt.race.table_help"] and "计数器" not in ZH["opt.race.table_help"]


def test_the_race_table_names_the_optimisers_with_counters():
    at = open_lab(PAGE, "en", section="race", r_opts="sgd,adam,muon", r_width="16")
    at.button(key="opt.race.step").click().run()
    captions = [c.value for c in at.caption if c.value.startswith("Step counters")]
    assert len(captions) == 1 and "Adam, Muon + AdamW keep" in captions[0] and "SGD" not in captions[0]


# ---------- 7. Muon's state: 4 B on the hidden matrices, AdamW's 8 B on the rest ----------
@pytest.mark.parametrize("width,data", [(8, "spiral"), (32, "xor"), (128, "spiral")])
def test_the_mlps_split_is_the_racers_and_its_bytes_are_measured(width, data):
    racer = Racer("muon", RaceConfig(dataset=data, width=width), 0.05)
    racer.step(1)
    on_muon, total = mlp_muon_split([2, width, width, len(racer.params[-1])])
    assert on_muon == sum(p.numel() for p in racer.optimizers[0].param_groups[0]["params"])
    assert total == racer.n_params
    counters = racer.step_counters()[1]
    assert racer.state_bytes() - counters == pytest.approx(muon_state_bytes(on_muon, total) * total)


def test_gpt2_smalls_hidden_matrices_are_its_blocks_2d_weights():
    c = PRESETS["gpt2"]
    model = build_model(c)
    matrices = sum(p.numel() for name, p in model.named_parameters() if name.startswith("blocks.") and p.ndim == 2)
    assert hidden_matrix_params(c) == matrices == 84_934_656
    share = hidden_matrix_params(c) / param_counts(c)["total"]
    assert share == pytest.approx(0.6825, abs=1e-4)
    assert muon_state_bytes(hidden_matrix_params(c), param_counts(c)["total"]) == pytest.approx(5.27, abs=0.005)
    assert muon_state_bytes(0, 10) == STATE_BYTES["adamw"] and muon_state_bytes(10, 10) == STATE_BYTES["muon"]


def test_the_memory_section_shows_muons_mix():
    at = open_lab(PAGE, "en", section="memory", r_width="32", r_data="spiral")
    assert not at.exception
    table = at.dataframe[0].value
    muon = table[table.iloc[:, 0] == EN["opt.mem.muon_row"]]
    assert muon.iloc[0, 1] == 5.27 and muon.iloc[0, 2] == "369 GB"  # 70 B parameters × 5.27 B
    mix = at.dataframe[1].value
    assert mix.iloc[:, 2].tolist() == ["84.1%", "68.3%"] and mix.iloc[:, 3].tolist() == ["4.64", "5.27"]
    np.testing.assert_allclose(float(mix.iloc[0, 3]), muon_state_bytes(1024, 1218), atol=0.005)


@pytest.mark.parametrize("lang,size", [("en", "70 billion parameters"), ("zh", "700 亿参数")])
def test_the_article_table_writes_billions_of_parameters_in_words(lang, size):
    """B beside a count of parameters would read as bytes in a table of bytes: the count is written in words."""
    at = open_lab(PAGE, lang, section="memory")
    assert any(size in s.value for s in at.subheader)
    cat = catalogue(lang)
    assert "70 B" not in cat["opt.mem.col.said"] and "算法" not in cat["opt.mem.col.article"]


# ---------- Muon's authors, and the FLOP saving measured here ----------
def test_steps_to_reach():
    from sim.optim.muon import steps_to_reach

    assert steps_to_reach(np.array([3.0, 2.0, 1.0, 0.5]), 1.0) == 2
    assert steps_to_reach(np.array([3.0, 2.0]), 1.0) is None


@pytest.mark.parametrize("query", [{"mu_steps": "100"}, {}])  # reached at step 62; not reached (defaults)
def test_the_muon_note_credits_the_papers_and_measures_the_ratio_here(query):
    from sim.optim.muon import compare, steps_to_reach

    at = open_lab(PAGE, "en", section="muon", **query)
    shows = EN["opt.course.muon.shows"].split("{here}")[0].format(share="52%", saved="48%")
    assert EN["opt.course.muon.says"] in texts(at) and shows + EN["opt.course.muon.here_press"] in texts(at)
    at.button(key="opt.mu_run").click().run()
    assert not at.exception
    v = {"mu_data": "spiral", "mu_seed": 0, "mu_steps": 300, "mu_lr": 0.05, "mu_adam_lr": 0.01,
         **{k: float(x) if "lr" in k else int(x) for k, x in query.items()}}
    curves = compare(v["mu_data"], v["mu_seed"], v["mu_steps"], v["mu_lr"], v["mu_adam_lr"])
    target, step = curves["adamw"][-1], steps_to_reach(curves["muon"], curves["adamw"][-1])
    here = (EN["opt.course.muon.here_not"].format(loss=f"{target:.3g}", steps=v["mu_steps"]) if step is None else
            EN["opt.course.muon.here"].format(loss=f"{target:.3g}", step=step, steps=v["mu_steps"],
                                              share=f"{step / v['mu_steps']:.0%}"))
    assert shows + here in texts(at)
