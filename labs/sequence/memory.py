"""The sequence-models lab's live race (an RNN, an LSTM, a causal transformer and Mamba on the same memory task,
sim.sequence.live.MemoryRun) and the "why" section that reads the same run at this session's step."""
import math
from collections.abc import Callable

import streamlit as st

from labs.sequence.schema import SCHEMA
from sim.core.live import Cursor, LiveSpec
from sim.plots.sequence import gates_figure, gradient_figure, memory_frame
from sim.sequence.claims import key_to_query, mean_beyond, outcomes, read_gates, verdicts, window_case
from sim.sequence.live import memory_run, window_run
from sim.sequence.memory import HOLDS, KINDS, gradients_through_time, lstm_gates
from ui import charts, live_plots, live_run
from ui.i18n import t
from ui.urlstate import PageState

KEY = "seq.memory"
FRAME_LABELS = ("step", "loss", "accuracy", "distance", "loss_title", "acc_title", "dist_title", "chance", "caption",
                "reach")
SETTINGS = ("m_distance", "m_hidden", "m_lr", "m_seed")
WINDOW_KEY = "seq.window"
WINDOW_SETTINGS = ("w_distance", "w_window", "w_layers", "w_seed")


def memory_spec(v: dict) -> LiveSpec:
    """The race of these settings; a step is one model's optimizer step, a tick `speed` of them, and Step trains
    every model `speed` steps."""
    v = dict(v)

    def build():
        return memory_run(v["m_distance"], v["m_hidden"], v["m_lr"], v["m_seed"])

    return LiveSpec(KEY, tuple(v[n] for n in SETTINGS), build, speed=v["m_speed"],
                    step_size=v["m_speed"] * len(KINDS))


def name(kind: str) -> str:
    return str(t(f"seq.model.{kind}"))


def frame_labels() -> dict[str, str]:
    return {k: str(t(f"seq.fig.{k}")) for k in FRAME_LABELS}


def drawn(frame: dict, labels: dict, guide: tuple[int, str] | None = None) -> dict:
    """A MemoryRun frame (with its "step", "run", "n") as the live view draws it, in the page's language; guide:
    (distance, label) of a dashed line on the accuracy-by-distance panel."""
    runs = [{**r, "name": name(r["kind"])} for r in frame["runs"]]
    return {**memory_frame(runs, frame["distance"], 1 / frame["keys"], labels, guide), "step": frame["step"],
            "run": frame["run"], "n": frame["n"]}


def show_view(spec: LiveSpec, guide: tuple[int, str] | None = None) -> live_run.Show:
    labels = frame_labels()
    return live_plots.frames_view(spec, lambda f: drawn(f, labels, guide))


def race_controls(state: PageState, side) -> None:
    """The race's settings in the stage's side column: distance, state size and learning rate on view, the rest
    folded."""
    with side:
        for n in ("m_distance", "m_hidden", "m_lr"):
            state.widget(n, fold=False)
        with state.more(side):
            for n in ("m_speed", "m_seed"):
                state.widget(n)


def race(state: PageState) -> Cursor | None:
    """The race's live view (its Play/Step/Reset bar above it); the memory and why sections show the same run."""
    v = state.values

    def messages(cursor: Cursor) -> None:
        for r in cursor.frame()["runs"]:
            if r["diverged"]:
                st.error(t("seq.diverged", name=name(r["kind"]), step=r["steps"]))

    spec = memory_spec(v)
    return live_run.live_lab(spec, show_view(spec), prefix="seq", messages=messages,
                             bad_settings=lambda e: st.error(t("seq.bad_settings")), n=v["m_speed"])


def window_spec(v: dict) -> LiveSpec:
    """Full attention against the window-masked transformer (sim.sequence.live.window_run) of these settings; a tick
    `w_speed` steps in turn, Step every model `w_speed` steps."""
    v = dict(v)

    def build():
        return window_run(v["w_distance"], v["w_window"], v["w_layers"], v["w_seed"])

    return LiveSpec(WINDOW_KEY, tuple(v[n] for n in WINDOW_SETTINGS), build, speed=v["w_speed"],
                    step_size=v["w_speed"] * 2)


def window_reach(v: dict) -> int:
    """How far back the last position can read through the causal window after the layers: layers × window."""
    return v["w_layers"] * v["w_window"]


def trained_window(state: PageState) -> None:
    """The sparse section's trained part: full and window attention learning the memory task, live."""
    st.subheader(t("seq.win.title"))
    st.markdown(t("seq.win.intro"))
    with state.controls():
        names = ("w_distance", "w_window", "w_layers", "w_speed", "w_seed")
        for col, n in zip(st.columns(len(names)), names, strict=True):
            state.widget(n, container=col)
    v = state.values
    if v["w_window"] > v["w_distance"]:
        st.warning(t("seq.win.too_wide", w=v["w_window"], D=v["w_distance"]))
        return
    spec = window_spec(v)
    field = window_reach(v)
    guide = (min(field, v["w_distance"]), str(t("seq.win.guide", reach=field)))

    def messages(cursor: Cursor) -> None:
        for r in cursor.frame()["runs"]:
            if r["diverged"]:
                st.error(t("seq.diverged", name=name(r["kind"]), step=r["steps"]))

    cursor = live_run.live_lab(spec, show_view(spec, guide), prefix="seq", messages=messages,
                               bad_settings=lambda e: st.error(t("seq.bad_settings")), n=v["w_speed"])
    if cursor is None:
        return
    if cursor.playing:  # what follows is read at the cursor's step, which the view on screen has left behind
        st.caption(t("seq.playing"))
        return
    f = cursor.frame()
    runs = {r["kind"]: r for r in f["runs"]}
    D = f["distance"]
    st.markdown(t("seq.win.explain", L=v["w_layers"], w=v["w_window"], field=field, D=D,
                  steps=min(r["steps"] for r in f["runs"]), full=runs["attn"]["reach"],
                  window=runs["window"]["reach"], holds=f"{HOLDS:.0%}"))
    st.markdown(t(f"seq.win.{window_case(field, D)}", field=field, D=D, chance=f"{1 / f['keys']:.0%}",
                  beyond=_pct(mean_beyond(runs["window"]["by_distance"], field))))


