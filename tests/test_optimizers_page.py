"""The optimiser lab: AppTest of every section in both languages, URL values, bad values, divergence and a
widget fuzz; and the figure builders (sim/plots/optimizers.py) against the engine's own numbers."""
import json
import math
import random

import numpy as np
import pytest

from apptools import fuzz_widget, open_app, open_lab, schema_choices, shared_lab, texts
from labs.optimizers.schema import PAGE as P
from labs.optimizers.schema import SCHEMA, SECTIONS
from sim.optim.optimizers import (
    OPTIMIZERS,
    SCHEDULES,
    STATE_BYTES,
    SURFACES,
    diverged_at,
    optimal_momentum,
    path,
    phase_grid,
    schedule,
    surface,
    trace,
)
from sim.plots import optimizers as plots
from ui.i18n import catalogue

PAGE = "labs/optimizers/page.py"
EN, ZH = catalogue("en"), catalogue("zh")
FIGURES = {"paths": ("opt.fig.paths", "opt.fig.loss"), "momentum": ("opt.fig.phase", "opt.fig.mom_path"),
           "race": ("opt.race.view",),
           "schedules": ("opt.fig.schedules", "opt.sched.view"), "memory": ("opt.fig.state",),
           "muon": ("opt.fig.mu_sv", "opt.fig.mu_err"), "adamw": ("opt.fig.dec_weights", "opt.fig.dec_decay")}
LABELS = {k: k for k in ("x", "y", "start", "minimum", "diverged", "play", "pause", "step", "loss")}


def page(lang="en", **query):
    return open_lab(PAGE, lang, **query)


def head(key: str, cat=EN) -> str:
    return cat[key].split("{")[0][:25]


# ---------- the page ----------
@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_in_both_languages(lang, section):
    at = shared_lab(PAGE, lang, section=section)
    cat = catalogue(lang)
    assert at.title[0].value == cat["opt.title"]
    assert not at.error and not at.warning
    for key in FIGURES[section]:
        assert at.get_by_key(key), key
    text = texts(at)
    if section == "paths":
        assert len(at.latex) == 3  # SGD, momentum, Adam written out at step 10
        assert cat["opt.formulas"] in text
    if section == "momentum":
        assert cat["opt.mom.verdict.converges"] in text and len(at.latex) >= 7
    if section == "schedules":
        assert all(cat[f"opt.sched.{s}.when"] in text for s in SCHEDULES)
    if section == "memory":
        assert "1,120 GB" in str(at.dataframe[-1].value.to_dict()) and "420 GB" in text
    if section == "muon":  # the spectrum at once, the training on a click
        assert len(at.latex) == 1 and cat["opt.mu.why"] in text and cat["opt.mu.press"] in text
        with pytest.raises(KeyError):
            at.get_by_key("opt.fig.mu_train")
    if section == "adamw":
        assert len(at.latex) == 2 and cat["opt.dec.why"] in text
    if section in ("race", "schedules"):  # the runs' table: one row per racer, before the first step
        table = at.dataframe[-1].value
        assert len(table) == (6 if section == "race" else len(SCHEDULES))
        assert table.iloc[:, 1].tolist() == [0] * len(table) and cat["opt.race.play"] in [b.label for b in at.button]


def test_url_values_set_the_widgets():
    at = page(surface="rosenbrock", x="-1.5", y="2.5", steps="50", opts="sgd,adam,lion", adam_lr="0.01", sgd_lr="0.001",
              adam_beta1="0.8", lion_beta2="0.95", at="7", noise="0.2", seed="5")
    assert not at.exception and not at.warning
    assert at.selectbox(key="opt.surface").value == "rosenbrock"
    assert at.slider(key="opt.x").value == -1.5 and at.slider(key="opt.y").value == 2.5
    assert at.slider(key="opt.steps").value == 50 and at.slider(key="opt.at").value == 7
    assert at.select_slider(key="opt.adam_lr").value == 0.01 and at.slider(key="opt.adam_beta1").value == 0.8
    assert at.number_input(key="opt.seed").value == 5
    assert len(at.latex) == 3 and r"t &= 7" in at.latex[0].value
    rec = trace("adam", surface("rosenbrock", noise=0.2), (-1.5, 2.5), 7, 5, lr=0.01, beta1=0.8)[-1]
    assert plots.vec(rec["theta_new"]) in at.latex[1].value
    q = at.query_params
    assert q["opts"] == ["sgd,adam,lion"] or q["opts"] == "sgd,adam,lion"


