"""AppTest: the generalisation lab in both languages, URL values, bad input, live runs, and every widget fuzzed."""
import random

import pytest

from apptools import cursor, fuzz_widget, live_advance, live_model, open_lab, schema_choices, shared_lab, texts
from labs.generalization.schema import SCHEMA
from ui.i18n import catalogue

GEN = "labs/generalization/page.py"
SECTIONS = {p.name: p for p in SCHEMA}["section"].choices
CHOICES = schema_choices("gen", SCHEMA)
EN = catalogue("en")


def gen_page(lang="en", **query):
    return open_lab(GEN, lang, **query)


def button(at, key):
    return next(b for b in at.button if b.key == key)


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("section", SECTIONS)
def test_every_section_renders_in_both_languages(lang, section):
    # (opened by URL: AppTest formats a segmented control's labels outside the script run, where t()
    # cannot see the session's language, so clicking the sections only works in English; see the fuzz test)
    at = shared_lab(GEN, lang, section=section)
    assert at.title[0].value == catalogue(lang)["nav.generalization"]
    assert at.segmented_control(key="gen.section").value == section and at.query_params["section"] == section
    assert not at.error and not at.warning
    intro = {"split": "gen.split.intro", "leakage": "gen.leak.intro", "capacity": "gen.cap.intro",
             "regularization": "gen.reg.intro", "label_noise": "gen.noise.intro"}
    shown = texts(at)
    for other, key in intro.items():  # one section at a time
        assert (catalogue(lang)[key] in shown) == (other == section)


def test_sections_switch_by_clicking():
    at = gen_page()
    for section in SECTIONS:
        at.segmented_control(key="gen.section").set_value(section).run()
        assert not at.exception and at.query_params["section"] == section


def test_url_values_set_widgets_and_bad_values_get_a_notice():
    at = gen_page(section="capacity", n="100", degree="7", width="32", lr="0.01", patience="0", train="0.95", k="50",
                  flip="abc", section_typo="x")
    assert at.segmented_control(key="gen.section").value == "capacity"
    assert at.slider(key="gen.n").value == 100 and at.slider(key="gen.degree").value == 7
    assert at.select_slider(key="gen.width").value == 32 and at.select_slider(key="gen.lr").value == 0.01
    assert at.slider(key="gen.train").value == 0.6  # 0.95 is outside the notes' 60-80 %: default
    assert len(at.warning) == 3  # train, k and flip, each with a notice
    with live_model(at, "gen.cap") as run:
        config = run.trainer.config
    assert config.hidden == (32, 32) and config.lr == 0.01 and config.patience == 0
    link = at.code[0].value
    assert "section=capacity" in link and "n=100" in link and "degree=7" in link and "lang=en" in link


def test_widget_changes_are_written_to_the_url():
    at = gen_page()
    at.slider(key="gen.k").set_value(8).run()
    at.slider(key="gen.noise").set_value(0.8).run()
    assert not at.exception
    assert at.query_params["k"] == "8" and at.query_params["noise"] == "0.8"


def test_an_impossible_split_gets_a_message_and_keeps_the_data():
    at = gen_page()
    before = at.session_state["gen.data"]
    at.slider(key="gen.train").set_value(0.8).run()
    at.slider(key="gen.val").set_value(0.2).run()  # 80 % + 20 %: nothing left to test on
    assert not at.exception
    assert EN["gen.split_empty"].split("{")[0] in texts(at)
    assert len(at.session_state["gen.data"].train) == len(before.train) == 24  # the last split that worked
    at.slider(key="gen.val").set_value(0.1).run()
    assert not at.error and len(at.session_state["gen.data"].test) == 4  # 80 / 10 / 10 of 40


def test_test_share_outside_the_notes_range_is_pointed_out():
    at = gen_page(train="0.6", val="0.1")  # the test set gets 30 %
    assert EN["gen.test_outside"].split("{")[0] in texts(at)


def test_cross_validation_steps_fold_by_fold_and_shows_the_mean():
    at = gen_page(k="4")
    assert at.session_state["gen.cv.shown"] == 4  # the finished result first
    assert any(m.label == EN["gen.cv.mean"].format(k=4) for m in at.metric)
    button(at, "gen.cv.step").click().run()
    assert at.session_state["gen.cv.shown"] == 1
    button(at, "gen.cv.step").click().run()
    assert at.session_state["gen.cv.shown"] == 2
    button(at, "gen.cv.play").click().run()
    assert at.session_state["gen.cv.shown"] == 1 and at.session_state["gen.cv.playing"]
    at.slider(key="gen.k").set_value(6).run()  # new settings: the finished result again
    assert at.session_state["gen.cv.shown"] == 6 and not at.session_state["gen.cv.playing"] and not at.exception


