"""The optimiser lab's live runs on a real model (sim/optim/race.py): the race, one run per optimiser, and the schedules
race, one run per learning-rate schedule; both through the live-run controller (ui.player, ui.live_run)."""
import streamlit as st

from sim.optim.optimizers import NS_PRODUCTS, NS_STEPS, RACERS, SCHEDULES
from sim.plots.optimizers import fmt, race_frame
from ui import live_plots, live_run
from ui.i18n import t
from ui.player import Player
from ui.urlstate import PageState

FRAME_LABELS = ("step", "loss", "ms", "lr", "loss_title", "ms_title", "lr_title", "caption", "racer")
MODEL = ("r_data", "r_width", "r_batch", "r_wd", "r_seed")
ss = st.session_state


def frame_labels() -> dict[str, str]:
    return {k: t(f"opt.race.fig.{k}") for k in FRAME_LABELS}


def names(scheduled: bool) -> dict[str, str]:
    return {s: t(f"opt.sched.{s}") for s in SCHEDULES} if scheduled else {o: t(f"opt.r_opts.{o}") for o in RACERS}


def model_controls(state: PageState) -> None:
    c = st.columns(len(MODEL) + 1)
    for col, name in zip(c, (*MODEL, "r_speed"), strict=True):
        state.widget(name, container=col)


def config(v: dict):
    from sim.optim.race import RaceConfig

    return RaceConfig(dataset=v["r_data"], width=v["r_width"], batch=v["r_batch"], seed=v["r_seed"],
                      weight_decay=v["r_wd"])


def current_player(kind: str, want: tuple, make) -> Player | None:
    """The session's run of `kind` ("race" or "sched"): player.model is its racers, new ones when `want` changed."""
    def build() -> Player:
        from sim.core.threads import configure_threads

        configure_threads()
        racers = make()

        def step(n: int) -> None:
            for r in racers:
                r.step(n)

        return Player(step, lambda: {}, lambda: all(r.done for r in racers), model=racers)

    try:
        return live_run.current_player(f"opt.{kind}", want, build)
    except ValueError:
        st.error(t("opt.race.invalid"), icon=":material/error:")
        return ss.get(f"opt.{kind}.player")


def live_panel(kind: str, player: Player, speed: int) -> None:
    racers, scheduled = player.model, kind == "sched"
    shown = names(scheduled)
    player.speed = speed
    drawn = ("loss", "lr" if scheduled else "ms")
    player.snapshot = lambda: race_frame([r.view(drawn) for r in racers], names(scheduled), frame_labels(), scheduled)

    def stopped() -> bool:
        return all(r.done for r in racers)

    def messages() -> None:
        for r in racers:
            if r.diverged:
                st.warning(t("opt.race.diverged", name=shown[r.label], step=r.diverged_at, lr=f"{r.lr:g}"),
                           icon=":material/trending_up:")
        if stopped() and any(r.finished for r in racers):
            st.success(t("opt.race.finished", steps=max(r.steps for r in racers)), icon=":material/flag:")

    def show(frames: list[dict], seq: int, status: str) -> None:
        live_plots.show_frames(frames, key=f"opt.{kind}.view", seq=seq, status=status)

    live_run.live_view("opt.race", f"opt.{kind}", player, show, stopped, messages=messages, n=speed)
    table(kind, player, shown)


def table(kind: str, player: Player, shown: dict[str, str]) -> None:
    """Each racer's measured figures, as of this page run (while it plays, the live caption has the newest)."""
    with player.lock:
        views = [r.view(curves=()) for r in player.model]
    rows = {t("opt.race.col.name"): [shown[v["label"]] for v in views],
            t("opt.race.col.steps"): [v["steps"] for v in views],
            t("opt.race.col.loss"): [fmt(v["loss"], 4) if v["loss"] is not None else "–" for v in views],
            t("opt.race.col.ms"): [fmt(v["ms"], 3) if v["ms"] is not None else "–" for v in views],
            t("opt.race.col.update_ms"): [fmt(v["update_ms"], 3) if v["update_ms"] is not None else "–"
                                          for v in views],
            t("opt.race.col.state"): [f"{v['state_bytes']:,}" for v in views],
            t("opt.race.col.per_param"): [f"{v['state_bytes'] / v['params']:.2f}" for v in views]}
    st.dataframe(rows, hide_index=True, key=f"opt.{kind}_df")
    st.caption(t("opt.race.table_help", params=f"{views[0]['params']:,}" if views else "0"))
    counting = [v for v in views if v["counters"][0]]
    if counting:
        st.caption(t("opt.race.counters", names=t("opt.list_sep").join(shown[v["label"]] for v in counting),
                     count=sum(v["counters"][0] for v in counting), bytes=sum(v["counters"][1] for v in counting)))


def race_section(state: PageState) -> None:
    st.markdown(t("opt.race.intro"))
    with state.controls():
        opts = state.widget("r_opts")
        model_controls(state)
        state.widget("r_steps", container=st.columns(3)[0])
    if not opts:
        st.info(t("opt.none"), icon=":material/info:")
        return
    with state.controls(expander=t("opt.race.rates"), expanded=False):
        cols = st.columns(len(opts))
        for col, o in zip(cols, opts, strict=True):
            state.widget(f"r_{o}_lr", container=col, label=t("opt.race.lr", name=t(f"opt.r_opts.{o}")))
    v = state.values
    lrs = {o: v[f"r_{o}_lr"] for o in RACERS}
    want = ("race", opts, v["r_steps"], *(v[n] for n in MODEL), *(lrs[o] for o in opts), lrs["adamw"])

    def make():
        from sim.optim.race import race

        return race(opts, config(v), lrs, v["r_steps"])

    player = current_player("race", want, make)
    if player is not None:
        live_panel("race", player, v["r_speed"])
    st.markdown(t("opt.race.explain", steps=NS_STEPS, per=NS_PRODUCTS, products=NS_STEPS * NS_PRODUCTS))


def schedules_race(state: PageState, steps: int, warmup: int, floor: float, decay: float) -> None:
    """The same model trained under each schedule of the section's curves, live, side by side."""
    st.subheader(t("opt.sched.race"))
    st.markdown(t("opt.sched.race_intro"))
    with state.controls():
        c1, c2 = st.columns(2)
        opt = state.widget("s_opt", container=c1)
        lr = state.widget("s_lr", container=c2)
    with state.controls(expander=t("opt.race.model")):
        model_controls(state)
    v = state.values
    want = ("sched", opt, lr, steps, warmup, floor, decay, *(v[n] for n in MODEL))

    def make():
        from sim.optim.race import schedule_race

        return schedule_race(opt, config(v), lr, steps, warmup, floor, decay)

    player = current_player("sched", want, make)
    if player is not None:
        live_panel("sched", player, v["r_speed"])
    st.markdown(t("opt.sched.race_explain"))
