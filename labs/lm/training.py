"""The language-model lab's tiny GPT: its live run, what it samples, its next-token distribution for a prompt and
its per-token loss on a validation passage (an Altair view: click a token to see what the model expected next)."""
import math
import time

import streamlit as st

from sim.core.text import md
from sim.language.lm import (
    LMRun,
    encode_known,
    generate,
    lm_trainer,
    make_task,
    next_token_probs,
    prompt_logits,
    token_losses,
    top_tokens,
)
from sim.plots.lm import distribution_chart, live_frame, selected_position, token_html, token_loss_chart
from ui import charts, live_plots, live_run
from ui.i18n import t
from ui.player import Player
from ui.urlstate import PageState

REPORT_S = 4.0  # while playing, the samples are redrawn at most this often
TRAIN_CHARS = 200_000  # the part of a long text the model trains on
ss = st.session_state
FRAME_LABELS = ("step", "loss", "floor", "train", "val", "ppl", "loss_title", "ppl_title")


def frame_labels() -> dict[str, str]:
    return {k: t(f"lm.plot.{k}") for k in FRAME_LABELS}


def current_player(v: dict, text: str, floor: float | None) -> Player | None:
    """The session's run for these settings (a new one when they changed); None when the text is too short."""
    want = (hash(text), floor, *(v[n] for n in ("tokenizer", "vocab", "context", "layers", "heads", "width", "lr",
                                                 "t_seed")))

    def build() -> Player:
        task = make_task(text[:TRAIN_CHARS], v["tokenizer"], v["vocab"], v["context"], floor)
        run = LMRun(lm_trainer(task, v["layers"], v["heads"], v["width"], v["lr"], v["t_seed"]))

        def snapshot() -> dict:
            floor_tok, val = task.loss_floor(), run.last_val()
            caption = t("lm.live_caption", step=run.trainer.steps, loss=_fmt(run.trainer.recent_loss()),
                        val=_fmt(val), ppl=_fmt(math.exp(val) if val is not None else None, 2),
                        floor=_fmt(floor_tok))
            view = {"steps": run.trainer.steps, "train": run.trainer.curve(), "val": run.val_curve(),
                    "floor": floor_tok, "caption": caption}
            return live_frame(view, frame_labels())

        return Player(run.step, snapshot, lambda: run.trainer.diverged, model=run)

    try:
        player = live_run.current_player("lm.train", want, build)
    except ValueError:
        st.error(t("lm.text_too_short_for_context", n=v["context"]))
        return None
    player.speed = v["speed"]
    return player


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def model_controls(state: PageState) -> None:
    c = st.columns(4)
    for col, name in zip(c, ("context", "layers", "heads", "width"), strict=True):
        state.widget(name, container=col)
    c = st.columns(3)
    for col, name in zip(c, ("lr", "speed", "t_seed"), strict=True):
        state.widget(name, container=col)


def sampling_controls(state: PageState) -> tuple[float, int, float]:
    c = st.columns(3)
    return tuple(state.widget(n, container=col, help=t(f"lm.{n}.help"))
                 for col, n in zip(c, ("temperature", "top_k", "top_p"), strict=True))


def live_panel(player: Player, sampling: tuple[float, int, float]) -> None:
    run: LMRun = player.model

    def messages() -> None:
        if run.trainer.diverged:
            st.error(t("lm.diverged", lr=run.trainer.lr))
        key = "lm.samples"
        if not player.playing or time.monotonic() - ss.get(f"{key}_at", 0.0) > REPORT_S or key not in ss:
            with player.lock:
                ss[key] = [generate(run.trainer, "", 60, *sampling, seed=1)]
            ss[f"{key}_at"] = time.monotonic()
        for s in ss[key]:
            st.markdown(t("lm.sample", text=md(s, 120)))

    def show(frames: list[dict], seq: int, status: str) -> None:
        live_plots.show_frames(frames, key="lm.train.view", seq=seq,
                               status="diverged" if status == "stopped" else status)

    live_run.live_view("lm", "lm.train", player, show, lambda: run.trainer.diverged, messages=messages,
                       n=player.speed)


def prompt_view(player: Player, sampling: tuple[float, int, float]) -> None:
    """The next-token distribution after a prompt the user types, with the sampling rules applied."""
    run: LMRun = player.model
    start = run.task.tokenizer.decode(run.task.val_ids[:6].tolist()).replace("�", "")
    prompt = st.text_input(t("lm.prompt"), value=start, key="lm.prompt", max_chars=200)
    with player.lock:
        ids = encode_known(run.task, prompt)
        probs = next_token_probs(prompt_logits(run.trainer, ids), *sampling)
    if prompt and len(ids) == 0:
        st.warning(t("lm.prompt_unknown"))
    labels = {"prob": t("lm.chart.prob"), "next": t("lm.chart.next")}
    charts.altair_chart(st, distribution_chart(top_tokens(probs, run.task.tokenizer, 10), labels), key="lm.fig.next")
    st.caption(t("lm.prompt_help"))


def per_token_view(player: Player) -> None:
    """A validation passage coloured by the model's loss on each token; a clicked token shows what it expected."""
    run: LMRun = player.model
    passage = run.task.tokenizer.decode(run.task.val_ids[: run.trainer.config.block_size].tolist())
    with player.lock:
        tl = token_losses(run.trainer, passage)
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
    charts.altair_chart(st, distribution_chart(top_tokens(tl.probs[pos], run.task.tokenizer, 10), labels),
                        key="lm.fig.token_next")


def train_section(state: PageState, text: str | None, floor: float | None) -> None:
    st.markdown(t("lm.train_intro"))
    with state.controls():
        model_controls(state)
        sampling = sampling_controls(state)
    if text is None:
        return
    player = current_player(state.values, text, floor)
    if player is None:
        return
    live_panel(player, sampling)
    st.caption(t("lm.train_help"))
    st.subheader(t("lm.prompt_title"))
    prompt_view(player, sampling)
    st.subheader(t("lm.per_token_title"))
    per_token_view(player)