def test_live_run_steps_restores_the_best_checkpoint_and_resets():
    at = gen_page(section="capacity", patience="0", speed="10")
    button(at, "gen.cap.step").click().run()
    with live_model(at, "gen.cap") as run:
        assert run.trainer.epoch == 10
    live_advance(at, "gen.cap", 400)  # what Play would do, without the browser's timer
    at.run()
    shared = cursor(at, "gen.cap").traj
    with live_model(at, "gen.cap") as run:
        epoch, best = run.trainer.epoch, run.trainer.best_epoch
        best_weights = run.trainer._best
    assert epoch == 410 and best < epoch and not button(at, "gen.cap.restore").disabled
    button(at, "gen.cap.restore").click().run()
    with live_model(at, "gen.cap") as run:  # the run at epoch 410 with the best checkpoint put back, stopped there
        assert run.trainer.stopped and (run.trainer.epoch, run.trainer.best_epoch) == (epoch, best)
        assert all((p == b).all() for p, b in zip(run.trainer._params, best_weights, strict=True))
    assert EN["gen.run.stopped"].format(epoch=epoch, best=best) in texts(at)
    assert button(at, "gen.cap.play").disabled and button(at, "gen.cap.step").disabled
    assert button(at, "gen.cap.restore").disabled
    with shared.model_at(epoch) as run:  # the shared run is not restored: another session's goes on
        assert not run.trainer.stopped
    button(at, "gen.cap.reset").click().run()
    assert cursor(at, "gen.cap").traj is shared and not at.exception  # back to the shared run's start
    with live_model(at, "gen.cap") as run:
        assert run.trainer.epoch == 0
    assert EN["gen.run.stopped"].split("{")[0] not in texts(at) and not button(at, "gen.cap.play").disabled


def test_early_stopping_ends_the_run_with_a_message():
    at = gen_page(section="capacity", patience="50")
    live_advance(at, "gen.cap", 2000)
    at.run()
    with live_model(at, "gen.cap") as run:
        trainer = run.trainer
        assert cursor(at, "gen.cap").stopped and trainer.stopped and trainer.epoch == trainer.best_epoch + 50
        shown = EN["gen.run.stopped"].format(epoch=trainer.epoch, best=trainer.best_epoch)
    assert shown in texts(at) and button(at, "gen.cap.play").disabled


def test_changing_a_setting_starts_a_new_run_and_keeps_the_other_sections():
    at = gen_page(section="regularization")
    first = cursor(at, "gen.reg")
    live_advance(at, "gen.reg", 20)
    at.select_slider(key="gen.l2").set_value(0.01).run()
    second = cursor(at, "gen.reg")
    assert second is not first and second.traj is not first.traj and first.pos == 20
    with live_model(at, "gen.reg") as run:
        assert run.trainer.config.l2 == 0.01 and run.trainer.epoch == 0
    at.segmented_control(key="gen.section").set_value("label_noise").run()
    at.segmented_control(key="gen.section").set_value("regularization").run()
    assert cursor(at, "gen.reg") is second and "gen.noise.cursor" in at.session_state and not at.exception


def test_capacity_sweep_averages_draws_and_says_so():
    at = shared_lab(GEN, "en", section="capacity")
    from sim.fitting.generalization import capacity_sweep

    expected = capacity_sweep(*at.session_state["gen.data_key"])
    assert expected.draws > 1
    n_val = len(at.session_state["gen.data"].val)
    assert EN["gen.cap.draws"].format(draws=expected.draws, best=expected.best, n_val=n_val) in texts(at)
    assert not at.exception


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_l2_formula_and_convention_are_shown_where_lambda_is_set(lang):
    at = shared_lab(GEN, lang, section="regularization")
    assert any(catalogue(lang)["gen.reg.formula"] in e.value for e in at.latex)
    assert r"\lambda\sum_{j} w_j^2" in catalogue(lang)["gen.reg.formula"]  # λΣw², no ½
    assert catalogue(lang)["gen.reg.convention"] in texts(at)


def test_leakage_section_shows_the_chosen_scenario_with_both_protocols():
    at = gen_page(section="leakage")
    assert at.selectbox(key="gen.scenario").value == "scaling"  # the first scenario unless the URL names another
    scenarios = {"scaling": "strength", "group": "records", "time": "spell"}
    for scenario, knob in scenarios.items():
        at.selectbox(key="gen.scenario").set_value(scenario).run()
        shown = texts(at)
        assert EN[f"gen.leak.{scenario}.text"] in shown and at.query_params["scenario"] == scenario
        assert EN[f"gen.leak.{scenario}.leaky"] + ": reports" in shown
        assert not any(EN[f"gen.leak.{other}.text"] in shown for other in scenarios if other != scenario)
        assert {s.key for s in at.slider} >= {f"gen.{knob}"}  # its own setting beside it
    at.slider(key="gen.spell").set_value(2).run()
    assert not at.exception


@pytest.mark.parametrize("section", SECTIONS)
def test_fuzz_every_widget(section):
    rng = random.Random(section)
    at = gen_page(section=section)
    for i in range(14):
        widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "button")
                   for w in getattr(at, kind) if w.key and w.key.startswith("gen.") and not w.disabled]
        w = rng.choice(widgets)
        fuzz_widget(w, rng, CHOICES).run()
        assert not at.exception, (section, i, w.key, getattr(w, "value", None), at.exception)
        assert at.segmented_control(key="gen.section").value == section
        for name in ("cap", "reg", "noise"):  # what Play does between reruns
            if f"gen.{name}.cursor" in at.session_state and rng.random() < 0.4:
                live_advance(at, f"gen.{name}", rng.choice([1, 30, 300]))
