"""sim.core.upload: parsing, rescaling, every error code, and a fuzz that only UploadError escapes."""

import numpy as np
import pytest

from sim.core.upload import MAX_BYTES, UploadError, parse_points_csv
from ui.i18n import catalogue


def _csv(rows: list[list[object]], header: str = "x1,x2,label", sep: str = ",", eol: str = "\n") -> bytes:
    lines = [header.replace(",", sep)] + [sep.join(str(c) for c in row) for row in rows]
    return (eol.join(lines) + eol).encode()


def _points(n: int = 12, labels: tuple[object, ...] = (0, 1)) -> list[list[object]]:
    return [[i, 10 * i - 3, labels[i % len(labels)]] for i in range(n)]


def _error(raw: bytes, problem: str = "classification") -> UploadError:
    with pytest.raises(UploadError) as info:
        parse_points_csv(raw, problem)
    return info.value


def test_parses_and_rescales_onto_minus_five_five() -> None:
    data = parse_points_csv(_csv(_points()))
    assert data.X.dtype == np.float32 and data.X.shape == (12, 2)
    np.testing.assert_allclose(data.X.min(axis=0), [-5, -5])
    np.testing.assert_allclose(data.X.max(axis=0), [5, 5])
    np.testing.assert_allclose(data.X[:, 0], np.linspace(-5, 5, 12), atol=1e-6)  # affine
    assert data.feature_ranges == ((0.0, 11.0), (-3.0, 107.0))
    assert data.y.dtype == np.int64 and list(data.y[:4]) == [0, 1, 0, 1]
    assert data.class_names == ("0", "1")
    assert data.feature_names == ("x1", "x2") and data.label_name == "label"
    assert data.label_range is None


def test_string_labels_are_sorted_class_names() -> None:
    data = parse_points_csv(_csv(_points(labels=("dog", "cat", "bird"))))
    assert data.class_names == ("bird", "cat", "dog")
    assert list(data.y[:3]) == [2, 1, 0]


def test_numeric_labels_sort_numerically_and_merge_spellings() -> None:
    data = parse_points_csv(_csv(_points(labels=("10", "2", "2.0", "-1"))))
    assert data.class_names == ("-1", "2", "10")
    assert list(data.y[:4]) == [2, 1, 1, 0]


def test_label_column_found_by_name_else_last() -> None:
    rows = [[i % 2, i, i % 3] for i in range(12)]
    data = parse_points_csv(_csv(rows, header="Class,a,b"))
    assert data.label_name == "Class" and data.feature_names == ("a", "b")
    assert data.class_names == ("0", "1")
    data = parse_points_csv(_csv(rows, header="kind,a,b"))
    assert data.label_name == "b" and data.feature_names == ("kind", "a")
    assert data.class_names == ("0", "1", "2")


@pytest.mark.parametrize("sep", [",", ";", "\t"])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_delimiters_bom_and_line_endings(sep: str, eol: str) -> None:
    raw = b"\xef\xbb\xbf" + _csv(_points(), sep=sep, eol=eol)
    data = parse_points_csv(raw)
    assert data.feature_names == ("x1", "x2") and data.X.shape == (12, 2)


def test_blank_lines_spaces_quotes_and_trailing_delimiters() -> None:
    body = "\n".join(f' {i} , "{i * 2}" ,{i % 2},' for i in range(12))
    raw = f'\n"x1", x2 ,label,\n{body}\n\n,,,\n'.encode()
    data = parse_points_csv(raw)
    assert data.X.shape == (12, 2) and data.feature_names == ("x1", "x2")


def test_regression_rescales_label() -> None:
    rows = [[i, i % 3, 4 * i + 1] for i in range(11)]
    data = parse_points_csv(_csv(rows, header="a,b,target"), "regression")
    assert data.y.dtype == np.float32
    np.testing.assert_allclose(data.y, np.linspace(-1, 1, 11), atol=1e-6)
    assert data.label_range == (1.0, 41.0) and data.class_names == ()


