"""AppTest: every page runs in both languages, every widget can be changed, bad input is handled."""
import json
import random

import pytest
from waits import wait_until

from apptools import cursor, fuzz_widget, live_advance, live_model, open_app, open_lab, schema_choices, table, texts
from labs.classification.live import live_spec
from labs.classification.run import ClassifierRun, static
from labs.classification.schema import SCHEMA
from sim.core.data import CLASSIFICATION_DATASETS, REGRESSION_DATASETS
from sim.plots.live import weight_lists
from ui.i18n import catalogue

CLS = "labs/classification/page.py"
KEY = "cls"  # the lab's live run (ui.live_run.live_lab): its cursor is session_state["cls.cursor"]
CHOICES = schema_choices("cls", SCHEMA)


def app(lang="en"):
    return open_app(lang)


def cls_page(lang="en", **query):
    return open_lab(CLS, lang, **query)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_home_in_both_languages(lang):
    at = app(lang).run()
    assert not at.exception
    assert at.title[0].value == catalogue(lang)["home.title"]
    assert any(catalogue(lang)["nav.classification"] in s.value for s in at.subheader)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_classification_page_in_both_languages(lang):
    at = cls_page(lang)
    assert at.title[0].value == catalogue(lang)["cls.title"]
    assert at.get_by_key("cls.dataset") and at.get_by_key("cls.lr")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_features_panel_counts_the_picture_and_the_shopper(lang):
    at = cls_page(lang, panel="features", hidden="4,2", features="x1,x2")
    cat = catalogue(lang)
    df = table(at, cat["cls.feat.col.logistic"])
    assert list(df[cat["cls.feat.col.features"]]) == ["2", "2", "150,528"]
    assert list(df[cat["cls.feat.col.logistic"]]) == ["3", "3", "150,529"]
    assert list(df[cat["cls.feat.col.shape"]])[-1] == "224 × 224 × 3"
    assert "602,112" in texts(at) and not at.exception  # 150,528 inputs × 4 neurons of the first layer


def test_url_values_set_widgets_and_bad_values_get_a_notice():
    at = cls_page(dataset="spiral", lr="0.3", hidden="8,8,8", seed="7", noise="7", activation="gelu")
    assert at.selectbox(key="cls.dataset").value == "spiral"
    assert at.select_slider(key="cls.lr").value == 0.3
    assert at.number_input(key="cls.n_layers").value == 3
    assert at.number_input(key="cls.seed").value == 7
    assert at.slider(key="cls.noise").value == 0.0  # 7 is out of [0, 0.5]: default
    assert len(at.warning) == 2  # noise and activation, each with a notice
    link = at.code[0].value  # the "copy link" box
    assert "dataset=spiral" in link and "hidden=8,8,8" in link and "seed=7" in link and "lang=en" in link
    assert at.query_params["dataset"] == "spiral" and at.query_params["noise"] == "0"


def test_widget_changes_are_written_to_the_url():
    at = cls_page()
    at.selectbox(key="cls.dataset").set_value("xor").run()
    at.select_slider(key="cls.lr").set_value(0.1).run()
    assert not at.exception
    assert at.query_params["dataset"] == "xor" and at.query_params["lr"] == "0.1"


def test_step_trains_one_epoch_and_reset_starts_over():
    at = cls_page()
    step = next(b for b in at.button if b.label == catalogue("en")["cls.step"])
    step.click().run()
    step = next(b for b in at.button if b.label == catalogue("en")["cls.step"])
    step.click().run()
    with live_model(at, KEY) as run:
        assert run.trainer.epoch == 2 and cursor(at, KEY).pos == 2
    next(b for b in at.button if b.label == catalogue("en")["cls.reset"]).click().run()
    with live_model(at, KEY) as run:
        assert run.trainer.epoch == 0 and not at.exception


