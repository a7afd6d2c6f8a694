"""Transformer-block lab: BatchNorm/LayerNorm/RMSNorm on a tensor, Pre-LN against Post-LN trained live, initialisation
and depth, sinusoidal/learned/RoPE position encodings, the FFN, a Mixture-of-Experts trained live with three kinds
of balancing, and the KV cache of MHA, GQA, MQA and MLA."""
from labs.blocks.kv import kv_section
from labs.blocks.live import residual_section
from labs.blocks.moe import moe_section
from labs.blocks.schema import PAGE, SCHEMA
from labs.blocks.views import ffn_section, init_section, norm_section, position_section
from ui.i18n import t
from ui.urlstate import PageState


def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("blk.title"), t("blk.intro"), {
        "norm": norm_section, "residual": residual_section, "init": init_section, "position": position_section,
        "ffn": ffn_section, "moe": moe_section, "kv": kv_section}, t("blk.about"))


main()
