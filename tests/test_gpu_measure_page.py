"""AppTest: the GPU lab's measure view on its own (measure_section with the page's schema), in both languages."""
import json

import pytest
from streamlit.testing.v1 import AppTest

from apptools import TIMEOUT, texts
from sim.gpu_bench import PRESETS
from sim.gpu_report import bundled_reports
from ui.i18n import catalogue

TINY = {"N": 64, "d": 16, "B": 1, "H": 1, "dtype": "float32", "causal": False}


def script(lang: str, values: dict) -> None:
    """Builds the GPU page's state with `values` and draws the measure view (AppTest runs this function's body)."""
    import streamlit as st

    from ui.gpu_measure import measure_section
    from ui.schemas.gpu import PAGE, SCHEMA
    from ui.urlstate import PageState

    st.session_state["lang"] = lang
    state = PageState(PAGE, SCHEMA)
    if "seeded" not in st.session_state:  # the test's sizes, once: widgets change them afterwards
        state.values.update(values)
        st.session_state["seeded"] = True
    measure_section(state)


def open_view(lang: str = "en", **values) -> AppTest:
    at = AppTest.from_function(script, args=(lang, {**TINY, **values}), default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    return at


def button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_measure_now_shows_a_table_labelled_cpu(lang):
    at = open_view(lang)
    button(at, "gpu.measure.run").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    cat = catalogue(lang)
    sources = list(table[cat["gpu.measure.col.source"]])
    assert sum(s.startswith("measured · CPU · ") for s in sources) == 5  # every implementation has a row
    notes = list(table[cat["gpu.measure.col.note"]])
    ran = [n == cat["gpu.measure.counters.no_cuda"] for n in notes[:5]]
    assert ran == [True, True, False, False, True]  # naive, tiled, sdpa_math ran; the CUDA-only two did not
    assert sources.count("simulated · IO model") == 2  # the simulator's naive and tiled for the same size
    assert cat["gpu.measure.unavailable.sdpa_flash_needs_cuda"] in texts(at)
    times = list(table[cat["gpu.measure.col.time"]])
    assert all(times[i] > 0 for i in (0, 1, 4))
    at.run()  # a rerun keeps the results
    assert at.dataframe[0].value.shape == table.shape


def test_bad_n_list_gives_a_message_and_keeps_the_old_one():
    at = open_view("zh")
    at.text_input(key="gpu.ns").set_value("64, 128").run()
    at.text_input(key="gpu.ns").set_value("64, lots, 10").run()
    assert not at.exception
    error = next(e.value for e in at.error if "lots" in e.value)
    assert catalogue("zh")["gpu.measure.ns_bad"].split("{")[-1].split("}")[-1] in error  # the message's last words
    assert "64, 128" in error  # the list kept
    at.text_input(key="gpu.ns").set_value("64, 99999999").run()  # above the schema's limit
    assert any("99999999" in e.value for e in at.error)
    button(at, "gpu.measure.sweep_run").click().run()  # sweeps the kept list
    assert not at.exception
    assert at.get("plotly_chart")


def test_the_naive_dies_preset_shows_the_arithmetic_and_the_refusal():
    at = open_view("en")
    text = texts(at)
    p = PRESETS["naive_dies"]
    assert "40,000,000,000 B" in text  # the seed's 40 GB per head
    needed = 2 * p["H"] * 40 * 10**9 + p["N"] * p["d"] * 4 * p["H"]
    assert f"{needed:,} B" in text
    assert any(catalogue("en")["gpu.measure.dies.refused"].split("{")[0] in e.value for e in at.error)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_uploaded_bad_json_gets_a_translated_error(lang):
    at = open_view(lang)
    cat = catalogue(lang)
    bad = {"not_json": b"{not json", "not_a_report": json.dumps({"bench": "engine"}).encode(),
           "bad_field": json.dumps({"bench": "gpu", "device": {"kind": "cpu", "name": 3}, "results": {}}).encode()}
    for code, raw in bad.items():
        at.file_uploader(key="gpu.measure.upload").upload("mine.json", raw, "application/json").run()
        assert not at.exception, at.exception
        assert any(cat[f"gpu.measure.report_error.{code}"].split("{")[0] in e.value for e in at.error), code


def test_an_uploaded_report_is_shown_with_its_device_and_sources():
    at = open_view("en")
    raw = bundled_reports()[0].read_bytes()
    at.file_uploader(key="gpu.measure.upload").upload("mine.json", raw, "application/json").run()
    assert not at.exception, at.exception
    text = texts(at)
    report = json.loads(raw)
    assert "`mine.json`" in text and report["device"]["name"] in text and report["date"] in text
    assert "measured · CPU · " in text and "simulated · IO model" in text


def test_bundled_reports_are_shown_without_a_cuda_device():
    at = open_view("en")
    assert at.selectbox(key="gpu.measure.bundled_pick").value == bundled_reports()[0].name
    assert "measured · CPU · " in texts(at)
    assert len(at.get("plotly_chart")) >= 4  # time and memory against N, throughput, traffic (and Fig. 2)
