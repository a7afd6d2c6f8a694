"""Issue 41 for the language-model lab: every sentence that says what a run or a computation shows agrees with the
numbers beside it, checked on the lab's own engine (the functions its page calls) at the defaults over 5 seeds and
at other settings: the tokenizers' table and the UTF-8 pitfall, the live run's validation loss against the floor,
the published laws' tokens per parameter, models, inference law and plans, and the measured sweeps' bottoms and
fitted E; and nothing read at the cursor's step is shown below the live view while it plays.

Before, the tokens section said "merges learned on a language pull its cost down" at 256 tokens (no merge at all),
the training section "the loss can only approach the dashed floor" (on the Chinese language the training curve
reaches 0.633 against a floor of 0.693 within 3,000 steps), the laws "Hoffmann et al. found ... about 20 tokens per
parameter" beside their fit's 93.5, the measured sweep "the IsoFLOP curve has a bottom" (this class's Chinese sweep
has its lowest loss at the smallest model for two of its three budgets) and "the lowest measured loss ... is the
more reliable estimate" (the English class sweep: 0.648 against a floor of 0.323 and a fitted E of 0.0005)."""
import json
import math
import re
from functools import cache

import numpy as np
import pytest

from apptools import live_advance, one_thread, open_lab, texts
from labs.lm.measured import bottoms_text
from labs.lm.schema import SCHEMA
from labs.lm.training import drawn, frame_labels, live_spec
from sim.language import claims
from sim.language.lm import (
    SWEEPS_DIR,
    SYNTHETIC_CHARS,
    language_costs,
    make_task,
    run_record,
    sweep,
    sweep_points,
    synthetic_text,
)
from sim.language.scaling import (
    FITS,
    MODELS,
    RULES,
    article_plans,
    compute_optimal,
    fit_loss_surface,
    inference_optimal,
    isoflop_frontier,
)
from sim.language.tokenizer import make_tokenizer
from ui.i18n import catalogue, language

LM = "labs/lm/page.py"
EN = catalogue("en")
DEFAULTS = {p.name: p.default for p in SCHEMA}
SEEDS = range(5)


@cache
def sample(lang: str, seed: int) -> str:
    return synthetic_text(lang, SYNTHETIC_CHARS, seed)[0]


@cache
def bpe(text: str, vocab: int):
    return make_tokenizer("bpe", text, vocab)


# ---------- tokens ----------
COSTS = [dict(seed=s) for s in SEEDS] + [dict(language="zh", vocab=1024, seed=1), dict(vocab=256, seed=2)]


@pytest.mark.parametrize("changes", COSTS, ids=str)
def test_the_tokenizer_comparison_says_what_its_table_shows(changes):
    """lm.compare.*: each language's own BPE lowers its cost wherever it has merges (at 256 tokens: none, which the
    old "merges learned on a language pull its cost down" did not say); the chosen text's BPE lowers only its own
    language; the bytes sentence quotes the table's ratio. The compression figure's "never longer" too."""
    v = {**DEFAULTS, **changes}
    costs = language_costs(sample(v["language"], v["seed"]), v["vocab"], v["seed"], sample, bpe)
    b = {lang: c["bytes"] for lang, c in costs.items()}
    assert (b["en"], b["zh"]) == (1.0, 3.0)  # "3.0× as many": the samples are ASCII and CJK only
    own = claims.savings(b, {lang: c["own"] for lang, c in costs.items()})
    this = claims.savings(b, {lang: c["this"] for lang, c in costs.items()})
    for s, col in ((own, "own"), (this, "this")):
        assert all(costs[lang][col] < claims.SAVES * b[lang] for lang in s.lower)
        assert all(costs[lang][col] >= claims.SAVES * b[lang] for lang in s.same)
    if v["vocab"] == 256:
        assert own.lower == this.lower == () and all(c["own"] == c["bytes"] for c in costs.values())
    else:
        assert own.lower == ("en", "zh") and this.lower == (v["language"],)
    # lm.compression_help: "each merge ... never makes the text longer", on the figure's 300 characters
    lengths = bpe(sample(v["language"], v["seed"]), v["vocab"]).lengths(sample(v["language"], v["seed"])[:300])
    assert all(b <= a for a, b in zip(lengths, lengths[1:], strict=False))


