"""The language-model lab's measured scaling: a sweep of tiny models measured here (bundled, and a smaller one a class
runs live) with its IsoFLOP curves and fitted loss surface."""
import json
import math
import threading

import pandas as pd
import streamlit as st

from labs.lm.laws import sci
from sim.language.claims import SweepReading, lowest_case, sweep_reading
from sim.language.lm import (
    LIVE_BUDGETS,
    LIVE_WIDTHS,
    MIN_FIT_STEPS,
    SWEEP_CONTEXT,
    SWEEPS_DIR,
    make_task,
    run_record,
    sweep,
    sweep_points,
    synthetic_text,
)
from sim.language.scaling import compute_optimal, fit_loss_surface, isoflop_frontier
from sim.plots.lm import curves_chart, isoflop_chart, selected_runs
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState


@st.cache_data(show_spinner=False)
def bundled_sweeps() -> list[dict]:
    """Every bundled sweep (assets/measurements/lm/sweep-*.json), newest name first."""
    out = []
    for path in sorted(SWEEPS_DIR.glob("sweep-*.json"), reverse=True):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return out


@st.cache_data(max_entries=16, show_spinner=False)
def cached_fit(points: tuple[tuple[float, float, float], ...], E: float | None = None):
    try:
        return fit_loss_surface(points, E)
    except ValueError:
        return None


def sweep_views(sweep_: dict, key: str, figure) -> None:
    """The IsoFLOP curves in `figure` (brush runs to highlight their loss curves); below, the loss curves, the fitted
    surface and the optimal frontier."""
    runs = [r for r in sweep_["runs"] if math.isfinite(r["loss"])]
    if len(runs) < 3:
        figure.info(t("lm.sweep_too_small"))
        return
    budgets = sorted({r["budget"] for r in runs})
    frontier = isoflop_frontier(runs)  # by budget: a budget with too few finite runs has no minimum
    labels = {"N": t("lm.axis.N"), "D": t("lm.axis.tokens"), "loss": t("lm.axis.val_loss"),
              "budget": t("lm.axis.budget")}
    event = charts.altair_chart(figure, isoflop_chart(runs, labels, list(frontier.values())), on_select="rerun",
                                key=f"{key}.isoflop")
    reading = sweep_reading(runs, sweep_["floor_per_token"])
    figure.caption(" ".join([t("lm.isoflop_help"), *bottoms_text(reading)]))
    left, right = st.columns(2, gap="medium")  # below the stage: each smaller than the IsoFLOP curves
    chosen = selected_runs(event, runs)
    charts.altair_chart(left, curves_chart(runs, chosen, labels), key=f"{key}.curves")
    left.caption(t("lm.curves_help", n=len(chosen)) if chosen else t("lm.curves_help_all"))
    with st.spinner(t("lm.fitting")):
        points = sweep_points(runs)
        fit = cached_fit(tuple(points))
    floor, lowest = reading.floor, reading.lowest
    c = right.columns(2) + right.columns(3)
    c[0].metric(t("lm.m.true_entropy"), f"{floor:.3f}")
    c[1].metric(t("lm.m.lowest"), f"{lowest:.3f}", delta=f"{lowest / floor - 1:+.0%}", delta_color="off")
    if fit is None:
        right.info(t("lm.fit_failed"))
        return
    c[2].metric(t("lm.m.fitted_e"), f"{fit.E:.3f}", delta=f"{fit.E / floor - 1:+.0%}", delta_color="off")
    c[3].metric("α", f"{fit.alpha:.2f}")
    c[4].metric("β", f"{fit.beta:.2f}")
    right.caption(t("lm.fit_help", a=f"{fit.A:.3g}", b=f"{fit.B:.3g}", n=len(points), steps=MIN_FIT_STEPS))
    if fit.E < 0.5 * floor:
        right.warning(e_low_text(reading, fit.E), icon=":material/info:")
    held = cached_fit(tuple(points), floor)  # the same law with E held at the known entropy
    if held is not None:
        diff = max(abs(compute_optimal(C, held)[0] / compute_optimal(C, fit)[0] - 1) for C in budgets)
        right.caption(t("lm.fit_held", floor=f"{floor:.3f}", alpha=f"{held.alpha:.2f}", beta=f"{held.beta:.2f}",
                        held=f"{held.rms_log_error(points):.3f}", free=f"{fit.rms_log_error(points):.3f}",
                        diff=f"{diff:.0%}"))
    rows = [{t("lm.axis.budget"): sci(C), t("lm.col.isoflop_n"): f"{m[0]:,.0f}",
             t("lm.col.fit_n"): f"{compute_optimal(C, fit)[0]:,.0f}",
             t("lm.col.fit_d_n"): f"{compute_optimal(C, fit)[1] / compute_optimal(C, fit)[0]:.1f}",
             **({t("lm.col.held_n"): f"{compute_optimal(C, held)[0]:,.0f}"} if held else {})}
            for C, m in frontier.items()]
    right.dataframe(pd.DataFrame(rows), hide_index=True)
    right.caption(t("lm.frontier_help"))


