"""Issue 41 for the transformer-block lab: every sentence that says what a run or a computation shows agrees with the
numbers beside it, checked on the lab's own engine (sim.transformers, as the page calls it) at its defaults over 5
seeds and at other settings: Pre-LN against Post-LN (the gradients at initialisation, each run's loss and gradients at
the step shown), initialisation and depth, RoPE's shifted scores, what each position encoding does past the trained
length, the FFN's cost and shapes, the MoE's routing, the KV cache against MLA; and nothing read at the cursor's step
is drawn below the live views while they play."""
import math

import numpy as np
import pytest

from apptools import both, live_advance, open_lab, texts
from labs.blocks.kv import times
from labs.blocks.live import depth_lines, depth_spec
from labs.blocks.moe import moe_spec
from labs.blocks.schema import SCHEMA
from sim.core.threads import configure_threads
from sim.transformers import claims
from sim.transformers.blocks import (
    DEEPSEEK_V2_MLA,
    KV_KINDS,
    POSITIONS,
    ffn_params,
    init_gradient_ratio,
    init_stats,
    kv_bytes_per_token_layer,
    kv_ratios,
    norm_view,
    position_experiment,
    shifted_scores,
    swiglu_hidden,
    vectors,
)
from sim.transformers.transformer import notes_ffn_batch
from ui.i18n import catalogue, language

configure_threads()  # as the app: one intra-op thread (a second one only spins on a busy machine)

PAGE = "labs/blocks/page.py"
EN, ZH = catalogue("en"), catalogue("zh")
DEFAULTS = {p.name: p.default for p in SCHEMA}
SEEDS = range(5)


def settings(**changes) -> dict:
    return {**DEFAULTS, **changes}


# ---------- Pre-LN against Post-LN ----------
DEPTH = ([(dict(r_seed=s), 20) for s in SEEDS]  # the defaults: 12 blocks, η = 0.01, warmup 300
         + [(dict(r_layers=2, r_width=16, r_warmup=50, r_seed=1), 150), (dict(r_layers=4, r_width=16, r_lr=0.001,
                                                                              r_task="copy"), 60)])


@pytest.fixture(scope="module")
def depth_runs() -> dict:
    """The page's run (labs.blocks.live.depth_spec) of each setting, every model `steps` steps in."""
    out = {}
    for changes, steps in DEPTH:
        run = depth_spec(settings(**changes)).build()
        run.advance(4 * steps)
        out[str(changes)] = run
    return out


@pytest.mark.parametrize("changes,steps", DEPTH, ids=str)
def test_the_gradients_at_initialisation_are_called_larger_only_where_they_are(changes, steps, depth_runs):
    """blk.res.explain.larger: "Post-LN's blocks get larger gradients than Pre-LN's, {lo}–{hi}× block by block";
    .smaller and .mixed otherwise (every setting measured so far gives "larger")."""
    run = depth_runs[str(changes)]
    pre, post = (next(tr for tr in run.trainers if tr.config.ln == ln) for ln in ("pre", "post"))
    lo, hi = init_gradient_ratio(pre, post)
    case = claims.init_ratio_case(lo, hi)
    both(f"blk.res.explain.{case}")
    ratios = np.asarray(post.init_norms) / np.asarray(pre.init_norms)
    assert (case == "larger") == bool((ratios > 1).all()) and (case == "smaller") == bool((ratios < 1).all())


@pytest.mark.parametrize("changes,steps", DEPTH, ids=str)
def test_each_runs_line_agrees_with_its_loss_and_gradients(changes, steps, depth_runs):
    """blk.res.now.stalled: "loss {loss}, near or above the loss of guessing"; .learned: "a tenth of it or less";
    .grad.vanish: "block 1's gradient norm is {ratio} × the last block's: the gradients vanish". Before, the page said
    at every step that Post-LN with warmup learns: at the defaults' step 20 it has not (loss above 2)."""
    run = depth_runs[str(changes)]
    frame = run.frame()
    guess = run.trainers[0].task.guess_loss()
    with language("en"):
        lines = depth_lines(frame, guess)
    assert len(lines) == 4
    for r, line in zip(frame["runs"], lines, strict=True):
        read = claims.depth_reading(r, guess)
        both(f"blk.res.now.{read.case}")
        loss = float(f"{r['recent']:.3f}")
        assert read.steps == r["steps"] == steps and f"loss {loss:.3f}" in line
        assert (read.case == "stalled") == (loss >= claims.STALL * guess - 5e-4)
        assert (read.case == "learned") == (loss <= claims.LEARNED * guess + 5e-4)
        norms = np.asarray(r["norms"], dtype=float)
        assert read.ratio == pytest.approx(norms[0] / norms[-1])
        assert (read.gradient == "vanish") == (norms[0] < claims.VANISH * norms[-1])
        assert EN[f"blk.res.now.{read.case}"].split("{")[0] in line
        assert EN[f"blk.res.grad.{read.gradient}"].split("{")[0] in line and f"{read.ratio:.3g}" in line


