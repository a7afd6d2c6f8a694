"""sim.plots.assistant: the map of AI keeps each level's title and note in a band of its own, above the boxes inside
it, with no note line wider than the innermost box allows (in both languages); notes break where a reader would."""
import pytest

from sim.plots.assistant import MAP_HEAD, MAP_LEVELS, MAP_LINE, MAP_NOTE_COLUMNS, _lines, _width, paradigm_map
from ui.i18n import catalogue


def test_lines_break_after_spaces_and_full_width_commas_and_count_wide_characters_twice():
    assert _lines("the cat sat on the mat", 10) == ["the cat", "sat on the", "mat"]
    assert _lines("一切表现出智能的系统，包括人手写规则的系统", 36) == ["一切表现出智能的系统，",
                                                                "包括人手写规则的系统"]
    assert _lines("行为从数据中学出来，而不是人写下来", 36) == ["行为从数据中学出来，而不是人写下来"]
    assert _width("token 的") == 8 and _lines("", 10) == [] and _lines("unbreakable", 3) == ["unbreakable"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_levels_text_sits_above_the_box_inside_it(lang):
    cat = catalogue(lang)
    names = {k: cat[f"asst.map.{k}"] for k in MAP_LEVELS}
    fig = paradigm_map(names, {k: cat[f"asst.map.{k}.note"] for k in MAP_LEVELS}, {"ml": "/classification"})
    boxes, notes = fig.layout.shapes, fig.layout.annotations[1::2]
    assert fig.layout.yaxis.range == (0, fig.layout.height)  # y counts pixels: the bands keep their height
    for outer, inner in zip(boxes, boxes[1:], strict=False):  # nested
        assert outer.x0 < inner.x0 < inner.x1 < outer.x1 and outer.y0 < inner.y0 < inner.y1 < outer.y1
    for note, inner in zip(notes[:-1], boxes[1:], strict=True):
        lines = note.text.split("<br>")
        assert all(_width(line) <= MAP_NOTE_COLUMNS for line in lines)
        assert note.y - MAP_LINE * len(lines) >= inner.y1  # the note ends above the next box's top
    titles = fig.layout.annotations[0::2]
    assert all(box.y1 - title.y < MAP_HEAD for box, title in zip(boxes, titles, strict=True))
    assert titles[1].text == f'<b><a href="/classification" target="_self">{names["ml"]}</a></b>'
