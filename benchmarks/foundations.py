"""The foundations lab's costs: what a redraw of each section computes (the functions the page calls), the
article's 4096³ matrix product on this CPU (1 thread and all threads), and the CPU-vs-GPU section's sweep (its
throughputs, roofs and wall time; target <= 20 s).

    python -m benchmarks foundations [--no-matmul] [--no-sweep] [--drag]

--drag starts the app and headless Chromium and prints how long the vector pad takes from a pointer move to the
numbers drawn for it (median of the moves of one held drag), and from a release to the URL holding the new values.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

from sim.autograd.depth import first_layer_by_depth, layer_grad_norms
from sim.autograd.loop import dropout_outputs, saved_for_backward, train
from sim.autograd.network import NetConfig, forward_backward, stage
from sim.linalg import matrices as mx
from sim.linalg.matmul import ARTICLE_N, cpu_threads, time_matmul
from sim.linalg.roofline import SWEEP_SIZES, run_sweep
from sim.linalg.vectors import analyse
from sim.plots.foundations import graph_figure, plane_figure, vector_pad_payload


def best_ms(f, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def graph_redraw(config: NetConfig) -> None:
    g = forward_backward(config)
    s = stage(g, "backward", len(g.nodes) // 2)
    graph_figure([v.label for v in g.nodes], [v.op for v in g.nodes], [[g.index(p) for p in v.parents]
                                                                      for v in g.nodes], s.values, s.grads, s.current,
                 {}, {"value": "v", "grad": "g"})


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.foundations", description=__doc__.splitlines()[0])
    parser.add_argument("--no-matmul", action="store_true", help="leave out the 4096³ timing")
    parser.add_argument("--no-sweep", action="store_true", help="leave out the CPU-vs-GPU section's sweep")
    parser.add_argument("--drag", action="store_true", help="only the vector pad's drag-to-redraw time in Chromium")
    args = parser.parse_args(argv)
    if args.drag:
        return drag()
    rows = {
        "graph 2-1x2 (build, backward, figure)": lambda: graph_redraw(NetConfig()),
        "graph 3-2x3 (build, backward, figure)": lambda: graph_redraw(NetConfig(3, 2, 3)),
        "loop: zero_grad runs (2 x 60 steps)": lambda: [train(NetConfig(), 0.1, 60, z) for z in (True, False)],
        "loop: saved tensors, batch 1024": lambda: [saved_for_backward(NetConfig(), 1024, n) for n in (True, False)],
        "loop: dropout outputs": lambda: dropout_outputs(NetConfig(), 0.5),
        "depth: 3 activations, depth 20, and the sweep": lambda: ([layer_grad_norms(a, 20, 1.0) for a in
                                                                   ("sigmoid", "tanh", "relu")],
                                                                  first_layer_by_depth(1.0)),
        "vectors: numbers and the pad's payload": lambda: (analyse((3, 1), (1, 3), 1.5),
                                                           vector_pad_payload((3, 1), (1, 3), 1.5, 5.0, 0.1, {}, {})),
        "matrices: two plane figures": lambda: [plane_figure([("A", mx.grid_lines(m), mx.unit_square(m))] * 2,
                                                             {"before": "b", "after": "a"})
                                                for m in (mx.PRESETS["shear"], mx.PRESETS["rotate45"])],
    }
    for name, f in rows.items():
        print(f"{name:50s} {best_ms(f):8.1f} ms")
    if not args.no_matmul:
        for threads in (1, cpu_threads()):
            t = time_matmul(ARTICLE_N, threads)
            print(f"matmul {ARTICLE_N}³ float32, {threads} thread(s): {t.seconds:.3f} s, {t.gflops:.1f} GFLOP/s")
    if not args.no_sweep:
        sweep()


def sweep() -> None:
    """The CPU-vs-GPU section's sweep, as the page runs it (labs/foundations/hardware.py: run_sweep(sizes))."""
    s = run_sweep(SWEEP_SIZES)
    print(f"sweep n = {', '.join(map(str, SWEEP_SIZES))} at {s.threads} thread(s), copy and add:"
          f" {s.seconds:.1f} s wall (target <= 20 s)")
    for k in s.threads:
        print(f"  matmul {k} thread(s): " + ", ".join(f"{p.n}: {p.flops_per_s / 1e9:.1f}" for p in s.matmul_at(k))
              + " GFLOP/s")
    for p in s.copy + s.add:
        print(f"  {p.op} {p.n} float32, {p.threads} thread(s): {p.bytes_per_s / 1e9:.1f} GB/s,"
              f" {p.flops_per_s / 1e9:.2f} GFLOP/s")
    print(f"  roofs: peak {s.peak_flops / 1e9:.1f} GFLOP/s (n = {s.peak_point.n}, {s.peak_point.threads} thread(s)),"
          f" bandwidth {s.bandwidth / 1e9:.1f} GB/s, ridge {s.ridge:.2f} FLOP/byte")


