"""The GPU lab's notes on the course texts: what the LLM article says about the H100's SRAM, and the tiling rule.

Every number comes from sim.gpu.memsim (its GPU table and pure functions); the catalogues hold only words.
"""
from __future__ import annotations

from sim.gpu.memsim import ARTICLE_TENSOR_CORE_FLOPS, GPUS, IOReport, MemsimError, block_rule, mma_ops, sram_claim
from sim.plots.shapes import human_bytes
from ui.course import course_note
from ui.i18n import t


def sram_correction() -> None:
    """Under the intro: the article's "~50 MB of SRAM on an H100" beside what the H100's table entry says."""
    spec = GPUS["H100"]
    c = sram_claim(spec)
    course_note(t("gpu.course.article_says", claim=f"{c.claim_bytes / 1e6:g} MB"),
                t("gpu.course.on_h100", gpu=spec.name, l2=human_bytes(c.l2_bytes),
                  smem=human_bytes(c.smem_per_sm_bytes),
                  sms=c.n_sm, total=human_bytes(c.smem_total_bytes)))


def tiling_text(tiled: IOReport, sram_bytes: int) -> str:
    """How the tiled pass's blocks were chosen (FlashAttention-1's rule) and in which order they run (FA-2's)."""
    d, elem = tiled.d, tiled.dtype_bytes
    try:
        rule = block_rule(d, sram_bytes, elem)
    except MemsimError:  # M below one row of each tile: only hand-set blocks can run, and they fit (else no report)
        rule = None
    if rule and (rule["bm"], rule["bn"]) == (tiled.block_m, tiled.block_n):
        sizes = t("gpu.tiling.rule", sram=human_bytes(sram_bytes), bytes=elem, m=f"{rule['m_elems']:,}", d=d,
                  bn=rule["bn"], bm=rule["bm"])
    else:
        sizes = t("gpu.tiling.manual", bm=tiled.block_m, bn=tiled.block_n)
    return sizes + "\n\n" + t("gpu.tiling.order", t_r=f"{tiled.t_r:,}", t_c=f"{tiled.t_c:,}")


def tensor_core_note() -> str:
    """The article's count for one Tensor Core 4×4 operation beside the 4×4×4 multiply-accumulate's real one."""
    return t("gpu.tensor_core", article=ARTICLE_TENSOR_CORE_FLOPS, **mma_ops(4, 4, 4))


def roof_note() -> str:
    """The roofline's note: how its FLOPs and times are counted, then the Tensor Core count."""
    return t("gpu.roof.note") + "\n\n" + tensor_core_note()