def test_bad_url_values_get_the_notice_and_defaults():
    at = page(kappa="1000", opts="sgd,bogus", surface="bowl", adam_beta2="0.5", steps="abc", x="nan")
    assert not at.exception
    assert len(at.warning) == 6
    assert all(head("url.rejected") in w.value for w in at.warning)
    assert at.selectbox(key="opt.surface").value == "quadratic"
    assert at.slider(key="opt.kappa").value == 10.0 and at.slider(key="opt.steps").value == 150
    assert at.slider(key="opt.x").value == SURFACES["quadratic"].start[0]


def test_a_diverging_learning_rate_ends_the_path_with_a_message():
    at = page(opts="sgd,adam", sgd_lr="2", at="20")  # α λₙ = 20 on the κ = 10 quadratic
    assert not at.exception
    k = diverged_at(path("sgd", surface("quadratic"), None, 150, lr=2.0))
    assert k is not None
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and warnings[0] == EN["opt.diverged"].format(name="SGD", step=k, lr="2")
    assert len(at.error) == 1 and head("opt.diverged_before") in at.error[0].value  # step 20 is past the end
    assert len(at.latex) == 1  # Adam's formula is still written out
    at.slider(key="opt.at").set_value(k - 1).run()
    assert not at.exception and not at.error and len(at.latex) == 2


def test_chinese_divergence_message():
    at = page("zh", opts="sgd", sgd_lr="10")
    assert not at.exception and len(at.warning) == 1 and head("opt.diverged", ZH) in at.warning[0].value


def test_a_new_surface_moves_the_start_to_its_own_and_holds_it_in_bounds():
    at = page()
    at.selectbox(key="opt.surface").set_value("rastrigin").run()
    assert (at.slider(key="opt.x").value, at.slider(key="opt.y").value) == SURFACES["rastrigin"].start
    assert at.slider(key="opt.x").max == SURFACES["rastrigin"].bounds[0][1]
    at = page(surface="rosenbrock", x="9", y="-9")  # valid in the URL, outside Rosenbrock's bounds
    (x0, x1), (y0, y1) = SURFACES["rosenbrock"].bounds
    assert at.slider(key="opt.x").value == x1 and at.slider(key="opt.y").value == y0
    assert not at.exception


def test_a_new_surface_lowers_the_learning_rates_that_would_blow_up_there():
    at = page(opts="sgd,momentum,adam")
    at.selectbox(key="opt.surface").set_value("rosenbrock").run()
    assert not at.exception and not at.warning  # no path diverges
    assert at.select_slider(key="opt.sgd_lr").value < OPTIMIZERS["sgd"]["lr"]
    assert at.select_slider(key="opt.adam_lr").value == OPTIMIZERS["adam"]["lr"]  # a default that holds is kept


def test_the_optimum_button_sets_alpha_and_beta():
    at = page(section="momentum", kappa="25")
    at.button(key="opt.optimum").click().run()
    alpha, beta, rate = optimal_momentum(1.0, 25.0)
    assert at.slider(key="opt.m_step").value == round(alpha * 25, 2)
    assert at.slider(key="opt.m_beta").value == round(beta, 2)
    assert f"{rate:.4g}" in "".join(formula.value for formula in at.latex)  # (√25 − 1)/(√25 + 1) = 0.6667
    at.slider(key="opt.m_step").set_value(3.9).run()
    at.slider(key="opt.m_beta").set_value(0.0).run()
    assert not at.exception and EN["opt.mom.verdict.diverges"] in texts(at) and at.warning  # GD at αλₙ = 3.9 diverges


def test_memory_for_a_typed_model_size():
    at = page(section="memory", billions="7")
    assert not at.exception
    table = at.dataframe[-1].value
    assert "112 GB" in table.iloc[:, 2].tolist()  # 16 B × 7 B parameters, mixed precision
    assert len(at.dataframe[-1].value.columns) == 3  # the article's column only for its 70 B
    at.number_input(key="opt.billions").set_value(70.0).run()
    assert len(at.dataframe[-1].value.columns) == 4 and at.query_params["billions"] in ("70", ["70"])


def test_fuzz_every_widget():
    rng = random.Random(7)
    choices = schema_choices(P, SCHEMA)
    for section in SECTIONS:
        at = page(section=section, opts=",".join(OPTIMIZERS))
        for i in range(12):
            widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "button", "button_group")
                       for w in getattr(at, kind) if w.key and w.key.startswith("opt.") and w.key != "opt.section"]
            w = rng.choice(widgets)
            if w.key == "opt.opts":  # the optimisers' pills: a random non-empty set, or none at all
                w.set_value(rng.sample(list(OPTIMIZERS), rng.randint(0, 4)))
            elif type(w).__name__ == "NumberInput" and isinstance(w.value, float):
                w.set_value(rng.choice([w.min, 1.0, 70.0, w.max]))
            else:
                fuzz_widget(w, rng, choices)
            at.run()
            assert not at.exception, (section, i, w.key, at.exception)


