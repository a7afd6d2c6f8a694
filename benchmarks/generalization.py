"""Generalisation lab: the degree sweep redraw and a live training frame."""
import argparse
import json
import time

from benchmarks import best_seconds


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
