"""The optimiser lab's schedules race: the same model trained with one optimiser under each learning-rate schedule
of the schedules section's curves, live, side by side (one live run: labs/optimizers/race.py)."""
from collections.abc import Callable

import streamlit as st

from labs.optimizers.race import (
    MODEL,
    config,
    defaults,
    drawn,
    frame_labels,
    live_panel,
    live_spec,
    model_controls,
    names,
)
from sim.core.live import LiveSpec
from ui import live_run
from ui.i18n import t
from ui.urlstate import PageState


def sched_spec(v: dict, steps: int, warmup: int, floor: float, decay: float) -> LiveSpec:
    """The schedules race: the optimiser s_opt at peak rate s_lr under each schedule of these curves."""
    v = dict(v)  # as they are now: the build runs later, once
    def make():
        from sim.optim.race import schedule_race

        return schedule_race(v["s_opt"], config(v), v["s_lr"], steps, warmup, floor, decay)

    settings = (v["s_opt"], v["s_lr"], steps, warmup, floor, decay, *(v[n] for n in MODEL))
    return live_spec("sched", settings, make, v["r_speed"])


def schedules_race(state: PageState, steps: int, warmup: int, floor: float, decay: float, held: int) -> None:
    """The same model trained under each schedule of the section's curves, live, side by side; held: the last step
    at which warmup–stable–decay's curve is at its peak."""
    st.subheader(t("opt.sched.race"))
    st.markdown(t("opt.sched.race_intro"))
    with state.controls():
        c1, c2 = st.columns(2)
        opt = state.widget("s_opt", container=c1)
        lr = state.widget("s_lr", container=c2)
    with state.controls(expander=t("opt.race.model")):
        model_controls(state)
    live_panel("sched", sched_spec({**state.values, "s_opt": opt, "s_lr": lr}, steps, warmup, floor, decay))
    st.markdown(t("opt.sched.race_explain", held=held, share=f"{held / steps:.0%}"))


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The schedules race at the lab's default settings (seed: another seed of the data, the weights and the batches)
    and what a playing page does with its frames, for benchmarks/classroom.py (--lab optimizers_sched)."""
    v = defaults(seed)
    steps = v["s_steps"]
    spec = sched_spec(v, steps, min(v["s_warmup"], steps - 1), v["s_floor"], v["s_decay"])
    labels, shown = frame_labels(), names(True)
    return spec, lambda frames: live_run.drawn_once(spec, frames, lambda f: drawn(f, True, shown, labels))
