"""Hostile text for the escaping tests: what a student, a shared link or a file could put where the app shows
text, and the catalogue texts that take params (none has a format spec: the pages format their numbers)."""
import string

# each one alone (a renderer that mishandled one could hide another): links and images in every Markdown form,
# raw HTML, bare URLs and e-mail addresses, maths, Streamlit's colour / icon / emoji directives, formatting,
# what starts a block at the beginning of a line, entities and escapes typed as such
HOSTILE = (
    "[a](//ev.il)",
    "![](//e.vil/i.png)",
    "<img src=//e.vil/x.png> <a href='//ev.il'>x</a>",
    "https://ev.il/x www.ev.il WWW.ev.il a@ev.il <http://ev.il> [a]: //ev.il",
    "$x^2$ and $$y$$",
    ":red[RED] :blue-background[B] :material/warning: :smile: :+1:",
    "`code` **b** _i_ ~~s~~ ~t~ [^1]",
    "# h",
    "- item",
    "1. one",
    "> q",
    "---",
    "a | b\n|---|---|",
    "&amp; &lt;b&gt; \\[x\\] \\",
)
LATEX_KEYS = {"gen.reg.formula"}  # a formula shown by st.latex, never filled: its {..} are TeX groups


def param_texts(cat: dict[str, str]) -> dict[str, set[str]]:
    """Every key whose text takes named params, with their names."""
    out = {}
    for key, text in cat.items():
        names = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
        if names and key not in LATEX_KEYS:
            out[key] = names
    return out


def filled(names: set[str], value) -> dict:
    return dict.fromkeys(names, value)