PITFALL = [(dict(seed=s), "猫追狗") for s in SEEDS] + [(dict(language="zh", vocab=1024), "小猫"),
                                                       (dict(language="zh", vocab=1024), "猫追狗"),
                                                       (dict(seed=3), "the cat")]


@pytest.mark.parametrize("changes,word", PITFALL, ids=str)
def test_the_pitfall_sentence_agrees_with_the_prefixes_shown(changes, word):
    """lm.pitfall.split names the first decode(ids[:k]) line that shows �; lm.pitfall.whole only where none does
    (a word the Chinese BPE learned whole, or English letters)."""
    v = {**DEFAULTS, **changes}
    tok = bpe(sample(v["language"], v["seed"]), v["vocab"])
    ids = tok.encode(word)
    k = claims.split_prefix([tok.token_bytes(i) for i in ids])
    shown = [tok.decode(ids[:j]) for j in range(1, min(len(ids), claims.PREFIXES) + 1)]
    assert k == next((j for j, d in enumerate(shown, 1) if "\ufffd" in d), None)
    assert (k is None) == (word in ("小猫", "the cat"))


def test_the_tokens_section_says_what_its_numbers_show():
    at = open_lab(LM, "en", tokenizer="bpe", vocab="256")
    shown = texts(at)
    assert EN["lm.compare.own.same"].format(list="English, Chinese") in shown
    assert "pull its cost down" not in shown and EN["lm.pitfall.split"].format(k=1) in shown and not at.exception


# ---------- the live run ----------
RUNS = [dict(t_seed=s) for s in SEEDS] + [dict(language="zh", width=16, context=16),
                                          dict(tokenizer="bpe", vocab=320, context=8, width=16)]


def caption_number(caption: str, label: str) -> float:
    return float(re.search(rf"{label} ([-\d.]+)", caption).group(1))


@pytest.mark.parametrize("changes", RUNS, ids=str)
def test_the_live_caption_says_where_the_validation_loss_is_against_the_floor(changes):
    """Each frame's caption (drawn, from the run the page builds: live_spec) puts the validation loss above, at or
    below the floor as the two numbers it prints say."""
    v = {**DEFAULTS, **changes}
    text, floor = synthetic_text(v["language"], SYNTHETIC_CHARS, v["seed"])
    with one_thread():
        run = live_spec(v, text, floor).build()
        frames = []
        for step in (0, 1, 40):
            run.advance(step - run.steps)
            frames.append({**run.frame(), "step": step, "run": 1, "n": step})
    with language("en"):
        captions = [drawn(f, frame_labels())["caption"] for f in frames]
    assert "validation loss –" in captions[0] and " · validation loss " not in captions[0].split("floor")[-1]
    for caption in captions[1:]:
        val, low = caption_number(caption, "validation loss"), caption_number(caption, "floor")
        case = "above" if val > low else "below" if val < low else "at"
        assert EN[f"lm.gap.{case}"].format(gap=f"{abs(val - low):.3f}") in caption, caption


def test_the_floor_gap_reads_the_printed_numbers():
    """The caption's rounding decides: 0.32396 and 0.32349 print as 0.324 and 0.323, one apart, never "at"."""
    assert claims.floor_gap(0.32396, 0.32349) == ("above", 0.001)
    assert claims.floor_gap(0.3201, 0.3241) == ("below", 0.004)
    assert claims.floor_gap(0.3231, 0.3234) == ("at", 0.0)
    assert claims.floor_gap(None, 0.3) is None and claims.floor_gap(0.3, None) is None
    assert claims.floor_gap(math.nan, 0.3) is None
    frame = {"steps": 9, "train": (np.array([1]), np.array([0.5])), "val": (np.array([1]), np.array([0.31])),
             "loss": 0.5, "val_loss": 0.31, "floor": 0.3235, "step": 9, "run": 1, "n": 9}
    with language("en"):
        assert EN["lm.gap.below"].format(gap="0.014") in drawn(frame, frame_labels())["caption"]


