"""sim.core.text: user text is shown as the characters it is, never as Markdown or HTML."""
import json
import re

import pytest

from apptools import open_lab
from sim.core.text import html, md, one_line

ATTACKS = [
    "[Log in again](https://evil.example/x)",
    "![](https://evil.example/t.png)",
    "<img src=https://evil.example/t.png>",
    "<a href='https://evil.example'>x</a>",
    "https://evil.example/x www.evil.example mail@evil.example",
    "**bold** _it_ ~~s~~ `code` $x^2$ :red[red] :material/warning: # head | a | b |",
    "line\n\n- item\n> quote\n```\nfence",
    "\\[escaped\\] \\\\ back",
]


@pytest.mark.parametrize("text", ATTACKS + ["`tick` and ``two`` and ```` four", "`", " spaced "])
def test_md_makes_one_code_span_holding_the_text(text):
    out = md(text)
    fence = re.match(r"`+", out).group()
    assert out.startswith(fence + " ") and out.endswith(" " + fence)
    inner = out[len(fence) + 1:-len(fence) - 1]
    assert inner == one_line(text)  # CommonMark shows the inside of a code span as it is
    assert all(len(run) != len(fence) for run in re.findall(r"`+", inner)), "no run inside closes the span"
    assert "\n" not in out


@pytest.mark.parametrize("text", ATTACKS)
def test_html_escapes_tags_and_entities(text):
    out = html(text)
    assert "<" not in out and ">" not in out and "\n" not in out
    assert out.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == one_line(text)


def test_long_text_is_cut_with_an_ellipsis():
    assert one_line("a" * 500, 40) == "a" * 40 + "…"
    assert md("x" * 10_000) == "` " + "x" * 200 + "… `"
    assert one_line("  a \n\t b  ") == "a b"


@pytest.mark.parametrize("name,raw", [("dataset", ATTACKS[0]), ("seed", ATTACKS[1]), ("lr", ATTACKS[5])])
def test_a_rejected_url_value_is_shown_escaped(name, raw):
    at = open_lab("labs/classification/page.py", **{name: raw})
    notice = [w.value for w in at.warning if "not valid" in w.value]
    assert notice, [w.value for w in at.warning]
    assert md(raw, 40) in notice[0]


def _strings(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    items = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return [s for item in items for s in _strings(item)]


def test_typed_tokens_reach_the_heatmaps_escaped():
    at = open_lab("labs/attention/page.py", section="pipeline")
    at.text_input(key="att.text").set_value("<b>bold</b> <img/src=x> cat").run()
    assert not at.exception
    labels = [s for c in at.get("plotly_chart") for s in _strings(json.loads(c.proto.spec))]
    assert any(s.endswith("&lt;b&gt;bold&lt;/b&gt;") for s in labels)
    assert any(s.endswith("&lt;img/src=x&gt;") for s in labels)
    assert not any("<b>" in s or "<img" in s for s in labels)
