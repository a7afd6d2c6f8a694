"""The attention lab's tiny transformer: its settings, its live run(s) and what they generate (train, compare)."""
import time

import streamlit as st

from labs.attention.widgets import remembered
from sim.plots.attention import live_frame, position_figure
from sim.transformers.tasks import CORPORA, LETTERS, lab_task
from sim.transformers.transformer import LMTrainer, generation_report, lab_trainer
from ui import charts, live_plots, live_run
from ui.i18n import t
from ui.player import Player
from ui.urlstate import PageState

REPORT_S = 2.0  # while playing, what the models generate is redone at most this often
MAX_TEXT = 2000  # longest training text
LABELS = ("plot.step", "plot.loss", "plot.floor", "plot.train_loss", "plot.map", "run.causal", "run.open",
          "run.causal_short", "run.open_short", "live_caption", "compare_caption", "generated", "generated_text")
ss = st.session_state


def labels() -> dict[str, str]:
    """The texts (templates) of the live frames and the generation report, in the current language."""
    return {k: t(f"att.{k}") for k in LABELS}


def model_controls(state: PageState) -> str:
    """The task and model widgets; returns the training text (text task) or ""."""
    with state.controls():
        c = st.columns(5)
        task = state.widget("task", container=c[0])
        for col, name in zip(c[1:], ("layers", "t_heads", "width", "lr"), strict=True):
            state.widget(name, container=col)
        c = st.columns(4)
        state.widget("context" if task == "text" else "length", container=c[0])
        state.widget("speed", container=c[1])
        state.widget("t_seed", container=c[2])
        state.widget("pos", container=c[3])
        if task != "text":
            return ""
        corpus = state.widget("corpus")
        return remembered(st.text_area, "att.train_text", corpus, CORPORA[corpus], label=t("att.train_text"),
                          max_chars=MAX_TEXT, height=90)


def current_player(kind: str, v: dict, text: str) -> Player | None:
    """The session's run of this kind (player.model: its trainers, one, or with and without the mask); new ones
    when the settings changed, the old ones on bad input."""
    runs = (v["causal"],) if kind == "train" else (True, False)
    want = (kind, text, runs, *(v[n] for n in ("task", "length", "context", "layers", "t_heads", "width", "lr",
                                               "t_seed", "pos")))

    def build() -> Player:
        task = lab_task(v["task"], v["length"], v["context"], text, score_prompt=kind == "compare")
        trainers = [lab_trainer(task, v["layers"], v["t_heads"], v["width"], v["lr"], v["t_seed"], causal, v["pos"])
                    for causal in runs]

        def step(n: int) -> None:
            for tr in trainers:
                tr.step(n)

        return Player(step, lambda: {}, lambda: any(tr.diverged for tr in trainers), model=trainers)

    try:
        player = live_run.current_player(f"att.{kind}", want, build)
    except ValueError as e:
        code = str(e).removeprefix("invalid:")
        st.error(t(f"att.invalid.{code}", n=v["context"] + 2))
        return ss.get(f"att.{kind}.player")
    player.speed = v["speed"]
    return player


def probe_text(task) -> tuple[str, str]:
    """(the text whose attention maps are drawn, the prompt to generate from), from the user's probe input."""
    if task.name == "text":
        raw = st.text_input(t("att.probe_text", n=task.length), value=task.default_probe(), key="att.probe_text")
        warning = t("att.bad_probe_text", n=task.length)
    else:
        raw = st.text_input(t("att.probe", n=task.length, letters=LETTERS), value=task.default_probe(),
                            key=f"att.probe.{task.name}.{task.length}")
        warning = t("att.bad_probe", n=task.length, letters=LETTERS)
    probe, prompt, ok = task.read_probe(raw)
    if not ok:
        st.warning(warning)
    return probe, prompt


def live_panel(kind: str, player: Player, probe: str, prompt: str) -> None:
    trainers: list[LMTrainer] = player.model
    # the probe text may change without the model changing
    player.snapshot = lambda: live_frame(kind, [tr.view(probe) for tr in trainers], labels())

    def diverged() -> bool:
        return any(tr.diverged for tr in trainers)

    def messages() -> None:
        if diverged():
            st.error(t("att.diverged", lr=trainers[0].lr))
        # what the models generate: a few hundred forward passes, so while playing at most every REPORT_S
        key = f"att.{kind}.report"
        if not player.playing or time.monotonic() - ss.get(f"{key}_at", 0.0) > REPORT_S or key not in ss:
            with player.lock:
                ss[key], ss[f"{key}_at"] = generation_report(trainers, prompt, labels()), time.monotonic()
        for line in ss[key]:
            st.markdown(line)

    def show(frames: list[dict], seq: int, status: str) -> None:
        live_plots.show_frames(frames, key=f"att.{kind}.view", seq=seq,
                               status="diverged" if status == "stopped" else status)

    live_run.live_view("att", f"att.{kind}", player, show, diverged, messages=messages, n=player.speed)


def trained_panel(kind: str, state: PageState, text: str) -> Player | None:
    """The live panel of the run(s) of `kind` for these settings; their player, None when they could not be built."""
    player = current_player(kind, state.values, text)
    if player is not None:
        live_panel(kind, player, *probe_text(player.model[0].task))
    return player


def position_panel(player: Player) -> None:
    """The position vectors the (first) model adds to its tokens: the fixed sinusoidal table or the learned one."""
    trainer: LMTrainer = player.model[0]
    with st.expander(t(f"att.pos_table.{trainer.config.pos}")):
        with player.lock:
            table = trainer.position_table()
        charts.plotly_chart(st, position_figure(table, t("att.pos_table_title")), key="att.fig.pos_table")
        st.caption(t(f"att.pos_table_help.{trainer.config.pos}"))


def train_section(state: PageState) -> None:
    st.markdown(t("att.train_intro"))
    st.markdown(t("att.model_desc", pos=t(f"att.pos_name.{state.values['pos']}")))
    text = model_controls(state)
    state.widget("causal")
    if player := trained_panel("train", state, text):
        st.caption(t("att.train_help"))
        position_panel(player)


def compare_section(state: PageState) -> None:
    st.markdown(t("att.compare_intro"))
    with state.controls(expander=t("att.compare_settings")):
        text = model_controls(state)
    if trained_panel("compare", state, text) is not None:
        st.markdown(t("att.compare_explain"))
