"""Measurement reports: loading and checking (bundled, malformed uploads), rows and figures built from them, and
the forward + backward measurement against torch's autograd."""
import json
import math

import pytest
import torch

from sim.gpu.measure import measure_attention, memory_needed
from sim.gpu.report import MAX_BYTES, ReportError, bundled_reports, load_report, parse_report, run_row
from sim.plots.gpu_measure import fig2_figure, scaling_figures, throughput_figure, traffic_figure

BUNDLED = bundled_reports()


def test_the_bundled_cpu_report_loads_with_device_date_and_sources():
    assert BUNDLED, "assets/measurements/ holds no report"
    cpu = [r for r in map(load_report, BUNDLED) if r.kind == "cpu"]
    assert cpu and not cpu[0].quick
    r = cpu[0]
    assert r.device and r.date[:4].isdigit() and r.versions["torch"]
    assert all(s.startswith("measured · CPU · ") or s == "simulated · IO model" for s in r.sources)
    assert "simulated · IO model" in r.sources
    sweep = {row["N"]: row for row in r.runs if row["section"] == "n_sweep" and row["impl"] == "naive"}
    assert len(sweep) >= 3 and all(row["time_ms"] > 0 for row in sweep.values())
    ns = sorted(sweep)  # naive holds two N×N float32 matrices per head: its peak grows as N²
    assert sweep[ns[-1]]["peak_bytes"] >= 2 * sweep[ns[-1]]["B"] * sweep[ns[-1]]["H"] * ns[-1] ** 2 * 4
    dies = r.naive_dies
    assert dies["refused"] and dies["matrix_bytes_per_head"] == 40 * 10**9 and dies["batch_heads"] == 16
    assert r.fig2["reduced"] and r.fig2["forward_backward"]
    assert len(json.dumps(json.loads(BUNDLED[0].read_text()))) < 200_000


def test_rows_and_figures_from_the_bundled_report_name_their_sources():
    r = load_report(BUNDLED[0])
    labels = {k: k for k in ("x_n", "y_time", "y_bytes", "y_tflops", "y_ms", "y_gb", "hbm", "l2", "two_level",
                             "three_level", "causal", "full", "runtime", "traffic", "forward", "forward_backward",
                             "paper_standard", "paper_flash", "paper_source", "title_time", "title_memory",
                             "title_traffic", "title_throughput", "title_fig2")}
    labels |= {"sim_hbm": "HBM {algo}", "impl": {}}
    sweep = [row for row in r.runs if row["section"] == "n_sweep"]
    time_fig, memory_fig = scaling_figures(sweep, [t for t in r.traffic if t["section"] == "n_sweep"], labels)
    names = [tr.name for tr in time_fig.data]
    assert names and all(" — measured · CPU · " in n for n in names)
    assert time_fig.layout.xaxis.type == "log" and time_fig.layout.yaxis.type == "log"
    assert any(n.endswith(" — simulated · IO model") for n in (tr.name for tr in memory_fig.data))
    naive = next(tr for tr in time_fig.data if tr.name.startswith("naive"))
    assert list(naive.x) == sorted(row["N"] for row in sweep if row["impl"] == "naive" and row["time_ms"])
    throughput = throughput_figure([row for row in r.runs if row["section"].startswith("throughput")], labels)
    assert {tr.name.split(" — ")[1] for tr in throughput.data} == {r.runs[0]["source"]}
    traffic = traffic_figure(r.traffic, labels)  # a CPU report: no counters, the simulator's bars only
    assert traffic.data and all(tr.name.endswith("simulated · IO model") for tr in traffic.data)
    fig2 = fig2_figure(r.fig2["paper"], r.fig2["forward"], r.fig2["forward_backward"], r.fig2["traffic"], labels)
    paper = next(tr for tr in fig2.data if tr.name == "paper_source")
    assert list(paper.y) == [41.7, 7.3]
    simulated = [tr for tr in fig2.data if tr.name == "forward — simulated · IO model"]  # the right panel's bytes
    c = r.fig2["config"]
    naive = (3 * c["N"] * c["d"] + 2 * c["N"] ** 2 + 2 * c["N"] ** 2 + c["N"] * c["d"]) * 4 * c["B"] * c["H"]
    assert simulated and simulated[0].y[0] == pytest.approx(naive / 1e9)  # float32: reads and writes of S, P
    assert any(tr.name.startswith("forward_backward — measured · CPU") for tr in fig2.data)


def test_measured_counters_get_a_legend_without_their_kernel_count():
    traffic = [{"impl": "naive", "N": 1024, "model": "measured", "hbm_read_bytes": 10, "hbm_write_bytes": 5,
                "l2_bytes": 40, "l1_bytes": None, "reason": None,
                "source": "measured · counters (ncu, --cache-control all, 3 kernels) · NVIDIA H200"}]
    fig = traffic_figure(traffic, {"impl": {}, "hbm": "HBM", "l2": "L2", "y_bytes": "", "title_traffic": ""})
    assert [tr.name for tr in fig.data] == ["HBM — measured · counters (ncu, --cache-control all) · NVIDIA H200",
                                            "L2 — measured · counters (ncu, --cache-control all) · NVIDIA H200"]
    assert [list(tr.y) for tr in fig.data] == [[15], [40]]


def _report() -> dict:
    return json.loads(BUNDLED[0].read_text())


