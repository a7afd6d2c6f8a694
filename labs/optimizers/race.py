"""The optimiser lab's live runs on a real model (sim/optim/race.py): the race, one racer per optimiser, and what it
shares with the schedules race (labs/optimizers/sched_race.py, one racer per learning-rate schedule): each is one live
run (sim.optim.race.RaceRun: every racer stepped together) shared by the sessions with the same settings
(ui.live_run.live_lab), drawn in the page's language, with its racers' table read at the cursor's step."""
from collections.abc import Callable

import streamlit as st

from labs.optimizers.schema import SCHEMA
from sim.core.live import Cursor, LiveSpec
from sim.optim.claims import DOWN, muon_against_adam, standing
from sim.optim.optimizers import NS_PRODUCTS, NS_STEPS, RACERS, SCHEDULES
from sim.plots.optimizers import fmt, race_frame
from ui import live_plots, live_run
from ui.i18n import t
from ui.urlstate import PageState

FRAME_LABELS = ("step", "loss", "ms", "lr", "loss_title", "ms_title", "lr_title", "caption", "racer")
MODEL = ("r_data", "r_width", "r_batch", "r_wd", "r_seed")
CURVES = {"race": ("loss", "ms"), "sched": ("loss", "lr")}  # what each kind's frames carry and draw


def frame_labels() -> dict[str, str]:
    return {k: t(f"opt.race.fig.{k}") for k in FRAME_LABELS}


def names(scheduled: bool) -> dict[str, str]:
    return {s: t(f"opt.sched.{s}") for s in SCHEDULES} if scheduled else {o: t(f"opt.r_opts.{o}") for o in RACERS}


def model_controls(state: PageState, names: tuple[str, ...] = (*MODEL, "r_speed"), across: bool = True) -> None:
    """The model's (and the pace's) widgets: side by side, or one under another in a narrow column."""
    for col, name in zip(st.columns(len(names)) if across else [st] * len(names), names, strict=True):
        state.widget(name, container=col)


def config(v: dict):
    from sim.optim.race import RaceConfig

    return RaceConfig(dataset=v["r_data"], width=v["r_width"], batch=v["r_batch"], seed=v["r_seed"],
                      weight_decay=v["r_wd"])


def live_spec(kind: str, settings: tuple, make: Callable[[], list], speed: int) -> LiveSpec:
    """The run of `kind` ("race" or "sched") for these settings: the racers make() builds (it raises ValueError on
    settings that cannot build the model), stepped together; sessions with equal settings share one."""
    def build():
        from sim.core.threads import configure_threads
        from sim.optim.race import RaceRun

        configure_threads()
        return RaceRun(make(), CURVES[kind])

    return LiveSpec(f"opt.{kind}", (kind, *settings), build, speed=speed)


def race_spec(v: dict, opts: tuple) -> LiveSpec:
    """The race of these optimisers at the page's settings `v`."""
    v = dict(v)  # as they are now: the build runs later, once
    lrs = {o: v[f"r_{o}_lr"] for o in RACERS}

    def make():
        from sim.optim.race import race

        return race(opts, config(v), lrs, v["r_steps"])

    settings = (tuple(opts), v["r_steps"], *(v[n] for n in MODEL), *(lrs[o] for o in opts), lrs["adamw"])
    return live_spec("race", settings, make, v["r_speed"])


def drawn(frame: dict, scheduled: bool, shown: dict[str, str], labels: dict) -> dict:
    """A run's frame (sim.optim.race.RaceRun.frame) as the live plots draw it, in the page's language."""
    return {**race_frame(frame["racers"], shown, labels, scheduled), "step": frame["step"], "run": frame["run"],
            "n": frame["n"]}


def ended(racer: dict) -> bool:
    return racer["diverged_at"] is not None or racer["finished"]


def live_panel(kind: str, spec: LiveSpec, figure=None) -> Cursor | None:
    """The run of `spec`, live (in `figure`, a container, when given), with what it says of its racers; then their
    table (read at the cursor's step) below."""
    scheduled = kind == "sched"
    shown = names(scheduled)

    def messages(cursor: Cursor) -> None:
        racers = cursor.frame()["racers"]  # the frame at the step shown
        for r in racers:
            if r["diverged_at"] is not None:
                st.warning(t("opt.race.diverged", name=shown[r["label"]], step=r["diverged_at"], lr=f"{r['lr']:g}"),
                           icon=":material/trending_up:")
        if racers and all(ended(r) for r in racers) and any(r["finished"] for r in racers):
            st.success(t("opt.race.finished", steps=max(r["steps"] for r in racers)), icon=":material/flag:")

    labels = frame_labels()
    show = live_plots.frames_view(spec, lambda f: drawn(f, scheduled, shown, labels))

    def invalid(_: BaseException) -> None:
        st.error(t("opt.race.invalid"), icon=":material/error:")

    with figure if figure is not None else st.container():
        cursor = live_run.live_lab(spec, show, prefix="opt.race", bad_settings=invalid, messages=messages,
                                   n=spec.speed)
    if cursor is not None:
        table(kind, cursor, shown)
    return cursor