if __name__ == "__main__":
    main()


# ---------- the vector pad in Chromium ----------
DRAG_MOVES = 30
WAIT_DRAWN = """([want, t0]) => {
    const p = document.querySelector('[data-testid="vector-pad-numbers"] p');
    if (!p || !p.innerText.startsWith(want)) return false;
    window.__drawnAt = performance.now();
    return true; }"""


def pad_point(box: dict, p: tuple[float, float], R: float = 5.5) -> tuple[float, float]:
    return box["x"] + (p[0] + R) / (2 * R) * box["width"], box["y"] + (R - p[1]) / (2 * R) * box["height"]


def drag() -> None:
    """From a pointer move (timed in the page just before Playwright moves the mouse) to the first animation frame
    whose pad already shows the numbers of the new position ("a = (x, y)", polled every frame); and from a release to
    the URL holding the position (one server round trip, as every number took before the pad computed them)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from playwright.sync_api import sync_playwright

    from deploy.local import CHROMIUM, CHROMIUM_ARGS, running_app

    path = [(round(3 - 0.2 * i, 1), round(1 + 0.1 * (i % 7), 1)) for i in range(DRAG_MOVES)]  # within ±5
    with running_app() as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{base}/foundations?lang=en&section=vectors&ax=3&ay=1&bx=1&by=3")
        canvas = page.locator('[data-testid="vector-pad"] canvas')
        canvas.wait_for(timeout=90_000)
        canvas.scroll_into_view_if_needed()
        page.wait_for_timeout(1000)
        box = canvas.bounding_box()
        drawn, follows, at = [], [], (3.0, 1.0)
        page.mouse.move(*pad_point(box, at))
        page.mouse.down()
        for q in path[1:]:
            want = f"a = ({q[0]:.3g}, {q[1]:.3g})"
            t0 = page.evaluate("() => performance.now()")
            page.mouse.move(*pad_point(box, q))
            page.wait_for_function(WAIT_DRAWN, arg=[want, t0], polling="raf", timeout=10_000)
            drawn.append(page.evaluate("() => window.__drawnAt") - t0)
        page.mouse.up()
        last = path[-1]
        for q in [(1.5, -2.0), (-2.5, 2.5), (0.5, 4.0), (-4.0, -1.0), (2.0, 2.0), (-1.0, -3.0)]:
            page.mouse.move(*pad_point(box, last))
            page.mouse.down()
            page.mouse.move(*pad_point(box, q), steps=2)
            t0 = page.evaluate("() => performance.now()")
            page.mouse.up()
            page.wait_for_function("([x, y]) => { const s = new URLSearchParams(location.search);"
                                   " return s.get('ax') === x && s.get('ay') === y; }",
                                   arg=[f"{q[0]:g}", f"{q[1]:g}"], timeout=30_000)
            follows.append(page.evaluate("() => performance.now()") - t0)
            last = q
        browser.close()
    print(f"vector pad, move -> numbers drawn (Chromium, {len(drawn)} moves of one drag): median"
          f" {statistics.median(drawn):.1f} ms, max {max(drawn):.1f} ms (target <= 100 ms)")
    print(f"vector pad, release -> URL updated by the server ({len(follows)} drags): median"
          f" {statistics.median(follows):.0f} ms, max {max(follows):.0f} ms")
