"""The optimiser lab's live runs in AppTest: the race and the schedules race in both languages, Step trains every
racer and the table shows the engine's own numbers, a diverging racer gets its message while the others go on,
bad URL values get notices, and the run widgets changed at random never raise."""
import random

import pytest
import torch

from apptools import cursor, fuzz_widget, live_advance, live_model, open_lab, schema_choices, texts
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
    with live_model(at, "opt.race") as run:  # the session's run at its step: the racers the table read
        assert [r.steps for r in run.racers] == [3, 3, 3]
        assert all(torch.equal(p, q) for r, own in zip(run.racers, racers, strict=True)
                   for p, q in zip(r.params, own.params, strict=True))
    live_advance(at, "opt.race", 4)  # what Play does, without the browser's timer
    at.run()
    for r in racers:
        r.step(4)
    assert cursor(at, "opt.race").pos == 7 and column(at, cat, "opt.race.col.steps") == [7, 7, 7]
    assert column(at, cat, "opt.race.col.loss") == [f"{r.last_loss():.4g}" for r in racers]


def test_two_sessions_share_one_race_and_each_table_reads_its_own_step():
    """Equal settings: one run, computed once; the session behind reads its racers at its own step (a replay)."""
    from sim.optim.race import RaceConfig, race

    query = {"section": "race", "r_opts": "adam,lion", "r_width": "8", "r_speed": "2"}
    ahead, behind = open_lab(PAGE, "en", **query), open_lab(PAGE, "en", **query)
    assert cursor(ahead, "opt.race").traj is cursor(behind, "opt.race").traj
    for _ in range(3):
        ahead.button(key="opt.race.step").click().run()
    behind.button(key="opt.race.step").click().run()
    assert column(ahead, EN, "opt.race.col.steps") == [6, 6] and column(behind, EN, "opt.race.col.steps") == [2, 2]
    racers = race(("adam", "lion"), RaceConfig(width=8), {})
    for r in racers:
        r.step(2)
    assert column(behind, EN, "opt.race.col.loss") == [f"{r.last_loss():.4g}" for r in racers]
    assert column(behind, EN, "opt.race.col.state") == [f"{r.state_bytes():,}" for r in racers]


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


def test_settings_that_cannot_build_the_model_keep_the_old_race(monkeypatch):
    import labs.optimizers.race as race_page

    at = open_lab(PAGE, "en", section="race", r_opts="adam,lion", r_width="8")
    at.button(key="opt.race.step").click().run()
    before = cursor(at, "opt.race")

    def cannot(v):
        raise ValueError("invalid:race")

    monkeypatch.setattr(race_page, "config", cannot)  # what a RaceConfig that cannot be built raises
    at.select_slider(key="opt.r_batch").set_value(64).run()
    assert not at.exception and [e.value for e in at.error] == [EN["opt.race.invalid"]]
    assert cursor(at, "opt.race") is before and column(at, EN, "opt.race.col.steps") == [2, 2]
    monkeypatch.undo()
    at.run()
    assert not at.error and cursor(at, "opt.race") is not before and column(at, EN, "opt.race.col.steps") == [0, 0]


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
    live_advance(at, "opt.sched", 500)  # past the schedules' end: every run stops at its last step
    at.run()
    assert column(at, cat, "opt.race.col.steps") == [200] * len(SCHEDULES) and cursor(at, "opt.sched").stopped
    assert [s.value for s in at.success] == [cat["opt.race.finished"].format(steps=200)]
    assert at.button(key="opt.sched.play").disabled and at.button(key="opt.sched.step").disabled
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
