"""The attention lab's tiny transformer: its settings, its live run (sim.transformers.live.AttentionRun: one model, or
a causal and an open one in lockstep) and what it generates, each probe read from the model at the step shown."""
from collections.abc import Callable

import streamlit as st

from labs.attention.schema import SCHEMA
from labs.attention.widgets import remembered
from sim.core.live import Cursor, LiveSpec
from sim.plots.attention import live_frame, position_figure
from sim.transformers.live import AttentionRun, from_bytes
from sim.transformers.tasks import CORPORA, LETTERS, lab_task
from sim.transformers.transformer import RunView, generation_report, lab_trainer
from ui import charts, live_plots, live_run
from ui.i18n import lang, t
from ui.urlstate import PageState

MAX_TEXT = 2000  # longest training text
MAX_PROBE = 100  # longest probe input: a valid one has at most 32 characters, a longer one gets the warning
# live_lab draws a run's messages above its view; what the models generate is a few lines that would push the maps
# below the first screen, so their block (a flex item of the run's column) is laid out after the view
LABELS = ("plot.step", "plot.loss", "plot.floor", "plot.train_loss", "plot.map", "run.causal", "run.open",
          "run.causal_short", "run.open_short", "live_caption", "compare_caption", "generated", "generated_text",
          "maps_at")
ss = st.session_state


def labels() -> dict[str, str]:
    """The texts (templates) of the live frames and the generation report, in the current language."""
    return {k: t(f"att.{k}") for k in LABELS}


def model_controls(state: PageState, side, main: tuple[str, ...]) -> tuple[str, object]:
    """The task and model widgets in `side`: the `main` ones on view, then a slot for the probe's input, the rest
    folded; returns (the training text of the text task or "", the probe's slot)."""
    with side:
        for name in main:
            state.widget(name, fold=False)
        probe = st.container()  # beside the maps it sets, above the folded settings
        task = state.values["task"]
        with state.more(side):
            for name in ("context" if task == "text" else "length", "layers", "t_heads", "width", "lr", "pos",
                         "speed", "t_seed"):
                if name not in main:
                    state.widget(name)
            if task != "text":
                return "", probe
            corpus = state.widget("corpus")
            return remembered(st.text_area, "att.train_text", corpus, CORPORA[corpus], label=t("att.train_text"),
                              max_chars=MAX_TEXT, height=90), probe


# ---------- the run ----------
def run_task(kind: str, v: dict, text: str):
    """The task of the run of `kind` ("train" or "compare": every token scored); ValueError("invalid:...") on bad
    input (a training text too short for the context)."""
    return lab_task(v["task"], v["length"], v["context"], text, score_prompt=kind == "compare")


def live_spec(kind: str, v: dict, text: str) -> LiveSpec:
    """The run of `kind` for these settings (its build raises ValueError on bad input); sessions with equal settings
    share one. A step: an optimizer step of every model; `speed` steps a frame."""
    v = dict(v)
    causal = (v["causal"],) if kind == "train" else (True, False)
    data = ("context", v["context"], text) if v["task"] == "text" else ("length", v["length"])

    def build() -> AttentionRun:
        task = run_task(kind, v, text)
        return AttentionRun([lab_trainer(task, v["layers"], v["t_heads"], v["width"], v["lr"], v["t_seed"], c,
                                         v["pos"]) for c in causal])

    settings = (kind, causal, v["task"], *data, *(v[n] for n in ("layers", "t_heads", "width", "lr", "t_seed", "pos")))
    return LiveSpec(f"att.{kind}", settings, build, speed=v["speed"])


def drawn(kind: str, frame: dict, lab: dict, probe_maps: tuple | None = None) -> dict:
    """A run's frame (AttentionRun.frame, with its "step", "run", "n") as the live view draws it, in the page's
    language (lab: labels()). probe_maps: (probe, maps per model, the step they are of) drawn instead of the frame's
    maps of the default probe (the session typed its own)."""
    probe, maps, at = probe_maps or (frame["probe"], [r["maps"] for r in frame["runs"]], frame["step"])
    runs = [RunView(causal=r["causal"], steps=frame["steps"], recent_loss=r["recent"],
                    curve=(r["curve"][0].tolist(), r["curve"][1].tolist()), maps=list(from_bytes(m)),
                    tokens=list(probe)[-m.shape[-1]:], floor=frame["floor"])
            for r, m in zip(frame["runs"], maps, strict=True)]
    view = live_frame(kind, runs, lab)
    if at != frame["step"]:  # while playing, the session's probe is read at the newest checkpoint shown
        view["caption"] += lab["maps_at"].format(step=at)
    return {**view, "step": frame["step"], "run": frame["run"], "n": frame["n"]}


def probe_maps(cursor: Cursor, frame: dict, probe: str, playing: bool) -> tuple | None:
    """The maps of the session's probe for a frame, when it is not the frame's own: the model at the cursor's step
    (paused), else the newest checkpoint at or before the frame's step (no replay while playing)."""
    if probe == frame["probe"]:
        return None
    if not playing and frame["step"] == cursor.pos:
        with cursor.model() as run:
            return probe, run.maps(probe), frame["step"]
    with cursor.traj.model_near(frame["step"]) as (step, run):
        return probe, run.maps(probe), step