def test_at_the_defaults_post_ln_without_warmup_stalls_with_vanishing_gradients(depth_runs):
    """What the defaults show at step 20, on every seed: Post-LN without warmup near guessing, its block 1's gradient
    vanishing; so does Post-LN with warmup (still warming up), which the old sentence said learns."""
    for s in SEEDS:
        run = depth_runs[str(dict(r_seed=s))]
        guess = run.trainers[0].task.guess_loss()
        post = [claims.depth_reading(r, guess) for r in run.frame()["runs"] if r["ln"] == "post"]
        assert post[0].case == "stalled" and post[0].gradient == "vanish" and post[1].case == "stalled"


# ---------- initialisation and depth ----------
INIT = ([dict(i_seed=s) for s in SEEDS] + [dict(i_act="relu", i_init="he"), dict(i_depth=2)]
        + [dict(i_init="xavier", i_depth=50, i_width=64), dict(i_act="gelu", i_init="he", i_seed=3)])


@pytest.mark.parametrize("changes", INIT, ids=str)
def test_the_init_warnings_agree_with_the_printed_ratios(changes):
    """blk.init.vanish.signal: "the activations' spread after layer {depth} is {ratio} × that after layer 1, less
    than a thousandth"; .vanish.gradient: "layer 1 gets {ratio} × the gradient of layer {depth}, less than a
    thousandth"; .steady: "neither vanishes nor explodes here". Before, the signal's warning read the last layer's
    spread alone ("< 1e-3"), not its ratio to the first, and a steady stack got no sentence."""
    v = settings(**changes)
    s = init_stats(v["i_depth"], v["i_width"], v["i_init"], v["i_act"], v["i_seed"])
    r = claims.init_reading(s.act_std, s.grad_std)
    assert r.signal_ratio == pytest.approx(s.act_std[-1] / s.act_std[0])
    assert r.gradient_ratio == pytest.approx(s.grad_std[0] / s.grad_std[-1])
    for case, ratio, what in ((r.signal, r.signal_ratio, "signal"), (r.gradient, r.gradient_ratio, "gradient")):
        shown = float(f"{ratio:.3g}")
        if case == "steady":
            assert 1e-3 <= shown <= 1e3
        else:
            both(f"blk.init.{case}.{what}")
            assert shown < 1e-3 if case == "vanish" else shown > 1e3


def test_the_defaults_vanish_and_he_with_relu_stays_steady():
    for init, act, cases in (("default", "tanh", ("vanish", "vanish")), ("he", "relu", ("steady", "steady"))):
        s = init_stats(20, 256, init, act, 0)
        r = claims.init_reading(s.act_std, s.grad_std)
        assert (r.signal, r.gradient) == cases
    text = texts(open_lab(PAGE, "en", section="init", i_init="he", i_act="relu"))
    assert EN["blk.init.steady"].split("{")[0] in text


def test_batchnorm_of_one_number_per_feature_gives_zeros():
    """blk.norm.batch_one: "With B·T = 1, BatchNorm averages one number per feature: every output is 0"."""
    for seed in SEEDS:
        for d in (2, 8):
            assert not norm_view("batch", 1, 1, d, (0, 0, 0), seed).y.any()


# ---------- position encodings ----------
ROPE = [dict(p_seed=s) for s in SEEDS] + [dict(p_dim=64, p_m=60, p_n=3, p_shift=1000, p_base=500000.0),
                                           dict(p_dim=2, p_base=10.0, p_shift=997, p_m=0, p_n=64)]


@pytest.mark.parametrize("changes", ROPE, ids=str)
def test_shifted_scores_are_called_the_same_only_within_rounding(changes):
    """blk.pos.relative_result.same: "leaves the score the same: the largest difference in the column is {spread},
    float rounding"; .differ otherwise."""
    v = settings(**changes)
    q, k = vectors(v["p_dim"], v["p_seed"])
    dots = [r[3] for r in shifted_scores(q, k, v["p_m"], v["p_n"], v["p_shift"], v["p_base"])]
    case = claims.shift_case(dots)
    both(f"blk.pos.relative_result.{case}")
    assert case == "same" and max(dots) - min(dots) < 1e-9 * max(1.0, max(map(abs, dots)))


