"""The byte-level BPE against a direct re-implementation of minbpe's rules, its round trip and the UTF-8 pitfall."""
import random
from itertools import pairwise

import pytest

from sim.language.grammar import grammar
from sim.language.tokenizer import BPE, CharTokenizer, byte_pieces, make_tokenizer, tokens_per_char


def reference_bpe(text: str, vocab_size: int) -> dict:
    """minbpe's BasicTokenizer.train, written out with dicts: count pairs left to right, take the max (the first
    pair seen wins a tie, as Python's max over an insertion-ordered dict), merge left to right."""
    ids = list(text.encode("utf-8"))
    merges = {}
    for new_id in range(256, vocab_size):
        stats = {}
        for pair in pairwise(ids):
            stats[pair] = stats.get(pair, 0) + 1
        if not stats:
            break
        pair = max(stats, key=stats.get)
        ids, merges[pair] = reference_merge(ids, pair, new_id), new_id
    return merges


def reference_merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """minbpe's merge: every occurrence of pair, left to right and without overlaps, replaced by new_id."""
    out, i = [], 0
    while i < len(ids):
        if i < len(ids) - 1 and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


TEXTS = [
    grammar("en").sample(3000, 1),
    grammar("zh").sample(1500, 2),
    "aaaaaaa bbbb aaaa ab ab ab",  # runs of one byte: merges must not overlap
    "mixed 中文 and English, 猫追狗 🐱🐶 ümlaut",
]


@pytest.mark.parametrize("text", TEXTS)
def test_merges_equal_the_reference(text):
    assert BPE.train(text, 300).merges == reference_bpe(text, 300)


def test_tie_goes_to_the_pair_seen_first():
    tok = BPE.train("xy ab xy ab", 257)  # "xy", " a"... all pairs "xy", "y ", " a", "ab", "b " occur twice
    assert list(tok.merges) == [(ord("x"), ord("y"))]
    assert BPE.train("ab xy ab xy", 257).merges == {(ord("a"), ord("b")): 256}


def test_merge_ids_count_from_256_in_order():
    tok = BPE.train(TEXTS[0], 280)
    assert list(tok.merges.values()) == list(range(256, 280)) and len(tok) == 280


@pytest.mark.parametrize("seed", range(5))
def test_round_trip_of_any_unicode(seed):
    tok = BPE.train(TEXTS[0] + TEXTS[1], 320)
    rng = random.Random(seed)
    s = "".join(chr(rng.choice([rng.randint(32, 126), rng.randint(0x4E00, 0x9FFF), rng.randint(0x1F300, 0x1F64F),
                                rng.randint(0xA0, 0x24F)])) for _ in range(200))
    assert tok.decode(tok.encode(s)) == s
    assert tok.decode(tok.encode(TEXTS[1])) == TEXTS[1]


def test_encoding_the_training_text_gives_the_trained_sequence():
    """Applying the merges to the training text reproduces the training's final sequence (minbpe's encode)."""
    text = TEXTS[1]
    tok = BPE.train(text, 300)
    ids = list(text.encode("utf-8"))
    for pair, new in tok.merges.items():  # the reference's merge loop once more
        ids = reference_merge(ids, pair, new)
    assert tok.encode(text) == ids


@pytest.mark.parametrize("text", TEXTS)
def test_lengths_count_the_tokens_after_each_merge(text):
    """The lab's compression curve: the text's length with the first k merges, k = 0 … all, as the reference's
    merge loop counts it; the last is encode's length, the first the UTF-8 bytes."""
    tok = BPE.train(TEXTS[0] + TEXTS[1], 330)
    ids, want = list(text.encode("utf-8")), [len(text.encode("utf-8"))]
    for pair, new in tok.merges.items():
        ids = reference_merge(ids, pair, new)
        want.append(len(ids))
    got = tok.lengths(text)
    assert got == want and got[-1] == len(tok.encode(text)) and len(got) == len(tok.merges) + 1


def test_a_partial_chinese_character_decodes_to_the_replacement_character():
    tok = BPE.train("猫" * 3, 256)  # no merges: one token per byte
    ids = tok.encode("猫")
    assert len(ids) == 3 and tok.decode(ids[:2]) == "�" and tok.decode(ids) == "猫"
    assert byte_pieces("猫") == ["�"] * 3 and byte_pieces("a") == ["a"]


def test_chinese_costs_more_tokens_per_character_than_english_without_merges():
    bytes_only = BPE.train("", 256)
    assert tokens_per_char(bytes_only, "猫追狗") == 3.0 and tokens_per_char(bytes_only, "cat") == 1.0
    trained = BPE.train(TEXTS[1], 400)
    assert tokens_per_char(trained, TEXTS[1]) < 1.0  # merges join whole characters and words


def test_char_tokenizer():
    tok = make_tokenizer("char", "banana", 0)
    assert isinstance(tok, CharTokenizer) and tok.chars == "abn" and len(tok) == 3
    assert tok.decode(tok.encode("nab")) == "nab" and tok.known("xbay") == "ba"
    with pytest.raises(ValueError):
        tok.encode("x")
