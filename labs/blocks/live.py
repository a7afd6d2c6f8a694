"""The transformer-block lab's live sections: Pre-LN against Post-LN (with and without warmup), and the MoE trained
with no balancing, the auxiliary loss and the expert bias; each one Player playing several runs."""
import itertools

import streamlit as st

from sim.plots.blocks import depth_frame, moe_frame
from sim.plots.shapes import human_count
from sim.transformers.blocks import LN_MODES, DepthConfig, DepthTrainer, init_gradient_ratio
from sim.transformers.moe import (
    MODES,
    PUBLISHED_ROUTING,
    MoEConfig,
    MoETrainer,
    capacity,
    flops_per_token,
    param_counts,
)
from sim.transformers.tasks import LETTERS, lab_task
from ui import live_plots, live_run
from ui.course import course_note
from ui.i18n import t
from ui.player import Player
from ui.urlstate import PageState

ss = st.session_state
DEPTH_LABELS = ("step", "loss", "layer", "grad_norm", "loss_title", "norm_title", "init_title", "caption")
MOE_LABELS = ("step", "loss", "loss_title", "load_title", "cluster_title", "caption")
MOE_BATCH = 256  # tokens per step


def in_turn(runs: list) -> Player:
    """One player for several runs. A tick trains `speed` steps taken by the runs in turn, so each tick is one
    run's work and a frame follows every one (the picture moves len(runs) times as often as if every run stepped
    each tick); Step trains every run `speed` steps."""
    turns = itertools.count()

    def step(n: int) -> None:
        for _ in range(n):
            runs[next(turns) % len(runs)].step(1)

    return Player(step, lambda: {}, lambda: all(tr.diverged for tr in runs), model=runs)


def players(key: str, want: tuple, build, speed: int) -> Player:
    player = live_run.current_player(key, want, build)
    player.speed = speed
    player.step_size = speed * len(player.model)
    return player


def show_view(key: str):
    def show(frames: list[dict], seq: int, status: str) -> None:
        live_plots.show_frames(frames, key=f"{key}.view", seq=seq, status=status)
    return show


# ---------- Pre-LN against Post-LN ----------
def depth_name(ln: str, warmup: int) -> str:
    return t(f"blk.res.run.{ln}") + (t("blk.res.run.warmup", w=warmup) if warmup else "")


def depth_player(v: dict) -> Player:
    want = tuple(v[n] for n in ("r_task", "r_layers", "r_width", "r_lr", "r_warmup", "r_seed"))

    def build() -> Player:
        task = lab_task(v["r_task"], 5, 16)
        return in_turn([DepthTrainer(DepthConfig(len(task.vocab), task.block_size, v["r_layers"], 2, v["r_width"], ln),
                                     task, v["r_lr"], w, v["r_seed"]) for ln in LN_MODES for w in (0, v["r_warmup"])])

    return players("blk.depth", want, build, v["r_speed"])


def residual_section(state: PageState) -> None:
    st.markdown(t("blk.res.intro"))
    with state.controls():
        c = st.columns(7)
        names = ("r_task", "r_layers", "r_width", "r_lr", "r_warmup", "r_speed", "r_seed")
        for col, name in zip(c, names, strict=True):
            state.widget(name, container=col)
    player = depth_player(state.values)
    runs: list[DepthTrainer] = player.model
    labels = {k: t(f"blk.res.fig.{k}") for k in DEPTH_LABELS}
    player.snapshot = lambda: depth_frame([(depth_name(tr.config.ln, tr.warmup), *tr.curve(), tr.norms,
                                            tr.init_norms, tr.recent_loss()) for tr in runs], labels)

    def messages() -> None:
        for tr in runs:
            if tr.diverged:
                st.error(t("blk.res.diverged", name=depth_name(tr.config.ln, tr.warmup), step=tr.steps))

    live_run.live_view("blk", "blk.depth", player, show_view("blk.depth"), lambda: all(tr.diverged for tr in runs),
                       messages=messages, n=player.speed)
    pre, post = (next(tr for tr in runs if tr.config.ln == ln) for ln in ("pre", "post"))
    lo, hi = init_gradient_ratio(pre, post)
    st.markdown(t("blk.res.explain", lo=f"{lo:.1f}", hi=f"{hi:.1f}", letters=len(LETTERS),
                  guess=f"{pre.task.guess_loss():.2f}"))