def test_every_literal_key_exists_in_both_languages():
    import ast
    from pathlib import Path

    keys = {node.args[0].value for path in (Path(__file__).parent.parent / "labs" / "optimizers").glob("*.py")
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "t" and node.args
            and isinstance(node.args[0], ast.Constant)}
    keys |= {f"opt.fig.{k}" for k in LABELS} | {f"opt.sched.{s}.when" for s in SCHEDULES}
    keys |= {f"opt.h.{h}" for o in OPTIMIZERS for h in OPTIMIZERS[o] if h not in ("eps",)}
    keys |= {"opt.name.muon", "opt.loss.help_linear", "opt.mom.gd", "opt.mom.momentum"}
    for cat in (EN, ZH):
        assert not keys - set(cat)


def test_muon_section_trains_both_networks_on_a_click():
    from sim.optim.muon import compare
    from sim.optim.optimizers import low_rank_matrix, ns_spectrum

    at = page(section="muon", mu_rows="12", mu_cols="40", mu_rank="3", mu_seed="2", mu_data="moons",
              mu_steps="50", mu_lr="0.02", mu_adam_lr="0.03")
    assert not at.exception and not at.warning
    sv, err = ns_spectrum(low_rank_matrix(12, 40, 3, 0.05, 2))
    fig = json.loads(at.get_by_key("opt.fig.mu_sv").proto.spec)
    assert f"{err[-1]:.3g}" in at.latex[0].value and f"{sv[-1].min():.3g}" in at.latex[0].value
    assert len(fig["data"]) == 12 + 1  # one line per singular value of the 12 × 40 matrix, and σ = 1
    at.button(key="opt.mu_run").click().run(timeout=60)
    assert not at.exception and at.get_by_key("opt.fig.mu_train")
    curves = compare("moons", 2, 50, 0.02, 0.03)
    caption = next(c.value for c in at.caption if head("opt.mu.train_help") in c.value)
    assert plots.fmt(curves["muon"][-1], 3) in caption and plots.fmt(curves["adamw"][-1], 3) in caption
    at.slider(key="opt.mu_steps").set_value(100).run(timeout=60)  # trained once: a new setting retrains
    assert not at.exception and at.get_by_key("opt.fig.mu_train") and EN["opt.mu.press"] not in texts(at)
    assert at.query_params["mu_steps"] in ("100", ["100"])


def test_muon_training_in_chinese():
    """(AppTest formats a selectbox's options in English when a widget changes, so the Chinese page is opened
    with the training already asked for in this session instead of clicking.)"""
    from sim.optim.muon import compare

    at = open_app("zh").run()
    at.session_state["_opt.mu_trained"] = True
    at.query_params.update({"lang": "zh", "section": "muon", "mu_steps": "50", "mu_data": "xor"})
    at.switch_page(PAGE).run(timeout=60)
    assert not at.exception and not at.warning and at.get_by_key("opt.fig.mu_train")
    curves = compare("xor", 0, 50, 0.05, 0.01)
    caption = next(c.value for c in at.caption if head("opt.mu.train_help", ZH) in c.value)
    assert plots.fmt(curves["muon"][-1], 3) in caption
    names = [d["name"] for d in json.loads(at.get_by_key("opt.fig.mu_train").proto.spec)["data"]]
    assert ZH["opt.mu.mixed"] in names and ZH["opt.mu.adamw_only"] in names


