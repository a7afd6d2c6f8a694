"""The optimiser lab's live runs in AppTest: the race and the schedules race in both languages, Step trains every
racer and the table shows the engine's own numbers, a diverging racer gets its message while the others go on,
bad URL values get notices, and the run widgets changed at random never raise."""
import random

import pytest

from apptools import fuzz_widget, open_lab, schema_choices, texts
from labs.optimizers.schema import PAGE as P
from labs.optimizers.schema import SCHEMA
from sim.optim.optimizers import SCHEDULES
from ui.i18n import catalogue

PAGE = "labs/optimizers/page.py"
EN, ZH = catalogue("en"), catalogue("zh")


def column(at, cat, key: str) -> list:
    table = at.dataframe[-1].value
    return table[cat[key]].tolist()


def test_the_race_in_chinese():
    """(AppTest formats a selectbox's options in English once a widget changes, so the Chinese page is looked at
    as it opens; the English tests press the buttons.)"""
    at = open_lab(PAGE, "zh", section="race", r_opts="sgd,lion", r_width="16")
    assert not at.exception and not at.warning and not at.error
    assert column(at, ZH, "opt.race.col.name") == [ZH["opt.r_opts.sgd"], ZH["opt.r_opts.lion"]]
    assert column(at, ZH, "opt.race.col.steps") == [0, 0]
    assert ZH["opt.race.play"] in [b.label for b in at.button] and ZH["opt.race.intro"] in texts(at)


def test_step_trains_every_racer_and_the_table_counts_their_state():
    from sim.optim.race import RaceConfig, race

    cat = EN
    at = open_lab(PAGE, "en", section="race", r_opts="sgd,adam,muon", r_width="16", r_speed="3", r_seed="4")
    assert not at.exception and not at.warning
    assert column(at, cat, "opt.race.col.steps") == [0, 0, 0]
    at.button(key="opt.race.step").click().run()
    assert not at.exception and not at.warning
    assert column(at, cat, "opt.race.col.steps") == [3, 3, 3]
    racers = race(("sgd", "adam", "muon"), RaceConfig(width=16, seed=4), {})
    for r in racers:
        r.step(3)
    assert column(at, cat, "opt.race.col.state") == [f"{r.state_bytes():,}" for r in racers]
    assert column(at, cat, "opt.race.col.loss") == [f"{r.last_loss():.4g}" for r in racers]
    assert all(v != "–" and float(v) > 0 for v in column(at, cat, "opt.race.col.ms"))
    assert column(at, cat, "opt.race.col.name") == [cat[f"opt.r_opts.{o}"] for o in ("sgd", "adam", "muon")]


def test_a_diverging_racer_gets_its_message_and_the_others_go_on():
    at = open_lab(PAGE, "en", section="race", r_opts="sgd,adam", r_sgd_lr="10", r_width="32", r_speed="5")
    at.button(key="opt.race.step").click().run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and warnings[0].startswith(EN["opt.race.diverged"].split("{")[0] + "SGD")
    assert "step 2 " in warnings[0] and "learning rate 10" in warnings[0]
    assert column(at, EN, "opt.race.col.steps") == [2, 5]
    at.button(key="opt.race.step").click().run()
    assert not at.exception and column(at, EN, "opt.race.col.steps") == [2, 10]


def test_changed_settings_start_a_new_race_and_reach_the_url():
    at = open_lab(PAGE, "en", section="race", r_opts="adam,lion", r_width="8")
    at.button(key="opt.race.step").click().run()
    assert column(at, EN, "opt.race.col.steps") == [2, 2]
    at.select_slider(key="opt.r_batch").set_value(200).run()
    assert not at.exception and column(at, EN, "opt.race.col.steps") == [0, 0]  # a new race
    at.selectbox(key="opt.r_data").set_value("moons").run()
    at.pills(key="opt.r_opts").set_value(["sgd", "lion", "muon"]).run()
    assert not at.exception and len(at.dataframe[-1].value) == 3
    q = at.query_params
    assert q["r_batch"] in ("200", ["200"]) and q["r_data"] in ("moons", ["moons"])
    at.pills(key="opt.r_opts").set_value([]).run()
    assert not at.exception and EN["opt.none"] in texts(at)


def test_bad_url_values_get_notices_and_defaults():
    at = open_lab(PAGE, "en", section="race", r_width="7", r_sgd_lr="-1", r_data="bogus", r_steps="1e9", s_opt="x")
    assert not at.exception
    assert len(at.warning) == 5 and all(EN["url.rejected"].split("{")[0] in w.value for w in at.warning)
    assert at.select_slider(key="opt.r_width").value == 32 and len(at.dataframe[-1].value) == 6


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_schedules_race_steps_each_schedule(lang):
    cat = catalogue(lang)
    at = open_lab(PAGE, lang, section="schedules", s_steps="200", s_warmup="20", r_width="8", r_speed="4",
                  s_opt="lion", s_lr="0.01")
    assert not at.exception and not at.warning and cat["opt.sched.race"] in [s.value for s in at.subheader]
    assert column(at, cat, "opt.race.col.name") == [cat[f"opt.sched.{s}"] for s in SCHEDULES]
    if lang == "zh":  # (see test_the_race_in_chinese)
        return
    at.button(key="opt.sched.step").click().run()
    assert not at.exception
    assert column(at, cat, "opt.race.col.steps") == [4] * len(SCHEDULES)
    assert column(at, cat, "opt.race.col.name") == [cat[f"opt.sched.{s}"] for s in SCHEDULES]
    at.number_input(key="opt.s_warmup").set_value(50).run()  # a new schedule: new runs
    assert not at.exception and column(at, cat, "opt.race.col.steps") == [0] * len(SCHEDULES)


def test_fuzz_the_run_widgets():
    rng = random.Random(11)
    choices = schema_choices(P, SCHEMA)
    for section in ("race", "schedules"):
        at = open_lab(PAGE, "en", section=section, r_width="8")
        for i in range(10):
            widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "button", "pills")
                       for w in getattr(at, kind) if w.key and (w.key.startswith(("opt.r_", "opt.s_", "opt.race.",
                                                                                   "opt.sched.")))]
            w = rng.choice(widgets)
            if w.key == "opt.r_opts":
                w.set_value(rng.sample(["sgd", "momentum", "adam", "adamw", "lion", "muon"], rng.randint(0, 3)))
            elif w.key.endswith(".play"):  # Play starts a thread that AppTest does not wait for: Step instead
                continue
            else:
                fuzz_widget(w, rng, choices)
            at.run()
            assert not at.exception, (section, i, w.key, at.exception)
