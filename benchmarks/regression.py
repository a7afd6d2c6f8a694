"""Regression lab: a slider change (fit, curve, figures) and a live gradient-descent frame."""
import argparse
import json
import time

from benchmarks import best_seconds


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
