"""AppTest: the assistant lab's pipeline section in both languages, its URL values, the live run's buttons, the
numbers it writes (against the engine), bad input, and widget fuzzing."""
import random

import pytest

from apptools import fuzz_widget, live_advance, live_model, open_lab, schema_choices, texts
from labs.assistant.pipeline import PARAMS
from labs.assistant.schema import SCHEMA
from ui.i18n import catalogue

PAGE = "labs/assistant/page.py"


def page(lang="en", **query):
    return open_lab(PAGE, lang, section="pipeline", **query)


def click(at, name: str):
    at.button(key=f"asst.pipe.run.{name}").click().run()
    assert not at.exception, at.exception


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_section_in_both_languages(lang):
    at = page(lang)
    cat = catalogue(lang)
    assert not at.error and not at.exception
    assert cat["asst.pipe.mask.title"] in [h.value for h in at.subheader]
    assert at.dataframe, "the side-by-side table"
    for p in PARAMS:
        assert cat[f"asst.{p.name}"]


def test_url_values_are_read_and_bad_ones_get_a_notice():
    at = page(pipe_kl="0.0", pipe_seed="7", pipe_beta="banana")
    assert at.select_slider(key="asst.pipe_kl").value == 0.0 and at.number_input(key="asst.pipe_seed").value == 7
    assert at.select_slider(key="asst.pipe_beta").value == 1.0
    assert len(at.warning) == 1 and not at.exception
    with live_model(at, "asst.pipe.run") as run:
        assert run.kl_weight == 0.0 and run.seed == 7


def test_step_trains_and_reset_goes_back_and_the_table_follows_the_stages():
    at = page(pipe_speed="2")
    click(at, "step")
    with live_model(at, "asst.pipe.run") as run:
        assert run.steps == 20 and run.stage() == "pretrain"
    cols = at.dataframe[0].value.columns.tolist()
    assert cols == [catalogue("en")["asst.pipe.side.prompt"], catalogue("en")["asst.pipe.stage.pretrain"]]
    live_advance(at, "asst.pipe.run", 300)  # into SFT
    at.run()
    assert not at.exception
    cols = at.dataframe[0].value.columns.tolist()
    assert catalogue("en")["asst.pipe.stage.sft"] in cols
    with live_model(at, "asst.pipe.run") as run:
        fmt = run.curves["pretrain"]["format"][1][-1]
    assert f"**{fmt:.0%}**" in texts(at)  # the summary writes the engine's figure
    click(at, "reset")
    with live_model(at, "asst.pipe.run") as run:
        assert run.steps == 0


def test_widget_fuzzing_never_raises():
    rng = random.Random(0)
    at = page()
    choices = schema_choices("asst", SCHEMA)
    for _ in range(8):
        widgets = [w for w in at.select_slider if w.key.startswith("asst.pipe")] + \
            [w for w in at.number_input if w.key.startswith("asst.pipe")]
        fuzz_widget(rng.choice(widgets), rng, choices).run()
        assert not at.exception, at.exception
