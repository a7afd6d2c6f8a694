"""Generalisation lab: the degree slider's redraw and a live training frame, through the page's own functions."""
import argparse
import json
import time
from functools import partial

from benchmarks import best_seconds


def generalization(args: argparse.Namespace) -> None:
    """Generalisation lab: the server's share of a degree-slider redraw, and the live run's epochs/s and frame cost."""
    import plotly.io as pio

    from labs.generalization import labels
    from sim.fitting.fit import FitConfig, FitTrainer
    from sim.fitting.generalization import FitRun, capacity_sweep, curve_data, fit_errors, noisy_points
    from sim.plots import generalization as plots
    from ui.i18n import language

    def redraw(data, degree: int, sweep) -> None:
        """The capacity section on a degree change, its sweep already cached (per data set, on the page): the fit
        and its errors, both figures as JSON (what st.plotly_chart sends)."""
        fit = fit_errors(data, degree)
        for fig in plots.capacity_figures(data, sweep, fit, degree, *labels.capacity(sweep, len(data.train), degree)):
            pio.to_json(fig)

    def live(case: str, run: FitRun, draw) -> None:
        """A live run's epochs/s, and one frame: 10 epochs, then the run's frame as the page draws it, as JSON."""
        run.advance(5)  # warm-up

        def one_frame() -> None:
            run.advance(10)
            json.dumps(draw(run.frame()))

        rates = {key: round(args.epochs / best_seconds(lambda: run.advance(args.epochs), args.repeats, clock), 1)
                 for key, clock in (("epochs_per_s", time.perf_counter), ("epochs_per_cpu_s", time.process_time))}
        frame_ms = best_seconds(one_frame, args.repeats) * 1e3
        # a playing page shows a frame per `speed` epochs (5 by default), at up to 30 frames a second
        print(json.dumps({"bench": "generalization", "case": f"live_{case}", **rates, "frame_10_epochs_ms":
                          round(frame_ms, 2), "frames_per_s_of_compute": round(1e3 / frame_ms, 1)}))

    with language("en"):  # the page's words (t() outside a script run needs a language)
        for n in (40, 300):
            settings = (n, 0.5, 0.6, 0.2, 0)
            data = curve_data(*settings)
            cached = capacity_sweep(*settings)
            redraw(data, 3, cached)  # warm-up
            row = {"bench": "generalization", "case": f"degree_slider_n{n}", "target_ms": 300}
            # the sweep runs once per data set (a data slider moved); the redraw on every degree change
            for key, fn in (("sweep_ms", partial(capacity_sweep, *settings)),
                            ("redraw_cached_sweep_ms", partial(redraw, data, 7, cached))):
                row[key] = round(best_seconds(fn, args.repeats) * 1e3, 1)
            cpu = best_seconds(partial(redraw, data, 7, cached), args.repeats, time.process_time)
            row["redraw_cpu_ms"] = round(cpu * 1e3, 1)
            print(json.dumps(row))

        data = curve_data(40, 0.5, 0.6, 0.2, 0)
        runs = {"default_64x64": FitConfig(lr=0.003), "128x128": FitConfig(hidden=(128, 128)),
                "l1_dropout": FitConfig(l1=1e-4, dropout=0.3)}
        for name, config in runs.items():  # the regularisation section's frame: fit, losses and weights
            live(name, FitRun(FitTrainer(config, *data.train_val()), "weights"),
                 lambda frame: plots.regularization_frame(frame, data, labels.regularization()))
        live("capacity_64x64", FitRun(FitTrainer(FitConfig(lr=0.003), *data.train_val()), "curve"),
             lambda frame: plots.curve_frame(frame, data, labels.curve()))
        points = noisy_points("moons", 0.2, 0)
        live("label_noise_64x64", FitRun(FitTrainer(FitConfig(task="binary"), *points.train_val()), "boundary"),
             lambda frame: plots.noise_frame(frame, points, labels.noise()))
