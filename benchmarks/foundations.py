"""The foundations lab's costs: what a redraw of each section computes (the functions the page calls), the
article's 4096³ matrix product on this CPU (1 thread and all threads), the CPU-vs-GPU section's sweep (its
throughputs, roofs and wall time; target <= 20 s); the word embeddings: a step's and a frame's cost and, over
seeds, how many steps (and seconds of play at the default speed) until the vectors are sensible and stay so; the
retrieval's index and a question; the lookup.

    python -m benchmarks foundations [--no-matmul] [--no-sweep] [--no-embeddings] [--seeds 10] [--steps 9000]
                                     [--drag]

--drag starts the app and headless Chromium and prints how long the vector pad takes from a pointer move to the
numbers drawn for it (median of the moves of one held drag), and from a release to the URL holding the new values.
"""
import argparse
import os
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
    parser.add_argument("--no-embeddings", action="store_true", help="leave out the word-embedding runs")
    parser.add_argument("--seeds", type=int, default=10, help="embedding runs per language")
    parser.add_argument("--steps", type=int, default=9000, help="steps of each embedding run")
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
        print_sweep()
    if not args.no_embeddings:
        embeddings(args.seeds, args.steps)


def print_sweep() -> None:
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


def embeddings(seeds: int, steps: int) -> None:
    """The embeddings section's run at the page's defaults (labs.foundations.embeddings.bench_spec), the retrieval
    and the lookup as the page calls them."""
    from labs.foundations.embeddings import bench_spec, drawn
    from labs.foundations.schema import SCHEMA
    from sim.core.live import FRAMES_PER_S
    from sim.linalg.lookup import lookup
    from sim.linalg.retrieval import Index, course_dir, course_paragraphs
    from ui.i18n import language

    DEFAULT_WORD = next(p.default for p in SCHEMA if p.name == "emb_word")  # noqa: N806
    print(f"uptime: {os.popen('uptime').read().strip()}")
    for lang in ("en", "zh"):
        spec, _ = bench_spec(lang)
        per_s = spec.speed * FRAMES_PER_S  # steps a second of play when the server keeps up
        run = spec.build()
        cpu = time.thread_time()
        run.advance(1000)
        step_ms = (time.thread_time() - cpu)
        frame_ms = best_ms(run.frame, 20)
        frame = run.frame()
        with language(lang):  # drawn afresh each time (the page draws a frame once per process: drawn_once)
            drawn_ms = best_ms(lambda f=frame, lg=lang: drawn(f, lg, DEFAULT_WORD), 5)
        print(f"embeddings {lang}: a step {step_ms:.3f} ms of CPU, a frame {frame_ms:.2f} ms, drawn {drawn_ms:.1f} ms; "
              f"play at the default speed: {per_s} steps/s")
        found, cpu_s = [], []
        for seed in range(seeds):
            run = bench_spec(lang, seed)[0].build()
            cpu = time.thread_time()
            run.advance(steps)
            cpu_s.append(time.thread_time() - cpu)
            found.append(run.sensible_from)
            f = run.frame()
            when = (f"from step {run.sensible_from} = {run.sensible_from / per_s:.1f} s of play, held to step {steps}"
                    if run.sensible_from is not None else f"not at step {steps}")
            print(f"  seed {seed}: sensible (>= 90 % vs chance {f['chance']:.0%}) {when}; agreement at the end "
                  f"{f['agree']:.0%}; {cpu_s[-1]:.2f} s CPU for {steps} steps")
        held = [s for s in found if s is not None]
        if held:
            print(f"  {len(held)}/{seeds} seeds sensible and held to step {steps}; median from step "
                  f"{sorted(held)[len(held) // 2]} ({sorted(held)[len(held) // 2] / per_s:.1f} s), slowest {max(held)} "
                  f"({max(held) / per_s:.1f} s)")
    folder = course_dir(Path(__file__).resolve().parents[1])
    if folder is not None:
        t0 = time.perf_counter()
        index = Index(course_paragraphs(folder))
        build = time.perf_counter() - t0
        ask_ms = best_ms(lambda: index.search("什么是余弦相似度", 3), 20)
        print(f"retrieval: {len(index.paragraphs)} paragraphs of {folder}, {len(index.idf)} n-grams, index built in "
              f"{build:.2f} s, a question {ask_ms:.2f} ms")
    print(f"lookup [4, 18, 7] in 20 x 4: {best_ms(lambda: lookup((4, 18, 7), 20, 4, 0), 20):.2f} ms")


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