def test_huge_but_finite_values_rescale_without_overflow() -> None:
    rows = [[(-1) ** i * 1e308, i, i % 2] for i in range(10)]
    data = parse_points_csv(_csv(rows))
    assert np.isfinite(data.X).all()
    np.testing.assert_allclose(sorted(set(data.X[:, 0].tolist())), [-5, 5])


def test_unknown_problem_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        parse_points_csv(_csv(_points()), "clustering")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "code", "params"),
    [
        (b"x" * (MAX_BYTES + 1), "too_large", {"size": MAX_BYTES + 1, "limit": MAX_BYTES}),
        (b"\xff\xfe\x00\x01binary", "not_text", {}),
        (b"a,b,c\n1,2\x00,3\n", "not_text", {}),
        (b"", "empty", {}),
        (b" \r\n\n", "empty", {}),
        (b",,\n\n,,\n", "empty", {}),
        (b"a,b,c\n" + b'"' + b"1" * 200_000 + b'"\n', "malformed", {"row": 1}),
        (_csv(_points(), header="1,2,3"), "no_header", {}),
        (b"x,label\n1,0\n", "missing_columns", {"found": 2, "min": 3}),
        (_csv([[1, 2, 3, 0, 4]] * 12, header="a,b,c,y,d"), "too_many_columns", {"columns": ["c", "d"], "extra": 2}),
        (_csv(_points()[:2] + [[1, 2, 0, 7]] + _points()), "ragged_row", {"row": 3, "expected": 3, "found": 4}),
        (_csv(_points(9)), "too_few_rows", {"found": 9, "min": 10}),
        (_csv(_points(10_001)), "too_many_rows", {"found": 10_001, "max": 10_000}),
        (_csv(_points()[:4] + [[1, "abc", 0]] + _points()), "non_numeric", {"row": 5, "column": "x2", "value": "abc"}),
        (_csv(_points()[:1] + [["", 1, 0]] + _points()), "nan", {"row": 2, "column": "x1"}),
        (_csv(_points()[:1] + [[1, "nan", 0]] + _points()), "nan", {"row": 2, "column": "x2"}),
        (_csv(_points()[:1] + [["-inf", 1, 0]] + _points()), "nan", {"row": 2, "column": "x1"}),
        (_csv(_points()[:1] + [[1, 1e400, 0]] + _points()), "nan", {"row": 2, "column": "x2"}),
        (_csv(_points()[:1] + [[1, 2]] + _points()), "nan", {"row": 2, "column": "label"}),
        (_csv(_points()[:1] + [[1, 2, "inf"]] + _points()), "nan", {"row": 2, "column": "label"}),
        (_csv(_points(labels=(3,))), "single_class", {"name": "3"}),
        (_csv(_points(labels=tuple("abcdef"))), "too_many_classes", {"found": 6, "max": 5}),
        (_csv([[1, i, i % 2] for i in range(12)]), "constant_feature", {"column": "x1"}),
    ],
)
def test_error_codes(raw: bytes, code: str, params: dict) -> None:
    error = _error(raw)
    assert (error.code, error.params) == (code, params)


def test_regression_error_codes() -> None:
    error = _error(_csv(_points()[:3] + [[1, 2, "high"]] + _points(), header="a,b,target"), "regression")
    assert (error.code, error.params) == ("label_not_numeric", {"row": 4, "column": "target", "value": "high"})
    error = _error(_csv([[i, -i, 7] for i in range(12)]), "regression")
    assert (error.code, error.params) == ("constant_label", {"column": "label"})


def test_offending_value_is_truncated() -> None:
    error = _error(_csv([["z" * 500, 1, 0]] + _points()))
    assert error.code == "non_numeric" and len(error.params["value"]) <= 40


def test_too_large_is_checked_before_parsing() -> None:
    raw = _csv(_points()) + b"\n" * MAX_BYTES  # valid CSV padded past the limit
    assert _error(raw).code == "too_large"


