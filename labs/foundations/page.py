"""Foundations lab: backpropagation on a computational graph (= torch.autograd), the training loop's calls,
vanishing and exploding gradients, two vectors (norm, dot product, cosine, projection), 2×2 matrices as maps of the
plane, and what a matrix product costs and takes on this machine; word embeddings trained live, a retrieval by cosine
similarity, and the embedding lookup as rows of a matrix."""
from labs.foundations.backprop import backprop_section
from labs.foundations.embeddings import embeddings_section
from labs.foundations.geometry import matrices_section, vectors_section
from labs.foundations.hardware import hardware_section
from labs.foundations.lookup import lookup_section
from labs.foundations.retrieval import retrieval_section
from labs.foundations.schema import PAGE, SCHEMA
from labs.foundations.training import depth_section, loop_section
from ui.i18n import t
from ui.urlstate import PageState


def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("fnd.title"), t("fnd.intro"), {
        "backprop": backprop_section, "loop": loop_section, "depth": depth_section, "vectors": vectors_section,
        "matrices": matrices_section, "hardware": hardware_section, "embeddings": embeddings_section,
        "retrieval": retrieval_section, "lookup": lookup_section}, t("fnd.about"))


main()
