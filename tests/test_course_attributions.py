"""Every attribution in the catalogues names the paper's real first author and year (issue 22): each "X et al. YEAR"
(X 等 YEAR) must be one checked against its paper here, and the ones the issue found wrong say the right thing.
A course note's "says" text quotes the article, wrong attributions included, and is left out of the scan."""
import re

import pytest

from ui.i18n import catalogue

# (first author, year) -> the paper, checked
PAPERS = {
    ("Kaplan", 2020): "Scaling Laws for Neural Language Models",
    ("Hoffmann", 2022): "Training Compute-Optimal Large Language Models (Chinchilla)",
    ("Besiroglu", 2024): "Chinchilla Scaling: A replication attempt (Epoch AI)",
    ("Brown", 2020): "Language Models are Few-Shot Learners (GPT-3)",
    ("Dao", 2022): "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
    ("Hu", 2024): "MiniCPM: Unveiling the Potential of Small Language Models (the WSD schedule)",
    ("Jordan", 2024): "Muon: An optimizer for hidden layers in neural networks (Keller Jordan et al.)",
    ("Liu", 2025): "Muon is Scalable for LLM Training (Moonshot AI)",
    ("Chen", 2023): "Symbolic Discovery of Optimization Algorithms (Lion)",
    ("He", 2015): "Delving Deep into Rectifiers (Kaiming He et al.; the backward pass's variance, section 2.2)",
}
CITATION = re.compile(r"([A-Z][A-Za-z\-]+)(?:'s)? (?:et al\.|等)(?:'s)?[^0-9]{0,20}?((?:19|20)\d{2})")


def citations(lang: str) -> list[tuple[str, str, int]]:
    return [(key, m.group(1), int(m.group(2))) for key, text in catalogue(lang).items() if not key.endswith(".says")
            for m in CITATION.finditer(text)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_et_al_is_a_checked_paper(lang):
    found = citations(lang)
    unknown = [c for c in found if c[1:] not in PAPERS]
    assert not unknown, f"check these against their papers and add them to PAPERS: {unknown}"
    assert {c[1:] for c in found} >= {("Hu", 2024), ("Jordan", 2024), ("Liu", 2025)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_attributions_the_issue_found(lang):
    cat = catalogue(lang)
    wsd = cat["opt.sched.wsd.when"]
    assert "MiniCPM" in wsd and "Hu" in wsd and "2024" in wsd and "DeepSeek" not in wsd
    muon = cat["opt.course.muon.shows"]
    assert "Jordan" in muon and "Liu" in muon and "Moonshot" in muon and "Kosson" not in muon
    assert "Kosson" in cat["opt.course.muon.says"]  # what the article wrote, quoted as such


def test_the_rule_sources_shown_on_the_page_are_checked_papers():
    from sim.optim.optimizers import RULE_SOURCE

    cited = [(m.group(1), int(m.group(2))) for s in RULE_SOURCE.values() for m in CITATION.finditer(s)]
    assert cited == [("Chen", 2023)] and all(c in PAPERS for c in cited)
