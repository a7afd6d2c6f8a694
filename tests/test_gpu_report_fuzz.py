"""Uploaded measurement reports, fuzzed over their schema: every field of the bundled report made the wrong type,
NaN, ±Infinity, 1e400, a huge or negative integer, null, missing, or Markdown and HTML meant to become a link. Each
upload gives the module's coded error or a report whose every number is finite and whose page renders (the measure
view's report functions, run without a server: Streamlit's bare mode builds every element and its data)."""
import json
import math
import re

import pytest

from sim.gpu.measure import ERROR_PARAMS
from sim.gpu.report import ReportError, bundled_reports, parse_report

LINK = "[Log in](https://evil.example/x)"
ANCHOR = "<a href='https://evil.example/x'>GPU</a>"
BIG_FLOAT = "__1e400__"  # written into the JSON text as the literal 1e400 (Python reads it as inf)
MUTATIONS = {
    "wrong_type": None,  # chosen by the field's type below
    "null": None, "nan": math.nan, "infinity": math.inf, "minus_infinity": -math.inf, "1e400": BIG_FLOAT,
    "10^30": 10**30, "10^400": 10**400, "negative": -1, "link": LINK, "anchor": ANCHOR,
}


def base_report() -> dict:
    """The bundled report, lists cut to one entry (the schema is the same for every entry)."""
    r = json.loads(bundled_reports()[0].read_text())
    r["results"]["n_sweep"] = r["results"]["n_sweep"][:1]
    for section in ("throughput_causal_False", "throughput_causal_True"):
        r["results"][section]["flash_triton_configs"] = r["results"][section]["flash_triton_configs"][:1]
    return r


def fields(node, path=()):
    """Every path to a value in the report, one per field of the schema (the same field of another implementation,
    section or list entry is left out)."""
    seen = set()

    def walk(node, path):
        signature = tuple(re.sub(r"^(naive|tiled_torch|flash_triton|sdpa_flash|sdpa_math|tiled)$|_causal_(True|False)$",
                                 "*", str(p)) for p in path)
        if signature in seen:
            return
        seen.add(signature)
        if path:
            yield path
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in children:
            yield from walk(value, path + (key,))

    yield from walk(node, path)


def wrong_type(value):
    if isinstance(value, bool):
        return 1
    if isinstance(value, (int, float)):
        return "12"
    if isinstance(value, str):
        return 12
    return [] if isinstance(value, dict) else {"0": 1}


def mutated(report: dict, path: tuple, mutation: str) -> str:
    r = json.loads(json.dumps(report))
    parent = r
    for p in path[:-1]:
        parent = parent[p]
    if mutation == "missing":
        del parent[path[-1]]
    else:
        value = wrong_type(parent[path[-1]]) if mutation == "wrong_type" else MUTATIONS[mutation]
        parent[path[-1]] = value
    return json.dumps(r).replace(f'"{BIG_FLOAT}"', "1e400")


def finite(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, list):
        return all(finite(v) for v in value)
    return not isinstance(value, int) or abs(value) < 2**63


@pytest.fixture(autouse=True)
def bare_mode_quiet():
    """Streamlit warns at every element drawn without a server: not here."""
    import logging

    import labs.gpu.measure  # noqa: F401 - creates Streamlit's loggers

    names = [name for name in list(logging.root.manager.loggerDict) if name.startswith("streamlit")]
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    yield
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)


def render(report) -> None:
    """The measure view's functions that show a report: header, captions, figures, the table, Fig. 2."""
    from labs.gpu.measure_presets import fig2_preset
    from labs.gpu.measure_reports import show_report

    show_report(report, "fuzz")
    fig2_preset(report)


def check(raw: str, rendered: dict) -> str:
    """The coded error's code, or "ok" for a report with finite numbers that renders."""
    try:
        report = parse_report(raw, "fuzz.json")
    except ReportError as e:
        assert e.code in ReportError.CODES
        return e.code
    assert finite(report.runs) and finite(report.traffic) and finite(report.fig2) and finite(report.naive_dies)
    key = repr(report)
    if key not in rendered:  # a mutation the rows do not read renders as the original did
        render(report)
        rendered[key] = True
    return "ok"


def test_every_field_mutated_gives_the_coded_error_or_a_report_that_renders():
    report = base_report()
    rendered: dict = {}
    assert check(json.dumps(report), rendered) == "ok"
    outcomes = {}
    for path in fields(report):
        for mutation in (*MUTATIONS, "missing"):
            outcomes[path, mutation] = check(mutated(report, path, mutation), rendered)
    assert len(rendered) > 20  # mutations that still make a report (strings, optional fields) were rendered
    assert sum(code == "bad_field" for code in outcomes.values()) > len(outcomes) / 2


