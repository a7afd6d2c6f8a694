"""Both catalogues complete, and every key the code asks for exists."""
import ast
import json
import re
from pathlib import Path

from sim.upload import ERROR_CODES
from ui.schemas import CLASSIFICATION

ROOT = Path(__file__).resolve().parent.parent
CATS = {lang: json.loads((ROOT / "assets" / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
        for lang in ("zh", "en")}


def test_same_keys_in_both_languages():
    assert set(CATS["zh"]) == set(CATS["en"])


def test_no_empty_text_and_same_placeholders():
    for key, en in CATS["en"].items():
        zh = CATS["zh"][key]
        assert en.strip() and zh.strip(), key
        assert set(re.findall(r"{(\w+)}", en)) == set(re.findall(r"{(\w+)}", zh)), key


def literal_keys():
    """Every t("literal") call in the app's code."""
    for path in [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "t" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                yield node.args[0].value


def test_literal_keys_exist():
    missing = sorted(set(literal_keys()) - set(CATS["en"]))
    assert not missing


def test_schema_labels_and_choices_exist():
    for p in CLASSIFICATION:
        assert f"cls.{p.name}" in CATS["en"], p.name
        if p.kind in ("choice", "multi") and isinstance(p.choices[0], str):
            for c in p.choices:
                assert f"cls.{p.name}.{c}" in CATS["en"], (p.name, c)


def test_chinese_catalogue_is_chinese():
    han = sum(bool(re.search(r"[\u4e00-\u9fff]", v)) for v in CATS["zh"].values())
    assert han > 0.8 * len(CATS["zh"])


def test_every_upload_error_has_a_message():
    assert not [c for c in ERROR_CODES if f"upload.{c}" not in CATS["en"]]