POSITION = [(12, 24, s) for s in SEEDS] + [(4, 8, 1), (6, 12, 3)]


@pytest.mark.parametrize("train,test,seed", POSITION)
def test_what_each_encoding_does_past_the_trained_length_agrees_with_the_table(train, test, seed):
    """blk.pos.beyond.holds: "the rule still holds past the trained length"; .partly; .breaks. Before, the caption
    said of RoPE in every run that "the rule it learned still holds past the trained length": at the defaults' seed
    0 it is right on 0.66 past it against 1.00 within."""
    for p in POSITIONS:
        r = position_experiment(p, train, test, seed=seed)  # as the page's cached_positions
        case = claims.extrapolation_case(r.inside, r.beyond)
        both(f"blk.pos.beyond.{case}")
        assert r.inside == pytest.approx(np.nanmean(r.accuracy[1:train]))  # the table's two columns
        assert r.beyond == pytest.approx(np.nanmean(r.accuracy[train:]))
        assert (case == "holds") == (r.beyond >= claims.HOLDS * r.inside)
        assert (case == "breaks") == (r.beyond < claims.PART * r.inside)
        if p == "learned":
            assert case == "breaks"  # rows past the trained length were never trained


def test_a_read_length_within_the_trained_one_gets_no_sentence_past_it():
    r = position_experiment("rope", 8, 8, steps=5)
    assert math.isnan(r.beyond) and claims.extrapolation_case(r.inside, r.beyond) == "none"


# ---------- the FFN ----------
FFN = [(d, ratio) for d in (64, 768, 8192) for ratio in (1, 2, 3, 4, 8)]


@pytest.mark.parametrize("d,ratio", FFN)
def test_the_ffn_summary_and_shapes_agree_with_the_counts(d, ratio):
    """blk.ffn.summary.same: "SwiGLU ... has {swiglu}, about the same"; .more: "{ratio} × as many". Before, the
    page said "about the same" at every expansion: at d_ff = d_model, SwiGLU at 8/3 · d has four times as many.
    blk.ffn.batch.sizes.wider: "wider in the middle" (before: also when d_ff = d_model)."""
    h = ratio * d
    gelu, swiglu = ffn_params("gelu", d, h), ffn_params("swiglu", d, swiglu_hidden(d))
    case = claims.cost_case(gelu, swiglu)
    both(f"blk.ffn.summary.{case}")
    assert (case == "same") == (max(gelu, swiglu) / min(gelu, swiglu) <= claims.SAME_COST)
    assert case != "more" or swiglu > gelu
    assert (case == "same") == (ratio == 4)  # 8/3 · d is sized for a GELU FFN 4 × d_model wide
    width = claims.width_case(d, h)
    both(f"blk.ffn.batch.sizes.{width}")
    assert width == ("same" if ratio == 1 else "wider")


def test_the_notes_batch_is_the_same_row_by_row():
    """blk.ffn.batch.check.same: "gives the same Y (largest difference {gap})"."""
    for seed in SEEDS:
        r = notes_ffn_batch(seed=seed)
        gap = float((r["Y"] - r["loop"]).abs().max())
        assert claims.batch_case(gap) == "same" and gap == 0


# ---------- the MoE ----------
MOE = [dict(m_seed=s) for s in SEEDS] + [dict(m_experts=4, m_k=2), dict(m_experts=16, m_cf=1.0, m_seed=2)]
MOE_STEPS = 40


@pytest.fixture(scope="module")
def moe_frames() -> dict:
    out = {}
    for changes in MOE:
        run = moe_spec(settings(**changes)).build()
        run.advance(3 * MOE_STEPS)
        out[str(changes)] = run.frame()
    return out


@pytest.mark.parametrize("changes", MOE, ids=str)
def test_each_runs_routing_line_agrees_with_its_numbers(changes, moe_frames):
    """blk.moe.collapsed: "{dead} of {E} experts get less than a quarter of their fair share"; .uneven: "every
    expert is used, but unevenly — the busiest gets {imbalance}×"; .balanced: "the busiest gets only {imbalance}×".
    Before, every run without a starved expert was called "balanced", at any imbalance; and a starved expert (a
    quarter of its share) was said to get "(almost) no tokens"."""
    for r in moe_frames[str(changes)]["runs"]:
        case = claims.routing_case(r["dead"], r["imbalance"])
        both(f"blk.moe.{case}")
        assert (case == "collapsed") == (r["dead"] > 0)
        if case != "collapsed":
            assert (case == "uneven") == (r["imbalance"] > claims.UNEVEN)
        assert "almost" not in EN["blk.moe.collapsed"]