def memory_section(state: PageState) -> None:
    figure, side = state.stage()
    race_controls(state, side)
    with figure:
        cursor = race(state)
    st.markdown(t("seq.mem.intro"))
    if cursor is None:
        return
    if cursor.playing:  # the view's header says how far each model holds at the step it draws
        st.caption(t("seq.playing"))
        return
    f = cursor.frame()
    reach = {r["kind"]: r["reach"] for r in f["runs"]}
    holds = f"{HOLDS:.0%}"
    st.markdown(t("seq.mem.explain", D=f["distance"], keys=f["keys"], chance=f"{1 / f['keys']:.0%}",
                  holds=holds, rnn=reach["rnn"], lstm=reach["lstm"], attn=reach["attn"], mamba=reach["mamba"],
                  steps=min(r["steps"] for r in f["runs"])))
    st.markdown("\n".join(f"- {t(f'seq.mem.{case}', D=f['distance'], holds=holds, names=[name(k) for k in kinds])}"
                          for case, kinds in outcomes(reach, f["distance"]).items()))
    st.markdown(t("seq.mem.how"))


def why_section(state: PageState) -> None:
    """The gradients through time of the race's models at this session's step: the stage's figure, the race's live
    view (whose Step moves them on) under it, the LSTM's gates below the stage."""
    figure, side = state.stage()
    race_controls(state, side)
    with figure:
        top = st.container()  # the gradients, drawn once the race below them gives the cursor's step
        cursor = race(state)
    st.markdown(t("seq.why.intro"))
    if cursor is None:
        return
    if cursor.playing:  # measured on the model at the cursor's step, which the view on screen has left behind
        top.caption(t("seq.playing"))
        return
    step = cursor.pos
    grads = cursor.memo(("grads",), lambda run: {k: gradients_through_time(run.trainer(k)) for k in KINDS})
    tokens, gates, key_at = cursor.memo(("gates",), lambda run: lstm_gates(run.trainer("lstm")))
    T, f = len(tokens), cursor.frame()
    fig = gradient_figure({k: (name(k), g) for k, g in grads.items()}, key_at,
                          {k: str(t(f"seq.why.fig.{k}")) for k in ("title", "position", "norm", "key")})
    with top:
        charts.plotly_chart(st, fig, key="seq.why.grads")
        st.caption(t("seq.why.at_step", step=step, per_model=step // len(KINDS)))
    ratio = {k: key_to_query(g, key_at) for k, g in grads.items()}
    st.markdown(t("seq.why.explain", T=T, d=T - 1 - key_at, **{k: f"{r:.1e}" for k, r in ratio.items()}))
    st.markdown("\n".join(f"- {t(f'seq.why.grad.{v}', names=[name(k) for k in kinds])}"
                          for v, kinds in verdicts(ratio).items()))
    st.markdown(t("seq.why.how"))
    labels = {g: str(t(f"seq.why.gate.{g}")) for g in gates} | {k: str(t(f"seq.why.fig.{k}"))
                                                                for k in ("position", "unit")}
    left, right = st.columns([3, 1], gap="medium")  # below the stage: the gates shorter than the gradients
    charts.plotly_chart(left, gates_figure(gates, key_at, labels), key="seq.why.gates")
    lstm = next(r for r in f["runs"] if r["kind"] == "lstm")
    g = read_gates(gates, key_at, float(lstm["by_distance"][T - 2 - key_at]))
    right.markdown(t(f"seq.why.gates.{g.case}", d=g.d, units=g.units, carriers=g.carriers, best=f"{g.best:.2f}",
                     forget=f"{g.forget:.2f}", forget_carry=f"{g.forget_carry:.2f}",
                     forget_rest=f"{g.forget_rest:.2f}", acc=_pct(g.accuracy), holds=f"{HOLDS:.0%}",
                     chance=f"{1 / f['keys']:.0%}") + " "
                   + t(f"seq.why.input.{g.opening}", input_key=f"{g.input_key:.2f}", input_rest=f"{g.input_rest:.2f}"))


def _pct(x: float) -> str:
    """A share as a percentage; a dash where there is none yet (NaN)."""
    return f"{x:.0%}" if math.isfinite(x) else "–"


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The section's default run (seed: another training seed) and what a playing page does with its frames, for
    benchmarks/classroom.py."""
    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["m_seed"] = seed
    spec = memory_spec(v)
    return spec, lambda frames: live_run.drawn_once(spec, frames, lambda f: drawn(f, frame_labels()))