def bottoms_text(reading: SweepReading) -> list[str]:
    """Where each IsoFLOP curve has its lowest loss (sim.language.claims.SweepReading), in the page's words."""
    if reading.inside and not (reading.smallest or reading.largest):
        return [t("lm.bottoms.all")]
    sep = t("lm.list_sep")
    return [t(f"lm.bottoms.{where}", budgets=sep.join(f"C = {sci(C)}" for C in budgets))
            for where, budgets in (("inside", reading.inside), ("smallest", reading.smallest),
                                   ("largest", reading.largest)) if budgets]


def e_low_text(reading: SweepReading, E: float) -> str:
    """Why a fitted E far below the floor may be, with what the runs show: how many end well above the floor, and
    the lowest measured loss against it and against E."""
    floor, lowest = reading.floor, reading.lowest
    return " ".join([t("lm.fit_e_low", e=f"{E:.3f}", floor=f"{floor:.3f}"),
                     t(f"lm.fit_e_low.{reading.above_case}", above=reading.above, n=reading.runs),
                     t(f"lm.lowest.{lowest_case(reading, E)}", lowest=f"{lowest:.3f}",
                       pct=f"{abs(lowest / floor - 1):.0%}")])


def measured_section(state: PageState) -> None:
    """The chosen sweep's IsoFLOP curves: the bundled one, or the one this class runs here (beside: its language and
    the button that runs it)."""
    figure, side = state.stage()
    with side:
        which = state.widget("sweep", fold=False)
        if which == "class":
            lang = state.widget("language", fold=False)
            st.caption(t("lm.live_sweep_help", runs=len(LIVE_BUDGETS) * len(LIVE_WIDTHS)))
            run = st.button(t("lm.run_sweep"), icon=":material/science:", key="lm.run_sweep")
    shown, key = None, "lm.bundled"
    with figure:
        if which == "bundled":
            sweeps = bundled_sweeps()
            if sweeps:
                shown = sweeps[0]
                side.caption(t("lm.bundled_label", machine=shown["machine"], date=shown["date"],
                               runs=len(shown["runs"]), seconds=f"{shown['seconds']:.0f}",
                               lang=t(f"lm.language.{shown['language']}")))
            else:
                st.info(t("lm.no_bundled"))
        else:
            if run:
                run_live_sweep(lang)
            shown, key = class_sweeps().get(lang), "lm.live"
            if shown is None:
                st.info(t("lm.class_sweep_none", button=t("lm.run_sweep")), icon=":material/science:")
    st.markdown(t("lm.measured_intro"))
    if shown is not None:
        sweep_views(shown, key, figure)


@st.cache_resource(show_spinner=False)
def class_sweeps() -> dict[str, dict]:
    """The class's sweep per language, run once per app process and shown to every session (a tab pressing Run while
    another's sweep runs waits for it: sweep_lock)."""
    return {}


@st.cache_resource(show_spinner=False)
def sweep_lock() -> threading.Lock:
    return threading.Lock()


def run_live_sweep(lang: str) -> None:
    """The class's sweep of `lang`, run in this script with a progress bar, unless it has been run whole already (by
    this tab or another); the runs so far are shown if it is interrupted, and a later press runs it again."""
    total = len(LIVE_BUDGETS) * len(LIVE_WIDTHS)
    with sweep_lock():  # one sweep at a time in the process: four tabs pressing make one sweep, not four at once
        done = class_sweeps().get(lang)
        if done is not None and len(done["runs"]) == total:
            return
        text, h = synthetic_text(lang, 30_000, 0)
        task = make_task(text, "char", 0, SWEEP_CONTEXT, h)
        record = class_sweeps()[lang] = {"language": lang, "floor_per_token": task.loss_floor(), "runs": []}
        bar = st.progress(0.0, text=t("lm.sweep_progress", done=0, total=total))
        for i, run in enumerate(sweep(task, LIVE_BUDGETS, LIVE_WIDTHS), start=1):
            record["runs"].append(run_record(run))
            bar.progress(i / total, text=t("lm.sweep_progress", done=i, total=total))
