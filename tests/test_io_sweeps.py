"""The GPU lab's sweeps and figures against the closed forms of the IO model."""
import math

import pytest

from sim.gpu.memsim import GPUS, MAX_REPLAY, MemsimError, attention_io, block_sizes, replay_cost, roofline
from sim.gpu.sweeps import Chip, l2_affordable, lab_reports, n_sweep, sram_sweep
from sim.plots.gpu import bytes_vs_n_figure, bytes_vs_sram_figure, roofline_figure

H200 = GPUS["H200"]
CONFIG = {"batch_heads": 4, "dtype_bytes": 2, "causal": False, "block_m": 64, "block_n": 128}


def test_n_sweep_two_levels_follow_the_closed_forms():
    Ns = [100, 256, 1000, 4096]
    for p, N in zip(n_sweep(Ns, 64, CONFIG, Chip(64 * 1024, None, 132)), Ns, strict=True):
        assert p.value == N
        assert p.naive_hbm == (4 * N * N + 4 * N * 64) * 2 * 4  # reads 3Nd + 2N², writes 2N² + Nd
        assert p.tiled_hbm == (2 * N * 64 + 2 * N * 64 * math.ceil(N / 64)) * 2 * 4  # Q, O once; K, V per row block
        assert p.naive_hbm_l2 is p.tiled_hbm_l2 is p.tiled_l2 is None


def test_with_an_l2_hbm_falls_and_l2_traffic_keeps_the_two_level_reads():
    chip = Chip(64 * 1024, H200.l2_bytes, H200.n_sm)
    for p in n_sweep([1024, 8192], 64, CONFIG, chip):
        two = attention_io("tiled", p.value, 64, **CONFIG)
        assert p.tiled_l2 == two.hbm_read_bytes  # every read still goes through L2
        assert p.tiled_hbm_l2 < p.tiled_hbm and p.naive_hbm_l2 <= p.naive_hbm
        # K and V of a head (2·N·d·2 B ≤ 4 MiB) stay in a 60 MiB L2: tiled reads Q, K, V from HBM once
        assert p.tiled_hbm_l2 == 4 * p.value * 64 * 2 * 4


def test_replays_too_long_are_left_out():
    big = {**CONFIG, "batch_heads": 16384}
    assert replay_cost("naive", 1024, 16384, 64, 128, 132) > MAX_REPLAY
    chip = Chip(64 * 1024, H200.l2_bytes, H200.n_sm)
    assert not l2_affordable("naive", 1024, 64, big, chip) and l2_affordable("naive", 1024, 64, CONFIG, chip)
    (p,) = n_sweep([1024], 64, big, chip, MAX_REPLAY)
    assert p.naive_hbm_l2 is None and p.naive_hbm == (4 * 1024 ** 2 + 4 * 1024 * 64) * 2 * 16384


def test_sram_sweep_square_blocks_follow_the_law_and_algorithm_1_flattens_at_b_m_equal_d():
    N, d = 8192, 64
    sizes = [2**k * 1024 for k in range(2, 9)]  # 4 KiB … 256 KiB
    points = sram_sweep(sizes, N, d, 1, 2, False)
    for p in points:
        B = p.sram_bytes // 2 // (4 * d)
        assert p.square_block == B
        assert p.square_hbm == (2 * N * d + 2 * N * d * math.ceil(N / B)) * 2
        assert p.law == pytest.approx(N * N * d * d / (p.sram_bytes / 2) * 2)
    # Algorithm 1: B_m = min(M/4d, d): the same traffic once M ≥ 4d² elements (32 KiB in float16)
    flat = {p.paper_hbm for p in points if p.sram_bytes >= 4 * d * d * 2}
    assert len(flat) == 1 and points[0].paper_blocks == (8, 8)  # 4 KiB: 2048 elements / 4d
    assert [p.square_hbm for p in points] == sorted((p.square_hbm for p in points), reverse=True)
    assert sram_sweep([100], 64, d, 1, 2, False)[0].paper_hbm is None  # 100 B: not even 1×1 tiles


def test_figures_draw_what_they_are_given():
    labels = {k: k for k in ("naive", "tiled", "naive_l2", "tiled_l2", "tiled_l2_traffic", "n2", "n1", "x_n",
                             "y_bytes", "title_n", "paper_blocks", "square_blocks", "law", "x_sram", "title_sram",
                             "roof", "x_intensity", "y_flops", "title_roofline")} | {"ridge": "ridge {ridge}"}
    points = n_sweep([256, 1024], 64, CONFIG, Chip(64 * 1024, H200.l2_bytes, H200.n_sm))
    fig = bytes_vs_n_figure(points, labels)
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    traces = {tr.name: tr for tr in fig.data}
    assert list(traces["naive"].y) == [p.naive_hbm for p in points]
    assert list(traces["tiled_l2_traffic"].y) == [p.tiled_l2 for p in points]
    n2 = traces["n2"].y
    assert n2[1] / n2[0] == pytest.approx(16)  # (1024/256)²
    sram = bytes_vs_sram_figure(sram_sweep([8192, 65536], 1024, 64, 1, 2, False), 123, labels)
    law = {tr.name: tr for tr in sram.data}["law"].y
    assert law[0] / law[1] == pytest.approx(8)  # ∝ 1/M
    r = attention_io("naive", 1024, 64)
    roof = roofline(r, H200.hbm_bytes_per_s, H200.peak_flops)
    fig = roofline_figure(H200, {"naive": roof}, labels)
    line, ridge, point = fig.data
    assert ridge.x[0] == pytest.approx(H200.peak_flops / H200.hbm_bytes_per_s)
    assert max(line.y) == H200.peak_flops and point.y[0] == pytest.approx(roof.intensity * H200.hbm_bytes_per_s)


def test_lab_reports_are_the_simulators_passes_with_errors_and_skipped_replays_kept_apart():
    h200 = GPUS["H200"]
    config = {"batch_heads": 16, "dtype_bytes": 2, "causal": False, "block_m": None, "block_n": None}
    chip = Chip(64 * 1024, h200.l2_bytes, h200.n_sm)
    lab = lab_reports(1024, 64, config, chip)
    for algo in ("naive", "tiled"):
        plain = attention_io(algo, 1024, 64, sram_bytes=chip.sram_bytes, n_sm=chip.n_sm, max_events=0, **config)
        assert lab.two_level[algo].hbm_bytes == plain.hbm_bytes
        with_l2 = attention_io(algo, 1024, 64, sram_bytes=chip.sram_bytes, n_sm=chip.n_sm, max_events=0,
                               l2_bytes=chip.l2_bytes, **config)
        assert lab.with_l2[algo].hbm_bytes == with_l2.hbm_bytes < plain.hbm_bytes
    assert lab.l2_skipped == ()
    # no L2 on the chip: none asked for; tiles that cannot fit the SRAM: the error, not an exception
    assert lab_reports(1024, 64, config, Chip(64 * 1024, None, h200.n_sm)).with_l2 == {"naive": None, "tiled": None}
    tiny = lab_reports(1024, 64, config | {"block_m": 128, "block_n": 128}, Chip(1024, h200.l2_bytes, h200.n_sm))
    assert isinstance(tiny.two_level["tiled"], MemsimError) and tiny.with_l2["tiled"] is None
    # a replay over MAX_REPLAY is skipped and named
    big = config | {"batch_heads": 4096}
    assert replay_cost("naive", 16384, 4096, *block_sizes("naive", 64, 2, None, None, chip.sram_bytes), chip.n_sm) \
        > MAX_REPLAY
    assert "naive" in lab_reports(16384, 64, big, chip).l2_skipped
