"""Colour-blind safety: every categorical palette in use keeps each pair of its colours apart under normal colour
vision and under simulated protanopia, deuteranopia and tritanopia (sim.core.colour: Machado et al. 2009, severity
1.0, then CIEDE2000); and the simulation and the colour difference themselves against published values.

The threshold, MIN_DE = 10 (ΔE2000): a ΔE2000 of about 1 is a just-noticeable difference between two large patches
side by side; the colours here are thin lines, small markers and legend swatches told apart across a chart, which
needs several times that. The Okabe & Ito palette, the usual reference for a colour-blind-safe categorical palette,
keeps its closest pair 10.9 apart under these same simulations (test_the_threshold_is_what_a_colour_blind_safe_palette
_reaches), so 10 asks of the app's palettes what a palette designed for colour-blind readers achieves.
"""
import itertools
import re
from pathlib import Path

import pytest

from sim.core.colour import MACHADO, VISIONS, delta_e2000, distance, hex_rgb, lab, seen, simulate, to_linear, to_srgb
from sim.optim.optimizers import OPTIMIZERS, RACERS
from sim.plots import (
    alignment,
    assistant,
    blocks,
    embeddings,
    foundations,
    generalization,
    gpu,
    gpu_measure,
    lm,
    losses,
    optimizers,
    sequence,
    shapes,
)
from sim.plots import palette as P

ROOT = Path(__file__).resolve().parent.parent
MIN_DE = 10.0

# the categorical palettes in use: colours that tell series, classes or kinds apart in one figure (read from where
# each figure builder takes them)
PALETTES = {
    "two classes (classification, generalisation, TF-Playground orange/blue)": P.CLASSES[:2],
    "k classes (softmax, ui/live_common.js CLASS)": P.CLASSES,
    "optimiser paths (any of the optimisers at once)": tuple(optimizers.COLOURS[o] for o in OPTIMIZERS),
    "optimiser race (its racers)": tuple(optimizers.COLOURS[o] for o in RACERS),
    "learning-rate schedules": tuple(optimizers.SCHEDULE_COLOURS.values()),
    "sequence models": tuple(sequence.MODEL_COLORS[k] for k in ("rnn", "lstm", "attn", "mamba", "window")),
    "encoder vs decoder": (sequence.MODEL_COLORS["bert"], sequence.MODEL_COLORS["gpt"]),
    "sparse attention patterns": sequence.PATTERN_COLORS,
    "transformer-block runs": blocks.RUN_COLORS,
    "alignment stages": tuple(alignment.STAGE_COLORS.values()),
    "contamination kinds": tuple(assistant.KIND_COLOURS.values()),
    "parts of speech (embeddings)": embeddings.POS_COLOURS,
    "GPU kernels (measured)": tuple(dict.fromkeys(gpu_measure.COLOURS.values())),
    "GPU naive / tiled / L2": (gpu.NAIVE, gpu.TILED, gpu.L2),
    "scaling-law fits (and Kaplan's, purple)": (*lm.FIT_COLOURS.values(), P.PURPLE),
    "activations": tuple(foundations.COLOURS.values()),
    "2×2 map: before, after, where e1 and e2 land": (P.NEUTRAL, P.ORANGE, P.ALARM, P.GOOD),
    "rooflines": (P.ORANGE, P.BLUE, P.GOOD, P.NEUTRAL, P.INK),
    "data parts (train, validation, test)": tuple(generalization.PART_COLORS.values()),
    "loss functions": tuple(losses.COLOURS.values()),
    "tensor-shape node kinds": tuple(border for _, border in shapes.COLOURS.values()),
    "memory animation tensors (labs/gpu/memsim_view.js TENSOR: the class colours and brown)": (*P.CLASSES, P.BROWN),
}
NAMES = {colour: name for name, colour in P.PALETTE.items()}
OKABE_ITO = ("#000000", "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7")


def too_close(colours, vision: str) -> list[str]:
    """The pairs of `colours` less than MIN_DE apart for `vision`, with their distance."""
    return [f"{NAMES.get(a, a)}–{NAMES.get(b, b)}: ΔE2000 {d:.1f}" for a, b in itertools.combinations(colours, 2)
            if (d := distance(a, b, vision)) < MIN_DE]


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("name", PALETTES)
def test_every_pair_of_a_palette_stays_apart(name, vision):
    colours = PALETTES[name]
    assert len(set(colours)) == len(colours), f"{name}: a colour twice"
    assert not too_close(colours, vision), f"{name}, {vision}: {too_close(colours, vision)}"


