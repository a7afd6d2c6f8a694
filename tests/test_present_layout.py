"""The presenter view's layout: a lab's controls go behind the one controls button as whole blocks (their columns,
captions and buttons with them), so the projected page keeps no orphan caption or empty row; the switches between
a lab's sections and panels, the run buttons, the figures and the few main controls beside the figure (ui.layout's
stage) stay on the page."""
import importlib

import pytest
from test_layout import leaves, split

from apptools import shared_lab
from labs import LABS
from ui.i18n import catalogue

EN = catalogue("en")
# what chooses the view rather than the experiment stays on the page: sections, panels, the solver, the GPU lab's
# view (fold=False), and the optimiser lab's step whose numbers the update formulas show
NAVIGATION = {"section", "panel", "solver", "view", "at"}


def elements(node, in_popover=False):
    """(element, inside a popover) for every element under `node`, in page order."""
    for child in getattr(node, "children", {}).values():
        inside = in_popover or getattr(child, "type", None) == "popover"
        if not hasattr(child, "children"):
            yield child, inside
        yield from elements(child, inside)


def blocks(node, kind):
    """Every block of `kind` ("popover", "expander", ...) under `node`."""
    for child in getattr(node, "children", {}).values():
        if getattr(child, "type", None) == kind:
            yield child
        yield from blocks(child, kind)


def placed(at) -> dict[str, bool]:
    """Each keyed element's key: whether it is behind the controls button."""
    return {el.key: inside for el, inside in elements(at._tree) if getattr(el, "key", None)}


def main_controls(at) -> set[str]:
    """The keys of the widgets on view in the stage's controls column (ui.layout.stage): its main controls."""
    _, _, side = split(at)
    return {el.key for el, folded in leaves(side) if not folded and getattr(el, "key", None)}


@pytest.mark.parametrize("lab", [lab for lab in LABS if lab.name != "classroom"], ids=lambda lab: lab.url_path)
def test_every_control_of_a_lab_is_behind_the_button_but_the_main_ones_and_navigation(lab):
    schema = importlib.import_module(f"labs.{lab.name}.schema")
    names = {p.name for p in schema.SCHEMA}
    at = shared_lab(lab.file, "en", present="1")
    assert not at.exception
    where = {k.removeprefix(schema.PAGE + "."): inside for k, inside in placed(at).items()
             if k.removeprefix(schema.PAGE + ".") in names}
    assert len(where) >= 3, where  # the lab drew its controls
    main = {k.removeprefix(schema.PAGE + ".") for k in main_controls(at)}
    on_page = {name for name, inside in where.items() if not inside}
    assert on_page <= NAVIGATION | main, \
        f"{lab.url_path}: controls left on the projected page: {sorted(on_page - NAVIGATION - main)}"
    assert all(where[name] is False for name in NAVIGATION & set(where))

    empty = [b for b in blocks(at._tree, "expander") if not any(True for _ in elements(b))]
    assert not empty, f"{lab.url_path}: an expander left empty on the projected page"

    plain = shared_lab(lab.file, "en")  # the normal page: nothing is folded behind a button
    assert not any(inside for k, inside in placed(plain).items() if k.startswith(schema.PAGE + "."))


def caption_places(at) -> list[tuple[str, bool]]:
    return [(el.value, inside) for el, inside in elements(at._tree) if getattr(el, "type", None) == "caption"]


def test_captions_and_the_data_column_fold_with_their_widgets():
    at = shared_lab("labs/classification/page.py", "en", present="1")
    captions = caption_places(at)
    for text in (EN["cls.weight_decay_off"], EN["cls.reg_formula.none"], EN["cls.split_sizes"].split("{")[0]):
        found = [inside for value, inside in captions if text.split("$")[0].strip()[:30] in value]
        assert found and all(found), text  # drawn, and only behind the button
    headers = [(el.value, inside) for el, inside in elements(at._tree) if getattr(el, "type", None) == "subheader"]
    assert (EN["cls.data"], True) in headers  # the data column went behind the button as a whole
    assert at.button(key="cls.play") and not placed(at)["cls.play"]  # the run buttons stay on the page

    plain = caption_places(shared_lab("labs/classification/page.py", "en"))
    assert any(EN["cls.weight_decay_off"][:30] in value and not inside for value, inside in plain)
