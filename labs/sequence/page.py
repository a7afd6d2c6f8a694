"""Sequence-models lab: an RNN, an LSTM and a Transformer trained side by side on a task that needs memory over a
distance, why (gradients through time, the LSTM's gates), sequential against parallel timed here, sparse attention's
masks (and a window trained against full attention), an encoder against a decoder trained on one text, and Mamba's
selective scan."""
from labs.sequence.encdec import encdec_section
from labs.sequence.memory import memory_section, why_section
from labs.sequence.schema import PAGE, SCHEMA
from labs.sequence.views import mamba_section, parallel_section, sparse_section
from ui.i18n import t
from ui.urlstate import PageState


def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("seq.title"), t("seq.intro"), {
        "memory": memory_section, "why": why_section, "parallel": parallel_section, "sparse": sparse_section,
        "encdec": encdec_section, "mamba": mamba_section}, t("seq.about"))


main()
