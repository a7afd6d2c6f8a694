"""The 'pipeline' section of the assistant lab: pretraining -> SFT -> reward model -> DPO and RLHF on the tiny GPT,
one live run through the live-run contract (sim.alignment.pipeline.PipelineRun), then the SFT loss mask and every
stage's answers to the same prompts side by side."""
from __future__ import annotations

import streamlit as st

from labs.assistant.say import said
from sim.alignment import report
from sim.alignment import task as tk
from sim.alignment.pipeline import STAGES, PipelineRun
from sim.core.live import Cursor, LiveSpec
from sim.plots.alignment import mask_figure, pipeline_frame, side_by_side_rows
from ui import charts, live_plots, live_run
from ui.i18n import t
from ui.schema import Param

PARAMS = [
    Param("pipe_beta", "choice", 1.0, choices=(0.25, 0.5, 1.0, 2.0, 4.0)),
    Param("pipe_nll", "choice", 1.0, choices=(0.0, 0.5, 1.0)),
    Param("pipe_kl", "choice", 0.5, choices=(0.0, 0.1, 0.2, 0.5, 1.0, 2.0)),
    Param("pipe_speed", "choice", 5, choices=(1, 2, 5, 10)),
    Param("pipe_seed", "int", 0, lo=0, hi=999_999, step=1),
]
KEY = "asst.pipe.run"
SETTINGS = ("pipe_beta", "pipe_nll", "pipe_kl", "pipe_seed")
FIG = ("step", "loss", "share", "reward", "kl", "loss_title", "share_title", "reward_title", "kl_title", "format",
       "follows", "accuracy", "caption")
SIDE_PROMPTS = 6  # prompts in the side-by-side table
# px: the side-by-side table's width at most, so it stays smaller than the live view's shares panel in the presenter
# view too, where its rows are taller and the panel no taller than 55 % of the screen
SIDE_WIDTH = 480


def pipeline_spec(v: dict, steps: dict | None = None) -> LiveSpec:
    """The pipeline of these settings; a step is one optimizer step of the stage training now. steps: each stage's
    steps (None: the defaults; the tests pass a short pipeline)."""
    v = dict(v)
    steps = None if steps is None else dict(steps)

    def build():
        return PipelineRun(v["pipe_seed"], beta=v["pipe_beta"], kl_weight=v["pipe_kl"], nll_weight=v["pipe_nll"],
                           steps=steps)

    settings = (*(v[n] for n in SETTINGS), None if steps is None else tuple(sorted(steps.items())))
    return LiveSpec(KEY, settings, build, speed=v["pipe_speed"], step_size=10 * v["pipe_speed"])


def stage_name(s: str) -> str:
    return str(t(f"asst.pipe.stage.{s}"))


def frame_labels(nll_weight: float) -> dict[str, str]:
    """The live view's words; the DPO loss curve's name says when it holds the chosen answers' NLL term (RPO)."""
    dpo_loss = t("asst.pipe.fig.dpo_rpo", w=nll_weight) if nll_weight else stage_name("dpo")
    return {k: str(t(f"asst.pipe.fig.{k}")) for k in FIG} | {s: stage_name(s) for s in STAGES} | {
        "dpo_loss": str(dpo_loss)}


def drawn(frame: dict, labels: dict) -> dict:
    return {**pipeline_frame(frame, labels), "step": frame["step"], "run": frame["run"], "n": frame["n"]}


def show_view(spec: LiveSpec, nll_weight: float) -> live_run.Show:
    labels = frame_labels(nll_weight)
    return live_plots.frames_view(spec, lambda f: drawn(f, labels))


def pipeline_section(state) -> None:
    figure, side = state.stage()
    with side:  # what the preference stages do with the SFT model, on view; the pace and the seed folded
        for n in ("pipe_beta", "pipe_kl", "pipe_nll"):
            state.widget(n, fold=False)
        with state.more(side):
            for n in ("pipe_speed", "pipe_seed"):
                state.widget(n)
    v = state.values

    def messages(cursor: Cursor) -> None:
        f = cursor.frame()
        if f["diverged"]:
            st.error(t("asst.pipe.diverged", step=f["steps"]))

    spec = pipeline_spec(v)
    with figure:
        cursor = live_run.live_lab(spec, show_view(spec, v["pipe_nll"]), prefix="asst.pipe", messages=messages,
                                   bad_settings=lambda e: st.error(t("asst.pipe.bad_settings")),
                                   n=10 * v["pipe_speed"])
    if cursor is None:
        return
    st.markdown(t("asst.pipe.intro"))
    # what is said of the run is of the step on screen: while the view plays on its own, the page is not rerun, so
    # its figures and answers are shown only when the run is paused or stopped
    still = not cursor.playing
    if still:
        st.markdown(said(cursor.memo(("summary",), lambda run: report.summary(run, v["pipe_beta"], v["pipe_kl"])),
                         "\n"))
    else:
        st.caption(t("asst.pipe.playing"))
    mask, side_by_side = st.columns(2, gap="medium")  # each half the page's width: smaller than the live view
    with mask:
        _mask()
    if still:
        with side_by_side:
            _side_by_side(cursor)
    st.markdown(t("asst.pipe.hacking"))
    hack = cursor.memo(("hacking",), lambda run: report.hacking(run, v["pipe_kl"])) if still else []
    if hack:
        st.markdown(said(hack))
    st.markdown(said([report.dpo_note(v["pipe_nll"]), *(cursor.memo(("dpo",), report.dpo_format) if still else [])]))


def _mask() -> None:
    st.subheader(t("asst.pipe.mask.title"))
    seq = "abcd=" + "aef."  # a prompt and a demonstration, the same shape as every SFT example
    mask = tk.sft_mask().numpy()
    labels = {k: str(t(f"asst.pipe.mask.{k}")) for k in ("title", "input", "target", "mask")}
    charts.plotly_chart(st, mask_figure(list(seq[:-1]), list(seq[1:]), mask, labels), key="asst.pipe.mask")
    st.caption(t("asst.pipe.mask.explain", counted=int(mask.sum()), total=len(mask)))


def _side_by_side(cursor: Cursor) -> None:
    st.subheader(t("asst.pipe.side.title"))

    prompts, answers, follows = cursor.memo(("side",), lambda run: run.side_by_side(SIDE_PROMPTS))
    rows = side_by_side_rows(prompts, answers, follows, {s: stage_name(s) for s in STAGES},
                             str(t("asst.pipe.side.prompt")))
    st.dataframe(rows, hide_index=True, key="asst.pipe.side", width=SIDE_WIDTH)
    st.caption(t("asst.pipe.side.explain"))
