"""The transformer-block lab's live MoE: trained with no balancing, the auxiliary loss and the expert bias, one live
run stepping the three models in turn (sim.transformers.live.MoERun)."""
from collections.abc import Callable

import streamlit as st

from labs.blocks.live import frame_at, in_turn_spec
from labs.blocks.schema import SCHEMA
from sim.core.live import Cursor, LiveSpec
from sim.plots.blocks import moe_frame
from sim.plots.shapes import human_count
from sim.transformers.claims import routing_case
from sim.transformers.live import MoERun, from_bytes, load_top
from sim.transformers.moe import (
    MODES,
    PUBLISHED_ROUTING,
    MoEConfig,
    MoETrainer,
    capacity,
    flops_per_token,
    param_counts,
)
from ui import live_plots, live_run
from ui.course import course_note
from ui.i18n import t
from ui.urlstate import PageState

MOE_LABELS = ("step", "loss", "loss_title", "load_title", "cluster_title", "caption")
MOE_BATCH = 256  # tokens per step
# live_lab draws a run's messages above its view; the three runs' routing lines would push the view below the first
# screen, so their block (a flex item of the run's column) is laid out after it


def moe_config(v: dict) -> MoEConfig:
    return MoEConfig(n_clusters=v["m_clusters"], n_experts=v["m_experts"], k=v["m_k"], capacity_factor=v["m_cf"])


def moe_name(mode: str, v: dict) -> str:
    return t(f"blk.moe.run.{mode}", alpha=f"{v['m_alpha']:g}", gamma=f"{v['m_gamma']:g}")


def moe_spec(v: dict) -> LiveSpec:
    """The three runs of these settings, from the same weights and batches."""
    v = dict(v)

    def build() -> MoERun:
        return MoERun([MoETrainer(moe_config(v), mode, alpha=v["m_alpha"] if mode == "aux" else 0.0,
                                  gamma=v["m_gamma"], lr=v["m_lr"], seed=v["m_seed"], batch_size=MOE_BATCH)
                       for mode in MODES])

    settings = tuple(v[n] for n in ("m_experts", "m_k", "m_cf", "m_alpha", "m_gamma", "m_clusters", "m_lr", "m_seed"))
    return in_turn_spec("blk.moe", settings, build, v["m_speed"], len(MODES))


def moe_labels() -> dict[str, str]:
    return {k: t(f"blk.moe.fig.{k}") for k in MOE_LABELS}


def moe_drawn(frame: dict, v: dict, labels: dict) -> dict:
    """A MoERun frame (with its "step", "run", "n") as the live view draws it, in the page's language."""
    runs = [{"name": moe_name(r["mode"], v), "steps": r["curve"][0].tolist(), "loss": r["curve"][1].tolist(),
             "load": from_bytes(r["load"], load_top(r["load"].shape[0])), "by_cluster": r["by_cluster"],
             "imbalance": r["imbalance"]} for r in frame["runs"]]
    return {**moe_frame(runs, labels), "step": frame["step"], "run": frame["run"], "n": frame["n"]}


def moe_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:  # the experts, how many a token takes and their capacity beside the runs; the rest folded
        for name in ("m_experts", "m_k", "m_cf"):
            state.widget(name, fold=False)
        with state.more(side):
            for name in ("m_alpha", "m_gamma", "m_clusters", "m_lr", "m_speed", "m_seed"):
                state.widget(name)
    v = dict(state.values)
    labels = moe_labels()

    def messages(cursor: Cursor) -> None:
        for r in frame_at(cursor)["runs"]:  # the runs at the cursor's step
            if r["diverged"]:
                st.error(t("blk.res.diverged", name=moe_name(r["mode"], v), step=r["steps"]))

    def routing(cursor: Cursor) -> None:
        """Under the view: each run's routing at the cursor's step; paused only (this rerun's step is one a playing
        view has left behind)."""
        if cursor.playing:
            st.caption(t("blk.playing"))
            return
        for r in frame_at(cursor)["runs"]:
            if r["imbalance"] is not None:
                case = routing_case(r["dead"], r["imbalance"])
                st.caption(t(f"blk.moe.{case}", name=moe_name(r["mode"], v), imbalance=f"{r['imbalance']:.2f}",
                             dead=r["dead"], dropped=f"{100 * r['dropped']:.1f}", steps=r["steps"], E=v["m_experts"]))

    spec = moe_spec(v)
    with figure:
        cursor = live_run.live_lab(spec, live_plots.frames_view(spec, lambda f: moe_drawn(f, v, labels)),
                                   prefix="blk", messages=messages, below=routing, n=v["m_speed"])
        st.caption(t("blk.moe.help"))
    with cursor.model() as run:
        model = run.trainers[0].model
        p, f = param_counts(model), flops_per_token(model)
    cap = capacity(MOE_BATCH, v["m_experts"], v["m_cf"], v["m_k"])
    st.markdown(t("blk.moe.intro"))
    st.markdown(t("blk.moe.capacity", T=MOE_BATCH, E=v["m_experts"], k=v["m_k"], cf=f"{v['m_cf']:g}", cap=cap))
    st.markdown(t("blk.moe.params", total=human_count(p["total"]), active=human_count(p["active"]),
                  expert=human_count(p["per_expert"]), share=f"{100 * p['active'] / p['total']:.0f}",
                  f_all=human_count(f["all_experts"]), f_active=human_count(f["active"]),
                  ds=f"{100 * 37 / 671:.1f}"))
    models = t("blk.list_sep").join(t("blk.course.topk.model", name=name, k=k, E=E, share=f"{k / E:.1%}")
                                    for name, (E, k) in PUBLISHED_ROUTING.items())
    course_note(t("blk.course.topk.says"), t("blk.course.topk.shows", models=models, k=v["m_k"], E=v["m_experts"],
                                              share=f"{v['m_k'] / v['m_experts']:.1%}"))


def bench_spec(seed: int | None = None) -> tuple[LiveSpec, Callable[[list[dict]], object]]:
    """The section's default run (seed: another training seed) and what a playing page does with its frames, for
    benchmarks/classroom.py."""
    v = {p.name: p.default for p in SCHEMA}
    if seed is not None:
        v["m_seed"] = seed
    spec = moe_spec(v)
    return spec, lambda frames: live_run.drawn_once(spec, frames, lambda f: moe_drawn(f, v, moe_labels()))
