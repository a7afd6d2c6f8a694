"""sim.core.text: user text is shown as the characters it is, never as Markdown or HTML; every place where the
app writes raw HTML is known."""
import json
import re
from pathlib import Path

import pytest

from apptools import open_lab
from sim.core.text import JOINER, Markup, html, markup, md, one_line, plain
from sim.plots.lm import token_html

ATTACKS = [
    "[Log in again](https://evil.example/x)",
    "![](https://evil.example/t.png)",
    "<img src=https://evil.example/t.png>",
    "<a href='https://evil.example'>x</a>",
    "https://evil.example/x www.evil.example mail@evil.example",
    "**bold** _it_ ~~s~~ `code` $x^2$ :red[red] :material/warning: # head | a | b |",
    "line\n\n- item\n> quote\n```\nfence",
    "\\[escaped\\] \\\\ back",
    ":red[x] :blue-background[y] :material/warning: :smile: :+1: WWW.x.y a@b.c <http://x.y> [^1] a | b ~s~ &amp;",
]
LINE_STARTS = ["# h", "### h", "- item", "+ item", "* item", "1. one", "12) two", "---", "===", "> q", "  # h"]
NUMBERS = ["1,024", "-0.5", "+0.1234", "3e-05", "12%", "1.5 GiB", "√8 = 2.83", "(0.1, 0.2)", "—", "x1", "#3", "12:30"]


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


@pytest.mark.parametrize("text", ATTACKS + LINE_STARTS)
def test_plain_keeps_the_characters_and_leaves_nothing_for_markdown(text):
    out = plain(text)
    assert isinstance(out, Markup) and "\n" not in out
    assert re.sub(r"\\(.)", r"\1", out).replace(JOINER, "") == one_line(text)  # the characters it is
    syntax = re.sub(r"\\.", "", out)  # what the renderer reads as syntax: all but the escaped characters
    assert not re.search(r"[`*_~\[\]<>&$|\\]", syntax), syntax
    # what Streamlit links or replaces in the text that escapes leave: bare URLs, e-mails, :icons:, :emoji:
    assert not re.search(r"(?i)www\.|:/|@\w|:[^\W\d]|:[+-]", syntax), syntax
    # nor a block: heading, list, quote, setext line or thematic break at the start of a line
    assert not re.match(r"(#+|[-+*=]|\d+[.)])(\s|$)|[>=-]", out), out


@pytest.mark.parametrize("text", NUMBERS)
def test_plain_leaves_numbers_the_app_wrote_as_they_are(text):
    assert plain(text) == text


def test_markup_passes_and_only_markup_plus_markup_stays_markup():
    link = markup("[Optimisers](/optimizers)")
    assert plain(link) is link and isinstance(md("x"), Markup)
    assert isinstance(link + markup(" **x**"), Markup)
    joined = link + "[a](//ev.il)"  # with a plain str: an ordinary str, escaped again wherever it is filled in
    assert type(joined) is str and plain(joined) != joined
    assert plain("a\n\nb " + "x" * 300) == "a b " + "x" * 300  # one line, no cut unless asked
    assert plain("x" * 50, 40) == "x" * 40 + "…"


def test_invisible_characters_are_written_as_their_code_points():
    """Every control (white space aside) and format character, as Unicode's own tables classify them, is shown as its
    code point: a right-to-left override in a typed text cannot reverse the line it is echoed in."""
    import sys
    import unicodedata

    hidden = [chr(c) for c in range(sys.maxunicode + 1)
              if unicodedata.category(chr(c)) in ("Cc", "Cf") and not chr(c).isspace()]
    shown = one_line("".join(hidden), limit=None)
    assert shown == "".join(f"[U+{ord(c):04X}]" for c in hidden)
    assert plain("ab\u202ecd") == "ab\\[U+202E\\]cd" and "\u202e" not in md("x\u202ey")
    assert one_line("猫\t追 狗 1,024") == "猫 追 狗 1,024"  # visible text and white space as before


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


