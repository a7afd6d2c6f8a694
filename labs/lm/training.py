"""The language-model lab's tiny GPT: its live run, what it samples, its next-token distribution for a prompt and
its per-token loss on a validation passage (an Altair view: click a token to see what the model expected next)."""
import math
import time
from collections.abc import Callable

import streamlit as st

from labs.lm.schema import SCHEMA
from labs.lm.text import synthetic_note, text_source
from sim.core.live import Cursor, LiveSpec
from sim.core.text import md
from sim.language.claims import DIGITS, floor_gap
from sim.language.grammar import grammar
from sim.language.lm import (
    SYNTHETIC_CHARS,
    LMRun,
    encode_known,
    generate,
    lm_trainer,
    make_task,
    next_token_probs,
    prompt_logits,
    synthetic_text,
    token_losses,
    top_tokens,
)
from sim.plots.lm import distribution_chart, live_frame, selected_position, token_html, token_loss_chart
from ui import charts, live_plots, live_run
from ui.i18n import t
from ui.urlstate import PageState

REPORT_S = 4.0  # while playing, the samples are redrawn at most this often
TRAIN_CHARS = 200_000  # the part of a long text the model trains on
ss = st.session_state
FRAME_LABELS = ("step", "loss", "floor", "train", "val", "ppl", "loss_title", "ppl_title")


def frame_labels() -> dict[str, str]:
    return {k: t(f"lm.plot.{k}") for k in FRAME_LABELS}


def live_spec(v: dict, text: str, floor: float | None) -> LiveSpec:
    """The run of these settings (its build raises ValueError when the text is too short for the context); sessions
    with equal settings share one."""
    def build() -> LMRun:
        task = make_task(text[:TRAIN_CHARS], v["tokenizer"], v["vocab"], v["context"], floor)
        return LMRun(lm_trainer(task, v["layers"], v["heads"], v["width"], v["lr"], v["t_seed"]))

    settings = (hash(text), floor, *(v[n] for n in ("tokenizer", "vocab", "context", "layers", "heads", "width", "lr",
                                                     "t_seed")))
    return LiveSpec("lm.train", settings, build, speed=v["speed"])


def drawn(frame: dict, labels: dict) -> dict:
    """A run's frame (sim.language.lm.LMRun.frame) as the live plots draw it, in the page's language; its caption
    says where the validation loss is against the floor (sim.language.claims.floor_gap)."""
    val, floor = frame["val_loss"], frame["floor"]
    gap = floor_gap(val, floor)
    caption = t("lm.live_caption", step=frame["steps"], loss=_fmt(frame["loss"]), val=_fmt(val),
                ppl=_fmt(math.exp(val) if val is not None else None, 2), floor=_fmt(floor),
                gap=t(f"lm.gap.{gap[0]}", gap=_fmt(gap[1])) if gap else "")
    view = {"steps": frame["steps"], "train": tuple(a.tolist() for a in frame["train"]),
            "val": tuple(a.tolist() for a in frame["val"]), "floor": floor, "caption": caption}
    return {**live_frame(view, labels), "step": frame["step"], "run": frame["run"], "n": frame["n"]}


def _fmt(x: float | None, digits: int = DIGITS) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


MAIN = ("lr", "layers", "width", "context")  # beside the curves: what changes them most


def more_controls(state: PageState) -> tuple[float, int, float]:
    """Every other setting of the run (in the section's "More settings"); returns the sampling rules."""
    for name in ("heads", "speed", "t_seed"):
        state.widget(name)
    return tuple(state.widget(n, help=t(f"lm.{n}.help")) for n in ("temperature", "top_k", "top_p"))


def live_panel(v: dict, text: str, floor: float | None, sampling: tuple[float, int, float]) -> Cursor | None:
    """The run of these settings, trained live; under its curves, samples of the model at the step shown."""
    spec = live_spec(v, text, floor)
    view, under = st.container(), st.container()  # the samples go under the curves: those come first on screen

    def messages(cursor: Cursor) -> None:
        if cursor.stopped and cursor.error is None:
            st.error(t("lm.diverged", lr=v["lr"]))
        key = "lm.samples"
        at = (cursor.serial, cursor.pos, sampling)
        if not cursor.playing and ss.get(f"{key}.at") != at:  # the model at the step shown (once for the class)
            ss[key] = [(cursor.pos, cursor.memo(("sample", sampling),
                                                lambda run: generate(run.trainer, "", 60, *sampling, seed=1)))]
            ss[f"{key}.at"] = at
        elif cursor.playing and time.monotonic() - ss.get(f"{key}.when", 0.0) > REPORT_S:
            with cursor.model_near() as (step, run):  # the newest checkpoint shown, no replay: it says its step
                ss[key] = [(step, generate(run.trainer, "", 60, *sampling, seed=1))]
            ss[f"{key}.at"], ss[f"{key}.when"] = None, time.monotonic()
        # a fragment writes outside itself only into a container it wrote to on the page's last full run: always
        with under:
            for step, sample in ss.get(key, []) or [(None, None)]:
                st.markdown(t("lm.sample", step=step, text=md(sample, 120)) if sample is not None else "")

    labels = frame_labels()
    show = live_plots.frames_view(spec, lambda f: drawn(f, labels), stopped="diverged")

    def too_short(_: BaseException) -> None:
        st.error(t("lm.text_too_short_for_context", n=v["context"]))

    with view:
        return live_run.live_lab(spec, show, prefix="lm", bad_settings=too_short, messages=messages, n=v["speed"])


