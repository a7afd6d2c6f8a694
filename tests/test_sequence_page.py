"""AppTest: the sequence-models lab in both languages, its URL values, the live race's buttons, the numbers each
section writes (against the engine), bad input, and widget fuzzing (English by widgets; Chinese by URL values)."""
import random

import pytest

from apptools import fuzz_widget, live_advance, live_model, open_lab, schema_choices, shared_lab, texts
from labs.sequence.schema import PAGE as P
from labs.sequence.schema import SCHEMA, SECTIONS
from sim.sequence import masks
from sim.sequence.claims import outcomes
from sim.sequence.memory import gradients_through_time
from sim.ssm.cost import mamba_state_numbers, worked_scan
from ui.i18n import catalogue
from ui.schema import format_value

PAGE = "labs/sequence/page.py"
EN, ZH = catalogue("en"), catalogue("zh")
SMALL = {"m_distance": "8", "m_hidden": "16"}


def page(lang="en", **query):
    return open_lab(PAGE, lang, **query)


def click(at, name: str):
    at.button(key=f"seq.memory.{name}").click().run()
    assert not at.exception, at.exception


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_in_both_languages(lang, section):
    at = shared_lab(PAGE, lang, section=section, **SMALL)
    assert at.title[0].value == catalogue(lang)["seq.title"]
    assert not at.error and not at.exception


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_url_values_are_read_and_bad_ones_get_a_notice_in_the_users_language(lang):
    at = page(lang, section="sparse", s_T="128", s_w="99", s_layers="banana", m_lr="7")
    assert at.slider(key="seq.s_T").value == 128 and at.slider(key="seq.s_w").value == 3
    assert len(at.warning) == 3 and not at.exception
    cat = catalogue(lang)
    head = cat["url.rejected"].split("{value}")[0].format(name=cat["seq.s_w"])
    assert any(w.value.startswith(head) and "99" in w.value for w in at.warning)


def test_step_trains_every_model_and_reset_goes_back():
    at = page(section="memory", m_speed="2", **SMALL)
    click(at, "step")
    with live_model(at, "seq.memory") as run:
        assert [(tr.config.kind, tr.steps) for tr in run.trainers] == [("rnn", 2), ("lstm", 2), ("attn", 2),
                                                                            ("mamba", 2)]
        assert run.task.distance == 8 and run.trainers[0].config.hidden == 16
    click(at, "reset")
    with live_model(at, "seq.memory") as run:
        assert all(tr.steps == 0 for tr in run.trainers)


def test_the_race_says_how_far_each_model_holds():
    at = page(section="memory", **SMALL)
    live_advance(at, "seq.memory", 4 * 40)
    at.run()
    with live_model(at, "seq.memory") as run:
        f = run.frame()
    reach = {r["kind"]: r["reach"] for r in f["runs"]}
    assert EN["seq.mem.explain"].format(D=8, keys=8, chance="12%", holds="90%", steps=40, **reach) in texts(at)
    for case, kinds in outcomes(reach, 8).items():  # one sentence per outcome, naming its models
        assert EN[f"seq.mem.{case}"].format(D=8, holds="90%", names=", ".join(EN[f"seq.model.{k}"] for k in kinds)) \
            in texts(at)


def test_the_why_section_writes_the_engines_gradients_at_the_cursors_step():
    at = page(section="why", **SMALL)
    live_advance(at, "seq.memory", 4 * 20)
    at.run()
    assert not at.exception
    with live_model(at, "seq.memory") as run:
        g = {tr.config.kind: gradients_through_time(tr) for tr in run.trainers}
    want = {k: f"{v[0] / v[-1]:.1e}" for k, v in g.items()}
    assert EN["seq.why.explain"].format(T=9, d=8, **want) in texts(at)
    assert EN["seq.why.at_step"].format(step=80, per_model=20) in [c.value for c in at.caption]
    assert len(at.get("plotly_chart")) == 2


