"""The GPU lab's controls: a view's main ones beside its figure, the other sizes, the chip and the presets under its
"More settings" (the presenter view: behind its controls button)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from labs.gpu.schema import PAGE, SCHEMA
from sim.gpu.bench import PRESETS as BENCH_PRESETS
from sim.gpu.memsim import GPUS
from sim.plots.shapes import human_bytes
from ui.i18n import t
from ui.urlstate import PageState, set_values

SIZES = ("B", "H", "N", "d", "dtype", "causal")  # what a preset sets
PRESETS = {"default": {p.name: p.default for p in SCHEMA if p.name in SIZES},
           **{name: {k: BENCH_PRESETS[name][k] for k in SIZES} for name in ("naive_dies", "flash_fig2")}}
# the attention's sizes, then the chip modelled and its tiles, in the order "More settings" lists them
SETTINGS = ("N", "d", "B", "H", "dtype", "causal", "gpu", "l2", "sram_kib", "block_m", "block_n")
T = TypeVar("T")


def apply_preset(name: str) -> None:
    set_values(PAGE, SCHEMA, PRESETS[name])


def control(state: PageState, name: str, fold: bool = True) -> None:
    """One parameter's widget with its help ("auto" for a block size of 0: Algorithm 1's rule decides)."""
    smem = {key: human_bytes(g.smem_per_sm_bytes) for key, g in GPUS.items()}  # the SRAM help's figures, per SM
    kw = {"help": t(f"gpu.{name}.help", **smem)} if name != "algo" else {}
    if name in ("block_m", "block_n"):
        kw["format_func"] = lambda b: t("gpu.auto") if b == 0 else str(b)
    state.widget(name, fold=fold, **kw)


def controls(state: PageState, side, main: tuple[str, ...], more: Callable[[], T] | None = None) -> T | None:
    """`main` on view in `side`, beside the view's figure; under "More settings" below them, what `more` draws (its
    value is returned), the presets and every other setting."""
    with side:
        for name in main:
            control(state, name, fold=False)
        with state.more(side):
            out = more() if more else None
            st.caption(t("gpu.presets"))
            for name in PRESETS:
                st.button(t(f"gpu.preset.{name}"), on_click=apply_preset, args=(name,), key=f"gpu.preset_{name}",
                          width="stretch")
            for name in SETTINGS:
                if name not in main:
                    control(state, name)
    return out
