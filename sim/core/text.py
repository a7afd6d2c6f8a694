"""Escaping of user text (URL values, column names, device names, typed tokens) before it is shown.

Streamlit renders Markdown in messages, captions and labels (links, images, bare URLs, $maths$,
:colour[..] and :material/icons:), and Plotly renders a subset of HTML in its labels (<a href>, <b>,
<br>); text a user typed or a file held must come out as the characters it is, never as markup.
"""
import re

_WS = re.compile(r"\s+")
_TICKS = re.compile(r"`+")


def one_line(text: object, limit: int = 200) -> str:
    """`text` on one line (runs of white space become one space), at most `limit` characters, then "…"."""
    s = _WS.sub(" ", str(text)).strip()
    return s[:limit] + "…" if len(s) > limit else s


def md(text: object, limit: int = 200) -> str:
    """`text` as literal characters in Streamlit Markdown (messages, captions, labels), on one line.

    It becomes an inline code span: inside one, Markdown renders nothing (no link, image, bare URL,
    emphasis or maths). Backslash escapes cannot do that: GitHub-flavoured Markdown still turns an
    escaped https\\://… into a link. The fence is one backtick longer than any run inside the text, and
    the spaces inside it are dropped by the renderer (CommonMark's code-span rule).
    """
    s = one_line(text, limit)
    fence = "`" * (max(map(len, _TICKS.findall(s)), default=0) + 1)
    return f"{fence} {s} {fence}"


def html(text: object, limit: int = 200) -> str:
    """`text` as literal characters in a Plotly label (which renders <a>, <b>, <br>, &entities;), on one line."""
    return one_line(text, limit).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
