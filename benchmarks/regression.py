"""Regression lab: a slider change (data, fit, figures) and a live gradient-descent frame, through the very
functions the page calls (labs/regression/page.py and views.py), with their figures serialised as Streamlit does."""
import argparse
import json
import time
from functools import partial

from benchmarks import best_seconds


def regression(args: argparse.Namespace) -> None:
    """Regression lab: what a slider change costs (data, exact fit, the shown view's numbers and figures, built
    and serialised) and what a live gradient-descent frame costs (epochs, panels)."""
    from collections import defaultdict

    from sim.fitting import regression as reg
    from sim.fitting.regression_data import make_dataset
    from sim.plots import regression as plots

    labels = defaultdict(str)  # figure labels: their text does not change the cost

    def fit_view(data, config):  # the default page: fit, metrics, the fit and residual figures
        model = reg.fit(data.x, data.y, config)
        reg.scores(data, model)
        reg.rule_scores(data)
        return [plots.fit_view(data, model, labels), plots.residuals_view(data, model, labels)]

    def surface_view(data, config):  # the loss-surface panel (no gradient-descent path)
        return [plots.surface_view(data, config, None, labels)]

    def outliers_view(data, config):  # the outliers panel: squared and Huber loss, with and without outliers
        return [plots.outlier_view(data, reg.outlier_fits(data, config, loss), labels) for loss in ("mse", "huber")]

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

    def change(data_args, config, view):
        for fig in view(make_dataset(*data_args), config):
            fig.to_json()  # st.plotly_chart serialises every figure

    for name, case in cases.items():
        ms = {key: round(best_seconds(partial(change, *case), args.repeats, clock) * 1e3, 1)
              for key, clock in (("compute_and_figures_ms", time.perf_counter), ("cpu_ms", time.process_time))}
        print(json.dumps({"bench": "regression", "slider_change": name, **ms}))

    runs = {  # name -> (data arguments, training)
        "line_n30_full_batch": (("linear", 30, 0.3, 0), reg.GDConfig(lr=0.3)),
        "sine_n1000_deg12_batch1": (("sine", 1000, 0.3, 0),
                                    reg.GDConfig(reg.ModelConfig(degree=12, standardize=True), lr=0.01, batch_size=1)),
        "temperature_n1000_batch32": (("temperature", 1000, 0.3, 0),
                                      reg.GDConfig(reg.ModelConfig(standardize=True), lr=0.1, batch_size=32)),
    }

    def frame_json(live, data, background):  # the run's frame as the page draws it (its caption aside), sent as JSON
        return json.dumps(plots.live_frame(live.frame(), data, background, labels, ""))

    for name, (data_args, gd) in runs.items():
        data = make_dataset(*data_args)
        live = reg.LiveGD(data, gd)  # the live run (sim.core.live.LiveRun) the page's sessions share
        background = reg.path_background(live.gd)  # once, when the page builds the run
        epoch_ms = best_seconds(partial(live.advance, 1), args.repeats) * 1e3
        frame_only_ms = best_seconds(live.frame, args.repeats) * 1e3  # what the trajectory stores per frame
        one_frame = partial(frame_json, live, data, background)
        frame_ms = best_seconds(one_frame, args.repeats) * 1e3
        print(json.dumps({"bench": "regression", "live": name, "epoch_ms": round(epoch_ms, 3),
                          "run_frame_ms": round(frame_only_ms, 3), "frame_build_ms": round(frame_ms, 3),
                          "frame_kB": round(len(one_frame()) / 1e3, 1),
                          "server_frames_per_s_at_1_epoch_per_frame": round(1e3 / (epoch_ms + frame_ms), 1)}))