def test_what_is_read_at_the_cursors_step_waits_while_the_run_plays():
    """While the view plays on its own channel the page is not rerun: the next-token distribution and the per-token
    losses, read from the cursor's model, would stay below frames of later steps. They are shown paused only; the
    sample under the curves names the step of the model that wrote it."""
    at = open_lab(LM, "en", section="train", width="16", context="8", layers="1")
    live_advance(at, "lm.train", 5)
    at.run()
    assert EN["lm.playing"] not in texts(at) and at.text_input(key="lm.prompt").value
    assert EN["lm.sample"].split("{text}")[0].format(step=5) in texts(at)
    at.button(key="lm.train.play").click().run()
    assert at.session_state["lm.train.cursor"].playing and not at.exception
    assert EN["lm.playing"] in texts(at) and not any(w.key == "lm.prompt" for w in at.text_input)
    at.button(key="lm.train.play").click().run()  # Pause: both again, for the step now on screen
    assert EN["lm.playing"] not in texts(at) and at.text_input(key="lm.prompt").value and not at.exception


# ---------- the published laws (no seed: every budget and fit the page offers is cheap) ----------
@pytest.mark.parametrize("log_c", [23.8, 18.0, 27.0])
def test_tokens_per_parameter_sentences_agree_with_the_table(log_c):
    """lm.ratio.*: each fit's D/N as the table prints it, "close to", "more" or "fewer" than 20 by it; the note:
    Hoffmann et al.'s fit asks for more tokens per parameter the larger the budget."""
    C = 10 ** log_c
    for fit in FITS:
        case, r = claims.tokens_per_param(C, fit)
        N, D = compute_optimal(C, fit)
        assert f"{r:.1f}" == f"{D / N:.1f}"
        assert case == ("more" if r > 25 else "fewer" if r < 16 else "near")
    grows = [claims.tokens_per_param(10 ** c, "hoffmann")[1] for c in np.arange(15, 27.01, 0.5)]
    assert all(b > a for a, b in zip(grows, grows[1:], strict=False))
    assert claims.tokens_per_param(10**23.8, "hoffmann")[0] == "more"  # what the old intro's "about 20" hid


def test_the_laws_figure_caption_places_the_models():
    """lm.laws_help: GPT-3 far below every line (≥ 10× fewer tokens than the line at its N), the recent small
    models far above them (≥ 100×)."""
    Cs = np.logspace(12, 34, 3000)
    for fit in RULES:
        Ns, Ds = np.array([compute_optimal(c, fit) for c in Cs]).T
        on_line = {name: math.exp(np.interp(math.log(N), np.log(Ns), np.log(Ds))) for name, N, _ in MODELS}
        tokens = {name: D for name, _, D in MODELS}
        assert tokens["GPT-3"] < on_line["GPT-3"] / 10
        assert all(tokens[m] > 100 * on_line[m] for m in ("Qwen3-0.6B", "LFM2.5-350M"))


@pytest.mark.parametrize("fit", ["hoffmann", "epoch"])
@pytest.mark.parametrize("log_c", [23.8, 20.0, 26.0])
def test_the_inference_caption_holds(fit, log_c):
    """lm.inference_help: "the more tokens are served, the smaller the best model", never above the compute-optimal
    one, and the metric "saved" is never negative."""
    C = 10 ** log_c
    best = [inference_optimal(C, fit, 10 ** s) for s in np.arange(8.0, 16.01, 0.5)]
    Ns = [r["N"] for r in best]
    assert all(b <= a * (1 + 1e-6) for a, b in zip(Ns, Ns[1:], strict=False)) and Ns[-1] < Ns[0] / 2
    assert all(r["N"] <= r["N_chinchilla"] * (1 + 1e-6) and r["total"] <= r["total_chinchilla"] * (1 + 1e-9)
               for r in best)


@pytest.mark.parametrize("fit", ["hoffmann", "epoch"])
def test_the_two_plans_sentences_hold(fit):
    """lm.plans.explain: B "ends a little lower" and serving costs it more; lm.plans.match: A reaches B's loss with
    more training, paid back after a positive number of served tokens."""
    for served in (1e8, 1e13, 1e16):
        r = article_plans(fit, served)
        a, b = r["plans"]["A"], r["plans"]["B"]
        assert 0 < a["loss"] - b["loss"] < 0.05 and b["serve"] > a["serve"]
        assert math.isfinite(r["D_match"]) and r["D_match"] > a["D"] and r["extra"] > 0 and r["break_even"] > 0