def _fuzz_inputs(seed: int, count: int) -> list[bytes]:
    """Random bytes, and random text built from CSV-ish tokens (closer to the parser's edges)."""
    rng = np.random.default_rng(seed)
    tokens = [",", ";", "\t", "\n", "\r\n", "\r", '"', " ", "", "0", "1", "-2.5", "1e400", "nan",
              "inf", "abc", "label", "y", "x", "é", "\ufeff", "\x00", "1e308", "-1e308", "5e-324"]
    inputs = []
    for _ in range(count):
        if rng.random() < 0.3:
            inputs.append(rng.bytes(int(rng.integers(0, 300))))
            continue
        header = ",".join(rng.choice(["a", "b", "label", "1", ""], size=rng.integers(1, 5)))
        body = "".join(rng.choice(tokens, size=rng.integers(0, 400)))
        text = header + "\n" + body
        inputs.append(text.encode("utf-8", errors="surrogatepass"))
    return inputs


@pytest.mark.parametrize("problem", ["classification", "regression"])
def test_fuzz_only_upload_errors(problem: str) -> None:
    for raw in _fuzz_inputs(seed=0, count=1500):
        try:
            data = parse_points_csv(raw, problem)
        except UploadError as error:
            assert isinstance(error.code, str) and isinstance(error.params, dict)
            continue
        assert np.isfinite(data.X).all() and np.abs(data.X).max() <= 5
        assert np.isfinite(data.y).all()


@pytest.mark.parametrize("problem", ["classification", "regression"])
def test_fuzz_tables_with_random_cells(problem: str) -> None:
    """Well-formed tables of mostly numeric random cells reach the value checks and rescaling."""
    rng = np.random.default_rng(1)
    good = ["0", "1", "2", "-3.5", "1e308", "-1e308", "5e-324", "1.0", "7"]
    bad = ["", "nan", "a", "inf", "1e999"]
    weights = np.r_[np.full(len(good), 0.995 / len(good)), np.full(len(bad), 0.005 / len(bad))]
    for _ in range(300):
        rows = rng.choice(good + bad, size=(int(rng.integers(9, 14)), 3), p=weights)
        try:
            data = parse_points_csv(_csv(rows.tolist()), problem)
        except UploadError:
            continue
        assert np.isfinite(data.X).all() and np.isfinite(data.y).all()



def test_hundreds_of_thousands_of_columns_give_a_short_message() -> None:
    header = ",".join(f"c{i}" for i in range(250_000)) + ",label"  # 1.7 MB of names, under the size limit
    error = _error((header + "\n").encode())
    assert error.params == {"columns": ["c2", "c3", "c4", "c5", "c6"], "extra": 249_998}
    for lang in ("en", "zh"):  # the message lists five names and the count, not 2 MB of them
        message = catalogue(lang)["upload.too_many_columns"].format(columns=", ".join(error.params["columns"]),
                                                                    extra=error.params["extra"])
        assert len(message) < 200 and "249998" in message


def test_the_file_widget_the_check_and_the_texts_have_one_limit():
    """Streamlit's file widget counts max_upload_size in megabytes of 10⁶ bytes (outside Windows), the check here in
    bytes, the texts in MB: a file the widget lets through is one the check takes, and the texts name that limit."""
    from sim.core.upload import MB
    from sim.language.lm import MAX_UPLOAD_BYTES

    assert MAX_BYTES % MB == 0 and MAX_UPLOAD_BYTES == MAX_BYTES  # the widget's whole megabytes are the limit
    with pytest.raises(UploadError) as e:
        parse_points_csv(b"x" * (MAX_BYTES + 1), problem="classification")
    assert e.value.code == "too_large"
    for key in ("cls.upload_help", "reg.upload_help", "lm.upload_help"):
        assert f"{MAX_BYTES // MB} MB" in catalogue("en")[key], key
