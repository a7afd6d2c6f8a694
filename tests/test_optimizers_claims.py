"""Issue 41 for the optimiser lab: every sentence that says what a run or a computation shows is chosen from the
numbers beside it (sim.optim.claims). Each claim is checked on the lab's own engine, with the text the page builds,
at its defaults over 5 seeds (the sections with no seed: at 5 settings or more) and at 2 other settings: momentum's
verdicts and its spiralling, Muon's singular values, Muon + AdamW against AdamW, where Adam + L2's and AdamW's weights
end, the paths' divergence, the races' standings and step costs; and no table or sentence read at the cursor's step
is shown while a race plays."""
import math

import numpy as np
import pytest
import torch

from apptools import both, live_advance, open_lab, texts
from labs.optimizers.decay import ends_text
from labs.optimizers.muon import spectrum_caption, training_caption
from labs.optimizers.race import names, standing_text
from labs.optimizers.schema import SCHEMA
from labs.optimizers.views import steps_text
from sim.core.claims import compared
from sim.optim.claims import (
    APART,
    DOWN,
    GAP,
    LEVEL,
    NEAR_ONE,
    ends,
    final_losses,
    held_until,
    muon_against_adam,
    spectrum_reading,
    standing,
    verdict,
)
from sim.optim.muon import compare, steps_to_reach
from sim.optim.optimizers import (
    NS_COEFFICIENTS,
    OPTIMIZERS,
    RACE_LRS,
    RACERS,
    critical_beta,
    decay_comparison,
    diverged_at,
    iteration_matrix,
    low_rank_matrix,
    momentum_rate,
    ns_spectrum,
    path,
    schedule,
    schedule_args,
    surface,
)
from sim.optim.race import RaceConfig, race, schedule_race
from sim.plots.optimizers import fmt
from ui.i18n import catalogue, language

PAGE = "labs/optimizers/page.py"
EN, ZH = catalogue("en"), catalogue("zh")
D = {p.name: p.default for p in SCHEMA}
SEEDS = range(5)


# ---------- momentum's theory: the verdicts and the spiralling ----------
# (κ, αλₙ, β): the defaults, the optimum at κ = 25, GD and momentum exactly on their edge (αλₙ = 2 + 2β, reachable on
# the sliders), beyond it, and the slow corner
MOMENTUM = [(D["kappa"], D["m_step"], D["m_beta"]), (25.0, 4 * 25 / 36, 4 / 9), (10.0, 2.0, 0.0), (10.0, 3.0, 0.5),
            (10.0, 3.9, 0.0), (10.0, 3.9, 0.8), (100.0, 0.01, 0.99), (1.0, 4.0, 0.99)]


def error(p: np.ndarray, k: int) -> float:
    """Distance from the minimum (the origin) at step k of a path (inf once diverged)."""
    return float(np.hypot(*p[k])) if np.isfinite(p[k]).all() else math.inf


@pytest.mark.parametrize("kappa, step, beta", MOMENTUM)
def test_each_verdict_is_what_the_iteration_and_the_path_show(kappa, step, beta):
    """"at this α it converges / diverges / sits on the edge": read off the rate ρ the formulas print, which is the
    largest |eigenvalue| of the iteration matrices (numpy's, the independent reference); and the path drawn beside
    it agrees: converging paths come in, diverging ones go out, one on the edge keeps its size along λₙ. The old
    verdict, a yes/no of converges(), said "diverges" on the edge (αλₙ = 2 at β = 0) where the path keeps its size."""
    alpha = step / kappa
    surf = surface("quadratic", kappa, 0.0)
    for b, opt in ((0.0, "sgd"), (beta, "momentum")):
        case = verdict(alpha, b, (1.0, kappa))
        both(f"opt.mom.verdict.{case}")
        rho = max(max(abs(e) for e in np.linalg.eigvals(iteration_matrix(alpha, b, lam))) for lam in (1.0, kappa))
        assert case == ("edge" if abs(rho - 1) <= 1e-6 else "converges" if rho < 1 else "diverges")
        with language("en"):  # "steps to shrink the error 1000×": a count where it converges, "never" elsewhere
            steps = steps_text(max(momentum_rate(alpha, b, lam) for lam in (1.0, kappa)))
        if case == "converges":
            assert float(steps.replace(",", "")) == pytest.approx(math.log(1000) / -math.log(rho), abs=0.5)
        else:
            assert steps == EN["opt.mom.never"]
        hyper = {"lr": alpha} if opt == "sgd" else {"lr": alpha, "beta": b}
        p = path(opt, surf, None, 400, **hyper)  # the page's path (labs.optimizers.views.momentum_path), longer
        start, end = error(p, 0), error(p, 400)
        if case == "converges":
            assert diverged_at(p) is None and end < start
        elif case == "diverges":
            assert end > start
        else:  # along λₙ a fixed size, flipping sign each step; along λ₁ it has died out
            assert diverged_at(p) is None and end == pytest.approx(error(p, 300), rel=1e-6) and end > 1e-3
            assert p[400][1] == pytest.approx(p[300][1], rel=1e-6) and p[399][1] * p[400][1] < 0