def test_muon_section_warns_of_singular_values_left_small_and_rejects_bad_values():
    at = page(section="muon", mu_rows="8", mu_cols="8", mu_noise="0")  # rank 2 in 8 × 8, no noise: 6 σ ≈ 0
    assert not at.exception and len(at.warning) == 1 and head("opt.mu.not_reached") in at.warning[0].value
    at = page(section="muon", mu_rows="1000", mu_lr="7", mu_data="bogus")
    assert not at.exception and len(at.warning) == 3 and all(head("url.rejected") in w.value for w in at.warning)
    assert at.slider(key="opt.mu_rows").value == 16


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_adamw_section_shows_the_measured_decays(lang):
    from sim.optim.optimizers import decay_comparison

    cat = catalogue(lang)
    at = page(lang, section="adamw", d_scale="30", d_lambda="0.3", d_lr="0.003", d_steps="500")
    assert not at.exception and not at.warning
    out = decay_comparison(30.0, 0.003, 0.3, 500)
    a = out["adam"]["effective"]
    text = texts(at)
    assert f"{a[1] / a[0]:,.3g}" in text and plots.fmt(out["adamw"]["effective"][0], 3) in text
    assert plots.fmt(out["adam"]["path"][-1][1], 3) in text
    bars = json.loads(at.get_by_key("opt.fig.dec_decay").proto.spec)["data"]
    assert bars[0]["name"] == cat["opt.dec.adam"] and bars[0]["x"][1] == cat["opt.dec.theta2"]
    at = page(lang, section="adamw", d_scale="1")
    assert not at.exception and [i.value for i in at.info if i.value == cat["opt.dec.same_scale"]]
    at = page(lang, section="adamw", d_scale="5", d_steps="99999")
    assert not at.exception and len(at.warning) == 2


# ---------- the figure builders against the engine ----------
def test_path_traces_are_the_engines_paths_and_frames_replay_them():
    surf = surface("quadratic", 10.0, 30.0)
    runs = {o: path(o, surf, None, 40) for o in ("sgd", "momentum", "adam")}
    fig = plots.paths_figure(surf, runs, {o: o for o in runs}, LABELS)
    lines = {tr.name: tr for tr in fig.data if tr.name in runs}
    for o, p in runs.items():
        np.testing.assert_allclose(np.column_stack([lines[o].x, lines[o].y]), p)
        assert lines[o].line.color == plots.COLOURS[o]
    assert [int(f.name) for f in fig.frames] == list(range(41))
    frame = fig.frames[10]
    # frames carry the points to 4 decimals
    np.testing.assert_allclose(np.column_stack([frame.data[1].x, frame.data[1].y]), runs["momentum"][:11], atol=5e-5)
    assert fig.layout.updatemenus[0].buttons[0].method == "animate"
    assert len(fig.layout.sliders[0].steps) == 41


def test_long_runs_are_sampled_into_at_most_60_frames_ending_at_the_last_step():
    steps = plots.frame_steps(500)
    assert len(steps) <= plots.MAX_FRAMES + 1 and steps[0] == 0 and steps[-1] == 500
    assert plots.frame_steps(10) == list(range(11))


def test_a_diverged_path_ends_with_a_cross_and_its_loss_stops():
    surf = surface("quadratic")
    p = path("sgd", surf, None, 50, lr=1.0)
    k = diverged_at(p)
    assert k is not None and np.isnan(p[k:]).all()
    fig = plots.paths_figure(surf, {"sgd": p}, {"sgd": "SGD"}, LABELS, {"sgd": k})
    cross = next(tr for tr in fig.data if tr.name == "diverged")
    line = next(tr for tr in fig.data if tr.name == "SGD")
    assert len(line.x) == k and len(cross.x) == 1 and cross.x[0] == line.x[-1]
    gap, log = plots.losses(surf, p)
    assert log and np.isnan(gap[k:]).all() and np.isfinite(gap[:k]).all()
    lfig = plots.loss_figure({"sgd": gap}, {"sgd": "SGD"}, LABELS, {"sgd": k})
    assert lfig.data[-1].x[0] == k - 1 and lfig.layout.yaxis.type == "log"


def test_loss_is_the_surfaces_value_above_the_minimum():
    surf = surface("rosenbrock")
    p = path("adam", surf, None, 30)
    gap, log = plots.losses(surf, p)
    np.testing.assert_allclose(gap, [surf.value(q) - surf.value(np.array(surf.minimum)) for q in p])
    gap, log = plots.losses(surface("saddle"), path("sgd", surface("saddle"), None, 5))
    assert not log  # no minimum: f itself, on a linear axis


