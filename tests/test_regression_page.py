"""AppTest: the regression lab in both languages, URL state, the worked example on the page, every
hard case (ill-conditioned, underdetermined, constant column, divergence, bad uploads), and a widget fuzz."""
import json
import random

import numpy as np
import pytest

from apptools import cursor, fuzz_widget, live_advance, live_model, metrics, open_lab, schema_choices, texts
from labs.regression.schema import SCHEMA
from labs.regression.views import num
from sim.fitting.regression_data import DATASETS
from ui.i18n import catalogue

REG = "labs/regression/page.py"
EN = catalogue("en")
CHOICES = schema_choices("reg", SCHEMA)


def reg_page(lang="en", **query):
    return open_lab(REG, lang, **query)


def button(at, key):
    return next(b for b in at.button if b.label == EN[key])


def lead(key: str) -> str:
    """The text of a message before its first placeholder, to find it on the page."""
    return EN[key].split("{")[0]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_in_both_languages(lang):
    at = reg_page(lang)
    assert at.title[0].value == catalogue(lang)["reg.title"]
    assert at.get_by_key("reg.dataset") and at.get_by_key("reg.degree") and at.metric
    assert catalogue(lang)["reg.method.normal"] in texts(at)


def test_url_values_set_widgets_and_bad_values_get_a_notice():
    at = reg_page(dataset="sine", degree="5", lr="100", solver="gd", n="9999", loss="L7", batch_size="full")
    assert at.selectbox(key="reg.dataset").value == "sine"
    assert at.slider(key="reg.degree").value == 5
    assert at.select_slider(key="reg.lr").value == 100.0
    assert at.slider(key="reg.n").value == 30  # 9999 is out of [2, 1000]: default
    assert at.selectbox(key="reg.loss").value == "mse"
    assert sum("is not valid here" in w.value for w in at.warning) == 2
    link = at.code[0].value
    assert "dataset=sine" in link and "degree=5" in link and "lr=100" in link and "lang=en" in link
    assert at.query_params["n"] == "30" and at.query_params["solver"] == "gd"


def test_widget_changes_are_written_to_the_url():
    at = reg_page()
    at.selectbox(key="reg.dataset").set_value("area_price").run()
    at.slider(key="reg.degree").set_value(3).run()
    at.toggle(key="reg.standardize").set_value(True).run()
    assert not at.exception
    assert at.query_params["dataset"] == "area_price" and at.query_params["degree"] == "3"
    assert at.query_params["standardize"] == "1"


def test_worked_example_is_reproduced_on_the_page():
    at = reg_page(panel="step")
    shown = texts(at)
    assert EN["reg.step_example_done"].format(w="0.4", b="0.25") in shown
    latex = " ".join(e.value for e in at.latex)
    assert r"\frac{1}{2}\left[(-2)\cdot1 + (-3)\cdot2\right] = -4" in latex
    assert r"= 0 - 0.1\cdot(-4) = 0.4" in latex and r"= 0 - 0.1\cdot(-2.5) = 0.25" in latex
    assert lead("reg.convention") in shown
    button(at, "reg.step_next").click().run()  # the next update starts from (0.4, 0.25)
    latex = " ".join(e.value for e in at.latex)
    assert r"= 0.4 - 0.1\cdot" in latex and not at.exception
    button(at, "reg.step_restart").click().run()
    assert EN["reg.step_example_done"].format(w="0.4", b="0.25") in texts(at)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_example_says_what_it_implies_and_shows_both_losses(lang):
    cat = catalogue(lang)
    at = reg_page(lang, panel="step")
    shown = texts(at)
    assert cat["reg.conv.intro"] in shown
    assert "as in the course notes" not in shown and "与讲义相同" not in shown
    table = at.dataframe[-1].value
    assert list(table.columns) == [cat["reg.conv.quantity"], cat["reg.conv.half"], cat["reg.conv.mean"]]
    assert list(table[cat["reg.conv.half"]]) == ["3.25", "-4", "-2.5", "0.4", "0.25"]  # the notes' printed step
    assert list(table[cat["reg.conv.mean"]]) == ["6.5", "-8", "-5", "0.8", "0.5"]
    at = reg_page(lang, panel="step", step_data="current")
    assert cat["reg.conv.intro"] not in texts(at) and not at.exception


def test_step_by_step_on_the_current_data_with_huber():
    at = reg_page(panel="step", step_data="current", loss="huber", degree="3", n="40")
    assert not at.exception and "ψ(r)" in at.dataframe[0].value.columns
    assert lead("reg.step_rows") in texts(at)
    button(at, "reg.step_next").click().run()
    assert not at.exception