def test_an_uploaded_files_names_reach_messages_and_figures_escaped():
    header = ("[a](//evil.example)", "<b>![](//evil.example/c.png)</b>")
    rows = "\n".join(f"{40 + 3 * i},{(40 + 3 * i) * 1.5 + (i * 7) % 5}" for i in range(30))
    at = open_lab("labs/regression/page.py")
    at.file_uploader(key="reg.file").upload("t.csv", (",".join(header) + "\n" + rows).encode(), "text/csv").run()
    assert not at.exception
    assert any(md(header[0]) in s.value and md(header[1]) in s.value for s in at.success)  # the message
    labels = [s for c in at.get("plotly_chart") for s in _strings(json.loads(c.proto.spec))]
    assert any(html(header[1]) in s for s in labels) and any(header[0] in s for s in labels)
    assert not any("<b>" in s or "<a" in s or "<img" in s for s in labels)


# Every place that hands the browser raw HTML, and why what it holds cannot be a user's markup. A new one fails
# test_every_raw_html_site_is_known until it is listed here, with its reason.
ROOT = Path(__file__).resolve().parent.parent
RAW_HTML = re.compile(r"\.html\(|unsafe_allow_html|components\.(v1\.)?html|innerHTML|outerHTML|insertAdjacentHTML"
                      r"|document\.write")
RAW_HTML_SITES = {
    ("labs/classroom/page.py", "st.html("): "big(): its text (a class code, a question's words) html.escape()d inside",
    ("labs/lm/page.py", "unsafe_allow_html"): "sim.plots.lm.token_html: each piece html.escape()d, on one line "
                                              "starting <div>: an HTML block, which Markdown leaves alone",
    ("labs/lm/training.py", "unsafe_allow_html"): "sim.plots.lm.token_html, as above",
    ("ui/present.py", "st.html("): "CSS, a constant",
    ("ui/layout.py", "st.html("): "CSS, a constant",
    ("ui/charts.py", "container.html("): "a chart's summary, html.escape()d; its id made of [0-9A-Za-z_-] only",
    ("ui/live_plots.js", "innerHTML"): "constant styles and empty boxes; the texts go in as textContent",
    ("labs/classification/live_view.js", "innerHTML"): "constant styles and empty boxes; the texts go in as "
                                                       "textContent",
    ("ui/chart_download.js", "innerHTML"): "a constant button; its label goes in as textContent",
    ("labs/gpu/memsim_view.js", "root.innerHTML"): "constant styles and empty boxes",
    ("labs/gpu/memsim_view.js", "legend.innerHTML"): "palette colours and catalogue words (no params): app-made",
    ("labs/foundations/vector_pad.js", "root.innerHTML"): "constant styles and empty boxes; the help text goes in as "
                                                          "textContent",
    ("labs/foundations/vector_pad.js", "S.numbers.innerHTML"): "the page's catalogue texts, HTML-escaped (escapeHtml) "
                                                               "before **bold** and line breaks become <b> and <br>; "
                                                               "the numbers filled in are formatted by the pad",
}


def test_every_raw_html_site_is_known():
    found = []
    for path in sorted([ROOT / "app.py", ROOT / "main.py",
                        *(p for d in ("labs", "ui", "sim", "server") for ext in ("py", "js")
                          for p in (ROOT / d).rglob(f"*.{ext}"))]):
        for line in path.read_text(encoding="utf-8").splitlines():
            if RAW_HTML.search(line) and not line.lstrip().startswith(("#", "//", '"""')):
                rel = path.relative_to(ROOT).as_posix()
                listed = (site for site in RAW_HTML_SITES if site[0] == rel and site[1] in line)
                found.append(next(listed, (rel, line.strip())))
    assert sorted(found) == sorted(RAW_HTML_SITES), "a raw-HTML site without a reason, or a listed one gone"


def test_token_html_is_one_html_block_whatever_the_pieces():
    out = token_html(["a\n\nb", "[a](//evil.example)", "<img src=//evil.example/x.png>", "  # h"])
    assert out.startswith("<div") and "\n" not in out and "<img" not in out
