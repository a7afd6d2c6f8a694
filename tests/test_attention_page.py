"""AppTest: the attention lab in both languages, its URL values, its worked numbers, training, bad input, fuzzing."""
import base64
import json
import random

import pytest
import torch

from apptools import cursor, fuzz_widget, live_advance, live_model, metrics, open_lab, schema_choices, shared_lab, texts
from labs.attention.schema import SCHEMA
from sim.transformers.attention import NOTES_SCORES, permutation_check, permutation_stats, weight_share
from sim.transformers.tasks import split_tokens, utf8_bytes
from ui.i18n import catalogue

ATT = "labs/attention/page.py"
EN = catalogue("en")
CHOICES = schema_choices("att", SCHEMA)


def att_page(lang="en", **query):
    return open_lab(ATT, lang, **query)


def click(at, label_key: str, kind: str):
    next(b for b in at.button if b.label == EN[label_key] and b.key.startswith(f"att.{kind}.")).click().run()
    assert not at.exception, at.exception


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("section", CHOICES["att.section"])
def test_every_section_in_both_languages(lang, section):
    at = shared_lab(ATT, lang, section=section)
    assert at.title[0].value == catalogue(lang)["att.title"]
    assert not at.error or section == "examples"  # the examples show the overflow of the naive softmax


def test_pipeline_figures_are_titled_with_their_shapes():
    at = att_page(preset="four", d_model="8", heads="4")
    assert at.text_input(key="att.text").value == "5 12 8 3"
    assert at.select_slider(key="att.d_model").value == 8 and at.select_slider(key="att.heads").value == 4
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("(4, 4, 2)" in s for s in titles)  # Q of the notes' example: 4 heads, 4 tokens, d_h = 2
    assert any("(4, 4, 4)" in s for s in titles)  # the scores: one 4×4 matrix per head
    assert any("(4, 8)" in s for s in titles)


def test_url_values_and_bad_values_get_a_notice():
    at = att_page(mask="causal_window", window="3", d_model="7", mask_extra="x", temperature="99", head="2")
    assert at.segmented_control(key="att.mask").value == "causal_window"
    assert at.slider(key="att.window").value == 3
    assert at.select_slider(key="att.d_model").value == 8  # 7 is not offered: default
    assert at.slider(key="att.temperature").value == 1.0
    assert len(at.warning) == 2
    assert at.query_params["mask"] == "causal_window" and at.query_params["d_model"] == "8"
    assert "window=3" in at.code[-1].value


def test_heads_that_do_not_divide_the_width_get_a_message():
    at = att_page(d_model="6", heads="4")
    assert EN["att.invalid_heads"].format(h=4, d=6) in texts(at)
    assert not at.get("plotly_chart")


def test_one_head_and_too_many_tokens():
    at = att_page(heads="4", d_model="16")
    at.segmented_control(key="att.head").set_value("3").run()
    at.text_input(key="att.text").set_value(" ".join(f"w{i}" for i in range(40))).run()
    assert not at.exception
    assert EN["att.too_many_tokens"].format(n=40, max=32) in texts(at)
    at.text_input(key="att.text").set_value("   ").run()
    assert EN["att.no_tokens"] in texts(at)
    at.text_input(key="att.text").set_value("猫追狗").run()
    at.select_slider(key="att.heads").set_value(2).run()  # head 3 no longer exists: back to all heads
    assert not at.exception and at.segmented_control(key="att.head").value == "all"


def test_the_text_survives_switching_sections_and_a_preset_replaces_it():
    at = att_page()
    at.text_input(key="att.text").set_value("狗追猫").run()
    at.segmented_control(key="att.section").set_value("examples").run()
    at.segmented_control(key="att.section").set_value("pipeline").run()
    assert at.text_input(key="att.text").value == "狗追猫"
    at.selectbox(key="att.preset").set_value("animal").run()
    assert at.text_input(key="att.text").value.startswith("The animal")