def test_the_class_colours_of_the_canvases_are_the_figures():
    """ui/live_common.js names the class colours itself: the same five, in the same order, as sim.plots.palette."""
    text = (ROOT / "ui" / "live_common.js").read_text(encoding="utf-8")
    names = re.search(r"const CLASS = \[([^\]]+)\]", text).group(1)
    assert tuple(P.PALETTE[n.strip(" '\"")] for n in names.split(",")) == P.CLASSES


def test_the_threshold_is_what_a_colour_blind_safe_palette_reaches():
    """Okabe & Ito's palette passes MIN_DE under every simulation; the app's palette before this test (a purple of
    Tableau's next to TensorFlow Playground's blue, 0.6 apart for a protanope) would not."""
    assert all(not too_close(OKABE_ITO, v) for v in VISIONS)
    assert min(distance(a, b, v) for a, b in itertools.combinations(OKABE_ITO, 2) for v in VISIONS) < 11
    assert distance("#0877bd", "#9467bd", "protanopia") < 1 < MIN_DE < distance("#0877bd", "#9467bd")


# ---------- the simulation and the colour difference ----------
@pytest.mark.parametrize("vision", MACHADO)
def test_a_grey_stays_the_same_grey(vision):
    for v in (0, 0.1, 0.5, 0.8, 1):
        grey = (v, v, v)
        assert simulate(grey, vision) == pytest.approx(grey, abs=2e-6)
    L, a, b = seen("#777777", vision)
    assert abs(a) < 1e-3 and abs(b) < 1e-3 and L == pytest.approx(seen("#777777")[0], abs=1e-3)


@pytest.mark.parametrize("vision, primary, column", [
    ("protanopia", (1, 0, 0), (0.152286, 0.114503, 0.0)),  # red: the matrix's first column, clipped at 0
    ("deuteranopia", (0, 1, 0), (0.860646, 0.672501, 0.042940)),  # green: the second column
    ("tritanopia", (0, 0, 1), (0.0, 0.147602, 0.303900)),  # blue: the third, its −0.178779 clipped
])
def test_a_primary_becomes_the_published_matrix_column(vision, primary, column):
    assert simulate(primary, vision) == pytest.approx(column, abs=1e-9)


def test_the_deficiencies_lose_the_axis_they_should():
    red, green, blue, yellow = "#ff0000", "#00ff00", "#0000ff", "#ffff00"
    normal = distance(red, green)
    assert distance(red, green, "protanopia") < normal / 2 and distance(red, green, "deuteranopia") < normal / 2
    assert distance(red, green, "tritanopia") > normal / 2  # a tritanope tells red from green
    assert distance(blue, yellow, "tritanopia") < distance(blue, yellow) / 2 < distance(blue, yellow, "deuteranopia")


def test_srgb_to_lab_and_back():
    assert lab(to_linear(hex_rgb("#ffffff"))) == pytest.approx((100, 0, 0), abs=1e-4)
    assert lab(to_linear(hex_rgb("#000000"))) == pytest.approx((0, 0, 0), abs=1e-9)
    assert lab(to_linear(hex_rgb("#ff0000"))) == pytest.approx((53.2408, 80.0925, 67.2032), abs=0.01)
    assert lab(to_linear(hex_rgb("#0000ff"))) == pytest.approx((32.2970, 79.1875, -107.8602), abs=0.01)
    for c in ("#f59322", "#0877bd", "#777777"):
        assert to_srgb(to_linear(hex_rgb(c))) == pytest.approx(hex_rgb(c), abs=1e-12)


# Sharma, Wu & Dalal (2005), "The CIEDE2000 color-difference formula: implementation notes, supplementary test data,
# and mathematical observations", table 1: eight of its pairs (among them the two sides of the hue's wrap-around at
# 180°, a grey against a colour, and a very dark pair)
SHARMA = [((50, 2.6772, -79.7751), (50, 0, -82.7485), 2.0425),
          ((50, -1.3802, -84.2814), (50, 0, -82.7485), 1.0000),
          ((50, 0, 0), (50, -1, 2), 2.3669),
          ((50, 2.49, -0.001), (50, -2.49, 0.0009), 7.1792),
          ((50, 2.49, -0.001), (50, -2.49, 0.0011), 7.2195),
          ((50, 2.5, 0), (73, 25, -18), 27.1492),
          ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
          ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082)]


@pytest.mark.parametrize("lab1, lab2, expected", SHARMA)
def test_ciede2000_matches_sharmas_table(lab1, lab2, expected):
    assert delta_e2000(lab1, lab2) == pytest.approx(expected, abs=5e-5)
    assert delta_e2000(lab2, lab1) == pytest.approx(expected, abs=5e-5)
