"""Escaping of user text (URL values, column names, device names, typed tokens) before it is shown.

Streamlit renders Markdown in messages, captions and labels (links, images, bare URLs, $maths$,
:colour[..] and :material/icons:), and Plotly renders a subset of HTML in its labels (<a href>, <b>,
<br>); text a user typed or a file held must come out as the characters it is, never as markup.

ui.i18n.t() escapes every text it fills into a message with plain(); what passes unescaped is a Markup:
text the app made for where it is shown (a catalogue text, md()'s code span, a formula it wrote). So
`grep -n "markup("` lists every place where app-made markup enters a message.
"""
import re

_WS = re.compile(r"\s+")
_TICKS = re.compile(r"`+")
JOINER = "\u2060"  # WORD JOINER: invisible, and breaks a pattern that backslashes cannot
# where a JOINER goes: after "www" before its dot, after a colon before a letter, "/", "+" or "-" (not a digit:
# 12:30 stays as it is), after "@". Streamlit finds bare URLs (www.x, http://x), e-mail addresses, :red[..],
# :material/icons: and :emoji: in the text left after Markdown's backslash escapes are undone (remark-gfm's
# autolink transform, Streamlit's own plug-ins), so an escaped "www\.x" would still be a link.
_LINKY = re.compile(r"(?i)(?<=www)(?=\.)|(?<=:)(?=[^\W\d]|[/+-])|(?<=@)")
# backslashed (CommonMark escapes any ASCII punctuation): code, emphasis, strike, links, images, footnotes, HTML,
# autolinks <..>, entities, maths, table cells, and backslashes themselves
_ACTIVE = re.compile(r"([\\`*_~\[\]<>&$|])")
# what would start a heading, list, block quote, setext line or thematic break if the text began a line
_LEAD = re.compile(r"^(#+(?=\s|$)|[-+=](?=[\s=+-]|$))")
_LEAD_NUMBER = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")
# the invisible characters Unicode calls control (Cc, white space aside: one_line makes that a space) and format (Cf):
# a right-to-left override (U+202E) in a typed text would reverse the rest of the line it is echoed in, a zero-width
# one hide what a message names; each is shown as its code point, "[U+202E]"
_INVISIBLE = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
                        "\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
                        "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
                        "\U000e0001\U000e0020-\U000e007f]")


class Markup(str):
    """Text made by the app for where it is shown, which t() fills in as it is (Markup + Markup stays Markup)."""
    __slots__ = ()

    def __add__(self, other: str) -> str:
        joined = str.__add__(self, other)
        return Markup(joined) if isinstance(other, Markup) else joined


def markup(text: str) -> Markup:
    """`text` is markup the app built itself (a formula, a code span list, a Plotly label escaped by html()):
    t() fills it in unescaped. Never for text a user, a URL or a file supplied."""
    return Markup(text)


def one_line(text: object, limit: int | None = 200) -> str:
    """`text` on one line (runs of white space become one space), at most `limit` characters, then "…"; an invisible
    control or format character is written as its code point ("[U+202E]")."""
    s = _WS.sub(" ", str(text)).strip()
    s = s[:limit] + "…" if limit is not None and len(s) > limit else s
    return _INVISIBLE.sub(lambda m: f"[U+{ord(m.group()):04X}]", s)


def plain(text: object, limit: int | None = None) -> Markup:
    """`text` as literal characters in Streamlit Markdown, on one line, in the font around it (what t() does to
    every text it fills in). A Markup is returned as it is.

    Markdown's punctuation is backslashed (shown as itself), a line-start marker too, and an invisible word
    joiner breaks what Streamlit would link or replace despite the backslashes (www., http://, a@b, :name:).
    Numbers written by the app ("1,024", "-0.5", "3e-05", "12%") come out unchanged.
    """
    if isinstance(text, Markup):
        return text
    s = _LINKY.sub(JOINER, one_line(text, limit))
    s = _ACTIVE.sub(r"\\\1", s)
    return Markup(_LEAD_NUMBER.sub(r"\1\\\2", _LEAD.sub(r"\\\1", s)))


def md(text: object, limit: int = 200) -> Markup:
    """`text` as literal characters in Streamlit Markdown (messages, captions, labels), on one line, as code.

    It becomes an inline code span: inside one, Markdown renders nothing (no link, image, bare URL,
    emphasis or maths). The fence is one backtick longer than any run inside the text, and the spaces inside
    it are dropped by the renderer (CommonMark's code-span rule).
    """
    s = one_line(text, limit)
    fence = "`" * (max(map(len, _TICKS.findall(s)), default=0) + 1)
    return Markup(f"{fence} {s} {fence}")


def html(text: object, limit: int = 200) -> str:
    """`text` as literal characters in a Plotly label (which renders <a>, <b>, <br>, &entities;), on one line."""
    return one_line(text, limit).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