@pytest.mark.parametrize("kappa, step, beta", MOMENTUM)
def test_the_path_spirals_where_the_iteration_has_complex_eigenvalues(kappa, step, beta):
    """"along λ₁ the path spirals / does not spiral": β above critical damping exactly where the iteration matrix's
    eigenvalues are complex (numpy's eigvals)."""
    alpha = step / kappa
    for lam in (1.0, kappa):
        if abs(beta - critical_beta(alpha, lam)) < 1e-9:  # exactly critical (the optimum): a double real root
            continue
        complex_ = bool(np.abs(np.linalg.eigvals(iteration_matrix(alpha, beta, lam)).imag).max() > 1e-12)
        assert (beta > critical_beta(alpha, lam)) == complex_, (lam, beta, critical_beta(alpha, lam))


# ---------- Muon: the singular values through Newton–Schulz ----------
SPECTRA = [(D["mu_rows"], D["mu_cols"], D["mu_rank"], D["mu_noise"], s) for s in SEEDS] + [
    (64, 64, 2, 1.0, 0),  # square and noisy: its smallest singular value starts near 0 and stays low
    (16, 32, 8, 0.0, 1),  # no noise: 8 exact zeros, the rest a rank-8 signal
    (8, 8, 2, 0.0, 0),  # the page's own warning test
    (2, 2, 2, 0.05, 3),  # the signal fills the matrix
    (64, 64, 1, 0.0, 2),  # rank 1 in 64 × 64: none but one reaches 0.6
]


@pytest.mark.parametrize("rows, cols, rank, noise, seed", SPECTRA)
def test_the_spectrum_caption_says_what_the_singular_values_show(rows, cols, rank, noise, seed):
    """The caption's start ("stand at least 3 times above the rest" or not) and end ("all of them ... near 1", "n of
    them", "none") against ns_spectrum's singular values, and its numbers are the figure's. The old caption said "after
    5 steps all of them sit near 1" and "roughly between 0.7 and 1.2" at every setting (64 × 64, noise 1: down to
    0.0167)."""
    sv, err = ns_spectrum(low_rank_matrix(rows, cols, rank, noise, seed))
    read = spectrum_reading(sv, rank)
    n, r, first, last = sv.shape[1], min(rank, sv.shape[1]), sv[0], sv[-1]
    low = int((last < NEAR_ONE).sum())
    assert read.start == ("full" if r == n else "apart" if first[r - 1] >= APART * first[r] else "mixed")
    assert read.end == ("all" if low == 0 else "none" if low == n else "some") and read.low == low
    assert (read.lo, read.hi) == (last.min(), last.max()) and err[-1] > 0  # "do not reach exactly 1"
    if low:  # the warning: "at step 0 they were at most {start}, and each step multiplies ... by only about 3.4"
        assert first[-low:].max() == read.low_start
        assert last[-low:].max() <= NS_COEFFICIENTS[0] ** 5 * read.low_start * (1 + 1e-9)
    with language("en"):
        caption = spectrum_caption(read)
    f = {"top_lo": fmt(first[r - 1], 3), "top_hi": fmt(first[0], 3), "rest": fmt(first[r], 3) if r < n else "",
         "lo": fmt(last.min(), 3), "hi": fmt(last.max(), 3)}
    assert EN[f"opt.mu.sv_start.{read.start}"].format(rank=r, apart=APART, **f) in caption
    assert EN[f"opt.mu.sv_end.{read.end}"].format(reached=n - low, low=low, near=NEAR_ONE, **f) in caption
    assert ("all of them" in caption) == (low == 0) and ("none of them" in caption) == (low == n)


# ---------- Muon + AdamW against AdamW ----------
TRAININGS = [("spiral", s, D["mu_steps"], D["mu_lr"], D["mu_adam_lr"]) for s in SEEDS] + [
    ("moons", 0, 100, 0.05, 0.01), ("xor", 3, 100, 0.2, 0.001)]