def test_the_notes_numbers_are_on_the_page():
    at = att_page(section="examples")
    page = texts(at) + "\n".join(c.value for c in at.code)
    for number in ("0.844", "0.114", "0.042", "[0.928, 0.270]", "[5, 2]", "[5, 9]", "[1, 2]"):
        assert number in page, number
    assert EN["att.ex.stable_nan"] in texts(at)
    at.slider(key="att.big").set_value(10).run()
    assert EN["att.ex.stable_ok"] in texts(at) and not at.error


@pytest.mark.parametrize("temp,share", [(1.0, "most"), (0.1, "all"), (0.5, "most"), (3.0, "most"), (5.0, "spread")])
def test_the_notes_softmax_says_how_its_weight_is_shared_at_each_temperature(temp, share):
    """The sentence under the notes' softmax is chosen by the weights the page shows (τ = 1: the notes' 0.844)."""
    at = att_page(section="examples", ex_temp=str(temp))
    weights = torch.softmax(torch.tensor(NOTES_SCORES) / temp, dim=0)  # the reference: torch's own softmax
    top = f"{weights.max().item():.3f}"
    assert at.slider(key="att.ex_temp").value == temp and not at.warning
    assert f"**{top}**" in texts(at)  # the table's weight of the largest score
    assert EN[f"att.ex.share.{share}"].format(share=top) in texts(at)
    assert {k for k in ("all", "most", "spread") if EN[f"att.ex.share.{k}"].format(share=top) in texts(at)} == {share}
    assert weight_share(weights.tolist()) == share


def test_step_trains_and_reset_starts_over():
    at = att_page(section="train", speed="2")
    click(at, "att.step", "train")
    click(at, "att.step", "train")
    with live_model(at, "att.train") as run:
        (trainer,) = run.trainers
        assert trainer.steps == 4 and trainer.config.causal
    click(at, "att.reset", "train")
    with live_model(at, "att.train") as run:
        assert run.trainers[0].steps == 0 and run.steps == 0


def test_the_mask_toggle_builds_an_open_model():
    at = att_page(section="train", causal="0", task="reverse", layers="2", t_heads="4")
    with live_model(at, "att.train") as run:
        (trainer,) = run.trainers
        assert not trainer.config.causal and trainer.config.n_layer == 2 and trainer.config.n_head == 4


def test_compare_trains_a_causal_and_an_open_model_on_scored_prompts():
    at = att_page(section="compare", task="sort", speed="10")
    click(at, "att.step", "compare")
    with live_model(at, "att.compare") as run:
        causal, open_ = run.trainers
        assert causal.config.causal and not open_.config.causal
        assert causal.steps == open_.steps == 10 and causal.task.score_prompt
    assert EN["att.compare_explain"][:30] in texts(at)


def test_bad_probe_and_short_training_text_keep_what_the_user_had():
    at = att_page(section="train")
    at.text_input(key="att.probe.copy.5").set_value("xyz").run()
    assert EN["att.bad_probe"].format(n=5, letters="abcdefgh") in texts(at)
    at.selectbox(key="att.task").set_value("text").run()
    kept = cursor(at, "att.train")
    with live_model(at, "att.train") as run:
        assert run.task.name == "text"
    at.text_area(key="att.train_text").set_value("short").run()
    assert not at.exception
    assert EN["att.invalid.text_short"].format(n=18) in texts(at)
    assert cursor(at, "att.train") is kept  # nothing the user had is lost
    assert at.text_input(key="att.probe_text").value  # the kept run's probe


def test_a_diverged_run_says_so_and_reset_recovers():
    at = att_page(section="train")
    with live_model(at, "att.train") as run:  # the run itself at step 0: a weight that is not a number
        run.trainers[0].model.lm_head.weight.data[0, 0] = float("nan")
    live_advance(at, "att.train", 1)  # its next step's loss is not finite: the run diverges on its own
    at.run()
    assert EN["att.diverged"].format(lr=0.003) in texts(at)
    assert {b.key: b.disabled for b in at.button if b.key in ("att.train.play", "att.train.step")} == \
        {"att.train.play": True, "att.train.step": True}
    click(at, "att.reset", "train")
    with live_model(at, "att.train") as run:  # step 0 again, replayed from the run's first checkpoint
        assert run.steps == 0 and not run.stopped
    assert not at.error and not at.button(key="att.train.play").disabled