def table(kind: str, cursor: Cursor, shown: dict[str, str]) -> None:
    """Each racer's measured figures at the cursor's step and what they show, paused only: while the run plays on
    the view's own channel the page is not rerun, and they would stay beside frames of later steps (the live caption
    has the newest losses and times)."""
    if cursor.playing:
        st.caption(t("opt.race.playing"))
        return
    with cursor.model() as run:  # the racers at the step shown (a replayed copy when the run is ahead)
        views = [r.view(curves=()) for r in run.racers]
    rows = {t("opt.race.col.name"): [shown[v["label"]] for v in views],
            t("opt.race.col.steps"): [v["steps"] for v in views],
            t("opt.race.col.loss"): [fmt(v["loss"], 4) if v["loss"] is not None else "–" for v in views],
            t("opt.race.col.ms"): [fmt(v["ms"], 3) if v["ms"] is not None else "–" for v in views],
            t("opt.race.col.update_ms"): [fmt(v["update_ms"], 3) if v["update_ms"] is not None else "–"
                                          for v in views],
            t("opt.race.col.state"): [f"{v['state_bytes']:,}" for v in views],
            t("opt.race.col.per_param"): [f"{v['state_bytes'] / v['params']:.2f}" for v in views]}
    left, right = st.columns(2, gap="medium")  # below the stage: narrower than its figure
    # as tall as its rows (35 px each, the header's too): no empty grid under them, which was taller than the figure
    left.dataframe(rows, hide_index=True, key=f"opt.{kind}_df", height=(len(views) + 1) * 35 + 3)
    right.caption(t("opt.race.table_help", params=f"{views[0]['params']:,}" if views else "0"))
    counting = [v for v in views if v["counters"][0]]
    if counting:
        right.caption(t("opt.race.counters", names=t("opt.list_sep").join(shown[v["label"]] for v in counting),
                     count=sum(v["counters"][0] for v in counting), bytes=sum(v["counters"][1] for v in counting)))
    if any(v["steps"] for v in views):  # at step 0 every racer is at its start
        left.markdown(" ".join(standing_text(views, shown)))


def standing_text(views: list[dict], shown: dict[str, str]) -> list[str]:
    """What the table's numbers show (sim.optim.claims): the racers ranked by loss, which of them have brought it
    below half its start; in the race, Muon + AdamW's step time and state against Adam's."""
    sep = t("opt.list_sep")
    s = standing(views)
    by = {v["label"]: v for v in views}
    out = [t("opt.race.now.rank", step=max(v["steps"] for v in views),
             ranking=sep.join(f"{shown[x]} {fmt(by[x]['loss'], 3)}" for x in s.ranking))] if s.ranking else []
    for case, group in (("down", s.down), ("flat", s.flat)):
        if group:
            out.append(t(f"opt.race.now.{case}", names=sep.join(shown[x] for x in group), share=f"{DOWN:.0%}"))
    cases = muon_against_adam(views)
    if cases is not None:
        muon, adam = by["muon"], by["adam"]
        out.append(t(f"opt.race.muon_time.{cases['time']}", muon=fmt(muon["ms"], 3), adam=fmt(adam["ms"], 3)))
        out.append(t(f"opt.race.muon_state.{cases['state']}", muon=f"{muon['state_bytes']:,}",
                     adam=f"{adam['state_bytes']:,}"))
    return out


def race_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        opts = state.widget("r_opts", fold=False)
        for name in ("r_data", "r_steps"):
            state.widget(name, fold=False)
        with state.more(side):
            model_controls(state, tuple(n for n in (*MODEL, "r_speed") if n != "r_data"), across=False)
            for o in opts:
                state.widget(f"r_{o}_lr", label=t("opt.race.lr", name=t(f"opt.r_opts.{o}")))
    if not opts:
        figure.info(t("opt.none"), icon=":material/info:")
        return
    live_panel("race", race_spec(state.values, tuple(opts)), figure)
    st.markdown(t("opt.race.intro"))
    st.markdown(t("opt.race.explain", steps=NS_STEPS, per=NS_PRODUCTS, products=NS_STEPS * NS_PRODUCTS))


def defaults(seed: int | None) -> dict:
    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["r_seed"] = seed
    return v


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The race at the lab's default settings (seed: another seed of the data, the weights and the batches) and what
    a playing page does with its frames, for benchmarks/classroom.py (--lab optimizers_race; the schedules race:
    labs/optimizers/sched_race.py)."""
    v = defaults(seed)
    labels, shown = frame_labels(), names(False)
    spec = race_spec(v, tuple(v["r_opts"]))
    return spec, lambda frames: live_run.drawn_once(spec, frames, lambda f: drawn(f, False, shown, labels))