def probe_text(task, container) -> tuple[str, str]:
    """(the text whose attention maps are drawn, the prompt to generate from), from the user's probe input (drawn in
    `container`)."""
    if task.name == "text":
        raw = container.text_input(t("att.probe_text", n=task.length), value=task.default_probe(),
                                   key="att.probe_text", max_chars=MAX_PROBE)
        warning = t("att.bad_probe_text", n=task.length)
    else:
        raw = container.text_input(t("att.probe", n=task.length, letters=LETTERS), value=task.default_probe(),
                                   key=f"att.probe.{task.name}.{task.length}", max_chars=MAX_PROBE)
        warning = t("att.bad_probe", n=task.length, letters=LETTERS)
    probe, prompt, ok = task.read_probe(raw)
    if not ok:
        container.warning(warning)
    return probe, prompt


def live_panel(kind: str, v: dict, text: str, probe: str, prompt: str, failed: bool) -> Cursor | None:
    """The run of these settings trained live, its maps of the probe and what it generates from the prompt at the
    step shown; `failed`: the settings were refused (already said)."""
    spec = live_spec(kind, v, text)

    def messages(cursor: Cursor) -> None:
        if cursor.stopped and cursor.error is None:
            st.error(t("att.diverged", lr=v["lr"]))

    def report(cursor: Cursor) -> None:
        """Under the view: what the models generate at the step shown (a few hundred forward passes, done once per
        step). Paused only: while the view plays on its own channel, this rerun would print another step's."""
        if cursor.playing:
            st.caption(t("att.playing"))
            return
        key = f"att.{kind}.report"
        at = (cursor.serial, cursor.pos, prompt, lang())
        if ss.get(f"{key}.at") != at:
            with cursor.model() as run:  # the model at the step shown
                ss[key] = generation_report(run.trainers, prompt, labels())
            ss[f"{key}.at"] = at
        for line in ss[key]:
            st.caption(line)

    def show(frames: list[dict], seq: int, status: str, cursor: Cursor) -> None:
        lab, playing = labels(), status == "playing"
        if not playing and probe != frames[-1]["probe"]:
            frames = frames[-1:]  # after a Step: the step shown, whose maps are read from the model at that step
        if all(probe == f["probe"] for f in frames):  # the frames' own maps: drawn once for every session
            out = live_run.drawn_once(spec, frames, lambda f: drawn(kind, f, lab, None))
        else:
            out = [drawn(kind, f, lab, probe_maps(cursor, f, probe, playing)) for f in frames]
        live_plots.show_frames(out, key=f"att.{kind}.view", seq=seq,
                               status="diverged" if status == "stopped" else status)

    def refused(e: BaseException) -> None:
        if not failed:
            st.error(invalid(e, v))

    return live_run.live_lab(spec, show, prefix="att", bad_settings=refused, messages=messages, below=report,
                             n=v["speed"])


def invalid(e: BaseException, v: dict) -> str:
    return t(f"att.invalid.{str(e).removeprefix('invalid:')}", n=v["context"] + 2)


def trained_panel(kind: str, state: PageState, text: str, figure, probe) -> tuple[Cursor, str] | None:
    """The live panel of the run of `kind` for these settings in `figure`, the probe's input in `probe`; its cursor
    and the text whose maps it draws, None when no run could be built. Bad settings keep the session's run (and its
    task, for the probe input) with a message."""
    v = dict(state.values)
    failed = False
    try:
        task = run_task(kind, v, text)
    except ValueError as e:
        figure.error(invalid(e, v))
        task, failed = ss.get(f"att.{kind}.task"), True  # the run the session keeps
        if task is None:
            return None
    else:
        ss[f"att.{kind}.task"] = task
    shown, prompt = probe_text(task, probe)
    with figure:
        cursor = live_panel(kind, v, text, shown, prompt, failed)
    return None if cursor is None else (cursor, shown)


def position_panel(cursor: Cursor) -> None:
    """The position vectors the (first) model adds to its tokens at the step shown: the fixed sinusoidal table or the
    learned one, drawn only while its fold is open (a closed fold's chart is still laid out, as large as the live
    view). The learned ones change every step: while the view plays on past the cursor's step, they wait."""
    with cursor.model() as run:
        trainer = run.trainers[0]
        pos, table = trainer.config.pos, trainer.position_table()
    box = st.expander(t(f"att.pos_table.{pos}"), key="att.pos_table_open", on_change="rerun")
    with box:
        if pos == "learned" and cursor.playing:
            st.caption(t("att.pos_table_playing"))
            return
        if box.open:
            charts.plotly_chart(st, position_figure(table, t("att.pos_table_title")), key="att.fig.pos_table")
        st.caption(t(f"att.pos_table_help.{pos}"))


def train_section(state: PageState) -> None:
    figure, side = state.stage()
    text, probe = model_controls(state, side, ("task", "causal", "lr"))
    if panel := trained_panel("train", state, text, figure, probe):
        figure.caption(t("att.train_help"))
    st.markdown(t("att.train_intro"))
    st.markdown(t("att.model_desc", pos=t(f"att.pos_name.{state.values['pos']}")))
    if panel:
        position_panel(panel[0])


def bench_spec(seed: int | None = None, kind: str = "train") -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The lab's default run of `kind` (seed: another training seed) and what a playing page does with its frames
    (the default probe's maps, in the frames), for benchmarks/classroom.py."""
    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["t_seed"] = seed
    text = CORPORA[v["corpus"]] if v["task"] == "text" else ""
    spec = live_spec(kind, v, text)
    return spec, lambda frames: live_run.drawn_once(spec, frames, lambda f: drawn(kind, f, labels()))