def test_the_laws_section_quotes_its_fits_tokens_per_parameter():
    at = open_lab(LM, "en", section="laws")
    assert EN["lm.ratio.more"].format(fit=EN["lm.fit.hoffmann"], r="93.5") in texts(at) and not at.exception


# ---------- the measured sweeps ----------
@pytest.fixture(scope="module")
def bundled():
    """The bundled sweep (the section's default) with the page's free fit of it."""
    shown = json.loads(sorted(SWEEPS_DIR.glob("sweep-*.json"))[-1].read_text(encoding="utf-8"))
    runs = [r for r in shown["runs"] if math.isfinite(r["loss"])]
    with one_thread():
        return shown, runs, fit_loss_surface(sweep_points(runs))


def check_bottoms(runs: list[dict], reading: claims.SweepReading) -> None:
    """Each budget's sentence against the diamond drawn on its curve (isoflop_frontier): inside the sizes swept, or
    on the smallest or the largest."""
    frontier = isoflop_frontier(runs)
    assert set(frontier) == {*reading.inside, *reading.smallest, *reading.largest}
    for C, (N, _) in frontier.items():
        sizes = [r["params"] for r in runs if r["budget"] == C]
        if C in reading.inside:
            assert min(sizes) < N < max(sizes)
        else:
            assert N == pytest.approx(min(sizes) if C in reading.smallest else max(sizes))


def test_the_bundled_sweep_says_what_it_shows(bundled):
    """The default sweep: every budget has its bottom inside; its free fit puts E far below the floor, most runs end
    well above it, and the lowest measured loss is above it and closer to it than E."""
    shown, runs, fit = bundled
    r = claims.sweep_reading(runs, shown["floor_per_token"])
    check_bottoms(runs, r)
    assert r.inside and not (r.smallest or r.largest)
    assert fit.E < 0.5 * r.floor and r.above_case == "most" and r.above == sum(x["loss"] > 1.25 * r.floor for x in runs)
    assert claims.lowest_case(r, fit.E) == "above" and r.floor < r.lowest == min(x["loss"] for x in runs)
    with language("en"):
        assert bottoms_text(r) == [EN["lm.bottoms.all"]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_small_sweeps_read_where_their_curves_bottom_out(lang):
    """The engine's sweep (sim.language.lm.sweep, as the class's) at small budgets, over 5 seeds: where the
    smallest model is best the page says so, which the old "the IsoFLOP curve has a bottom" did not."""
    text, h = synthetic_text(lang, 30_000, 0)
    task = make_task(text, "char", 0, 16, h)
    seen = set()
    with one_thread():
        for seed in SEEDS:
            runs = [run_record(r) for r in sweep(task, (3e7, 1e8), (4, 8, 16, 32), seed=seed)]
            r = claims.sweep_reading(runs, task.loss_floor())
            check_bottoms(runs, r)
            seen |= {where for where in ("inside", "smallest", "largest") if getattr(r, where)}
            with language("en"):
                said = " ".join(bottoms_text(r))
            if r.smallest or r.largest:
                assert all(f"C = {C:.3g}" in said for C in (*r.inside, *r.smallest, *r.largest))
            else:
                assert said == EN["lm.bottoms.all"]
    assert "smallest" in seen


def test_the_lowest_loss_is_read_against_the_floor_and_e():
    """lowest_case's three outcomes (the English class sweep: 0.648 against a floor of 0.323 and E = 0.0005 is
    "far")."""
    def reading(lowest: float) -> claims.SweepReading:
        return claims.SweepReading((1e9,), (), (), 15, 15, lowest, 0.3235)

    assert claims.lowest_case(reading(0.6485), 0.0005) == "far"
    assert claims.lowest_case(reading(0.353), 1e-5) == "above"
    assert claims.lowest_case(reading(0.31), 0.1) == "below"
    assert reading(0.6).above_case == "most" and claims.SweepReading((), (), (), 15, 7, 0.4, 0.3).above_case == "few"
