"""The page layout's contract (ui/layout.py), for every lab and section: the header, the section switch, then the stage
(the main figure in the wide column, the controls that change it beside it), before anything else; in the presenter
view the stage keeps a few main controls on view and the rest goes behind the controls button.

What the layout achieves on real screens (how much of the figure the first screen shows, on a laptop, a projector,
the presenter view and a phone) is measured in a browser by ../shared/tools/measure_fold.py; this test holds the
structure that makes it so, and fails when a section draws text, a chart or a widget above its stage."""
import importlib

import pytest

from apptools import shared_lab
from labs import LABS
from ui.layout import SECTIONS, STAGE_KEY

SECTION_PARAMS = ("section", "view")
# what a figure is on the page: a chart, a canvas component, an image, a diagram
FIGURES = {"plotly_chart", "arrow_vega_lite_chart", "vega_lite_chart", "bidi_component", "imgs", "graphviz_chart"}
WIDGETS = {"selectbox", "slider", "select_slider", "number_input", "toggle", "button_group", "radio", "button",
           "text_input", "text_area", "checkbox", "multiselect"}
# the title row (with Copy link's popover and the Code button, ui.code_button), the intro, a URL value refused, the
# class's message slot (ui.classroom.message: empty outside a class)
HEADER = {"title", "caption", "popover", "code", "download_button", "warning", "empty"}
MAIN_MAX = 5  # controls the presenter view keeps on view beside the figure (besides the run's buttons): a row of
# numbered widgets (a layer editor's "layer0", "layer1", ...) counts once


def pages() -> list[tuple[str, dict]]:
    """(page file, URL values) of every lab's every section."""
    out = []
    for lab in LABS:
        if lab.name == "classroom":  # the teacher's page: no figure to change
            continue
        schema = importlib.import_module(f"labs.{lab.name}.schema").SCHEMA
        sec = next((p for p in schema if p.name in SECTION_PARAMS and p.kind == "choice"), None)
        out += [(lab.file, {})] if sec is None else [(lab.file, {sec.name: c}) for c in sec.choices]
    return out


def block_id(node) -> str:
    proto = getattr(node, "proto", None)
    return getattr(proto, "id", "") if proto is not None and not isinstance(proto, (str, bytes)) else ""


def leaves(node, expander: bool = False):
    """(element, inside an expander or popover) for every element under `node`, in page order."""
    for child in getattr(node, "children", {}).values():
        folded = expander or getattr(child, "type", None) in ("expander", "popover")
        if hasattr(child, "children"):
            yield from leaves(child, folded)
        else:
            yield child, folded


def split(at):
    """(the elements above the stage, the stage's figure column, its controls column)."""
    above, stage = [], None
    for child in at.main.children.values():
        if block_id(child).endswith(STAGE_KEY):
            stage = child
            break
        above.append(child)
    assert stage is not None, "no stage (ui.layout.stage) on the page"
    columns = [c for c in stage.children.values() if getattr(c, "type", None) == "column"]
    if not columns:  # st.container(key=...).columns(...): the columns sit in one more block
        inner = next(iter(stage.children.values()))
        columns = [c for c in inner.children.values() if getattr(c, "type", None) == "column"]
    assert len(columns) == 2, f"the stage has {len(columns)} columns"
    return above, columns[0], columns[1]


IDS = [f"{file.split('/')[1]}-{'-'.join(q.values()) or 'page'}" for file, q in pages()]


@pytest.mark.parametrize("file,query", pages(), ids=IDS)
def test_the_stage_comes_first_with_its_figure_and_controls(file, query):
    at = shared_lab(file, "en", **query)
    assert not at.exception
    above, figure, side = split(at)
    for child in above:  # the header and the section switch, nothing else
        kinds = {getattr(el, "type", "?") for el, _ in leaves(child)} or {getattr(child, "type", "?")}
        if block_id(child).endswith(SECTIONS):
            continue
        assert kinds <= HEADER, f"above the stage: {sorted(kinds - HEADER)}"
    assert figure.weight > side.weight, "the figure's column is the wide one"
    drawn = [el for el, folded in leaves(figure) if not folded]
    kinds = [getattr(el, "type", "?") for el in drawn]
    assert FIGURES & set(kinds), f"no figure in the stage's wide column: {kinds}"
    first = next(i for i, k in enumerate(kinds) if k in FIGURES)
    words = sum(len(str(getattr(el, "value", ""))) for el in drawn[:first] if getattr(el, "type", "") == "markdown")
    assert words < 200, "a paragraph above the figure: it belongs below it"
    on_view = [el for col in (figure, side) for el, folded in leaves(col) if not folded
               and getattr(el, "type", "?") in WIDGETS]
    assert on_view, "no control on view beside the figure"


@pytest.mark.parametrize("file,query", pages(), ids=IDS)
def test_the_presenter_view_keeps_a_few_main_controls_beside_the_figure(file, query):
    at = shared_lab(file, "en", present="1", **query)
    assert not at.exception
    _, figure, side = split(at)
    page = file.split("/")[1]
    prefix = importlib.import_module(f"labs.{page}.schema").PAGE + "."
    main = {el.key.rstrip("0123456789") for el, folded in leaves(side) if not folded and getattr(el, "key", None)
            and el.key.startswith(prefix) and getattr(el, "type", "") in WIDGETS}
    assert len(main) <= MAIN_MAX, f"the presenter view keeps {sorted(main)} on view: the rest belongs behind the button"
    assert FIGURES & {getattr(el, "type", "?") for el, folded in leaves(figure) if not folded}


@pytest.mark.parametrize("file,query", pages(), ids=IDS)
def test_every_typed_text_has_a_limit(file, query):
    """No text box takes more than its use needs (a pasted megabyte in a box for one sentence held the server's
    memory): every text input and area of every section has max_chars."""
    at = shared_lab(file, "en", **query)
    boxes = [*at.text_input, *at.text_area]
    assert all(b.max_chars for b in boxes), [b.key for b in boxes if not b.max_chars]
