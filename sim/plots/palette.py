"""The app's one palette (assets/palette.json), for the figure builders; the canvas components get the same file.

TensorFlow Playground's colours: orange for negative / class 0 / training, blue for positive / class 1 / test.
"""
import json
from pathlib import Path

PALETTE: dict[str, str] = {k: v for k, v in json.loads(
    (Path(__file__).resolve().parents[2] / "assets" / "palette.json").read_text(encoding="utf-8")).items() if k != "_"}

ORANGE, BLUE, GREEN, PURPLE, RED, BROWN, AMBER = (PALETTE[k] for k in ("orange", "blue", "green", "purple", "red",
                                                                        "brown", "amber"))
WHITE, INK, TEXT, NEUTRAL, GUIDE, LINE, MASKED = (PALETTE[k] for k in ("white", "ink", "text", "neutral", "guide",
                                                                        "line", "masked"))
ALARM, GOOD = PALETTE["alarm"], PALETTE["good"]
CLASSES = (ORANGE, BLUE, GREEN, PURPLE, RED)  # class k of a k-class problem


def rgb(colour: str) -> tuple[int, int, int]:
    """'#rrggbb' as three bytes."""
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def rgba(colour: str, alpha: float) -> str:
    """'#rrggbb' with an opacity, as Plotly takes it."""
    return "rgba({},{},{},{})".format(*rgb(colour), alpha)


def tint(colour: str, share: float) -> str:
    """'#rrggbb' mixed with white: `share` of the colour (1 the colour itself, 0 white)."""
    return "#" + "".join(f"{round(255 - (255 - c) * share):02x}" for c in rgb(colour))