def test_the_sparse_section_writes_the_masks_numbers_at_the_extremes():
    at = page(section="sparse", s_T="512", s_w="1", s_layers="12", s_globals="8", s_random="8")
    assert not at.exception and not at.error
    win = masks.window(512, 1)
    lf = masks.longformer(512, 1, tuple(range(8)))
    text = EN["seq.sp.explain"].format(T=512, T2=1024, L=12, w=1, window=f"{masks.share_computed(win):.1%}",
                                       window2=f"{masks.share_computed(masks.window(1024, 1)):.1%}",
                                       win_reach=int(masks.receptive_field(win, 12)[-1]),
                                       lf_reach=int(masks.receptive_field(lf, 12)[-1]),
                                       bb_reach=512, full_reach=512)
    assert text in texts(at)
    assert EN["seq.sp.trend.halves"] + " " + EN["seq.sp.lf.global"] in texts(at)


WIN = {"w_distance": "8", "w_window": "2", "w_layers": "1", "w_speed": "2"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_trained_window_says_each_models_reach_against_layers_times_window(lang):
    at = page(lang, section="sparse", **WIN)
    at.button(key="seq.window.step").click().run()
    with live_model(at, "seq.window") as run:
        assert [(tr.config.kind, tr.steps) for tr in run.trainers] == [("attn", 2), ("window", 2)]
    live_advance(at, "seq.window", 2 * 30)
    at.run()
    assert not at.exception and not at.error
    with live_model(at, "seq.window") as run:
        f = run.frame()
    reach = {r["kind"]: r["reach"] for r in f["runs"]}
    cat = catalogue(lang)
    want = cat["seq.win.explain"].format(L=1, w=2, field=2, D=8, steps=32, full=reach["attn"],
                                         window=reach["window"], holds="90%")
    assert want in texts(at)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_window_wider_than_the_distance_is_refused_in_the_users_language(lang):
    at = page(lang, section="sparse", w_distance="8", w_window="20")
    assert not at.exception
    assert catalogue(lang)["seq.win.too_wide"].format(w=20, D=8) in [w.value for w in at.warning]


ED = {"e_layers": "1", "e_width": "16", "e_speed": "2"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_encoder_decoder_table_and_answers_come_from_the_models_on_screen(lang):
    from sim.core.text import plain
    from sim.sequence.encdec import continue_text, cross_losses, fill_blank, parse_blank

    text = "zh" if lang == "zh" else "en"
    at = page(lang, section="encdec", e_text=text, **ED)
    live_advance(at, "seq.encdec", 2 * 10)
    at.run()
    assert not at.exception and not at.error
    cat = catalogue(lang)
    with live_model(at, "seq.encdec") as run:
        trs = {tr.style: tr for tr in run.trainers}
        table = cross_losses(trs)
        a, b = parse_blank(run.trainers[0].task, at.text_input[0].value)
        bert_fill = fill_blank(trs["bert"], a, b)
        gpt_next = continue_text(trs["gpt"], at.text_input[1].value)
    df = at.dataframe[0].value
    assert list(df[cat["seq.ed.col.blank"]]) == [f"{table[s]['blank']:.3f}" for s in ("bert", "gpt")]
    assert list(df[cat["seq.ed.col.next"]]) == [f"{table[s]['next']:.3f}" for s in ("bert", "gpt")]
    shown = texts(at)
    guesses = ", ".join(f"“{c}” {p:.0%}" for c, p in bert_fill)
    assert cat["seq.ed.filled"].format(model=cat["seq.ed.bert"], text=plain(f"{a}_{b}"), guesses=plain(guesses)) \
        in shown
    assert cat["seq.ed.continued"].format(model=cat["seq.ed.gpt"], prefix=plain(at.text_input[1].value),
                                          text=plain(gpt_next)) in shown
    assert len(at.get("plotly_chart")) == 1


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_bad_text_for_the_encoder_and_decoder_gets_a_message_in_the_users_language(lang):
    at = page(lang, section="encdec", **ED)
    cat = catalogue(lang)
    for raw, want in (("the cat", cat["seq.ed.bad_blank"].format(blank="\\_")),
                      ("_he cat", cat["seq.ed.bad_empty"].format(blank="\\_")),
                      ("the ÇAT_", cat["seq.ed.bad_chars"].split("{chars}")[0])):
        at.text_input[0].set_value(raw).run()
        assert not at.exception
        assert any(w.value.startswith(want) for w in at.warning), (raw, [w.value for w in at.warning])
    at.text_input[1].set_value("🙂" * 500).run()
    assert not at.exception and any("🙂" in w.value for w in at.warning)


def test_the_mamba_section_writes_the_worked_scan_and_the_state():
    at = page(section="mamba", z_seed="7", z_steps="5", z_layers="24", z_width="1024", z_longest="512")
    w = worked_scan(7, 5)
    df = at.dataframe[0].value
    assert len(df) == 5 and list(df[EN["seq.mb.col.y"]]) == [f"{y:.3f}" for y in w.y]
    mib = f"{mamba_state_numbers(24, 1024) * 2 / 2 ** 20:,.2f}"
    assert any(mib in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 2 and not at.exception


def test_the_parallel_section_writes_what_it_measured():
    at = page(section="parallel", p_width="32", p_longest="256")
    assert not at.exception and not at.error and len(at.get("plotly_chart")) == 1
    fig = at.get("plotly_chart")[0].proto.spec
    assert '"x":[16,32,64,128,256]' in fig.replace(" ", "")
    assert any(m.value.startswith(EN["seq.par.explain"].split("{T}")[0] + "256") for m in at.markdown)


def test_fuzz_every_widget_in_english():
    rng = random.Random(7)
    choices = schema_choices(P, SCHEMA)
    for section in SECTIONS:
        at = page(section=section, z_longest="512", **SMALL)
        for i in range(5):
            widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "button", "toggle")
                       for w in getattr(at, kind) if w.key and w.key.startswith("seq.") and w.key != "seq.section"
                       and not w.key.endswith(".play") and w.key not in ("seq.z_longest", "seq.m_distance")]
            w = rng.choice(widgets)
            fuzz_widget(w, rng, choices)
            at.run()
            assert not at.exception, (section, i, w.key, at.exception)


def random_query(rng: random.Random, section: str) -> dict:
    q = {"section": section, "z_longest": "512"}
    for p in SCHEMA:
        if p.name in q or rng.random() < 0.5:
            continue
        if p.kind == "choice":
            q[p.name] = format_value(p, rng.choice(p.choices))
        elif p.kind == "int":
            q[p.name] = str(rng.choice([int(p.lo), int(p.hi), rng.randint(int(p.lo), int(p.hi))]))
        elif p.kind == "bool":
            q[p.name] = rng.choice(["0", "1"])
    return q


@pytest.mark.parametrize("section", SECTIONS)
def test_fuzz_chinese_pages_from_the_url(section):
    rng = random.Random(SECTIONS.index(section))
    for _ in range(2):
        at = page("zh", **random_query(rng, section))
        assert not at.exception and at.title[0].value == ZH["seq.title"]


def test_the_blank_boxs_refusal_names_only_the_characters_at_fault():
    """The blank's own "_" is asked for, so it is never listed as a character the text lacks; an invisible character
    typed (a right-to-left override) is named by its code point, not echoed to reverse the rest of the line."""
    at = open_lab(PAGE, "en", section="encdec")
    box = next(b for b in at.text_input if b.key == "seq.ed.blank.en")
    box.set_value("the c\u202eat s_t on €").run()
    said = next(w.value for w in at.warning if EN["seq.ed.bad_chars"].split(":")[0] in w.value)
    listed = said.split(":")[1].split(".")[0]
    assert "_" not in listed and "€" in listed and "U+202E" in listed and "\u202e" not in said