@pytest.mark.parametrize("raw, code", [
    (b"\xff\xfe\x00garbage", "not_text"),
    (b"{\"bench\": ", "not_json"),
    (b"[1, 2, 3]", "not_a_report"),
    (json.dumps({"bench": "engine"}).encode(), "not_a_report"),
    (b" " * (MAX_BYTES + 1), "too_large"),
])
def test_malformed_uploads_get_a_code(raw, code):
    with pytest.raises(ReportError) as e:
        parse_report(raw)
    assert e.value.code == code


@pytest.mark.parametrize("change, field", [
    (lambda r: r.pop("device"), "device"),
    (lambda r: r["device"].update(kind="tpu"), "device.kind"),
    (lambda r: r["device"].update(name=None), "device.name"),
    (lambda r: r["results"]["n_sweep"][1]["runs"]["naive"].update(time_ms="fast"),
     "results.n_sweep.1.runs.naive.time_ms"),
    (lambda r: r["results"]["n_sweep"][0]["runs"]["naive"]["config"].update(N=True),
     "results.n_sweep.0.runs.naive.config.N"),
    (lambda r: r["results"]["hbm_causal_True"]["simulated"]["tiled"].pop("l2_model"),
     "results.hbm_causal_True.simulated.tiled.l2_model"),
    (lambda r: r["results"]["preset_flash_fig2"]["paper"]["standard"].update(hbm_gb=None),
     "results.preset_flash_fig2.paper.standard.hbm_gb"),
    (lambda r: r["results"].update(n_sweep={"N": 3}), "results.n_sweep"),
])
def test_a_wrong_field_is_named(change, field):
    report = _report()
    change(report)
    with pytest.raises(ReportError) as e:
        parse_report(json.dumps(report))
    assert (e.value.code, e.value.params) == ("bad_field", {"field": field})


def test_a_report_cut_short_still_loads():
    report = _report()
    for section in ("n_sweep", "preset_naive_dies", "preset_flash_fig2", "hbm_causal_True"):
        del report["results"][section]
    r = parse_report(json.dumps(report), "short.json")
    assert r.fig2 is None and r.naive_dies is None and r.runs and r.name == "short.json"


def test_a_measurement_becomes_a_row():
    m = measure_attention("naive", 1, 1, 64, 16, "float32", repeats=1, device="cpu")
    from dataclasses import asdict

    row = run_row(asdict(m))
    assert row["tflops_per_s"] == pytest.approx(m.tflops_per_s) and row["backward"] is False
    assert row["source"] == m.source and row["counters_reason"] == "no_cuda"


# --- forward + backward ---

@pytest.mark.parametrize("impl", ["naive", "sdpa_math"])
def test_backward_measurement_matches_autograd_and_holds_more(impl):
    from sim.gpu.calls import attention_call, make_inputs

    B, H, N, d = 1, 2, 128, 16
    fwd = measure_attention(impl, B, H, N, d, "float32", repeats=1, device="cpu")
    both = measure_attention(impl, B, H, N, d, "float32", repeats=1, device="cpu", backward=True)
    assert both.error is None and both.config["backward"] and both.time_ms > 0
    assert both.peak_bytes >= fwd.peak_bytes + 3 * B * H * N * d * 4  # and dQ, dK, dV besides
    assert both.flops == fwd.flops * 7 // 2 and both.counters_reason == "no_cuda"
    # the gradients the measured call computes are autograd's of the reference attention
    q, k, v = (x.requires_grad_() for x in make_inputs(B, H, N, d, "float32", "cpu"))
    d_out = torch.randn(B, H, N, d)
    grads = torch.autograd.grad(attention_call(impl, q, k, v, False), (q, k, v), d_out)
    ref = torch.autograd.grad(torch.nn.functional.scaled_dot_product_attention(q, k, v), (q, k, v), d_out)
    for g, r in zip(grads, ref, strict=True):
        torch.testing.assert_close(g, r, rtol=1e-4, atol=1e-5)


def test_backward_is_refused_for_the_forward_only_kernels():
    for impl in ("tiled_torch", "flash_triton"):
        m = measure_attention(impl, 1, 1, 64, 16, "float32", device="cpu", backward=True)
        assert (m.error, m.error_params) == ("unavailable", {"reason": "forward_only"})


def test_backward_memory_guard_counts_four_matrices():
    fwd = memory_needed("naive", 1, 16, 100_000, 64, "float32", False)
    both = memory_needed("naive", 1, 16, 100_000, 64, "float32", False, backward=True)
    assert (fwd["matrices"], both["matrices"]) == (2, 4)
    assert both["needed_bytes"] == 4 * 16 * 40 * 10**9 + 4 * 16 * 100_000 * 64 * 4
    assert math.isclose(fwd["matrix_bytes_per_head"], 4e10)


def test_the_bundled_h200_report_holds_counters_that_meet_the_device_targets():
    """The report measured on an H200 (benchmarks/gpu_lab_device.sh): every target of the GPU lab met, every
    measured row labelled with its device and ncu."""
    from sim.gpu.bench import targets

    path = next(p for p in BUNDLED if p.name.startswith("nvidia-h200"))
    r = load_report(path)
    assert r.kind == "cuda" and r.device == "NVIDIA H200" and not r.quick and r.versions["ncu"]
    rows = targets(json.loads(path.read_text()))
    assert len(rows) == 15 and all(row["met"] for row in rows), [row for row in rows if not row["met"]]
    measured = [row for row in r.traffic if row["model"] == "measured"]
    assert measured and all(row["source"].endswith("· NVIDIA H200") and "ncu" in row["source"] for row in measured)
    assert all(row["hbm_read_bytes"] > 0 and row["l2_bytes"] > 0 for row in measured)
