"""sim.linalg.roofline: FLOPs and bytes from the sizes (counted by hand), the roofline min(peak, intensity ×
bandwidth), and a sweep that returns what it timed (tiny sizes)."""
import math

import pytest
import torch

from sim.linalg import roofline as rf


def test_matmul_counts_by_hand():
    # 3×3 times 3×3: 9 outputs, each 3 multiplications and 3 additions (2mnk) = 54; A, B, C of 9 float32 = 108 bytes
    assert rf.flops(3, 3, 3) == 54 and rf.matmul_bytes(3) == 108
    assert rf.matmul_intensity(3) == pytest.approx(0.5)
    assert rf.matmul_bytes(4, 2) == 3 * 16 * 2  # bf16
    for n in (64, 1000, 4096):
        assert rf.matmul_intensity(n) == pytest.approx(n / 6)  # 2n³ / (12 n²)
        assert rf.matmul_intensity(n, 2) == pytest.approx(n / 3)


def test_elementwise_counts_by_hand():
    # c = a + b over 10 numbers: 10 additions; a and b read (80 bytes) and c written (40 bytes)
    assert rf.add_flops(10) == 10 and rf.add_bytes(10) == 120 and rf.copy_bytes(10) == 80
    assert rf.add_intensity() == pytest.approx(1 / 12) and rf.add_intensity(2) == pytest.approx(1 / 6)
    assert rf.intensity(rf.add_flops(10**6), rf.add_bytes(10**6)) == pytest.approx(rf.add_intensity())


def test_the_roofline_is_the_lower_of_the_two_roofs():
    peak, bw = 100e9, 10e9  # ridge at 10 FLOP/byte
    assert rf.ridge(peak, bw) == 10
    assert rf.attainable(1, peak, bw) == 10e9  # memory-bound: intensity × bandwidth
    assert rf.attainable(0.25, peak, bw) == 2.5e9
    assert rf.attainable(50, peak, bw) == peak  # compute-bound: the peak
    assert rf.attainable(10, peak, bw) == pytest.approx(peak)  # both at the ridge
    xs, ys = rf.roof_curve(peak, bw, 0.01, 1000, 11)
    assert 10 in xs and xs == sorted(xs) and xs[0] == pytest.approx(0.01) and xs[-1] == pytest.approx(1000)
    assert ys == [min(peak, x * bw) for x in xs]


def test_best_seconds_is_per_call():
    calls = []
    seconds = rf.best_seconds(lambda: calls.append(1) or sum(range(10_000)), batches=3, min_batch_s=0.005)
    assert len(calls) >= 4 and (len(calls) - 1) % 3 == 0  # a warm-up, then three equal batches
    assert 0 < seconds < 0.005


def test_no_batch_starts_after_the_budget(monkeypatch):
    clock, calls = [0.0], []

    def op():  # an operation that takes one second of a fake clock
        calls.append(1)
        clock[0] += 1.0

    monkeypatch.setattr(rf.time, "perf_counter", lambda: clock[0])
    assert rf.best_seconds(op, batches=5, min_batch_s=0, budget_s=2.5) == 1.0
    assert len(calls) == 4  # the warm-up, then batches until 2.5 s had passed: 1, 2, 3 s
    calls.clear()
    assert rf.best_seconds(op, batches=5, min_batch_s=0, budget_s=1.0) == 1.0
    assert len(calls) == 1  # the warm-up alone took the budget: it is the answer
    calls.clear()
    assert rf.best_seconds(op, batches=5, min_batch_s=0, budget_s=60) == 1.0 and len(calls) == 6


