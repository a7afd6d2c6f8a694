"""The language-model lab's figures and selection readers: events in, values out."""
import math

from sim.language.tokenizer import BPE
from sim.plots.lm import (
    BRUSH_PARAM,
    TOKEN_PARAM,
    compression_figure,
    curves_chart,
    isoflop_chart,
    live_frame,
    selected_position,
    selected_runs,
    token_html,
    token_loss_chart,
)

LABELS = {k: k for k in ("step", "loss", "floor", "train", "val", "ppl", "loss_title", "ppl_title", "token", "prob",
                         "next", "N", "D", "budget")}
RUNS = [{"budget": 1e9, "params": 700, "tokens": 1000, "loss": 1.2, "curve": [[500, 1.5], [1000, 1.2]]},
        {"budget": 1e9, "params": 7000, "tokens": 100, "loss": 1.0, "curve": [[100, 1.0]]},
        {"budget": 3e9, "params": 7000, "tokens": 300, "loss": 0.8, "curve": [[300, 0.8]]},
        {"budget": 3e9, "params": 70000, "tokens": 30, "loss": math.nan, "curve": []}]


def test_selected_position_reads_a_click():
    assert selected_position({"selection": {TOKEN_PARAM: [{"pos": 3}]}}, 5) == 3
    assert selected_position({"selection": {TOKEN_PARAM: [{"pos": 9}]}}, 5) is None  # no longer on the page
    assert selected_position({"selection": {TOKEN_PARAM: []}}, 5) is None
    assert selected_position(None, 5) is None and selected_position({"selection": {}}, 5) is None


def test_selected_runs_reads_the_brush():
    event = {"selection": {BRUSH_PARAM: {"N": [5000, 8000], "loss": [0.5, 1.1]}}}
    assert selected_runs(event, RUNS) == {1, 2}
    assert selected_runs({"selection": {BRUSH_PARAM: {"N": [8000, 100], "loss": [2, 0]}}}, RUNS) == {0, 1, 2}
    assert selected_runs({"selection": {BRUSH_PARAM: {}}}, RUNS) == set() and selected_runs(None, RUNS) == set()


def test_charts_carry_their_selections():
    spec = isoflop_chart(RUNS, LABELS, [(7000, 1.0)]).to_dict()
    assert BRUSH_PARAM in str(spec) and "log" in str(spec)
    assert TOKEN_PARAM in str(token_loss_chart(["a", "b"], [None, 0.5], LABELS, 1).to_dict())
    rows = curves_chart(RUNS, {1}, LABELS).to_dict()["data"]["values"]
    assert [r["on"] for r in rows] == [False, False, True, False]


def test_live_frame_has_the_floor_and_perplexity():
    f = live_frame({"steps": 3, "train": ([1, 2, 3], [2.0, 1.5, 1.0]), "val": ([1], [1.2]), "floor": 0.3,
                    "caption": "c"}, LABELS)
    loss, ppl = f["panels"]
    assert any(s["y"] == [0.3, 0.3] for s in loss["series"])
    assert ppl["series"][0]["y"] == [round(math.exp(1.2), 6)] and ppl["log_y"]


def test_token_html_escapes_and_shades():
    out = token_html(["<b>", " x", "\n"], [None, 0.1, 5.0])
    assert "&lt;b&gt;" in out and "&nbsp;x" in out and "↵" in out and "<b>" not in out


def test_compression_figure_replays_the_merges_and_marks_the_tokenizer_shown():
    """Tokens per character after each merge (the BPE's own count, k = 0 … all) against 256 + k; the tokenizer shown
    in red: a star on the curve at the merges applied, or the line of one token per character."""
    text = "the cat sees the dog. the dog sees the cat. " * 4
    tok = BPE.train(text, 270)
    lengths = tok.lengths(text)
    words = {k: k for k in ("vocab", "per_char", "bpe", "char", "now")}
    curve, chars, star = compression_figure(lengths, len(text), "bpe", 5, words).data
    assert list(curve.x) == list(range(256, 256 + len(lengths))) and curve.y[0] == 1.0  # ASCII: a byte a character
    assert curve.y[-1] == len(tok.encode(text)) / len(text) and list(curve.y) == sorted(curve.y, reverse=True)
    assert list(star.x) == [261] and star.y[0] == lengths[5] / len(text) and list(chars.y) == [1.0, 1.0]
    curve, chars = compression_figure(lengths, len(text), "char", 0, words).data  # characters: the line is the one
    assert chars.line.color == star.marker.color and chars.line.dash is None
