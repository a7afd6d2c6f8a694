"""AppTest: the GPU memory hierarchy lab in both languages, its views, presets, bad values and a widget fuzz."""
import random

import pytest

from apptools import fuzz_widget, metrics, open_lab, schema_choices, texts
from labs.gpu.schema import PAGE, SCHEMA
from ui.i18n import catalogue

FILE = "labs/gpu/page.py"
EN = catalogue("en")


def page(lang="en", **query):
    return open_lab(FILE, lang, **query)



@pytest.mark.parametrize("lang", ["zh", "en"])
def test_default_page_shows_the_closed_form_traffic(lang):
    at = page(lang)
    cat = catalogue(lang)
    assert at.title[0].value == cat["gpu.title"] and not at.error
    m = metrics(at)
    N, d, pairs = 1024, 64, 16  # the defaults: B = 1, H = 16, float16, M = 64 KiB → B_m = 64, B_n = 128
    naive = (3 * N * d + 2 * N * N + 2 * N * N + N * d) * 2 * pairs
    tiled = (N * d + 2 * N * d * (N // 64) + N * d) * 2 * pairs
    assert m[cat["gpu.metric.naive"]] == f"{naive / 2**20:.1f} MiB"
    assert m[cat["gpu.metric.tiled"]] == f"{tiled / 2**20:.1f} MiB"
    assert m[cat["gpu.metric.ratio"]] == f"{naive / tiled:,.1f}×"
    assert cat["gpu.metric.tiled_l2"] in m and cat["gpu.metric.ratio_l2"] in m  # the H200's L2 is modelled
    assert f"{3 * N * d + 2 * N * N:,}" in texts(at)  # the arithmetic written out


def test_each_view_draws_its_figures():
    at = page(view="sweep")
    assert at.get_by_key("gpu.sweep_n") and at.get_by_key("gpu.sweep_sram") and not at.error
    at.segmented_control(key="gpu.view").set_value("roofline").run()
    assert not at.exception and at.get_by_key("gpu.roofline") and len(at.dataframe[0].value) == 4
    assert at.query_params["view"] == "roofline"
    at.segmented_control(key="gpu.view").set_value("animate").run()
    assert not at.exception and at.segmented_control(key="gpu.algo").value == "tiled"


def test_tiles_too_large_for_sram_get_a_message_and_naive_stays():
    at = page(sram_kib="4", block_m="128", block_n="128")
    assert not at.exception and len(at.error) == 1
    assert EN["gpu.error.sram_too_small"].split("{")[0] in at.error[0].value
    assert "64.0 KiB" in at.error[0].value and "4.0 KiB" in at.error[0].value  # (2·128 + 2·128)·64·2 B needed
    assert EN["gpu.metric.naive"] in metrics(at) and EN["gpu.metric.tiled"] not in metrics(at)
    at.select_slider(key="gpu.block_m").set_value(0).run()
    at.select_slider(key="gpu.block_n").set_value(0).run()
    assert not at.error and EN["gpu.metric.tiled"] in metrics(at)  # Algorithm 1's blocks fit by construction


def test_presets_set_the_sizes():
    at = page()
    at.button(key="gpu.preset_naive_dies").click().run()
    assert not at.exception
    assert at.number_input(key="gpu.N").value == 100_000 and at.selectbox(key="gpu.dtype").value == "float32"
    at.button(key="gpu.preset_flash_fig2").click().run()
    assert not at.exception
    assert (at.slider(key="gpu.B").value, at.slider(key="gpu.H").value, at.number_input(key="gpu.N").value) == (
        64, 16, 1024)
    assert at.query_params["B"] == "64"


def test_bad_url_values_get_notices_and_huge_replays_are_left_out():
    at = page(N="0", d="7", gpu="V100")
    assert not at.exception and len(at.warning) == 3
    assert at.number_input(key="gpu.N").value == 1024
    at = page(B="128", H="128", N="4096")
    assert not at.exception
    assert EN["gpu.l2_skipped"].split("{")[0] in texts(at)


def test_widget_fuzz_in_every_simulated_view():
    rng = random.Random(5)
    at = page()
    choices = schema_choices(PAGE, SCHEMA)
    for view in ("animate", "sweep", "roofline", "animate"):
        at.segmented_control(key="gpu.view").set_value(view).run()
        for i in range(8):
            widgets = [w for kind in ("slider", "select_slider", "selectbox", "number_input", "toggle",
                                      "segmented_control")
                       for w in getattr(at, kind) if w.key and w.key.startswith("gpu.") and w.key != "gpu.view"]
            w = rng.choice(widgets)
            fuzz_widget(w, rng, choices).run()
            assert not at.exception, (view, i, w.key, w.value, at.exception)


def test_measure_view_in_the_app_shows_the_bundled_report_without_a_gpu():
    at = page(view="measure", N="64", d="16", H="1")
    assert not at.exception
    # the one error is the seed's N = 100,000 preset, refused by design (1.28 TB for 16 heads)
    (refused,) = at.error
    assert refused.value.startswith(EN["gpu.measure.dies.refused"].split("{")[0]) and "1.2 TiB" in refused.value
    captions = "\n".join(e.value for e in at.caption)  # the bundled report's source labels: the H200's first
    assert "measured · counters (ncu" in captions and "NVIDIA H200" in captions


@pytest.mark.cuda
def test_on_a_table_gpu_the_roofline_points_to_this_device():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    from sim.gpu.memsim import gpu_for

    name = torch.cuda.get_device_name(0)
    if gpu_for(name) is None or "A100" in name.upper():
        pytest.skip("the device is not one of the table's H100/H200")
    at = page(view="roofline", gpu="A100")
    assert not at.exception and name in texts(at)