def prompt_view(cursor: Cursor, sampling: tuple[float, int, float]) -> None:
    """The next-token distribution after a prompt the user types, with the sampling rules applied."""
    with cursor.model() as run:
        task = run.task  # the text and its tokenizer never change
    start = task.tokenizer.decode(task.val_ids[:6].tolist()).replace("�", "")
    prompt = st.text_input(t("lm.prompt"), value=start, key="lm.prompt", max_chars=200)
    ids = encode_known(task, prompt)
    probs = cursor.memo(("next", tuple(ids), sampling),
                        lambda run: next_token_probs(prompt_logits(run.trainer, ids), *sampling))
    if prompt and len(ids) == 0:
        st.warning(t("lm.prompt_unknown"))
    labels = {"prob": t("lm.chart.prob"), "next": t("lm.chart.next")}
    charts.altair_chart(st, distribution_chart(top_tokens(probs, task.tokenizer, 10), labels), key="lm.fig.next")
    st.caption(t("lm.prompt_help"))


def per_token_view(cursor: Cursor) -> None:
    """A validation passage coloured by the model's loss on each token; a clicked token shows what it expected."""
    with cursor.model() as run:
        task = run.task
    passage = task.tokenizer.decode(task.val_ids[: task.length].tolist())
    tl = cursor.memo(("tokens", passage), lambda run: token_losses(run.trainer, passage))
    st.markdown(token_html(tl.pieces, tl.losses), unsafe_allow_html=True)
    labels = {"token": t("lm.chart.token"), "loss": t("lm.chart.loss"), "prob": t("lm.chart.prob"),
              "next": t("lm.chart.next")}
    before = selected_position(ss.get("lm.fig.tokens"), len(tl.pieces))
    event = charts.altair_chart(st, token_loss_chart(tl.pieces, tl.losses, labels, before), on_select="rerun",
                                key="lm.fig.tokens")
    pos = selected_position(event, len(tl.pieces))
    if pos is None:
        st.caption(t("lm.click_token"))
        return
    st.markdown(t("lm.after_token", token=md(tl.pieces[pos]), pos=pos))
    charts.altair_chart(st, distribution_chart(top_tokens(tl.probs[pos], task.tokenizer, 10), labels),
                        key="lm.fig.token_next")


def train_section(state: PageState) -> None:
    """The live loss curves first, the main settings beside them; what the model predicts, below."""
    figure, side = state.stage()
    with side:
        for name in MAIN:
            state.widget(name, fold=False)
        with state.more(side):
            text, floor, problem = text_source(state)
            if state.widget("tokenizer") == "bpe":
                state.widget("vocab")
            sampling = more_controls(state)
    with figure:
        if text is None:
            problem()
            return
        cursor = live_panel(state.values, text, floor, sampling)
        if cursor is None:
            return
        st.caption(t("lm.train_help"))
    st.markdown(t("lm.train_intro"))
    synthetic_note(floor)
    if floor is not None:
        st.caption(t("lm.floor_note", lang=md(grammar(state.values["language"]).sample(60, 5))))
    st.subheader(t("lm.prompt_title"))
    if cursor.playing:  # read at the cursor's step, which the view on its own channel has left behind
        st.caption(t("lm.playing"))
        return
    prompt_view(cursor, sampling)
    st.subheader(t("lm.per_token_title"))
    per_token_view(cursor)


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The lab's default run (seed: another training seed) and what a playing page does with its frames, for
    benchmarks/classroom.py."""
    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["t_seed"] = seed
    text, floor = synthetic_text(v["language"], SYNTHETIC_CHARS, v["seed"])  # what the page's cache returns
    labels = frame_labels()
    spec = live_spec(v, text, floor)
    return spec, lambda frames: live_run.drawn_once(spec, frames, lambda f: drawn(f, labels))
