"""The Chinese catalogues speak the course's language: one word per concept (assets/i18n/glossary.json) and
full-width punctuation next to Chinese characters."""
import json
import re
from pathlib import Path

import pytest

I18N = Path(__file__).resolve().parent.parent / "assets" / "i18n"
TERMS = json.loads((I18N / "glossary.json").read_text(encoding="utf-8"))["terms"]
CJK = r"[\u3400-\u9fff]"
# an ASCII , ; : ( ) touching a Chinese character (inline code and {placeholders} aside)
HALF_WIDTH = re.compile(rf"{CJK}[,;:()]|[,;:()]{CJK}")


def entries(lang: str) -> dict[str, tuple[str, str]]:
    """key -> (file name, text) of every catalogue of a language."""
    out = {}
    for path in sorted((I18N / lang).glob("*.json")):
        out.update({k: (path.name, v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()})
    return out


ZH, EN = entries("zh"), entries("en")


def without_code(text: str) -> str:
    return re.sub(r"`[^`]*`|\{[^}]*\}|\$[^$]*\$", "", text)


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t["concept"])
def test_the_chinese_texts_use_the_courses_word(term):
    wrong = [f"{name} {key}: {text}" for key, (name, text) in ZH.items()
             for avoid in term["avoid"] if re.search(avoid, without_code(text))]
    missing = [f"{ZH[key][0]} {key}: {ZH[key][1]}" for key, (_, en) in EN.items()
               if key in ZH and re.search(rf"\b(?:{term['en']})\b", without_code(en), re.I)
               and not re.search(term["zh"], ZH[key][1])]
    assert not wrong, f"use {term['zh']!r}, not:\n" + "\n".join(wrong)
    assert not missing, f"the English names {term['concept']!r}; the Chinese should say {term['zh']!r}:\n" + \
        "\n".join(missing)


def test_chinese_punctuation_is_full_width():
    bad = [f"{name} {key}: {text}" for key, (name, text) in ZH.items() if HALF_WIDTH.search(without_code(text))]
    assert not bad, "use ，；：（） next to Chinese characters:\n" + "\n".join(bad)


def test_the_checks_can_fail():
    """The patterns themselves: a wrong term and a half-width comma are caught."""
    cluster = next(t for t in TERMS if t["concept"] == "cluster")
    assert any(re.search(a, "3 团") for a in cluster["avoid"])
    assert HALF_WIDTH.search("训练集,验证集")
    assert not HALF_WIDTH.search("训练集，验证集") and not HALF_WIDTH.search("a, b")
