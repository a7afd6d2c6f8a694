"""URL schema: parsing, validation, round trips."""
import pytest

from labs import all_schemas
from labs.classification.schema import SCHEMA
from ui.schema import Param, check_value, format_value, parse_value, read_query, write_query

LR = Param("lr", "choice", 0.03, choices=(0.001, 0.03, 10.0))


@pytest.mark.parametrize("raw,value", [("0.03", 0.03), ("3e-2", 0.03), ("10", 10.0)])
def test_numeric_choice_accepts_other_spellings(raw, value):
    assert parse_value(LR, raw) == value


@pytest.mark.parametrize("p,raw", [
    (LR, "0.05"), (LR, "abc"), (LR, "nan"),
    (Param("n", "int", 500, lo=100, hi=2000), "99"), (Param("n", "int", 500, lo=100, hi=2000), "1e9"),
    (Param("n", "int", 500, lo=100, hi=2000), "300.5"), (Param("x", "float", 0.0, lo=0, hi=1), "inf"),
    (Param("b", "bool", False), "maybe"),
    (Param("f", "multi", ("a",), choices=("a", "b")), "a,c"), (Param("f", "multi", ("a",), choices=("a", "b")), ""),
    (Param("f", "multi", ("a",), choices=("a", "b")), "a,a"),
    (Param("h", "ints", (4, 2), lo=1, hi=8, max_len=6), "4,9"),
    (Param("h", "ints", (4, 2), lo=1, hi=8, max_len=6), "1,1,1,1,1,1,1"),
    (Param("h", "ints", (4, 2), lo=1, hi=8, max_len=6), "4,x"),
])
def test_bad_values_are_rejected(p, raw):
    with pytest.raises(ValueError):
        parse_value(p, raw)


def test_a_preset_value_is_held_to_the_url_rules():
    n, x = Param("n", "int", 500, lo=100, hi=2000), Param("x", "float", 0.5, lo=0, hi=1)
    assert check_value(n, 300) == 300 and check_value(LR, 10.0) == 10.0 and check_value(x, 0.1234567) == 0.1234567
    for p, bad in ((n, 99), (n, 2001), (LR, 0.05), (x, 1.5), (Param("b", "bool", False), "maybe")):
        with pytest.raises(ValueError):
            check_value(p, bad)


@pytest.mark.parametrize("page,schema", all_schemas())
def test_every_default_passes_the_preset_check(page, schema):
    for p in schema:
        assert check_value(p, p.default) == p.default


def test_read_query_replaces_bad_values_by_defaults_and_reports_them():
    values, rejected = read_query(SCHEMA, {"dataset": "spiral", "lr": "99", "hidden": "8,8,8", "seed": "-1"})
    assert values["dataset"] == "spiral" and values["hidden"] == (8, 8, 8)
    assert values["lr"] == 0.03 and values["seed"] == 0
    assert sorted(name for name, _ in rejected) == ["lr", "seed"]


@pytest.mark.parametrize("page,schema", all_schemas())
def test_every_default_round_trips_through_the_url(page, schema):
    defaults = {p.name: p.default for p in schema}
    values, rejected = read_query(schema, write_query(schema, defaults))
    assert rejected == [] and values == defaults
    for p in schema:  # and every default lies in its own range
        assert parse_value(p, format_value(p, p.default)) == p.default, (page, p.name)


def test_multi_is_canonical_and_empty_hidden_means_no_layers():
    f = Param("f", "multi", ("a",), choices=("a", "b", "c"))
    assert parse_value(f, "c,a") == ("a", "c")
    h = Param("h", "ints", (4, 2), lo=1, hi=8, max_len=6)
    assert parse_value(h, "none") == () and format_value(h, ()) == "none"


def test_text_is_kept_as_typed_up_to_its_length():
    p = Param("q", "text", "", max_len=5)
    assert parse_value(p, "a&b") == "a&b" and parse_value(p, "") == "" and format_value(p, "ab c") == "ab c"
    with pytest.raises(ValueError):
        parse_value(p, "abcdef")
    assert check_value(p, "余弦") == "余弦"


def test_a_list_of_ids_may_hold_just_id_0_and_may_not_be_empty():
    """The embedding lookup's ids (0 is an id): `lk_ids=0` is the one id 0, not an empty list; an empty list, where the
    parameter needs an item, is refused (the page then says so and keeps its default), as are the hidden layers'
    "0" and "none" still read as no hidden layer."""
    from labs.classification.schema import SCHEMA as CLS
    from labs.foundations.schema import SCHEMA as FND

    ids = next(p for p in FND if p.name == "lk_ids")
    assert parse_value(ids, "0") == (0,) and parse_value(ids, "0,3") == (0, 3)
    for raw in ("", "none"):
        with pytest.raises(ValueError):
            parse_value(ids, raw)
    values, rejected = read_query(FND, {"lk_ids": "none"})
    assert values["lk_ids"] == ids.default and rejected == [("lk_ids", "none")]
    hidden = next(p for p in CLS if p.name == "hidden")
    assert parse_value(hidden, "0") == parse_value(hidden, "none") == () and parse_value(hidden, "3") == (3,)
