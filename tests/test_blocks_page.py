"""AppTest: the transformer-block lab in both languages, its URL values, the numbers it writes, its live runs'
buttons, bad input, and widget fuzzing (English by widgets; Chinese by URL values, as AppTest cannot rerun a zh page
after a format_func widget changed)."""
import random

import numpy as np
import pytest

from apptools import fuzz_widget, live_advance, live_model, open_lab, schema_choices, shared_lab, table, texts
from labs.blocks.schema import PAGE as P
from labs.blocks.schema import SCHEMA, SECTIONS
from sim.transformers.blocks import norm_view
from ui.i18n import catalogue
from ui.schema import format_value

PAGE = "labs/blocks/page.py"
EN, ZH = catalogue("en"), catalogue("zh")


def page(lang="en", **query):
    return open_lab(PAGE, lang, **query)


def click(at, name: str, run: str):
    at.button(key=f"blk.{run}.{name}").click().run()
    assert not at.exception, at.exception


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_in_both_languages(lang, section):
    at = shared_lab(PAGE, lang, section=section)
    assert at.title[0].value == catalogue(lang)["blk.title"]
    assert not at.error and not at.exception


def test_url_values_are_read_and_bad_ones_get_a_notice():
    at = page(section="norm", n_kind="batch", n_B="3", n_d="99", n_T="banana")
    assert at.segmented_control(key="blk.n_kind").value == "batch"
    assert at.slider(key="blk.n_B").value == 3 and at.slider(key="blk.n_d").value == 4
    assert len(at.warning) == 2 and at.query_params["n_d"] in ("4", ["4"])


@pytest.mark.parametrize("kind", ["batch", "layer", "rms"])
def test_the_normalised_cell_is_written_with_the_engines_numbers(kind):
    at = page(section="norm", n_kind=kind, n_B="2", n_T="3", n_d="4", n_b="1", n_t="2", n_j="3", n_seed="4")
    v = norm_view(kind, 2, 3, 4, (1, 2, 3), 4)
    latex = at.get("latex")[0].proto.body
    assert f"{v.y[1, 2, 3]:.3f}" in latex and f"{v.scale:.3f}" in latex
    assert EN[f"blk.norm.what.{kind}"].format(n=int(v.group.sum()), b=1, t=2, j=3) in texts(at)


def test_the_cell_is_held_inside_a_smaller_tensor():
    at = page(section="norm", n_B="4", n_b="3")
    at.slider(key="blk.n_B").set_value(1).run()
    assert not at.exception and at.query_params["n_b"] in ("0", ["0"])


def test_pre_and_post_ln_step_and_reset():
    at = page(section="residual", r_layers="3", r_width="16", r_warmup="100")
    click(at, "step", "depth")
    with live_model(at, "blk.depth") as run:
        assert [(r.config.ln, r.warmup) for r in run.trainers] == [("pre", 0), ("pre", 100), ("post", 0),
                                                                    ("post", 100)]
        assert all(r.steps == 1 and r.config.n_layer == 3 for r in run.trainers)
    click(at, "reset", "depth")
    with live_model(at, "blk.depth") as run:
        assert all(r.steps == 0 for r in run.trainers)


def test_a_diverged_run_is_named():
    at = page(section="residual", r_layers="2", r_width="16")
    live_advance(at, "blk.depth", 4 * 6)  # every run 6 steps
    with live_model(at, "blk.depth") as run:  # Post-LN without warmup: a weight that is not a number
        post = run.trainers[2]
        assert (post.config.ln, post.warmup, post.steps) == ("post", 0, 6)
        post.model.head.weight.data[0, 0] = float("nan")
    live_advance(at, "blk.depth", 4)  # its 7th step's loss is not finite: it diverges on its own, the others go on
    at.run()
    assert EN["blk.res.diverged"].format(name="Post-LN", step=7) in texts(at)
    with live_model(at, "blk.depth") as run:
        assert [r.diverged for r in run.trainers] == [False, False, True, False] and not run.stopped


