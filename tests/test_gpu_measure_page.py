"""AppTest: the GPU lab's measure view on its own (measure_section with the page's schema), in both languages."""
import json
import math

import pytest
from streamlit.testing.v1 import AppTest

from apptools import texts
from deploy.local import APPTEST_TIMEOUT_S
from sim.core.text import html, md
from sim.gpu.bench import PRESETS
from sim.gpu.report import bundled_reports
from ui.i18n import catalogue

TINY = {"N": 64, "d": 16, "B": 1, "H": 1, "dtype": "float32", "causal": False}


def script(lang: str, values: dict) -> None:
    """Builds the GPU page's state with `values` and draws the measure view (AppTest runs this function's body)."""
    import streamlit as st

    from labs.gpu.measure import measure_section
    from labs.gpu.schema import PAGE, SCHEMA
    from ui.urlstate import PageState

    st.session_state["lang"] = lang
    state = PageState(PAGE, SCHEMA)
    if "seeded" not in st.session_state:  # the test's sizes, once: widgets change them afterwards
        state.values.update(values)
        st.session_state["seeded"] = True
    measure_section(state)


def open_view(lang: str = "en", **values) -> AppTest:
    at = AppTest.from_function(script, args=(lang, {**TINY, **values}), default_timeout=APPTEST_TIMEOUT_S).run()
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
    assert md("mine.json") in text and md(report["device"]["name"]) in text and md(report["date"]) in text
    assert "measured · CPU · " in text and "simulated · IO model" in text


def test_bundled_reports_are_shown_without_a_cuda_device():
    """The H200's counters first (a class without a GPU sees a GPU measured), the CPU's report one pick away."""
    at = open_view("en")
    pick = at.selectbox(key="gpu.measure.bundled_pick")
    assert pick.value.startswith("nvidia-h200-") and bundled_reports()[0].name in pick.options
    text = texts(at)
    assert "measured · counters (ncu, --cache-control all" in text and "NVIDIA H200" in text
    assert len(at.get("plotly_chart")) >= 4  # time and memory against N, throughput, traffic (and Fig. 2)
    pick.set_value(bundled_reports()[0].name).run()
    assert not at.exception, at.exception
    assert "measured · CPU · " in texts(at)


def upload(at: AppTest, report: dict, name: str = "bad.json") -> AppTest:
    at.file_uploader(key="gpu.measure.upload").upload(name, json.dumps(report).encode(), "application/json").run()
    assert not at.exception, at.exception
    return at


LINK = "[Log in](https://evil.example/x)"
ANCHOR = "<a href='https://evil.example/y'>GPU</a>"


def naive_run(report: dict) -> dict:
    return report["results"]["throughput_causal_False"]["runs"]["naive"]


BAD_REPORTS = {  # the uploads that crashed the page, and the field each is refused for
    "flops 10^400": (lambda r: naive_run(r).update(flops=10**400), "results.throughput_causal_False.runs.naive.flops"),
    "peak_bytes Infinity": (lambda r: naive_run(r).update(peak_bytes=math.inf),
                            "results.throughput_causal_False.runs.naive.peak_bytes"),
    "peak_bytes NaN": (lambda r: naive_run(r).update(peak_bytes=math.nan),
                       "results.throughput_causal_False.runs.naive.peak_bytes"),
    "l2_bytes 10^400": (lambda r: r["modelled_l2"].update(l2_bytes=10**400), "modelled_l2.l2_bytes"),
    "unavailable without params": (lambda r: naive_run(r).update(error="unavailable", error_params={}),
                                   "results.throughput_causal_False.runs.naive.error_params.reason"),
    "too_large with a string": (lambda r: naive_run(r).update(error="too_large", error_params={
        "needed_bytes": "a lot", "free_bytes": 1}),
                                "results.throughput_causal_False.runs.naive.error_params.needed_bytes"),
    "H 10^30": (lambda r: r["results"]["n_sweep"][0]["runs"]["naive"]["config"].update(H=10**30),
                "results.n_sweep.0.runs.naive.config.H"),
    "a link as a runs key": (lambda r: r["results"]["n_sweep"][0]["runs"].update({LINK: {}}),
                             f"results.n_sweep.0.runs.{LINK}.config"),
}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_uploaded_reports_with_bad_fields_get_the_translated_error(lang):
    at = open_view(lang)
    message = catalogue(lang)["gpu.measure.report_error.bad_field"]
    for case, (change, field) in BAD_REPORTS.items():
        report = json.loads(bundled_reports()[0].read_text())
        change(report)
        upload(at, report)
        assert message.format(field=md(field)) in [e.value for e in at.error], case
    assert "evil.example" not in texts(at).replace(md(f"results.n_sweep.0.runs.{LINK}.config"), "")


def test_a_reports_device_name_is_shown_as_text_not_markup():
    at = open_view("en")
    report = json.loads(bundled_reports()[0].read_text())
    name = f"{LINK} {ANCHOR}"
    report["device"]["name"] = name
    naive_run(report)["source"] = f"measured · CPU · {name}"  # a source label: a caption, a legend, a table cell
    upload(at, report, "x](https://evil.example/z).json")
    text = texts(at)
    assert md(name) in text and md(f"measured · CPU · {name}") in text
    for shown in (md(name), md(f"measured · CPU · {name}"), md("x](https://evil.example/z).json")):
        text = text.replace(shown, "")
    assert "evil.example" not in text  # every other place it could have gone: nowhere
    specs = [chart.proto.spec for chart in at.get("plotly_chart")]
    assert not any("<a href" in spec for spec in specs)  # Plotly would render a link
    assert any(html(name) in json.loads(spec)["layout"]["title"]["text"] for spec in specs)  # the titles: escaped
    legends = [trace.get("name", "") for spec in specs for trace in json.loads(spec)["data"]]
    assert any(legend.endswith(html(f"measured · CPU · {name}")) for legend in legends)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_click_the_time_guard_refuses_measures_nothing(lang):
    # the torch tiled loop at N = 16,384 in 16 × 16 blocks: a million block pairs a call
    at = open_view(lang, N=16384, H=16, d=64, block_m=16, block_n=16, impls=("tiled_torch", "naive"))
    button(at, "gpu.measure.run").click().run()
    assert not at.exception, at.exception
    cat = catalogue(lang)
    (warning,) = [w.value for w in at.warning if cat["gpu.measure.guard.refused"].split("{")[0] in w.value]
    assert "16,384" in warning and cat["gpu.measure.guard.advice"] in warning
    assert cat["gpu.impls.tiled_torch"] in warning
    sources = list(at.dataframe[0].value[cat["gpu.measure.col.source"]])  # the table under the button
    assert sources == ["simulated · IO model"] * 2  # the simulator's figures only: nothing was measured
    at.run()  # the refusal stays on a rerun
    assert any(cat["gpu.measure.guard.refused"].split("{")[0] in w.value for w in at.warning)
