"""Speed benchmarks, one subcommand each: python -m sim.bench engine

Each prints one JSON object per line. A figure is the best of several repeats, as the best run is
the one least disturbed by other processes. Rates come twice: per wall-clock second (what a user
sees on this machine now) and per CPU second of this process (what an unshared machine would give).
"""

import argparse
import json
import time
from collections.abc import Callable

from sim.threads import configure_threads


def best_seconds(fn: Callable[[], object], repeats: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Shortest time of `repeats` calls of fn, measured with `clock`."""
    best = float("inf")
    for _ in range(repeats):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def engine(args: argparse.Namespace) -> None:
    """Training epochs per second of the classification lab's engine, and the boundary grid's cost."""
    from sim.data import FEATURES
    from sim.training import ClassifierConfig, Trainer

    configs = {
        "default": ClassifierConfig(),
        "adam": ClassifierConfig(optimizer="adam"),
        "relu_6x8": ClassifierConfig(hidden=(8,) * 6, activation="relu"),
        "spiral3_softmax": ClassifierConfig(dataset="spiral3"),
        "regression_plane": ClassifierConfig(problem="regression", dataset="plane"),
        # the heaviest the lab allows: every feature, 6 × 8, 2,000 points, one point per update
        "heaviest": ClassifierConfig(hidden=(8,) * 6, activation="relu", features=FEATURES, n=2000, train_ratio=0.9,
                                     batch_size=1, optimizer="adam", regularization="l2", reg_rate=0.001,
                                     dropout=0.1),
    }
    for name, config in configs.items():
        trainer = Trainer(config)
        trainer.step(5)  # warm-up: first calls allocate
        rates = {
            key: round(args.epochs / best_seconds(lambda: trainer.step(args.epochs), args.repeats, clock), 1)
            for key, clock in (("epochs_per_s", time.perf_counter), ("epochs_per_cpu_s", time.process_time))
        }
        # a diverged trainer stops training, which would make its rate meaningless
        print(json.dumps({"bench": "engine", "config": name, **rates, "diverged": trainer.diverged}))
    trainer = Trainer(configs["default"])
    ms = best_seconds(lambda: trainer.predict_grid(50), args.repeats * 4) * 1e3
    print(json.dumps({"bench": "engine", "predict_grid_50_ms": round(ms, 3)}))


def shapes(args: argparse.Namespace) -> None:
    """Server-side redraw of the shape chain lab after a slider change: trace, figures, table, JSON for the browser."""
    import plotly.io as pio

    from sim.plots.shapes import flow_figure, kv_figure, step_table
    from sim.shapes import PRESETS, ShapeConfig, kv_cache_options, trace_model

    configs = {**PRESETS, "max": ShapeConfig(batch=64, seq_len=131_072, d_model=16_384, n_head=128, n_kv_head=8,
                                             d_ff=65_536, vocab_size=262_144, n_layer=128)}
    words = ("input", "params", "flops", "bytes", "view_note", "module", "op", "in", "out", "code", "kv_heads", "mqa",
             "mha")
    labels = {**{w: w for w in words}, "block": "{path} × {n}"}
    trace_model(configs["notes"])  # warm-up: the first trace imports and builds the meta kernels

    def redraw(c: ShapeConfig) -> None:
        trace = trace_model(c)
        figs = [flow_figure(trace.steps, [(c.batch, c.seq_len)], labels, block=(f"{trace.block}.0", c.n_layer)),
                kv_figure(kv_cache_options(c), c.n_kv_head, labels)]
        step_table(trace.steps, labels).to_dict()
        for fig in figs:
            pio.to_json(fig)

    for name, c in configs.items():
        trace_ms = best_seconds(lambda: trace_model(c), args.repeats) * 1e3
        redraw_ms = best_seconds(lambda: redraw(c), args.repeats) * 1e3
        cpu_ms = best_seconds(lambda: redraw(c), args.repeats, time.process_time) * 1e3
        print(json.dumps({"bench": "shapes", "config": name, "trace_ms": round(trace_ms, 1),
                          "redraw_ms": round(redraw_ms, 1), "redraw_cpu_ms": round(cpu_ms, 1),
                          "target_ms": 300}))


def attention(args: argparse.Namespace) -> None:
    """Attention lab: pipeline redraw after a slider change (32 tokens, 4 heads); the tiny transformer on copy."""
    import plotly.io as pio

    from sim.attention import embed_tokens, make_mask, random_attention, run_pipeline
    from sim.plots.attention import attention_panels, loss_panel, pipeline_figures
    from sim.tasks import make_task
    from sim.transformer import LMTrainer, TransformerConfig

    keys = ("x", "q", "k", "v", "raw", "scaled", "masked", "weights", "heads_out", "concat", "output")
    labels = {**{k: k + " {shape}" for k in keys}, "head": "head {h}", "masked_cell": "masked", "row_sum": "sum"}

    def redraw(tokens: list[str], d_model: int, n_heads: int, mask: str, heads: list[int]) -> None:
        p = run_pipeline(random_attention(d_model, n_heads, 0), embed_tokens(tokens, d_model, 0),
                         make_mask(mask, len(tokens), 4))
        for fig in pipeline_figures(p, tokens, heads, labels, annotate=len(tokens) <= 8).values():
            pio.to_json(fig)

    cases = {"notes_3tok": (list("猫追狗"), 8, 2), "32tok_4heads": ([f"w{i}" for i in range(32)], 64, 4)}
    for name, (tokens, d_model, n_heads) in cases.items():
        for mask in ("none", "causal", "causal_window"):
            for heads in (list(range(n_heads)), [0]):
                fn = lambda: redraw(tokens, d_model, n_heads, mask, heads)  # noqa: E731
                fn()  # warm-up
                print(json.dumps({"bench": "attention", "case": name, "mask": mask, "heads_shown": len(heads),
                                  "redraw_ms": round(best_seconds(fn, args.repeats) * 1e3, 1),
                                  "redraw_cpu_ms": round(best_seconds(fn, args.repeats, time.process_time) * 1e3, 1),
                                  "target_ms": 300}))

    # the page's default run: copy 5 letters, 1 layer, 2 heads, d_model 32, Adam 3e-3, batches of 32
    task = make_task("copy", 5)
    config = TransformerConfig(len(task.vocab), task.block_size, n_layer=1, n_head=2, d_model=32, d_ff=128)
    trainer = LMTrainer(config, task, lr=3e-3, seed=0)
    start = time.perf_counter()
    while time.perf_counter() - start < 60 and (trainer.recent_loss() is None or trainer.recent_loss() > 0.01):
        trainer.step(10)
    seconds = time.perf_counter() - start
    print(json.dumps({"bench": "attention", "case": "copy_to_near_zero", "seconds": round(seconds, 2),
                      "steps": trainer.steps, "final_loss": round(trainer.recent_loss(), 5), "threshold": 0.01,
                      "exact_generation": trainer.generation_accuracy(), "target_s": 60}))
    probe = task.example("hebgd")[:-1]

    def frame() -> None:  # what the live view does per frame at the page's default 2 steps per frame
        trainer.step(2)
        steps, losses = trainer.curve()
        panels = [loss_panel("loss", [("loss", steps, losses, "#f59322")], {"step": "", "loss": "", "floor": ""}),
                  *attention_panels([m.numpy() for m in trainer.attention(probe)], list(probe), "{layer}{head}", True)]
        json.dumps(panels)

    ms = best_seconds(frame, args.repeats) * 1e3
    cpu_ms = best_seconds(frame, args.repeats, time.process_time) * 1e3
    print(json.dumps({"bench": "attention", "case": "live_frame_2_steps", "frame_ms": round(ms, 1),
                      "frame_cpu_ms": round(cpu_ms, 1), "frames_per_s_bound": round(1e3 / ms, 1), "target_fps": 10}))


def regression(args: argparse.Namespace) -> None:
    """Regression lab: what a slider change costs (data, exact fit, figures built and serialised as the page
    does, per view) and what a live gradient-descent frame costs (epochs, panels)."""
    from collections import defaultdict

    import numpy as np

    from sim import regression as reg
    from sim.plots import regression as plots
    from sim.regression_data import make_dataset

    labels = defaultdict(str)  # figure labels: their text does not change the cost

    def curve(data, model):
        if data.x.shape[1] == 1:
            grid = np.linspace(data.x.min(), data.x.max(), 200)
            return data.x[:, 0], grid, model.predict(grid[:, None])
        return data.day, data.day, model.predict(data.x)

    def fit_view(data, config):  # the default page: fit, curve, metrics, fit and residual figures
        model = reg.fit(data.x, data.y, config)
        x, cx, cy = curve(data, model)
        y_hat = model.predict(data.x)
        reg.regression_metrics(data.y, y_hat)
        return [plots.fit_figure(x, data.y, data.outlier, [{"x": cx, "y": cy, "name": "", "color": plots.FIT_COLOR}], labels),
                plots.residual_figure(data.x[:, -1], y_hat, y_hat - data.y, data.outlier, labels)]

    def surface_view(data, config):
        X = reg.feature_map(data.x, 1, config.standardize)(data.x)
        w, b = reg.robust_fit(X, data.y, config.loss, config.delta)
        w_grid, b_grid = plots.surface_window(np.array([w[0], b]), None)
        Z = reg.loss_surface(X, data.y, w_grid, b_grid, config.loss, config.delta)
        return [plots.surface_figure(w_grid, b_grid, Z, None, (w[0], b), labels)]

    def outliers_view(data, config):
        figs = []
        for loss in ("mse", "huber"):
            cfg = reg.ModelConfig(config.degree, config.standardize, loss, config.delta)
            x, cx, cy = curve(data, reg.fit(data.x, data.y, cfg))
            _, _, cy_clean = curve(data, reg.fit(data.x[~data.outlier], data.y[~data.outlier], cfg))
            figs.append(plots.fit_figure(x, data.y, data.outlier, [{"x": cx, "y": cy, "name": "", "color": plots.FIT_COLOR},
                                                                   {"x": cx, "y": cy_clean, "name": "", "color": plots.FIT_COLOR}],
                                         labels))
        return figs

    cases = {  # name -> (data arguments, model, view)
        "line_n30": (("linear", 30, 0.3, 0), reg.ModelConfig(), fit_view),
        "sine_n1000_deg12_std": (("sine", 1000, 0.3, 0), reg.ModelConfig(degree=12, standardize=True), fit_view),
        "area_n1000_deg12_raw": (("area_price", 1000, 0.3, 0), reg.ModelConfig(degree=12), fit_view),
        "huber_n1000_outliers": (("linear", 1000, 0.3, 0, 5, 8.0), reg.ModelConfig(loss="huber", delta=1.5), fit_view),
        "mae_n1000_deg5": (("quadratic", 1000, 0.3, 0, 3, 8.0), reg.ModelConfig(degree=5, loss="mae"), fit_view),
        "temperature_n1000": (("temperature", 1000, 0.3, 0), reg.ModelConfig(), fit_view),
        "surface_huber_n1000": (("linear", 1000, 0.3, 0), reg.ModelConfig(loss="huber", delta=1.5), surface_view),
        "outliers_view_n1000_deg3": (("linear", 1000, 0.3, 0, 5, 8.0), reg.ModelConfig(degree=3, delta=1.5),
                                     outliers_view),
    }
    for name, (data_args, config, view) in cases.items():
        def change():
            for fig in view(make_dataset(*data_args), config):
                fig.to_json()  # st.plotly_chart serialises every figure

        ms = {key: round(best_seconds(change, args.repeats, clock) * 1e3, 1)
              for key, clock in (("compute_and_figures_ms", time.perf_counter), ("cpu_ms", time.process_time))}
        print(json.dumps({"bench": "regression", "slider_change": name, **ms}))

    runs = {  # name -> (data arguments, training)
        "line_n30_full_batch": (("linear", 30, 0.3, 0), reg.GDConfig(lr=0.3)),
        "sine_n1000_deg12_batch1": (("sine", 1000, 0.3, 0),
                                    reg.GDConfig(reg.ModelConfig(degree=12, standardize=True), lr=0.01, batch_size=1)),
        "temperature_n1000_batch32": (("temperature", 1000, 0.3, 0),
                                      reg.GDConfig(reg.ModelConfig(standardize=True), lr=0.1, batch_size=32)),
    }
    for name, (data_args, gd) in runs.items():
        data = make_dataset(*data_args)
        run = reg.GDRun(data.x, data.y, gd)
        epoch_ms = best_seconds(lambda: run.step(1), args.repeats) * 1e3
        two = data.x.shape[1] == 1 and gd.model.degree == 1
        contours = reg.squared_loss_contours(run.X, run.y, run.start_loss * 0.25 ** np.arange(6)) if two else []

        def frame():
            x, cx, cy = curve(data, run.as_fit())
            panels = [plots.fit_panel(x, data.y, data.outlier, cx, cy, labels), plots.loss_panel(run.epochs, run.history, labels)]
            if two:
                panels.append(plots.path_panel(np.array(run.path), contours, (0.0, 0.0), labels))
            return json.dumps(panels)

        frame_ms = best_seconds(frame, args.repeats) * 1e3
        print(json.dumps({"bench": "regression", "live": name, "epoch_ms": round(epoch_ms, 3),
                          "frame_build_ms": round(frame_ms, 3), "frame_kB": round(len(frame()) / 1e3, 1),
                          "server_frames_per_s_at_1_epoch_per_frame": round(1e3 / (epoch_ms + frame_ms), 1)}))


def generalization(args: argparse.Namespace) -> None:
    """Generalisation lab: the server's share of a degree-slider redraw, and the live run's epochs/s and frame cost."""
    import plotly.io as pio

    from sim.fit import FitConfig, FitTrainer
    from sim.generalization import GRID as grid
    from sim.generalization import curve_data, degree_sweep, poly_fit, true_curve
    from sim.plots import generalization as plots

    words = ("degree", "mse", "train", "val", "test", "new", "best", "chosen", "under", "over", "interpolating",
             "truth", "fit", "x", "y", "title", "epoch")
    labels = {w: w for w in words}

    def redraw(data, degree: int, sweep=None) -> None:
        """What a slider change costs on the server: the sweep (cached per data set on the page), two figures, JSON."""
        sweep = sweep or degree_sweep(data)
        f = poly_fit(data.x[data.train], data.y[data.train], degree)
        parts = {"train": data.train, "val": data.val, "test": data.test}
        for fig in (plots.sweep_figure(sweep.degrees, sweep.train, sweep.val, sweep.new, sweep.best, degree,
                                       sweep.interpolating, labels),
                    plots.fit_figure(data.x, data.y, parts, grid, f(grid), true_curve(grid), labels)):
            pio.to_json(fig)

    for n in (40, 300):
        data = curve_data(n, 0.5, 0.6, 0.2, 0)
        redraw(data, 3)  # warm-up
        cached = degree_sweep(data)
        row = {"bench": "generalization", "case": f"degree_slider_n{n}", "target_ms": 300}
        for key, fn in (("sweep_ms", lambda: degree_sweep(data)), ("redraw_ms", lambda: redraw(data, 7)),
                        ("redraw_cached_sweep_ms", lambda: redraw(data, 7, cached))):
            row[key] = round(best_seconds(fn, args.repeats) * 1e3, 1)
        row["redraw_cpu_ms"] = round(best_seconds(lambda: redraw(data, 7), args.repeats, time.process_time) * 1e3, 1)
        print(json.dumps(row))

    data = curve_data(40, 0.5, 0.6, 0.2, 0)
    runs = {"default_64x64": FitConfig(lr=0.003), "128x128": FitConfig(hidden=(128, 128)),
            "l1_dropout": FitConfig(l1=1e-4, dropout=0.3)}
    for name, config in runs.items():
        trainer = FitTrainer(config, data.x[data.train], data.y[data.train], data.x[data.val], data.y[data.val])
        trainer.step(5)  # warm-up

        def frame() -> None:
            """One live frame of the page: 10 epochs, then the fit, loss and weight panels as JSON."""
            trainer.step(10)
            panels = [plots.fit_panel(data.x[data.train], data.y[data.train], data.x[data.val], data.y[data.val],
                                      grid, trainer.predict(grid), true_curve(grid), (-3, 3), labels),
                      plots.curves_panel(trainer.history, "loss", trainer.best_epoch,
                                         {**labels, "best": "best"}, log_y=True),
                      plots.weights_panel(trainer.weights(), {**labels, "weight": "w", "zero": "0"})]
            json.dumps(panels)

        rates = {key: round(args.epochs / best_seconds(lambda: trainer.step(args.epochs), args.repeats, clock), 1)
                 for key, clock in (("epochs_per_s", time.perf_counter), ("epochs_per_cpu_s", time.process_time))}
        frame_ms = best_seconds(frame, args.repeats) * 1e3
        # the page trains ~60 ms per fragment rerun, 10 epochs and one frame at a time, up to 4 frames
        print(json.dumps({"bench": "generalization", "case": f"live_{name}", **rates,
                          "frame_10_epochs_ms": round(frame_ms, 2), "frames_per_s_of_compute": round(1e3 / frame_ms, 1)}))


def memsim(args: argparse.Namespace) -> None:
    """IO simulator: seconds for the whole report at N = 16384 (target < 0.5 s), naive and tiled, with and without L2."""
    from sim.memsim import GPUS, attention_io

    h200 = GPUS["H200"]
    for algo in ("naive", "tiled"):
        for l2 in (None, h200.l2_bytes):
            for batch_heads, causal in ((1, False), (1, True), (64, False)):
                config = {"batch_heads": batch_heads, "causal": causal, "sram_bytes": h200.smem_per_sm_bytes,
                          "l2_bytes": l2, "n_sm": h200.n_sm}
                seconds = best_seconds(lambda: attention_io(algo, 16384, 64, **config), args.repeats)
                print(json.dumps({"bench": "memsim", "algo": algo, "N": 16384, "d": 64, **config,
                                  "seconds": round(seconds, 4), "target_s": 0.5}))


def gpu_page(args: argparse.Namespace) -> None:
    """Server-side redraw of the GPU lab after a change (nothing cached): the summary (both algorithms, two levels and
    L2), each view's figures as JSON, and the animation's payload."""
    import plotly.io as pio

    from sim.io_sweeps import Chip, l2_affordable, n_sweep, sram_sweep
    from sim.memsim import GPUS, attention_io, roofline
    from sim.plots.gpu import bytes_vs_n_figure, bytes_vs_sram_figure, roofline_figure
    from sim.plots.memsim_anim import animation_payload

    h200 = GPUS["H200"]
    chip = Chip(64 * 1024, h200.l2_bytes, h200.n_sm)
    labels = KeyLabels()
    configs = {"default": (1024, 1, 16, 2), "naive_dies": (100_000, 1, 16, 4), "flash_fig2": (1024, 64, 16, 2),
               "N=16384": (16384, 1, 16, 2)}
    for name, (N, B, H, elem) in configs.items():
        config = {"batch_heads": B * H, "dtype_bytes": elem, "causal": False, "block_m": None, "block_n": None}

        def summary() -> dict:
            reports = {}
            for algo in ("naive", "tiled"):
                kw = {**config, "sram_bytes": chip.sram_bytes, "n_sm": chip.n_sm, "max_events": 0}
                reports[algo] = attention_io(algo, N, 64, **kw)
                if l2_affordable(algo, N, 64, config, chip):
                    reports[f"{algo}_l2"] = attention_io(algo, N, 64, **kw | {"l2_bytes": chip.l2_bytes})
            return reports

        def sweeps() -> None:
            points = n_sweep(sorted({*(2**k for k in range(8, 18)), N}), 64, config, chip)
            sram = sram_sweep([2**k * 1024 for k in range(2, 11)], N, 64, B * H, elem, False)
            pio.to_json(bytes_vs_n_figure(points, labels))
            pio.to_json(bytes_vs_sram_figure(sram, 1, labels))

        def roof() -> None:
            points = {k: roofline(r, h200.hbm_bytes_per_s, h200.peak_flops) for k, r in summary().items()}
            pio.to_json(roofline_figure(h200, points, labels))

        def animation() -> None:
            report = attention_io("tiled", N, 64, dtype_bytes=elem, sram_bytes=chip.sram_bytes,
                                  l2_bytes=chip.l2_bytes, n_sm=chip.n_sm)
            json.dumps(animation_payload(report, labels))

        row = {"bench": "gpu_page", "config": name, "N": N, "B": B, "H": H}
        for part, fn in (("summary", summary), ("sweeps", sweeps), ("roofline", roof), ("animation", animation)):
            row[f"{part}_ms"] = round(best_seconds(fn, min(args.repeats, 3)) * 1e3, 1)
        print(json.dumps(row | {"target_ms": 300}))


class KeyLabels(dict):
    """Labels for the figure builders in benchmarks: every key is its own label."""

    def __missing__(self, key: str) -> str:
        return key


def attention_cpu(args: argparse.Namespace) -> None:
    """CPU time and peak memory of naive and tiled attention at N = 8192 (target: tiled peak <= 1/8 of naive's)."""
    from sim.gpu import measure_attention

    runs = {impl: measure_attention(impl, 1, 1, 8192, 64, "float32", block_m=128, block_n=128,
                                    repeats=min(args.repeats, 3), counters=False, device="cpu")
            for impl in ("naive", "tiled_torch")}
    for impl, m in runs.items():
        print(json.dumps({"bench": "attention_cpu", "impl": impl, **m.config, "time_ms": m.time_ms,
                          "peak_bytes": m.peak_bytes, "error": m.error, "source": m.source}))
    naive, tiled = runs["naive"].peak_bytes, runs["tiled_torch"].peak_bytes
    print(json.dumps({"bench": "attention_cpu", "tiled_over_naive_peak": tiled / naive if naive and tiled else None,
                      "target": 1 / 8}))


def gpu(args: argparse.Namespace) -> None:
    """The GPU lab's measurement set into one JSON file (--out): device, versions, date, configs, results."""
    from pathlib import Path

    from sim.gpu_bench import measurement_set, targets

    if not args.out:
        raise SystemExit("python -m sim.bench gpu needs --out FILE.json")

    def save(report: dict) -> None:
        Path(args.out).write_text(json.dumps(report, indent=1), encoding="utf-8")

    start = time.perf_counter()
    report = measurement_set(args.quick, log=lambda line: print(line, flush=True), save=save)
    for row in targets(report):  # the device targets; "met": null where nothing was measured (no CUDA)
        print(json.dumps({"bench": "gpu", **row}))
    print(json.dumps({"bench": "gpu", "out": args.out, "seconds": round(time.perf_counter() - start, 1)}))


# name -> function(args); a new benchmark is a new entry
SUBCOMMANDS = {"engine": engine, "shapes": shapes, "attention": attention, "regression": regression,
               "generalization": generalization, "memsim": memsim, "attention_cpu": attention_cpu, "gpu": gpu,
               "gpu_page": gpu_page}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m sim.bench", description=__doc__.splitlines()[0])
    parser.add_argument("subcommand", choices=sorted(SUBCOMMANDS))
    parser.add_argument("--epochs", type=int, default=20, help="epochs per timed repeat (engine)")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats; the best one is reported")
    parser.add_argument("--out", help="JSON file the measurement set is written to (gpu)")
    parser.add_argument("--quick", action="store_true", help="smallest sizes, for the tests (gpu)")
    args = parser.parse_args()
    configure_threads()  # as the app does: one intra-op thread per process
    SUBCOMMANDS[args.subcommand](args)


if __name__ == "__main__":
    main()