def test_step_by_step_overflow_stops_with_a_message():
    at = reg_page(panel="step", step_data="current", dataset="area_price", lr="100")
    for _ in range(60):
        if button(at, "reg.step_next").disabled:
            break
        button(at, "reg.step_next").click().run()
    assert button(at, "reg.step_next").disabled and lead("reg.step_overflow") in texts(at)
    assert not at.exception


def test_degree_twelve_on_five_points_says_so():
    at = reg_page(n="5", degree="12")
    assert lead("reg.issue.underdetermined") in texts(at) and not at.exception


def test_ill_conditioned_powers_say_so_and_standardising_fixes_it():
    at = reg_page(dataset="area_price", degree="10")
    assert lead("reg.issue.ill_conditioned") in texts(at)
    at.toggle(key="reg.standardize").set_value(True).run()
    assert lead("reg.issue.ill_conditioned") not in texts(at) and not at.exception


def test_learning_rate_hundred_diverges_with_a_message_and_reset_recovers():
    at = reg_page(solver="gd", lr="100")
    assert lead("reg.lr.diverge") in texts(at)
    for _ in range(3):  # two steps of η = 100 already multiply the loss by ten billion
        if not button(at, "reg.step").disabled:
            button(at, "reg.step").click().run()
    with live_model(at, "reg") as run:
        assert run.gd.diverged and run.gd.epoch <= 3
        shown = EN["reg.diverged"].format(epoch=run.gd.epoch, loss=num(run.gd.history[-1]),
                                          start=num(run.gd.start_loss), lr="100")
    assert shown in texts(at)
    assert {b.label: b.disabled for b in at.button if b.label in (EN["reg.play"], EN["reg.step"])} == \
        {EN["reg.play"]: True, EN["reg.step"]: True}
    button(at, "reg.reset").click().run()
    with live_model(at, "reg") as run:
        assert not run.gd.diverged and run.gd.epoch == 0
    assert lead("reg.diverged") not in texts(at) and not button(at, "reg.play").disabled
    assert not at.exception


def test_zigzag_learning_rate_is_explained_and_gd_draws_the_path():
    at = reg_page(solver="gd", lr="0.5", panel="surface")
    assert lead("reg.lr.zigzag") in texts(at)
    assert lead("reg.surface_no_path") not in texts(at)  # the path so far: the start
    button(at, "reg.step").click().run()
    button(at, "reg.step").click().run()
    with live_model(at, "reg") as run:
        assert run.gd.epoch == 2
        path = run.gd.path_array()
    assert len(path) == 3
    assert lead("reg.surface_no_path") not in texts(at) and not at.exception
    drawn = next(tr for tr in json.loads(at.get_by_key("reg.surface_fig").proto.spec)["data"]
                 if tr.get("name") == EN["reg.plot.path"])
    np.testing.assert_allclose(values(drawn["x"]), path[:, 0])  # the path of the run at the step shown


def values(encoded) -> np.ndarray:
    """A Plotly figure's array from its JSON (a list, or {"dtype", "bdata": base64})."""
    import base64

    if isinstance(encoded, dict):
        return np.frombuffer(base64.b64decode(encoded["bdata"]), dtype=encoded["dtype"])
    return np.asarray(encoded, dtype=float)


def test_two_sessions_share_one_run_and_each_reads_the_model_at_its_own_epoch():
    from sim.fitting import regression as reg
    from sim.fitting.regression_data import make_dataset

    one, two = reg_page(solver="gd", lr="0.3"), reg_page(solver="gd", lr="0.3")
    assert cursor(one, "reg").traj is cursor(two, "reg").traj  # equal settings: computed once
    live_advance(one, "reg", 40)  # what Play would do
    one.run()
    button(two, "reg.step").click().run()
    assert (cursor(one, "reg").pos, cursor(two, "reg").pos) == (40, 1)
    data = make_dataset("linear", 30, 0.3, 0, 0, 5.0)
    for at, epoch in ((one, 40), (two, 1)):
        with live_model(at, "reg") as run:
            assert run.gd.epoch == epoch
            expected = reg.scores(data, run.gd.as_fit())
        assert metrics(at)[EN["reg.metric.rmse"]] == num(expected["rmse"])  # the fit at the epoch shown
    assert metrics(one) != metrics(two)


def test_surface_needs_two_parameters():
    at = reg_page(panel="surface", degree="2")
    assert lead("reg.surface_only_two") in texts(at)


