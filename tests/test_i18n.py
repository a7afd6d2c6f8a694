"""Both catalogues complete, and every key the code asks for exists."""
import ast
import json
import re
from pathlib import Path

import pytest

from labs import all_schemas
from sim.core.upload import ERROR_CODES
from ui.i18n import catalogue

ROOT = Path(__file__).resolve().parent.parent
CATS = {lang: catalogue(lang) for lang in ("zh", "en")}


def test_same_keys_in_both_languages():
    assert set(CATS["zh"]) == set(CATS["en"])
    # and file by file, so a lab's strings stay in that lab's file
    files = {lang: sorted(p.name for p in (ROOT / "assets" / "i18n" / lang).glob("*.json")) for lang in ("zh", "en")}
    assert files["zh"] == files["en"]
    for name in files["en"]:
        keys = [set(json.loads((ROOT / "assets" / "i18n" / lang / name).read_text(encoding="utf-8")))
                for lang in ("zh", "en")]
        assert keys[0] == keys[1], name


def test_no_empty_text_and_same_placeholders():
    for key, en in CATS["en"].items():
        zh = CATS["zh"][key]
        assert en.strip() and zh.strip(), key
        assert set(re.findall(r"{(\w+)}", en)) == set(re.findall(r"{(\w+)}", zh)), key


SOURCES = [ROOT / "app.py", ROOT / "main.py", *(ROOT / "labs").rglob("*.py"), *(ROOT / "ui").rglob("*.py")]


def literal_keys():
    """Every t("literal") call in the app's code."""
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "t" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                yield node.args[0].value


def test_every_page_is_read_for_its_keys():
    from labs import LABS

    assert {ROOT / lab.file for lab in LABS} <= set(SOURCES)


def test_literal_keys_exist():
    missing = sorted(set(literal_keys()) - set(CATS["en"]))
    assert not missing


def test_schema_labels_and_choices_exist():
    for page, schema in all_schemas():
        for p in schema:
            assert f"{page}.{p.name}" in CATS["en"], (page, p.name)
            if p.kind in ("choice", "multi") and isinstance(p.choices[0], str):
                for c in p.choices:
                    assert f"{page}.{p.name}.{c}" in CATS["en"], (page, p.name, c)


def test_chinese_catalogue_is_chinese():
    han = sum(bool(re.search(r"[\u4e00-\u9fff]", v)) for v in CATS["zh"].values())
    assert han > 0.8 * len(CATS["zh"])


def test_every_upload_error_has_a_message():
    assert not [c for c in ERROR_CODES if f"upload.{c}" not in CATS["en"]]


def test_every_lab_has_a_title_and_a_card():
    from labs import LABS

    for lab in LABS:
        assert f"nav.{lab.stem}" in CATS["en"] and f"home.card.{lab.stem}" in CATS["en"]
        assert (ROOT / lab.file).is_file()


def test_every_param_of_every_text_is_escaped_in_both_languages():
    """By construction: whatever a page fills into any catalogue text goes through plain() (tests/
    test_safety_browser.py renders the same in Chromium); numbers keep their format."""
    from hostile import HOSTILE, LATEX_KEYS, filled, param_texts

    from sim.core.text import Markup, plain
    from ui.i18n import language, t

    assert LATEX_KEYS <= set(CATS["en"])  # the one text skipped: a TeX formula, never filled
    for lang, cat in CATS.items():
        texts = param_texts(cat)
        assert len(texts) > 300
        with language(lang):
            for key, fields in texts.items():
                for value in HOSTILE:
                    out = t(key, **filled(fields, value))
                    assert isinstance(out, Markup)
                    assert out == cat[key].format(**filled(fields, plain(value))), (lang, key, value)
                assert t(key, **filled(fields, 1.5)) == cat[key].format(**filled(fields, 1.5))  # numbers: as they are


def test_app_made_markup_numbers_and_lists_go_in_as_they_should():
    import numpy as np

    from sim.core.text import markup, md, plain
    from ui.i18n import language, t, t_md

    with language("en"):
        link = markup("[the optimiser lab](/optimizers)")
        assert link in t("room.problem.unknown_lab", lab=link)  # app-made: as it is
        assert t("room.problem.unknown_lab", lab=t("nav.optimizers")).endswith(f"({CATS['en']['nav.optimizers']}). "
                                                                               f"You stay where you are.")
        assert plain("[a](//ev.il)") in t("room.problem.unknown_lab", lab="[a](//ev.il)")
        assert t("room.students", n=np.int64(12)) == CATS["en"]["room.students"].format(n=12)  # numbers as they are
        shown = t("upload.missing_columns", found=[3, "[a](//ev.il)"], min=np.float32(3))
        assert shown.startswith(f"Found 3, {plain('[a](//ev.il)')} column(s)") and "least 3.0 are" in shown
        assert md("[a](//ev.il)") in t_md("upload.constant_feature", column="[a](//ev.il)")
        error = ValueError("<img src=//ev.il/x.png>")  # not a str, escaped all the same
        assert plain(str(error)) in t("cls.bad_config", detail=error)


def test_no_param_sits_where_backslashes_do_not_escape():
    """Inside a code span, maths or a link's target a backslash is not an escape: no catalogue text puts a
    param there (a value filled in there could close the span and start markup)."""
    from hostile import LATEX_KEYS

    inside = re.compile(r"`[^`]*\{\w+(:[^}]*)?\}[^`]*`|\$[^$]*\{\w+(:[^}]*)?\}[^$]*\$|\]\([^)]*\{\w+")
    for lang, cat in CATS.items():
        bad = [k for k, v in cat.items() if inside.search(v) and k not in LATEX_KEYS]
        assert not bad, (lang, bad)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_home_cards_say_what_their_labs_do(lang):
    """A card describes its lab as the lab shows it: the sequence card names every model of the lab's race, and the
    assistant card does not call a reward a label (the lab's reinforcement learning is given no answer, only a
    reward)."""
    from sim.sequence.memory import KINDS

    cat = CATS[lang]
    assert all(cat[f"seq.model.{k}"] in cat["home.card.sequence"] for k in KINDS)
    labels_from_a_reward = r"labels? from [^.;:]*\breward" if lang == "en" else r"来自[^。；：]*奖励的标签"
    assert not re.search(labels_from_a_reward, cat["home.card.assistant"]), "a reward named as a kind of label"
