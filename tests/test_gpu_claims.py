"""Issue 41 for the GPU lab: every sentence its sweeps say of the IO model agrees with the points drawn beside it,
at the defaults and at other sizes, chips and tiles (the model has no seed: its settings are what varies). Before,
the sweep over N said "Naive's N×N matrices overflow any L2" while its L2 line saved naive 40 % at N ≤ 1,024, and
"tiled is smaller only by the factor 2·B_m/d (here 0.5)" where tiled moved twice naive's bytes; the SRAM sweep said
Algorithm 1's line "flattens" where, under the causal mask, it rises; and the H200 report's peak memory was explained
as a CPU's resident set."""
from dataclasses import asdict

import pytest

from apptools import open_lab, texts
from labs.gpu.measure_reports import sweep_runs
from labs.gpu.schema import SCHEMA
from labs.gpu.simulated import SWEEP_N, SWEEP_SRAM, io_config
from sim.gpu import claims
from sim.gpu.bench import PRESETS
from sim.gpu.measure import DTYPE_BYTES, measure_attention
from sim.gpu.memsim import GPUS, query_block_cap_sram
from sim.gpu.report import bundled_reports, fig2_config, load_report, run_config, run_row
from sim.gpu.sweeps import Chip, lab_reports, n_sweep, sram_sweep
from ui.i18n import catalogue

PAGE = "labs/gpu/page.py"
EN = catalogue("en")
DEFAULTS = {p.name: p.default for p in SCHEMA}
SETTINGS = [{}, dict(d=128, H=32, dtype="float32"), dict(causal=True, sram_kib=16), dict(l2=False, N=256, d=16),
            dict(gpu="A100", d=128, H=1, dtype="float32"), dict(B=8, gpu="H100"), dict(block_m=16, block_n=128)]


def page_values(changes: dict) -> dict:
    return {**DEFAULTS, **changes}


def chip_of(v: dict) -> Chip:
    spec = GPUS[v["gpu"]]
    return Chip(v["sram_kib"] * 1024, spec.l2_bytes if v["l2"] else None, spec.n_sm)


@pytest.fixture(scope="module", params=SETTINGS, ids=str)
def swept(request):
    """The sweep over N the page draws (labs/gpu/page.py sweep_view: its cached points are n_sweep's) and its
    reading."""
    v = page_values(request.param)
    config = io_config(v)
    points = n_sweep(sorted({*SWEEP_N, v["N"]}), v["d"], config, chip_of(v))
    return v, points, claims.n_sweep_reading(points, v["d"], config["batch_heads"], config["dtype_bytes"],
                                             v["l2"])


def test_the_two_level_sentence_agrees_with_the_lines(swept):
    v, points, r = swept
    last = next(p for p in reversed(points) if p.tiled_hbm)
    assert r.N == last.value
    if r.case == "fewer":
        assert last.naive_hbm > claims.LEVEL * last.tiled_hbm
    elif r.case == "more":
        assert last.tiled_hbm > claims.LEVEL * last.naive_hbm
    else:
        assert max(last.naive_hbm, last.tiled_hbm) <= claims.LEVEL * min(last.naive_hbm, last.tiled_hbm)


def test_the_l2_sentences_agree_with_the_dashed_lines(swept):
    """"stays at about 4·N·d and grows as N" (up to upto), "its L2 → SM traffic stays near the two-level line",
    naive's "fit in the L2 up to N, past that ... its dashed line meets its solid one" or "at every N"."""
    v, points, r = swept
    bh, elem = v["B"] * v["H"], DTYPE_BYTES[v["dtype"]]
    tiled = [p for p in points if p.tiled_hbm_l2 is not None]
    naive = [p for p in points if p.naive_hbm_l2 is not None]
    if not v["l2"]:
        assert r.l2 == "off" and not tiled and not naive
        return
    assert r.l2 in ("linear", "leaves") and tiled  # every setting here replays some point
    for p in tiled:
        at_4nd = p.tiled_hbm_l2 <= claims.LINEAR * claims.four_nd(p.value, v["d"], bh, elem)
        assert at_4nd == (p.value <= r.linear_upto), p
        assert abs(p.tiled_l2 / p.tiled_hbm - 1) < 0.15, p  # the dotted line near the two-level one
    assert (r.l2 == "linear") == (r.linear_upto == tiled[-1].value)
    assert r.gap_N == tiled[-1].value and r.gap == pytest.approx(tiled[-1].naive_hbm / tiled[-1].tiled_hbm_l2)
    for p in naive:
        saves = p.naive_hbm_l2 <= claims.SAVES * p.naive_hbm
        assert saves == (p.value <= r.naive_upto), p
    if r.naive_upto:
        best = max(1 - p.naive_hbm_l2 / p.naive_hbm for p in naive)
        assert r.naive_saved == pytest.approx(best)