def test_outliers_side_by_side():
    at = reg_page(panel="outliers", outliers="1", outlier_size="10")
    assert not at.exception
    assert sum(lead("reg.outliers_shift") in c.value for c in at.caption) == 2


@pytest.mark.parametrize("dataset", DATASETS)
def test_every_dataset_and_panel_renders(dataset):
    at = reg_page(dataset=dataset, outliers="2")
    for solver in ("closed_form", "gd"):
        at.segmented_control(key="reg.solver").set_value(solver).run()
        for panel in CHOICES["reg.panel"]:
            at.segmented_control(key="reg.panel").set_value(panel).run()
            assert not at.exception, (dataset, solver, panel)
            assert not at.error, (dataset, solver, panel, [e.value for e in at.error])


GOOD_CSV = "area,price\n" + "\n".join(f"{40 + 3 * i},{(40 + 3 * i) * 1.5 + (i * 7) % 5}" for i in range(30))


@pytest.mark.parametrize("content,code", [
    (b"x\n" + b"1\n" * 12, "missing_columns"), (b"x,y\n" + b"3,1\n3,2\n" * 6, "constant_feature"),
    (b"x,y\n" + b"1,a\n" * 12, "label_not_numeric"), (b"\xff\xfe\x00\x01", "not_text"),
    (b"a,b,c,d\n" + b"1,2,3,4\n" * 12, "too_many_columns"),
])
def test_bad_upload_gets_a_message_and_keeps_the_data(content, code):
    at = reg_page()
    at.file_uploader(key="reg.file").upload("data.csv", GOOD_CSV.encode(), "text/csv").run()
    data = at.session_state["reg.upload"]
    assert len(data.y) == 30 and EN["reg.upload_used"].split("{")[0] in texts(at)
    at.file_uploader(key="reg.file").upload("bad.csv", content, "text/csv").run()
    assert not at.exception
    assert at.session_state["reg.upload"] is data  # nothing the user had is lost
    assert any(lead(f"reg.upload.{code}") in e.value for e in at.error), (code, [e.value for e in at.error])


def test_two_input_upload_and_huge_values():
    at = reg_page(panel="outliers")
    csv = "t1,t2,tomorrow\n" + "\n".join(f"{i % 9},{(i * 5) % 11},{i % 7 + i % 3}" for i in range(20))
    at.file_uploader(key="reg.file").upload("t.csv", csv.encode(), "text/csv").run()
    assert at.session_state["reg.upload"].x.shape == (20, 2) and not at.exception
    huge = "x,y\n" + "\n".join(f"{i}e300,{i}" for i in range(-6, 6))
    at.file_uploader(key="reg.file").upload("h.csv", huge.encode(), "text/csv").run()
    at.slider(key="reg.degree").set_value(4).run()
    assert lead("reg.issue.overflow") in texts(at) and not at.exception
    at.segmented_control(key="reg.solver").set_value("gd").run()
    assert not at.exception
    button(at, "reg.upload_clear").click().run()
    assert at.session_state["reg.upload"] is None and not at.exception


@pytest.mark.parametrize("exponent", [160, 200])
def test_values_whose_squares_overflow_get_a_message_in_gradient_descent(exponent):
    at = reg_page(solver="gd")
    huge = "x,y\n" + "\n".join(f"{i}e{exponent},{i}" for i in range(-6, 6))
    at.file_uploader(key="reg.file").upload("h.csv", huge.encode(), "text/csv").run()
    assert not at.exception, at.exception  # was: numpy "Eigenvalues did not converge" from the lr advice
    assert lead("reg.lr.diverge") in texts(at)


def test_fuzz_every_widget():
    rng = random.Random(2)
    at = reg_page()
    for i in range(50):
        widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "toggle", "segmented_control")
                   for w in getattr(at, kind) if w.key and w.key.startswith("reg.") and not w.disabled]
        w = rng.choice(widgets)
        fuzz_widget(w, rng, CHOICES).run()
        assert not at.exception, (i, w.key, w.value, at.exception)
        if "reg.cursor" in at.session_state and rng.random() < 0.3:
            live_advance(at, "reg", rng.choice([1, 30, 300]))  # what Play does between reruns
        for label in (EN["reg.step"], EN["reg.step_next"]):
            if rng.random() < 0.3 and any(b.label == label and not b.disabled for b in at.button):
                next(b for b in at.button if b.label == label).click().run()
                assert not at.exception, (i, label, at.exception)