@pytest.fixture(scope="module")
def trainings() -> list[tuple[tuple, dict]]:
    torch.set_num_threads(1)
    return [(args, compare(*args)) for args in TRAININGS]


def test_the_training_caption_says_which_ends_lower(trainings):
    """"Muon + AdamW ends lower" / "AdamW alone ends lower" / "about level", read off the two final losses it
    prints; the old caption said "the two are close" at every seed (spiral, seed 1: AdamW 0.573, Muon 0.0248)."""
    seen = set()
    for args, curves in trainings:
        adamw, muon = float(curves["adamw"][-1]), float(curves["muon"][-1])
        case = final_losses(adamw, muon)
        seen.add(case)
        assert case == ("muon" if adamw > LEVEL * muon else "adamw" if muon > LEVEL * adamw else "level"), args
        with language("en"):
            caption = training_caption(curves)
        assert f"AdamW {fmt(adamw, 3)}, Muon + AdamW {fmt(muon, 3)}" in caption
        assert EN[f"opt.mu.ends.{case}"].format(level=LEVEL) in caption and "close" not in caption
    assert {"muon", "adamw"} <= seen  # at the defaults' seeds either one can end lower


def test_the_course_note_measures_where_muon_reaches_adamws_loss(trainings):
    """"Muon + AdamW reached AdamW's final loss at step {step}" is the first step at or below it, or "did not"."""
    for args, curves in trainings:
        target, muon = curves["adamw"][-1], curves["muon"]
        step = steps_to_reach(muon, target)
        if step is None:
            assert (muon > target).all(), args
        else:
            assert muon[step] <= target and (muon[:step] > target).all(), args


# ---------- Adam + L2 against AdamW: where the weights end (no seed: 6 settings) ----------
DECAYS = [(D["d_scale"], D["d_lambda"], D["d_lr"], D["d_steps"]), (1.0, 0.1, 0.01, 1000), (3.0, 0.01, 0.001, 100),
          (30.0, 0.3, 0.003, 500), (3.0, 0.3, 0.1, 3000), (10.0, 0.01, 0.1, 200)]


@pytest.mark.parametrize("scale, lam, lr, steps", DECAYS)
def test_where_the_weights_end_is_what_the_paths_show(scale, lam, lr, steps):
    """"Adam + L2 ends with θ₂ … below θ₁" / "less than 0.05 apart", the same for AdamW, read off the paths' last
    points the sentence prints; and "AdamW: {w} for both, exactly ηλ". The old text said "Adam + L2 leaves θ₁ at 1
    and pulls θ₂ far down" at s = 1 too, where both end alike."""
    out = decay_comparison(scale, lr, lam, steps)
    np.testing.assert_allclose(out["adamw"]["effective"], [lr * lam] * 2, rtol=1e-9)
    with language("en"):
        text = ends_text(out["adam"]["path"][-1], out["adamw"]["path"][-1])
    for opt in ("adam", "adamw"):
        t1, t2 = out[opt]["path"][-1]
        e = ends((t1, t2))
        assert e.case == ("alike" if abs(t1 - t2) < GAP else "apart") and e.gap == pytest.approx(abs(t1 - t2))
        if e.case == "apart":
            low, high = ("θ₁", "θ₂") if t1 < t2 else ("θ₂", "θ₁")
            assert EN[f"opt.dec.{opt}_ends.apart"].format(low=low, high=high, gap=fmt(e.gap, 3)) in text
        else:
            assert EN[f"opt.dec.{opt}_ends.alike"].format(near=GAP) in text
    assert ends(out["adamw"]["path"][-1]).case == "alike"  # one share of decay for both, at every setting
    if scale == 1.0:
        assert ends(out["adam"]["path"][-1]).case == "alike"
    if (scale, lam, lr, steps) == DECAYS[0]:  # the defaults show the lesson: θ₂, the small-gradient weight, far down
        assert ends(out["adam"]["path"][-1]) .low == 2 and ends(out["adam"]["path"][-1]).gap > 0.5


# ---------- the paths: which optimiser diverged ----------
PATHS = [("quadratic", D["kappa"], D["noise"] or 0.3, s, 0.2) for s in SEEDS] + [
    ("rosenbrock", 10.0, 0.0, 0, 3.0), ("ravine", 50.0, 0.5, 2, 1.0)]