def test_the_sweep_returns_what_it_timed(monkeypatch):
    timed = []

    def fake(f, batches, min_batch_s):  # run the operation once and say it took a known time
        f()
        timed.append(1e-3 * (len(timed) + 1))
        return timed[-1]

    monkeypatch.setattr(rf, "best_seconds", fake)
    steps = []
    before = torch.get_num_threads()
    s = rf.run_sweep((8, 16), (1, 2), elements=1000, progress=lambda *a: steps.append(a))
    assert torch.get_num_threads() == before  # restored
    assert [(p.n, p.threads) for p in s.matmul] == [(8, 1), (16, 1), (8, 2), (16, 2)]
    assert [p.seconds for p in s.matmul] == timed[:4]
    assert [(p.op, p.threads, p.seconds) for p in s.copy + s.add] == [("copy", 1, timed[4]), ("copy", 2, timed[6]),
                                                                      ("add", 1, timed[5]), ("add", 2, timed[7])]
    p = s.matmul[1]
    assert (p.flops, p.bytes) == (2 * 16**3, 3 * 16**2 * 4) and p.flops_per_s == pytest.approx(2 * 16**3 / timed[1])
    assert s.add[0].flops == 1000 and s.add[0].bytes == 12_000 and s.copy[0].bytes == 8000 and s.copy[0].flops == 0
    # the roofs: the fastest product and the fastest copy
    assert s.peak_point is s.matmul[1] and s.peak_flops == 2 * 16**3 / timed[1]  # 4.1 MFLOP/s beats 1.0, 0.34, 2.0
    assert s.bandwidth_point is s.add[0] and s.bandwidth == pytest.approx(12_000 / timed[5])  # 2 MB/s: the most
    assert s.ridge == pytest.approx(s.peak_flops / s.bandwidth)
    assert s.attainable(1e9) == s.peak_flops and s.attainable(1e-3) == pytest.approx(1e-3 * s.bandwidth)
    assert [q.n for q in s.matmul_at(2)] == [8, 16] and s.all_threads == 2
    assert [a[:2] for a in steps] == [(i, 8) for i in range(9)] and steps[-1][2] == ""
    assert s.seconds > 0


def test_a_real_tiny_sweep_times_every_operation():
    s = rf.run_sweep((8, 32), (1,), elements=4096, batches=1, min_batch_s=0.001)
    for p in s.matmul + s.add + s.copy:
        assert math.isfinite(p.seconds) and p.seconds > 0
    assert all(p.flops_per_s <= s.peak_flops for p in s.matmul)  # nothing timed is above the compute roof
    assert s.add[0].intensity == pytest.approx(1 / 12) and s.matmul[1].intensity == pytest.approx(32 / 6)


def test_the_figures_draw_what_they_are_given():
    from sim.plots.roofline import roofline_figure, sweep_figure

    fig = sweep_figure([("1", [64, 128], [10.0, 20.0]), ("2", [64, 128], [15.0, 35.0])], {"x": "n", "y": "g"})
    assert [d.name for d in fig.data] == ["1", "2"] and list(fig.data[1].y) == [15.0, 35.0]
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
    roof = rf.roof_curve(100e9, 10e9, 0.01, 1000, 11)
    fig = roofline_figure(roof, 10.0, [("mm 1", [5.0], [40e9], ["n = 30"]), ("mm 2", [10.0], [80e9], ["n = 60"])],
                          ("add", [1 / 12], [0.5e9], ["1"]), {"x": "i", "y": "g", "roof": "r", "ridge": "ridge"})
    assert [d.name for d in fig.data] == ["r", "mm 1", "mm 2", "add"]
    assert list(fig.data[0].y) == [y / 1e9 for y in roof[1]] and list(fig.data[3].y) == [0.5]  # in GFLOP/s
    sweep_colours = [d.line.color for d in sweep_figure([("1", [1], [1]), ("2", [1], [1])], {"x": "", "y": ""}).data]
    assert [d.marker.color for d in fig.data[1:3]] == sweep_colours  # a thread count keeps its colour
    assert fig.data[3].marker.color not in sweep_colours
    assert fig.layout.shapes[0].x0 == 10.0  # the ridge
    # its label at the ridge too: an annotation's x on a log axis is log10 of the value (10^10 would stretch the axis)
    assert [a.text for a in fig.layout.annotations] == ["ridge"] and fig.layout.annotations[0].x == pytest.approx(1.0)


def test_the_published_rooflines_bend_at_their_ridges():
    from sim.plots.roofline import published_roofs_figure

    roofs = [(name, rf.roof_curve(peak, bw), rf.ridge(peak, bw)) for name, peak, bw in (("a", 312e12, 2.039e12),
                                                                                          ("b", 989.5e12, 3.35e12))]
    fig = published_roofs_figure(roofs, {"x": "i", "y": "t", "ridge": "r"})
    assert [d.name for d in fig.data if d.showlegend is not False] == ["a", "b"]
    line, ridge = fig.data[2], fig.data[3]  # b's roof and its ridge, in TFLOP/s
    assert max(line.y) == pytest.approx(989.5) and line.y[0] == pytest.approx(0.01 * 3.35)  # min(peak, i × bw)
    assert ridge.x[0] == pytest.approx(989.5 / 3.35) and ridge.y[0] == pytest.approx(989.5)
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"