def live_frames(at, key: str) -> list[dict]:
    """The frames this run sent the live view `key` (ui.live_plots)."""
    (view,) = [e for e in at.get("bidi_component") if e.proto.id.endswith(f"-{key}")]
    return json.loads(view.proto.json)["frames"]


def test_a_typed_probe_is_read_from_the_model_at_the_step_shown():
    at = att_page(section="train", speed="2")
    at.text_input(key="att.probe.copy.5").set_value("hgfed").run()
    click(at, "att.step", "train")
    (frame,) = live_frames(at, "att.train.view")
    maps = [p for p in frame["panels"] if p["type"] == "heatmap"]
    assert frame["step"] == 2 and len(maps) == 2 and maps[0]["row_labels"] == list("hgfed|hgfe")
    with live_model(at, "att.train") as run:
        assert run.steps == 2
        (shown,) = run.maps("hgfed|hgfe")  # the model's maps, as bytes: (layers, heads, T, T)
    assert [base64.b64decode(m["data"]) for m in maps] == [shown[0, h].tobytes() for h in range(2)]
    assert EN["att.maps_at"].format(step=2) not in frame["caption"]  # paused: the maps are of the step shown
    assert any("hgfed|" in line for line in texts(at).splitlines())  # what it generates from the typed prompt
    default = run.task.default_probe()
    at.text_input(key="att.probe.copy.5").set_value(default).run()  # the default probe: the frames' own maps
    (frame,) = live_frames(at, "att.train.view")
    assert frame["panels"][1]["row_labels"] == list(run.task.read_probe(default)[0])


# ---------- course fidelity: tokens, the model's parts and position encoding, permutation equivariance ----------
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_tokens_are_said_to_be_words_and_characters_not_a_real_tokenizers(lang):
    at = shared_lab(ATT, lang, section="pipeline")
    cat = catalogue(lang)
    assert cat["att.token_note"].format(n=3, bytes=9) in texts(at)  # 猫追狗: 3 tokens, 9 UTF-8 bytes
    for word in ("BPE", "UTF-8"):
        assert word in cat["att.token_note"]
    assert "子词" in catalogue("zh")["att.token_note"] and "sub-word" in EN["att.token_note"]


def test_the_token_note_counts_the_users_tokens():
    at = att_page()
    at.text_input(key="att.text").set_value("The animal didn't cross").run()
    tokens = split_tokens("The animal didn't cross")
    assert EN["att.token_note"].format(n=4, bytes=utf8_bytes(tokens)) in texts(at)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_model_names_its_residual_connections_pre_ln_and_position_encoding(lang):
    at = shared_lab(ATT, lang, section="train")
    cat = catalogue(lang)
    assert cat["att.model_desc"].format(pos=cat["att.pos_name.learned"]) in texts(at)
    terms = ("位置编码", "残差连接", "层归一化", "Pre-LN") if lang == "zh" else (
        "position encoding", "residual connection", "layer normalisation", "pre-LN")
    assert all(term in cat["att.model_desc"] for term in terms)
    assert at.segmented_control(key="att.pos").value == "learned"
    with live_model(at, "att.train") as run:
        assert run.trainers[0].config.pos == "learned"
    assert cat["att.pos_table_help.learned"] in texts(at)