def live_view_data(at) -> dict:
    """What the page last sent to the live view's canvas component (its data, as JSON)."""
    def walk(node):
        children = getattr(node, "children", None)
        for child in children.values() if isinstance(children, dict) else ():
            yield child
            yield from walk(child)

    for e in walk(at._tree):
        if type(e).__name__ == "UnknownElement" and e.type == "bidi_component" \
                and e.proto.component_name == "mlsim_live_view":
            return json.loads(e.proto.json)
    raise AssertionError("no live view on the page")


def test_the_live_view_shows_what_a_run_of_its_own_shows_at_the_sessions_step():
    at = cls_page(dataset="xor", hidden="3", seed="5")
    own = live_spec({**{p.name: p.default for p in SCHEMA}, "dataset": "xor", "hidden": (3,), "seed": 5}).build()
    for _ in range(2):  # epoch 2: no frame of the run has the network there, the page takes it from the model
        next(b for b in at.button if b.label == catalogue("en")["cls.step"]).click().run()
    own.advance(2)
    data, want = live_view_data(at), own.frame()
    shown = data["frames"][-1]
    assert data["status"] == "paused" and shown["epoch"] == 2 and shown["grid"] == want["grid"]
    net = static(own.trainer)["net"]
    assert data["net"]["thumbs"] == net["thumbs"] and data["net"]["weights"] == weight_lists(net["weights"])
    assert data["net"]["sizes"] == [2, 3, 1] and data["points"] and data["curve"]
    live_advance(at, KEY, 73)  # epoch 75: a frame with the network
    at.run()
    own.advance(73)
    data, want = live_view_data(at), own.frame()
    assert data["frames"][-1]["epoch"] == 75 and data["frames"][-1]["grid"] == want["grid"]
    assert data["net"]["thumbs"] == want["net"]["thumbs"]
    assert data["net"]["weights"] == weight_lists(want["net"]["weights"])
    assert data["frames"][-1]["train_loss"] == want["train_loss"] and not at.exception


def test_learning_rate_ten_diverges_with_a_message_and_reset_recovers():
    at = cls_page(lr="10")
    for _ in range(3):
        next(b for b in at.button if b.label == catalogue("en")["cls.step"]).click().run()
    live_advance(at, KEY, 20)  # what Play would do, without the browser's timer
    at.run()
    with live_model(at, KEY) as run:
        assert run.trainer.diverged and run.trainer.divergence == "overshoot"
    assert catalogue("en")["cls.diverged.overshoot"].split(":")[0] in texts(at)
    play, step = catalogue("en")["cls.play"], catalogue("en")["cls.step"]
    assert {b.label: b.disabled for b in at.button if b.label in (play, step)} == {play: True, step: True}
    next(b for b in at.button if b.label == catalogue("en")["cls.reset"]).click().run()
    with live_model(at, KEY) as run:
        assert not run.trainer.diverged and run.trainer.epoch == 0
    assert not at.exception and not at.error


def test_blowup_diverges_with_its_own_message():
    at = cls_page(problem="regression", dataset="plane", lr="3", hidden="8,8", activation="linear")
    live_advance(at, KEY, 50)
    at.run()
    with live_model(at, KEY) as run:
        assert run.trainer.diverged and run.trainer.divergence == "blowup"
    assert catalogue("en")["cls.diverged.blowup"].split(":")[0] in texts(at) and not at.exception


def test_empty_feature_selection_keeps_the_model():
    at = cls_page()
    before = cursor(at, KEY)
    at.pills(key="cls.features").set_value([]).run()
    assert not at.exception and cursor(at, KEY) is before and cursor(at, KEY).traj is before.traj
    assert catalogue("en")["cls.no_features"] in texts(at)


GOOD_CSV = "a,b,label\n" + "\n".join(f"{i},{(i * 7) % 11},{i % 2}" for i in range(40))