def test_moe_step_trains_three_runs_and_says_how_they_route():
    at = page(section="moe", m_speed="10", m_experts="4")
    click(at, "step", "moe")
    with live_model(at, "blk.moe") as run:
        runs = run.trainers
        assert [r.mode for r in runs] == ["none", "aux", "bias"] and all(r.steps == 10 for r in runs)
        assert runs[0].alpha == 0.0 and runs[1].alpha == 0.01
    page_text = texts(at)
    assert "α = 0" in page_text and EN["blk.moe.capacity"].format(T=256, E=4, k=1, cf="1.25", cap=80) in page_text


def test_a_diverged_moe_run_is_named():
    at = page(section="moe")
    live_advance(at, "blk.moe", 3 * 2)  # every run 2 steps
    with live_model(at, "blk.moe") as run:  # no balancing: a weight that is not a number
        run.trainers[0].model.head.weight.data[0, 0] = float("nan")
    live_advance(at, "blk.moe", 1)  # its 3rd step's loss is not finite: it diverges on its own
    at.run()
    assert EN["blk.res.diverged"].format(name="α = 0", step=3) in texts(at)
    with live_model(at, "blk.moe") as run:
        assert [r.diverged for r in run.trainers] == [True, False, False] and not run.stopped


def test_kv_cache_for_deepseek_v2_and_bad_groups():
    at = page(section="kv")
    assert "56.9" in texts(at)
    df = at.dataframe[0].value
    assert list(df.iloc[:, 1]) == [32768, 2048, 256, 576]
    at = page(section="kv", k_heads="12", k_kv="5")
    assert EN["blk.kv.bad_groups"].format(kv=5, h=12) in texts(at)


def test_the_notes_batch_through_the_ffn():
    at = page(section="ffn", f_d="768", f_ratio="4")
    code = [c.value for c in at.code]
    assert "[5, 9]" in code[-1].splitlines()[0] and len(code[-1].splitlines()) == 8  # Y: row 1 is the notes' y
    df = table(at, EN["blk.ffn.batch.col.out"])
    assert list(df[EN["blk.ffn.batch.col.out"]]) == ["[8, 3072]", "[8, 3072]", "[8, 768]"] and not at.exception


def test_rope_scores_on_the_page_are_equal_down_the_column():
    at = page(section="position", p_dim="16", p_m="9", p_n="4", p_shift="100", p_train="6", p_test="12")
    df = at.dataframe[0].value
    assert list(df.iloc[:, 2]) == [5] * 4 and np.ptp(df.iloc[:, 3].to_numpy()) < 1e-9
    acc = at.dataframe[1].value
    assert len(acc) == 3 and acc.iloc[:, 1].min() > 0.5


def test_fuzz_every_widget_in_english():
    rng = random.Random(11)
    choices = schema_choices(P, SCHEMA)
    for section in SECTIONS:
        at = page(section=section, p_train="6", p_test="10")
        for i in range(6):
            widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "button", "button_group",
                                      "toggle")
                       for w in getattr(at, kind) if w.key and w.key.startswith("blk.") and w.key != "blk.section"
                       and not w.key.endswith(".play") and w.key not in ("blk.p_train", "blk.p_test")]
            w = rng.choice(widgets)
            fuzz_widget(w, rng, choices)
            at.run()
            assert not at.exception, (section, i, w.key, at.exception)


def random_query(rng: random.Random, section: str) -> dict:
    q = {"section": section}
    for p in SCHEMA:
        if p.name == "section" or p.name in ("p_train", "p_test") or rng.random() < 0.5:
            continue
        if p.kind == "choice":
            q[p.name] = format_value(p, rng.choice(p.choices))
        elif p.kind == "int":
            q[p.name] = str(rng.choice([int(p.lo), int(p.hi), rng.randint(int(p.lo), int(p.hi))]))
    return q


@pytest.mark.parametrize("section", SECTIONS)
def test_fuzz_chinese_pages_from_the_url(section):
    rng = random.Random(SECTIONS.index(section))
    for _ in range(2):
        at = page("zh", **random_query(rng, section))
        assert not at.exception and at.title[0].value == ZH["blk.title"]