def test_sinusoidal_positions_from_the_url_and_the_widget():
    at = att_page(section="train", pos="sinusoidal")
    with live_model(at, "att.train") as run:
        assert run.trainers[0].config.pos == "sinusoidal" and at.query_params["pos"] == "sinusoidal"
    assert EN["att.model_desc"].format(pos=EN["att.pos_name.sinusoidal"]) in texts(at)
    assert EN["att.pos_table_help.sinusoidal"] in texts(at)
    title = EN["att.pos_table_title"].format(shape="(10, 32)")  # copy, 5 letters: 10 positions; width 32
    assert not any(title in c.proto.spec for c in at.get("plotly_chart"))  # drawn only once its fold is open
    at.session_state["att.pos_table_open"] = True
    at.run()
    assert any(title in c.proto.spec for c in at.get("plotly_chart"))
    at.segmented_control(key="att.pos").set_value("learned").run()
    with live_model(at, "att.train") as run:
        assert run.trainers[0].config.pos == "learned"
    assert at.query_params["pos"] == "learned"
    at.segmented_control(key="att.section").set_value("compare").run()
    with live_model(at, "att.compare") as run:
        assert all(tr.config.pos == "learned" for tr in run.trainers)


def test_a_bad_position_encoding_in_the_url_gets_a_notice():
    at = att_page(section="train", pos="rope")
    assert at.segmented_control(key="att.pos").value == "learned" and len(at.warning) == 1


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_articles_invariance_claim_next_to_the_correction(lang):
    at = shared_lab(ATT, lang, section="pipeline")
    cat = catalogue(lang)
    assert cat["att.perm_course"] in [i.value for i in at.info]
    assert cat["att.perm_fix"] in [s.value for s in at.success]
    assert ("置换不变" in cat["att.perm_course"] and "置换等变" in cat["att.perm_fix"]) if lang == "zh" else (
        "invariant" in cat["att.perm_course"] and "equivariant" in cat["att.perm_fix"])
    verdict = " ".join(cat[f"att.perm_verdict.{k}"] for k in ("eq.yes", "inv.moved", "pos.broken"))
    assert verdict in texts(at)  # the notes' 猫追狗: rounding, then two gaps that are not


def test_the_permutation_check_runs_on_the_users_tokens():
    at = att_page(d_model="12", heads="3", seed="4", perm="shuffle")
    at.text_input(key="att.text").set_value("the cat chases the dog").run()
    assert at.segmented_control(key="att.perm").value == "shuffle" and at.query_params["perm"] == "shuffle"
    c = permutation_check(split_tokens("the cat chases the dog"), 12, 3, 4, "shuffle")
    stats = permutation_stats(c)
    shown = metrics(at)
    for key in ("equivariance", "invariance", "positions"):
        assert shown[EN[f"att.perm_metric.{key}"]] == stats[key]
    assert float(stats["equivariance"]) < 1e-4 < float(stats["invariance"])
    at.segmented_control(key="att.perm").set_value("reverse").run()
    at.text_input(key="att.text").set_value("a b a").run()  # reversed it is the same sequence
    assert EN["att.perm_same"] in texts(at) and EN["att.perm_verdict.inv.moved"] not in texts(at)


STRINGS = ["", " ", "猫", "a b c", "🙂🙂", "x" * 400, "狗追猫 the cat", "abcde", "hhhhh", "\n\t"]


def test_fuzz_every_widget():
    rng = random.Random(3)
    at = att_page()
    for section in ("pipeline", "examples", "train", "compare", "pipeline"):
        at.segmented_control(key="att.section").set_value(section).run()
        for i in range(12):
            widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "toggle", "text_input",
                                      "text_area", "segmented_control")
                       for w in getattr(at, kind)
                       if w.key and w.key.startswith("att.") and w.key != "att.section" and not w.disabled]
            w = rng.choice(widgets)
            fuzz_widget(w, rng, CHOICES | {"att.head": ("all", "1")}, STRINGS).run()
            assert not at.exception, (section, i, w.key, w.value, at.exception)
            for kind in ("train", "compare"):
                if f"att.{kind}.cursor" in at.session_state and rng.random() < 0.3:
                    live_advance(at, f"att.{kind}", 3)