@pytest.mark.parametrize("content,code", [
    (b"a,b\n1,2\n", "missing_columns"), (b"a,b,label\n1,x,0\n" * 12, "non_numeric"),
    (("a,b,label\n" + "".join(f"{i},{i % 3},0\n" for i in range(12))).encode(), "single_class"),
    (b"\xff\xfe\x00\x01", "not_text"),
    (b"a,b,label\n" + b"1.25,2.5,0\n" * 300_000, "too_large"),
])
def test_bad_upload_gets_a_message_and_keeps_the_data(content, code):
    at = cls_page()
    at.file_uploader(key="cls.file").upload("data.csv", GOOD_CSV.encode(), "text/csv").run()
    before = cursor(at, KEY)
    with live_model(at, KEY) as run:
        assert len(run.trainer.y_train) + len(run.trainer.y_val) + len(run.trainer.y_test) == 40
    at.file_uploader(key="cls.file").upload("bad.csv", content, "text/csv").run()
    assert not at.exception
    assert cursor(at, KEY) is before and before.traj.key[1][1] is not None  # nothing the user had is lost
    expected = catalogue("en")[f"upload.{code}"].split("{")[0]
    assert any(expected in e.value for e in at.error), (code, [e.value for e in at.error])


def test_every_dataset_and_problem_type_renders():
    at = cls_page()
    for name in CLASSIFICATION_DATASETS:
        at.selectbox(key="cls.dataset").set_value(name).run()
        assert not at.exception, name
    at.selectbox(key="cls.problem").set_value("regression").run()
    with live_model(at, KEY) as run:
        assert not at.exception and run.trainer.config.problem == "regression"


def test_fuzz_every_widget():
    rng = random.Random(1)
    at = cls_page()
    for i in range(60):
        widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "toggle")
                   for w in getattr(at, kind) if w.key and w.key.startswith("cls.") and not w.disabled]
        w = rng.choice(widgets)
        regression = at.session_state["cls.problem"] == "regression"
        choices = CHOICES | {"cls.dataset": REGRESSION_DATASETS if regression else CLASSIFICATION_DATASETS}
        fuzz_widget(w, rng, choices).run()
        assert not at.exception, (i, w.key, w.value, at.exception)
        if rng.random() < 0.3:
            live_advance(at, KEY, 3)
    for features in (["x1sq", "sinx2"], ["x1", "x2", "x1sq", "x2sq", "x1x2", "sinx1", "sinx2"]):
        at.pills(key="cls.features").set_value(features).run()
        assert not at.exception
    for panel in ("why_ce", "features", "download", "eval"):
        at.segmented_control(key="cls.panel").set_value(panel).run()
        assert not at.exception


def test_a_training_step_that_fails_gets_a_message_and_keeps_the_model(monkeypatch):
    """A failure while the run trains (here: out of memory on its third call) stops it where it was: the page says
    so, the model up to there is kept and can be looked at, Reset goes back to the start."""
    at = cls_page()
    calls = {"n": 0}
    real_advance = ClassifierRun.advance

    def failing_advance(self, n: int) -> None:  # on the class: the checkpoints' copies step the same way
        calls["n"] += 1
        if calls["n"] == 3:
            raise MemoryError("the worker died")
        real_advance(self, n)

    monkeypatch.setattr(ClassifierRun, "advance", failing_advance)
    c = cursor(at, KEY)
    next(b for b in at.button if b.label == catalogue("en")["cls.play"]).click().run()
    wait_until(lambda: c.traj.error is not None, 10, "the failing step")
    wait_until(lambda: c.frames(c.pos) and not c.playing, 10, "the cursor to reach where the run stopped")
    at.run()
    assert not at.exception and isinstance(c.error, MemoryError)
    assert catalogue("en")["live.failed"] in [e.value for e in at.error]
    epoch = c.pos
    with live_model(at, KEY) as run:  # nothing the user had is lost: the model as it was when it failed
        assert epoch > 0 and run.trainer.epoch == epoch and run.trainer.history[-1]["epoch"] == epoch
    next(b for b in at.button if b.label == catalogue("en")["cls.reset"]).click().run()
    assert not at.exception and cursor(at, KEY) is c and c.pos == 0 and c.traj.head == epoch