# ---------- MoE ----------
def moe_config(v: dict) -> MoEConfig:
    return MoEConfig(n_clusters=v["m_clusters"], n_experts=v["m_experts"], k=v["m_k"], capacity_factor=v["m_cf"])


def moe_name(mode: str, v: dict) -> str:
    return t(f"blk.moe.run.{mode}", alpha=f"{v['m_alpha']:g}", gamma=f"{v['m_gamma']:g}")


def moe_player(v: dict) -> Player:
    want = tuple(v[n] for n in ("m_experts", "m_k", "m_cf", "m_alpha", "m_gamma", "m_clusters", "m_lr", "m_seed"))

    def build() -> Player:
        return in_turn([MoETrainer(moe_config(v), mode, alpha=v["m_alpha"] if mode == "aux" else 0.0,
                                   gamma=v["m_gamma"], lr=v["m_lr"], seed=v["m_seed"], batch_size=MOE_BATCH)
                        for mode in MODES])

    return players("blk.moe", want, build, v["m_speed"])


def moe_section(state: PageState) -> None:
    st.markdown(t("blk.moe.intro"))
    with state.controls():
        c = st.columns(5)
        for col, name in zip(c, ("m_experts", "m_k", "m_cf", "m_clusters", "m_lr"), strict=True):
            state.widget(name, container=col)
        c = st.columns(4)
        for col, name in zip(c, ("m_alpha", "m_gamma", "m_speed", "m_seed"), strict=True):
            state.widget(name, container=col)
    v = dict(state.values)
    player = moe_player(v)
    runs: list[MoETrainer] = player.model
    labels = {k: t(f"blk.moe.fig.{k}") for k in MOE_LABELS}
    player.snapshot = lambda: moe_frame([tr.view(moe_name(tr.mode, v)) for tr in runs], labels)

    def messages() -> None:
        with player.lock:
            rows = [(moe_name(tr.mode, v), tr.imbalance(), tr.dead_experts(), tr.recent(tr.dropped), tr.steps)
                    for tr in runs]
        for tr in runs:
            if tr.diverged:
                st.error(t("blk.res.diverged", name=moe_name(tr.mode, v), step=tr.steps))
        for name, imb, dead, dropped, steps in rows:
            if imb is not None:
                key = "blk.moe.collapsed" if dead else "blk.moe.balanced"
                st.markdown(t(key, name=name, imbalance=f"{imb:.2f}", dead=dead, dropped=f"{100 * dropped:.1f}",
                              steps=steps, E=v["m_experts"]))

    live_run.live_view("blk", "blk.moe", player, show_view("blk.moe"), lambda: all(tr.diverged for tr in runs),
                       messages=messages, n=player.speed)
    st.caption(t("blk.moe.help"))
    with player.lock:
        model = runs[0].model
        p, f = param_counts(model), flops_per_token(model)
    cap = capacity(MOE_BATCH, v["m_experts"], v["m_cf"], v["m_k"])
    st.markdown(t("blk.moe.capacity", T=MOE_BATCH, E=v["m_experts"], k=v["m_k"], cf=f"{v['m_cf']:g}", cap=cap))
    st.markdown(t("blk.moe.params", total=human_count(p["total"]), active=human_count(p["active"]),
                  expert=human_count(p["per_expert"]), share=f"{100 * p['active'] / p['total']:.0f}",
                  f_all=human_count(f["all_experts"]), f_active=human_count(f["active"]),
                  ds=f"{100 * 37 / 671:.1f}"))
    models = t("blk.list_sep").join(t("blk.course.topk.model", name=name, k=k, E=E, share=f"{k / E:.1%}")
                                    for name, (E, k) in PUBLISHED_ROUTING.items())
    course_note(t("blk.course.topk.says"), t("blk.course.topk.shows", models=models, k=v["m_k"], E=v["m_experts"],
                                              share=f"{v['m_k'] / v['m_experts']:.1%}"))
