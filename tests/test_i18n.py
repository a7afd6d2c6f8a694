"""Both catalogues complete, and every key the code asks for exists."""
import ast
import json
import re
from pathlib import Path

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


SOURCES = [ROOT / "app.py", *(ROOT / "labs").rglob("*.py"), *(ROOT / "ui").rglob("*.py")]


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