@pytest.mark.parametrize("name, kappa, noise, seed, lr", PATHS)
def test_a_path_is_said_to_diverge_where_it_leaves_the_numbers(name, kappa, noise, seed, lr):
    """"{name} diverged at step {step}": the step of the path's first non-finite point (the red cross), and none
    is said of a path that stays finite."""
    surf = surface(name, kappa, 0.0, noise)
    for opt in OPTIMIZERS:
        p = path(opt, surf, surf.start, D["steps"], seed, **{**OPTIMIZERS[opt], "lr": lr})
        k = diverged_at(p)
        bad = np.flatnonzero(~np.isfinite(p).all(axis=1))
        assert (k is None) == (bad.size == 0) and (k is None or k == bad[0]), opt


# ---------- the races: standings and what a step costs ----------
RACES = [("defaults", dict(seed=s), RACERS, {}, 20) for s in SEEDS] + [
    ("moons full batch", dict(dataset="moons", width=8, batch=200, seed=1), ("sgd", "adam", "muon"), {}, 300),
    ("xor, SGD at 10", dict(dataset="xor", width=16, seed=2), ("sgd", "momentum", "adam", "muon"), {"sgd": 10.0}, 80),
]


@pytest.fixture(scope="module")
def races() -> list[tuple[str, list[dict]]]:
    """(setting, the racers' views at the step shown) for the race at each setting, advanced some steps."""
    torch.set_num_threads(1)
    out = []
    for label, cfg, opts, lrs, steps in RACES:
        racers = race(opts, RaceConfig(**{**dict(dataset=D["r_data"], width=D["r_width"], batch=D["r_batch"],
                                                 weight_decay=D["r_wd"]), **cfg}), lrs, D["r_steps"])
        for r in racers:
            r.step(steps)
        out.append((label, [r.view(curves=()) for r in racers]))
    return out


def check_standing(views: list[dict], text: str, shown: dict[str, str]) -> None:
    """The ranking, the "down to half" and "still above" groups and the diverged racers, against the table's
    numbers (views), and the sentence names them so."""
    s = standing(views)
    live = [v for v in views if v["diverged_at"] is None]
    assert [v["label"] for v in sorted(live, key=lambda v: v["loss"])] == s.ranking
    assert {v["label"] for v in live if v["loss"] <= DOWN * v["start_loss"]} == set(s.down)
    assert set(s.flat) == {v["label"] for v in live} - set(s.down)
    assert s.diverged == [v["label"] for v in views if v["diverged_at"] is not None]
    steps = max(v["steps"] for v in views)
    by = {v["label"]: v for v in views}
    ranking = ", ".join(f"{shown[x]} {fmt(by[x]['loss'], 3)}" for x in s.ranking)
    assert EN["opt.race.now.rank"].format(step=steps, ranking=ranking) in text
    for case, group in (("down", s.down), ("flat", s.flat)):
        sentence = EN[f"opt.race.now.{case}"].format(names=", ".join(shown[x] for x in group), share=f"{DOWN:.0%}")
        assert (sentence in text) == bool(group)


def test_the_race_says_what_its_table_shows(races):
    """The old text said "plain SGD and momentum stall on a plateau while Adam, Lion and Muon find their way down"
    and "Muon's step costs more time but needs less state than Adam" at every setting and step."""
    with language("en"):
        shown = names(False)
        for label, views in races:
            text = " ".join(standing_text(views, shown))
            check_standing(views, text, shown)
            cases = muon_against_adam(views)
            by = {v["label"]: v for v in views}
            if "adam" in by and "muon" in by:
                m, a = by["muon"], by["adam"]
                assert cases == {"time": compared(m["ms"], a["ms"], LEVEL),
                                 "state": compared(m["state_bytes"], a["state_bytes"], LEVEL)}, label
                assert EN[f"opt.race.muon_time.{cases['time']}"].format(muon=fmt(m["ms"], 3),
                                                                        adam=fmt(a["ms"], 3)) in text
                assert EN[f"opt.race.muon_state.{cases['state']}"].format(
                    muon=f"{m['state_bytes']:,}", adam=f"{a['state_bytes']:,}") in text
                assert cases["state"] == "less"  # one buffer on the hidden matrix against Adam's two everywhere
            else:
                assert cases is None and "Muon + AdamW's step" not in text
    assert any(standing(v).diverged for _, v in races) and any(standing(v).down for _, v in races)


SCHED_RACES = [(D["s_opt"], D["s_lr"], D["s_steps"], dict(seed=s), 20) for s in SEEDS] + [
    ("adam", 0.05, 300, dict(dataset="moons", width=8, seed=1), 300),
    ("sgd", 0.5, 200, dict(dataset="xor", seed=2), 150)]