@pytest.mark.parametrize("field, mutation", [
    ("results.throughput_causal_False.runs.naive.flops", "10^400"),  # the issue's crashes
    ("results.throughput_causal_False.runs.naive.peak_bytes", "infinity"),
    ("results.throughput_causal_False.runs.naive.peak_bytes", "nan"),
    ("modelled_l2.l2_bytes", "10^400"),
    ("results.n_sweep.0.runs.naive.config.H", "10^30"),
    ("results.hbm_causal_True.simulated.naive.l2_model.l2_traffic_bytes", "1e400"),
    ("results.preset_flash_fig2.paper.standard.runtime_ms", "negative"),
    ("device.kind", "link"),
    ("results.throughput_causal_False.runs.naive.impl", "anchor"),  # a name that would reach a figure's legend
    ("results.hbm_causal_False.measured.naive.reason", "link"),
])
def test_the_issues_fields_are_refused_by_name(field, mutation):
    path = tuple(int(p) if p.isdigit() else p for p in field.split("."))
    with pytest.raises(ReportError) as e:
        parse_report(mutated(base_report(), path, mutation))
    assert (e.value.code, e.value.params) == ("bad_field", {"field": field})


def run_with_error(code: str, params) -> str:
    report = base_report()
    run = report["results"]["throughput_causal_False"]["runs"]["naive"]
    run |= {"time_ms": None, "peak_bytes": None, "error": code, "error_params": params}
    return json.dumps(report)


GOOD_PARAMS = {
    "unavailable": {"reason": "sdpa_flash_needs_cuda"},
    "too_large": {"needed_bytes": 10**12, "free_bytes": 10**10, "matrix_bytes_per_head": 4 * 10**10, "matrices": 2,
                  "batch_heads": 16, "N": 100_000, "bytes_per_element": 4, "mask_bytes": 0, "output_bytes": 10**8},
    "out_of_memory": {"needed_bytes": 10**12, "free_bytes": 10**10},
    "busy": {},
    "too_slow": {"seconds": 208.3, "limit_s": 20.0, "n": 8192, "bh": 16, "cal_n": 256, "cal_bh": 16,
                 "cal_ms": 50.9, "work": "block_pairs", "units": 4194304, "cal_units": 4096, "factor": 1024.0,
                 "calls": 4},
    "over_time": {"first_call_s": 30.0, "left_s": 12.5, "limit_s": 20.0},
}


def test_the_good_params_cover_every_code():
    assert set(GOOD_PARAMS) == set(ERROR_PARAMS)
    for code, params in GOOD_PARAMS.items():
        assert set(ERROR_PARAMS[code]) <= set(params)


@pytest.mark.parametrize("code", list(ERROR_PARAMS))
def test_error_codes_need_their_params(code):
    rendered: dict = {}
    assert check(run_with_error(code, GOOD_PARAMS[code]), rendered) == "ok"
    field = "results.throughput_causal_False.runs.naive.error_params"
    for key in GOOD_PARAMS[code]:
        for bad in ("missing", "12", math.nan, 10**400, -5, None):
            params = {k: v for k, v in GOOD_PARAMS[code].items() if k != key or bad != "missing"}
            if bad != "missing":
                params[key] = bad
            try:
                parse_report(run_with_error(code, params))
            except ReportError as e:
                assert e.code == "bad_field" and e.params["field"].startswith(field), (key, bad)
                continue
            # without the arithmetic's first figure, the arithmetic is not shown and not needed
            assert (code, key, bad) == ("too_large", "matrix_bytes_per_head", "missing")
    with pytest.raises(ReportError):
        parse_report(run_with_error("unavailable", {}))  # the issue's KeyError
    with pytest.raises(ReportError):
        parse_report(run_with_error("exploded", {}))  # a code this app has no message for
    with pytest.raises(ReportError):
        parse_report(run_with_error("unavailable", {"reason": LINK}))


def test_params_beyond_a_codes_are_dropped():
    raw = run_with_error("busy", {"note": LINK, "needed_bytes": math.inf})
    run = next(r for r in parse_report(raw).runs if r["impl"] == "naive" and r["section"].endswith("False"))
    assert run["error"] == "busy" and run["error_params"] == {}