def test_the_sram_sentence_agrees_with_its_lines():
    """Algorithm 1's line from the knee on: "flat" (or, under the causal mask only, "rises"); square blocks fall
    at every step until one covers the sequence, and stay level from there."""
    seen = set()
    for changes in SETTINGS + [dict(N=64), dict(N=131_072, d=16), dict(causal=True, N=4096, d=32)]:
        v = page_values(changes)
        elem = DTYPE_BYTES[v["dtype"]]
        knee = query_block_cap_sram(v["d"], elem)
        points = sram_sweep(sorted({*SWEEP_SRAM, v["sram_kib"] * 1024}), v["N"], v["d"], v["B"] * v["H"], elem,
                            v["causal"])
        r = claims.sram_reading(points, v["N"], knee)
        seen.add(r.past)
        past = [p.paper_hbm for p in points if p.sram_bytes >= knee]
        before = [p.paper_hbm for p in points if p.sram_bytes <= knee]
        assert all(b < a for a, b in zip(before, before[1:], strict=False)), changes  # falls up to the knee
        if r.past == "flat":
            assert max(past) <= claims.FLAT * min(past), changes
        else:
            assert r.past == "rises" and v["causal"] and past == sorted(past) and past[-1] > past[0], changes
        square = [p for p in points if p.square_hbm is not None]
        falling = [p.square_hbm for p in square if not r.covers or p.sram_bytes <= r.covers]
        assert all(b < a for a, b in zip(falling, falling[1:], strict=False)), changes
        if r.covers:
            level = [p.square_hbm for p in square if p.sram_bytes >= r.covers]
            assert len(set(level)) == 1 and all(p.square_block < v["N"] for p in square if p.sram_bytes < r.covers)
        else:
            assert all(p.square_block < v["N"] for p in square)
    assert seen == {"flat", "rises"}


@pytest.mark.parametrize("changes", SETTINGS, ids=str)
def test_the_l2_traffic_metric_follows_the_two_level_model(changes):
    """gpu.metric.l2_traffic_help: "It follows the two-level model: the re-reads of K and V still happen"."""
    v = page_values(changes)
    lab = lab_reports(v["N"], v["d"], io_config(v), chip_of(v))
    tiled, with_l2 = lab.two_level["tiled"], lab.with_l2["tiled"]
    if with_l2 is not None:
        assert abs(with_l2.l2_read_bytes / tiled.hbm_read_bytes - 1) < 0.15


def test_the_sweep_view_says_what_its_figures_show():
    """The defaults: naive's S and P fit in the L2 up to N = 1,024 (the old note said they overflow any L2). With
    float32, d = 128 and 64 KiB, tiled moves twice naive's bytes (the old note: "smaller by ... 0.5")."""
    at = open_lab(PAGE, "en", view="sweep")
    shown = texts(at)
    assert EN["gpu.sweep.naive_l2.fits"].format(N="1,024", saved="44%") in shown
    assert "overflow any L2" not in shown and EN["gpu.sweep.l2.linear"].split("{")[0] in shown
    at = open_lab(PAGE, "en", view="sweep", d="128", H="32", dtype="float32")
    shown = texts(at)
    assert EN["gpu.sweep.two.more"].format(N="131,072", ratio="2.0", bm=32) in shown and not at.exception


# ---------- the measurements shown ----------
def test_the_memory_notes_follow_the_report_shown():
    """The peak-memory figure's note says how the peaks it draws were measured: the H200 report's by torch's
    allocator (before, it also explained a CPU's resident set beside them), the CPU report's: none at all, so the
    figure holds only the simulator's lines; a sweep measured on this CPU: its resident set."""
    notes = {}
    for path in bundled_reports():
        report = load_report(path)
        notes[report.kind] = claims.memory_notes(sweep_runs(report)[0])
    assert notes == {"cuda": ("cuda",), "cpu": ("none",)}
    here = [run_row(asdict(measure_attention("naive", 1, 2, N, 16, "float32", False, repeats=1))) for N in (32, 64)]
    assert claims.memory_notes(here) == (("cpu",) if any(r["peak_bytes"] is not None for r in here) else ("none",))


@pytest.mark.parametrize("changes", SETTINGS, ids=str)
def test_the_arithmetic_written_out_equals_the_report(changes):
    """gpu.arithmetic.naive(_causal): "reads 3Nd + 2N² (3N² with the mask) ... writes 2N² + Nd (3N²)" equal the
    report's elements per (batch, head), and × bytes × B·H its total."""
    v = page_values(changes)
    naive = lab_reports(v["N"], v["d"], io_config(v), chip_of(v)).two_level["naive"]
    N, d, k = v["N"], v["d"], 3 if v["causal"] else 2
    assert (naive.read_elements_per_head, naive.write_elements_per_head) == (3 * N * d + k * N * N, k * N * N + N * d)
    elements = naive.read_elements_per_head + naive.write_elements_per_head
    assert naive.hbm_bytes == elements * DTYPE_BYTES[v["dtype"]] * v["B"] * v["H"]


def test_the_presets_fixed_figures():
    """gpu.measure.dies.intro: "N = 100,000 tokens make a score matrix of 10¹⁰ elements, about 40 GB in {dtype}";
    fig2.reduced: "the same sequences ... with fewer of them"; cpu_float32: the CPU measures float32."""
    dies = PRESETS["naive_dies"]
    assert dies["N"] ** 2 == 10**10 and dies["N"] ** 2 * DTYPE_BYTES[dies["dtype"]] == 40 * 10**9
    cpu, paper = fig2_config(False), PRESETS["flash_fig2"]
    assert (cpu["N"], cpu["d"]) == (paper["N"], paper["d"]) and cpu["B"] * cpu["H"] < paper["B"] * paper["H"]
    assert all(run_config(page_values({"dtype": dt}), False)["dtype"] == "float32" for dt in DTYPE_BYTES)


def test_the_measure_view_explains_the_h200_reports_peaks_as_the_allocators():
    at = open_lab(PAGE, "en", view="measure")
    shown = texts(at)
    assert "NVIDIA H200" in shown and EN["gpu.measure.memory_note.cuda"] in shown
    assert EN["gpu.measure.memory_note.cpu"] not in shown and "resident set" not in shown and not at.exception