def test_phase_chart_is_phase_grid_and_marks_the_optimum():
    alphas, betas = np.linspace(0.01, 4, 30) / 10, np.linspace(0, 0.99, 20)
    rates = phase_grid(1.0, 10.0, alphas, betas)
    a, b, _ = optimal_momentum(1.0, 10.0)
    chart = plots.phase_chart(alphas, betas, rates, (0.1, 0.5), (a, b), {k: k for k in
                              ("alpha", "beta", "rate", "current", "optimum")}, x_scale=10.0)
    cells, marks = (layer.data for layer in chart.layer)
    np.testing.assert_allclose(cells["rate"], np.minimum(rates, 1.0).reshape(-1))
    np.testing.assert_allclose(cells["step"][:30], alphas * 10)
    np.testing.assert_allclose(cells["beta"][::30], betas)
    assert (cells["x0"] < cells["step"]).all() and (cells["step"] < cells["x1"]).all()
    assert marks["x0"][0] == pytest.approx(a * 10) and marks["y0"][0] == pytest.approx(b)
    assert marks["x0"][1] == pytest.approx(1.0) and marks["y0"][1] == 0.5
    spec = chart.to_dict()
    assert spec["params"][0]["name"] == plots.PICK and spec["params"][0]["select"]["on"] == "click"


def test_schedule_and_state_figures_carry_the_engines_numbers():
    curves = {s: schedule(s, 200, 1.0, warmup=20, floor=0.1) for s in SCHEDULES}
    fig = plots.schedule_figure(curves, {s: s for s in SCHEDULES}, {"step": "step", "lr": "lr"})
    for tr in fig.data:
        np.testing.assert_allclose(tr.y, curves[tr.name])
    fig = plots.state_bytes_figure(STATE_BYTES, {k: k for k in STATE_BYTES}, {"bytes": "B"})
    assert list(fig.data[0].y) == list(STATE_BYTES.values())


def test_memory_rows_for_the_articles_70b():
    rows = {r["optimizer"]: r for r in plots.memory_rows(70e9, STATE_BYTES, 8)}
    assert rows["adam"]["state_gb"] == "560 GB" and rows["adam"]["total_gb"] == "1,120 GB"
    assert rows["sgd"]["state_gb"] == "0 GB" and rows["lion"]["state_gb"] == "280 GB"


def test_update_formulas_carry_the_traces_numbers():
    surf = surface("quadratic")
    for opt in OPTIMIZERS:
        rec = trace(opt, surf, None, 5)[-1]
        tex = plots.update_latex(opt, rec, OPTIMIZERS[opt])
        assert tex.startswith(r"\begin{aligned}") and plots.vec(rec["theta_new"]) in tex, opt
        assert plots.vec(rec["grad"]) in tex and plots.fmt(OPTIMIZERS[opt]["lr"]) in tex
        for name, v in rec["state"].items():  # every number of the optimiser's state is written out
            assert plots.vec(v) in tex, (opt, name)


def test_muon_and_decay_figures_carry_the_engines_numbers():
    from sim.optim.optimizers import decay_comparison, low_rank_matrix, ns_spectrum

    sv, err = ns_spectrum(low_rank_matrix(16, 32, 2, 0.05, 0))
    fig = plots.singular_values_figure(sv, {"step": "s", "sigma": "σ", "one": "1"})
    assert len(fig.data) == 17 and fig.layout.yaxis.type == "log"
    np.testing.assert_allclose(fig.data[0].y, sv[:, 0])
    fig = plots.orthogonality_figure(err, plots.spread(sv), {"step": "s", "error": "e", "spread": "r"})
    np.testing.assert_allclose(fig.data[0].y, err)
    np.testing.assert_allclose(fig.data[1].y, sv.max(axis=1) / sv.min(axis=1))
    out = decay_comparison(10.0, 0.01, 0.1, 200)
    lab = {"step": "s", "weight": "w", "theta1": "a", "theta2": "b", "target": "t", "decay": "d", "reference": "r"}
    fig = plots.weights_figure({o: r["path"] for o, r in out.items()}, {"adam": "A", "adamw": "W"}, lab)
    np.testing.assert_allclose(fig.data[1].y, out["adam"]["path"][:, 1])
    assert fig.data[2].line.color == plots.COLOURS["adamw"]
    fig = plots.decay_figure({o: r["effective"] for o, r in out.items()}, {"adam": "A", "adamw": "W"}, lab, 1e-3)
    np.testing.assert_allclose(fig.data[0].y, out["adam"]["effective"])
    assert list(fig.data[2].y) == [1e-3, 1e-3]


def test_momentum_formulas_and_steps():
    a, b, r = optimal_momentum(1.0, 100.0)
    tex = plots.momentum_latex(a, b, 100.0, (a, b, r), 99 / 101, (0.0, 0.0), (r, 0.98))
    assert plots.fmt(9 / 11) in tex["rates"] and plots.fmt(99 / 101) in tex["rates"]
    assert plots.steps_to(0.5) == pytest.approx(math.log(1000) / math.log(2))
    assert plots.steps_to(1.0) == math.inf and plots.fmt(math.inf) == r"\infty"