@pytest.mark.parametrize("opt, lr, steps, cfg, advance", SCHED_RACES, ids=str)
def test_the_schedules_race_says_what_its_table_shows(opt, lr, steps, cfg, advance):
    """The old text said "step decay ... learning slows to a crawl; WSD ... drops the loss at the end; the cosine sits
    in between" whatever the run did: now the ranking at the step shown, read off the table."""
    torch.set_num_threads(1)
    config = RaceConfig(**{**dict(dataset=D["r_data"], width=D["r_width"], batch=D["r_batch"],
                                  weight_decay=D["r_wd"]), **cfg})
    racers = schedule_race(opt, config, lr, steps, D["s_warmup"], D["s_floor"], D["s_decay"])
    for r in racers:
        r.step(advance)
    views = [r.view(curves=()) for r in racers]
    with language("en"):
        shown = names(True)
        text = " ".join(standing_text(views, shown))
    check_standing(views, text, shown)
    assert muon_against_adam(views) is None and "Muon + AdamW's step" not in text


@pytest.mark.parametrize("steps, warmup, decay", [(D["s_steps"], D["s_warmup"], D["s_decay"]), (100, 99, 0.8),
                                                  (10_000, 2000, 0.1), (300, 0, 0.5)])
def test_the_schedules_text_reads_its_numbers_off_the_curves(steps, warmup, decay):
    """"Step decay divides the rate by 10 at every third of the run; WSD holds the peak until step {held}": the
    curves drawn (schedule()), where the old text's "keeps the peak longest" was not always so."""
    args = schedule_args(steps, warmup, D["s_floor"], decay)
    wsd = schedule("wsd", steps, 1.0, **args["wsd"])
    held = held_until(wsd)
    assert wsd[held] == wsd.max() and (held == steps - 1 or wsd[held + 1] < wsd.max())
    step = schedule("step", steps, 1.0, **args["step"])
    drops = np.flatnonzero(np.diff(step)) + 1
    assert np.allclose(step[drops] / step[drops - 1], 0.1) and np.array_equal(drops % (steps // 3), 0 * drops)


def test_the_cases_and_their_keys():
    """Every case a function returns has its text in both languages; compared() at its edges."""
    for key in ("opt.race.now.rank", "opt.race.now.down", "opt.race.now.flat", "opt.race.playing",
                *(f"opt.race.muon_{k}.{c}" for k in ("time", "state") for c in ("more", "less", "level")),
                *(f"opt.mu.sv_start.{c}" for c in ("apart", "mixed", "full")),
                *(f"opt.mu.sv_end.{c}" for c in ("all", "some", "none")),
                *(f"opt.mu.ends.{c}" for c in ("muon", "adamw", "level")),
                *(f"opt.dec.{o}_ends.{c}" for o in ("adam", "adamw") for c in ("alike", "apart"))):
        both(key)
    assert compared(1.26, 1.0, LEVEL) == "more" and compared(1.0, 1.26, LEVEL) == "less"
    assert compared(1.2, 1.0, LEVEL) == "level"
    assert compared(0.0, 0.0, LEVEL) == "level" and final_losses(math.nan, 0.1) == "failed"
    assert RACE_LRS["sgd"] < 10.0  # the diverging race above raises SGD's rate


# ---------- nothing read at the cursor's step while a race plays ----------
@pytest.mark.parametrize("section, key", [("race", "opt.race"), ("schedules", "opt.sched")])
def test_the_table_and_its_sentences_wait_while_the_race_plays(section, key):
    """While the view plays on its own channel the page is not rerun: the table and the standings read at the
    cursor's step would stay beside later frames (the old table said so in its help: "Pause refreshes it")."""
    at = open_lab(PAGE, "en", section=section, r_opts="sgd,adam", r_width="8", r_steps="400", s_steps="400",
                  s_opt="adam", s_lr="0.05")
    live_advance(at, key, 5)
    at.run()
    head = EN["opt.race.now.rank"].split("{")[0]
    assert head in texts(at) and at.dataframe and EN["opt.race.playing"] not in texts(at)
    at.button(key=f"{key}.play").click().run()
    assert at.session_state[f"{key}.cursor"].playing and not at.exception
    assert head not in texts(at) and EN["opt.race.playing"] in texts(at)
    assert not [d for d in at.dataframe if EN["opt.race.col.loss"] in d.value.columns]
    at.button(key=f"{key}.play").click().run()  # Pause: the table again, at the step now on screen
    assert head in texts(at) and EN["opt.race.playing"] not in texts(at) and not at.exception