def test_at_the_defaults_a_run_with_every_expert_used_can_still_be_uneven(moe_frames):
    """At step 40 the auxiliary loss's run starves no expert, yet its busiest takes 1.5 to 1.7× its fair share on
    seeds 0 to 3: the old text called it "balanced"."""
    runs = [r for s in SEEDS for r in moe_frames[str(dict(m_seed=s))]["runs"]]
    uneven = [r for r in runs if claims.routing_case(r["dead"], r["imbalance"]) == "uneven"]
    assert uneven and all(r["dead"] == 0 and r["imbalance"] > claims.UNEVEN for r in uneven)


# ---------- the KV cache ----------
KV = [dict(), dict(k_heads=1, k_dhead=32, k_kv=1), dict(k_heads=8, k_dhead=64, k_kv=1, k_dc=512, k_drope=0),
      dict(k_kv=64), dict(k_dc=4096, k_drope=256), dict(k_heads=32, k_dhead=96, k_kv=4, k_dc=1024)]


@pytest.mark.parametrize("changes", KV, ids=str)
def test_the_kv_sentences_agree_with_the_ratios_printed(changes):
    """blk.kv.summary.fewer: "MLA caches ... {ratio}× fewer"; .more; blk.course.mla.magnitude: "an order of
    magnitude or more"; blk.kv.article.match only at DeepSeek-V2's sizes. Before, MHA against MLA was "{ratio}× less"
    and "the order of magnitude holds against MHA" at any size: with one head of 32, MLA caches 9× more."""
    v = settings(**changes)
    H, dh, kv, dc, dr = (v[n] for n in ("k_heads", "k_dhead", "k_kv", "k_dc", "k_drope"))
    per = {kind: kv_bytes_per_token_layer(kind, H, dh, kv, dc, dr, 2) for kind in KV_KINDS}
    for kind, ratio in kv_ratios(per).items():
        case = claims.fewer_case(ratio)
        both(f"blk.course.mla.{case}")
        shown = float(times(ratio))
        other, mla = per[kind], per["mla"]
        if case == "magnitude":
            assert shown >= 10 and other > mla
        elif case == "fewer":
            assert 1 < shown < 10 and other > mla
        elif case == "more":
            assert other < mla and shown == round(mla / other, 1)
    article = (H, dh, dc, dr) == DEEPSEEK_V2_MLA
    assert article == (changes in ({}, {"k_kv": 64}))
    if article:
        assert times(kv_ratios(per)["mha"]) == "56.9"  # the article's "about 57×"


def test_one_head_of_32_says_mla_caches_more():
    text = texts(open_lab(PAGE, "en", section="kv", k_heads="1", k_dhead="32", k_kv="1"))
    assert EN["blk.kv.summary.more"].format(h=1, dh=32, mha=64, dc=512, dr=64, mla=576, ratio="9.0") in text
    assert EN["blk.course.mla.more"].format(ratio="9.0") in text and EN["blk.kv.article.other"] in text


# ---------- a live view's text follows its frame or waits ----------
@pytest.mark.parametrize("section,run,query,probe", [
    ("residual", "depth", {"r_layers": "2", "r_width": "16"}, "**Pre-LN**, step 2"),
    ("moe", "moe", {"m_experts": "4"}, "**α = 0**")])
def test_the_readings_below_the_live_views_wait_while_they_play(section, run, query, probe):
    at = open_lab(PAGE, "en", section=section, **query)
    live_advance(at, f"blk.{run}", 8 if run == "depth" else 6)
    at.run()
    assert probe in texts(at) and EN["blk.playing"] not in texts(at)
    at.button(key=f"blk.{run}.play").click().run()
    assert at.session_state[f"blk.{run}.cursor"].playing and not at.exception
    assert probe not in texts(at) and EN["blk.playing"] in texts(at)
    at.button(key=f"blk.{run}.play").click().run()  # Pause: read again, for the step now on screen
    assert probe.split(",")[0] in texts(at) and EN["blk.playing"] not in texts(at)
