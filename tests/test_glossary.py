"""The Chinese catalogues speak the course's language: one word per concept (assets/i18n/glossary.json) and
full-width punctuation next to Chinese characters."""
import json
import re
from pathlib import Path

import pytest

I18N = Path(__file__).resolve().parent.parent / "assets" / "i18n"
GLOSSARY = json.loads((I18N / "glossary.json").read_text(encoding="utf-8"))
TERMS = GLOSSARY["terms"]
ELSEWHERE = {k: v for k, v in GLOSSARY.get("elsewhere", {}).items() if k != "_"}  # another part's texts, as they read
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
CHECKED = {key for key, (_, text) in ZH.items() if ELSEWHERE.get(key) != text}  # an exempt text only as it reads


def without_code(text: str) -> str:
    return re.sub(r"`[^`]*`|\{[^}]*\}|\$[^$]*\$", "", text)


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t["concept"])
def test_the_chinese_texts_use_the_courses_word(term):
    wrong = [f"{name} {key}: {text}" for key, (name, text) in ZH.items()
             for avoid in term["avoid"] if key in CHECKED and re.search(avoid, without_code(text))]
    missing = [f"{ZH[key][0]} {key}: {ZH[key][1]}" for key, (_, en) in EN.items()
               if key in CHECKED and re.search(rf"\b(?:{term['en']})\b", without_code(en), re.I)
               and not re.search(term["zh"], ZH[key][1])]
    assert not wrong, f"use {term['zh']!r}, not:\n" + "\n".join(wrong)
    assert not missing, f"the English names {term['concept']!r}; the Chinese should say {term['zh']!r}:\n" + \
        "\n".join(missing)


@pytest.mark.parametrize("term", [t for t in TERMS if "gloss" in t], ids=lambda t: t["concept"])
def test_a_gloss_is_given_once_per_lab(term):
    """The gloss (token（词元）) goes where a lab first introduces the word: at most once in each catalogue."""
    files: dict[str, list[str]] = {}
    for key, (name, text) in ZH.items():
        files.setdefault(name, []).extend([key] * text.count(term["gloss"]))
    twice = {name: keys for name, keys in files.items() if len(keys) > 1}
    assert not twice, f"give {term['gloss']!r} once per lab, not in:\n{twice}"
    assert any(files.values()), f"no lab introduces {term['gloss']!r}"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("term", [t for t in TERMS if "spelled" in t], ids=lambda t: t["en"])
def test_an_abbreviation_is_spelled_out_in_every_lab_that_uses_it(term, lang):
    """SFT, RLHF, DPO, KL (issue 41, item 14): a catalogue (a lab) that uses the letters says once what they stand
    for, in the course's words."""
    texts = ZH if lang == "zh" else EN
    files: dict[str, str] = {}
    for name, text in texts.values():
        files[name] = files.get(name, "") + "\n" + text
    bare = [name for name, text in files.items() if re.search(rf"\b{term['en']}\b", without_code(text))
            and not re.search(term["spelled"][lang], text)]
    assert not bare, f"spell out {term['en']} ({term['spelled'][lang]!r}) in: {bare}"


def test_the_exempt_texts_are_still_the_ones_written_down():
    """An exemption (glossary.json "elsewhere") holds only while its text is unchanged; once it changed, delete it."""
    stale = [key for key, text in ELSEWHERE.items() if key not in ZH or ZH[key][1] != text]
    assert not stale, f"these texts changed, delete them from glossary.json's 'elsewhere': {stale}"


# strings issue 22 found reading badly in Chinese, and what they said
REWORDED = {"opt.at": "展开的步", "opt.rmsprop_alpha": "平方均值", "opt.h.alpha": "平方均值", "lm.log_served": "一生",
            "lm.bundled_label": "内置{lang}语言", "blk.moe.intro": "接收 容量 =", "gen.es.intro": "patience",
            "opt.mem.article": "算法"}


@pytest.mark.parametrize("key,was", REWORDED.items())
def test_the_strings_found_reading_badly_are_reworded(key, was):
    assert was not in ZH[key][1], ZH[key][1]


def test_chinese_punctuation_is_full_width():
    bad = [f"{name} {key}: {text}" for key, (name, text) in ZH.items() if HALF_WIDTH.search(without_code(text))]
    assert not bad, "use ，；：（） next to Chinese characters:\n" + "\n".join(bad)


def test_the_checks_can_fail():
    """The patterns themselves: a wrong term and a half-width comma are caught."""
    cluster = next(t for t in TERMS if t["concept"] == "cluster")
    assert any(re.search(a, "3 团") for a in cluster["avoid"])
    token = next(t for t in TERMS if "gloss" in t)
    assert any(re.search(a, "预测下一个词元") for a in token["avoid"])
    assert not any(re.search(a, "预测下一个 token（词元）") for a in token["avoid"])
    assert HALF_WIDTH.search("训练集,验证集")
    assert not HALF_WIDTH.search("训练集，验证集") and not HALF_WIDTH.search("a, b")
