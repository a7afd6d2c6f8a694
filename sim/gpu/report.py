"""Measurement reports written by `python -m benchmarks gpu`: load and check one (bundled or uploaded), list the
bundled ones, and flatten one into rows for tables and figures, each row with the label of its source.

A report is checked by building every row from it: a field the rows read that is missing, of the wrong type, not
finite or out of its range, an implementation, error code or reason this app does not know, or an error without
the params its message reads, is a ReportError("bad_field", {"field": "results.n_sweep.0.runs.naive.time_ms"}),
never a KeyError, an OverflowError or a NaN later on the page. Sections are optional (the bench saves after each
one, so a run cut short is still a report). Strings are kept as they are: the page escapes them where it shows them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sim.core.errors import CodedError
from sim.core.upload import MB
from sim.gpu.bench import PRESETS
from sim.gpu.measure import COUNTER_REASONS, DTYPE_BYTES, ERROR_PARAMS, IMPLS, UNAVAILABLE_REASONS, WORK_KINDS
from sim.gpu.memsim import MemsimError, attention_io, block_sizes

MEASUREMENTS_DIR = Path(__file__).resolve().parents[2] / "assets" / "measurements"
MAX_BYTES = 4 * MB  # the CPU report is ~50 kB, a GPU one a few times that; MB as the file widget counts it
ERROR_CODES = ("too_large", "not_text", "not_json", "not_a_report", "bad_field")
SIMULATED = "simulated · IO model"  # the source label of the IO simulator's figures (as the bench writes it)
COUNTERS = ("hbm_read_bytes", "hbm_write_bytes", "l2_bytes", "l1_bytes")
RUN_SECTIONS = ("throughput_causal_False", "throughput_causal_True")
TRAFFIC_SECTIONS = ("hbm_causal_False", "hbm_causal_True")
ALGOS = ("naive", "tiled")  # the simulator's algorithms
# ranges of the numbers a report holds: wide enough for any device, small enough for int64 columns, N², float()
MAX_COUNT = 2**62  # bytes, FLOPs, work units
MAX_FLOAT = 1e12  # milliseconds, seconds, ratios, the paper's GB
SIZE_RANGE = {"B": (1, 2**20), "H": (1, 2**20), "N": (1, 2**24), "d": (1, 2**16)}
PARAM_KINDS = {  # error_params: key -> (lo, hi) of an int, "float", or the strings allowed
    "reason": UNAVAILABLE_REASONS, "work": WORK_KINDS,
    "needed_bytes": (0, MAX_COUNT), "free_bytes": (0, MAX_COUNT), "matrix_bytes_per_head": (0, MAX_COUNT),
    "mask_bytes": (0, MAX_COUNT), "output_bytes": (0, MAX_COUNT), "units": (0, MAX_COUNT),
    "cal_units": (1, MAX_COUNT), "N": SIZE_RANGE["N"], "n": SIZE_RANGE["N"], "cal_n": SIZE_RANGE["N"],
    "bh": (1, 2**40), "cal_bh": (1, 2**40), "batch_heads": (1, 2**40), "matrices": (1, 64),
    "bytes_per_element": (1, 64), "calls": (1, 2**20),
    "seconds": "float", "limit_s": "float", "cal_ms": "float", "factor": "float", "first_call_s": "float",
    "left_s": "float",
}
ARITHMETIC = ("matrix_bytes_per_head", "matrices", "batch_heads", "N", "bytes_per_element", "mask_bytes",
              "output_bytes")  # memory_needed's arithmetic of an N×N implementation, shown with its refusal


class ReportError(CodedError):
    """A file that is not a measurement report: `code` names the reason, `params` fill the translated message."""

    CODES = ERROR_CODES


@dataclass(frozen=True)
class Report:
    """One measurement report, flattened: what the page shows of it."""

    name: str  # file name
    device: str  # the device measured, e.g. "NVIDIA H200" or the CPU's model name
    kind: str  # "cuda" or "cpu"
    date: str  # ISO 8601, UTC
    quick: bool  # the tests' tiny run
    driver: str | None  # the NVIDIA driver's version (CUDA)
    versions: dict  # torch, cuda, triton, ncu: their versions, None where absent
    modelled_l2: dict | None  # the L2 the simulator's three-level figures assume: l2_bytes, n_sm, from (which chip)
    runs: list[dict]  # run_row of every timed run
    traffic: list[dict]  # traffic rows: measured counters and the simulator's two- and three-level figures
    fig2: dict | None  # the FlashAttention Figure 2 preset: paper's row, config, forward and forward+backward runs,
    # traffic rows
    naive_dies: dict | None  # the seed's N = 100,000 preset: the arithmetic and whether it was refused

    @property
    def sources(self) -> list[str]:
        """Every source label in the report, in order of appearance."""
        labels = [r["source"] for r in self.runs + self.traffic if r["source"]]
        return list(dict.fromkeys(labels))


def _bad(path: str, key: str | None = None):
    return ReportError("bad_field", {"field": f"{path}.{key}" if path and key is not None else (key or path)})


def _get(d: dict, key: str, types: type | tuple, path: str, optional: bool = False):
    """d[key] if it has one of `types` (None allowed when optional), else a bad_field error naming path.key."""
    value = d.get(key) if isinstance(d, dict) else None
    types = types if isinstance(types, tuple) else (types,)
    if value is None and optional:
        return None
    if isinstance(value, types) and (bool in types or not isinstance(value, bool)):  # True is not a number here
        return value
    raise _bad(path, key)


def _int(d: dict, key: str, path: str, lo: int = 0, hi: int = MAX_COUNT, optional: bool = False) -> int | None:
    """An integer from lo to hi (a huge JSON integer is one too: refused here, before float() overflows)."""
    value = _get(d, key, int, path, optional)
    if value is not None and not lo <= value <= hi:
        raise _bad(path, key)
    return value


def _number(d: dict, key: str, path: str, hi: float = MAX_COUNT, optional: bool = False) -> int | float | None:
    """A finite number from 0 to hi: NaN, ±Infinity (JSON's NaN, Infinity, 1e400) and negatives are refused."""
    value = _get(d, key, (int, float), path, optional)
    if value is not None and not 0 <= value <= hi:  # False for NaN
        raise _bad(path, key)
    return value


def _text(d: dict, key: str, path: str, optional: bool = False, choices: tuple | None = None) -> str | None:
    value = _get(d, key, str, path, optional)
    if value is not None and choices is not None and value not in choices:
        raise _bad(path, key)
    return value


def _size(d: dict, key: str, path: str, optional: bool = False) -> int | None:
    return _int(d, key, path, *SIZE_RANGE[key], optional=optional)


def _config(config: dict, path: str, causal: bool = True) -> dict:
    """B, H, N, d, dtype (and causal, backward) of a run, checked."""
    row = {key: _size(config, key, path) for key in ("B", "H", "N", "d")}
    row["dtype"] = _text(config, "dtype", path, choices=tuple(DTYPE_BYTES))
    if causal:
        row["causal"] = _get(config, "causal", bool, path)
    return row


def _reason(d: dict, key: str, path: str) -> str | None:
    """Why a run has no counters: one of COUNTER_REASONS, or "failed: <detail>"."""
    value = _text(d, key, path, optional=True)
    if value is not None and value not in COUNTER_REASONS and not value.startswith("failed"):
        raise _bad(path, key)
    return value


def _error(run: dict, path: str) -> tuple[str | None, dict]:
    """A run's error code and the params its message reads, checked; other params are dropped."""
    code = _text(run, "error", path, optional=True, choices=tuple(ERROR_PARAMS))
    params = _get(run, "error_params", dict, path, optional=True) or {}
    if code is None:
        return None, {}
    where = f"{path}.error_params"
    keys = ERROR_PARAMS[code]
    if code in ("too_large", "out_of_memory") and "matrix_bytes_per_head" in params:
        keys += ARITHMETIC
    checked = {}
    for key in keys:
        kind = PARAM_KINDS[key]
        if kind == "float":
            checked[key] = _number(params, key, where, MAX_FLOAT)
        elif isinstance(kind[0], str):
            checked[key] = _text(params, key, where, choices=kind)
        else:
            checked[key] = _int(params, key, where, *kind)
    return code, checked


def run_row(run: dict, section: str = "", path: str = "run") -> dict:
    """One measured run (a Measurement as a dict, as the bench writes it) as a flat row."""
    config = _get(run, "config", dict, path)
    row = {"section": section, "impl": _text(run, "impl", path, choices=IMPLS)}
    row |= _config(config, f"{path}.config")
    row["backward"] = _get(config, "backward", bool, f"{path}.config", optional=True) or False
    for key in ("block_m", "block_n", "num_warps", "num_stages"):  # the kernel's, not shown
        _int(config, key, f"{path}.config", 1, 2**16, optional=True)
    row["time_ms"] = _number(run, "time_ms", path, MAX_FLOAT, optional=True)
    row["peak_bytes"] = _number(run, "peak_bytes", path, optional=True)
    row["flops"] = _number(run, "flops", path)
    row["tflops_per_s"] = row["flops"] / row["time_ms"] / 1e9 if row["time_ms"] else None
    for key in COUNTERS:
        row[key] = _number(run, key, path, optional=True)
    _number(run, "tflops_per_s", path, MAX_FLOAT, optional=True)  # computed again above, from the checked figures
    _text(run, "device", path, optional=True)
    row["counters_source"] = _text(run, "counters_source", path, optional=True)
    row["counters_reason"] = _reason(run, "counters_reason", path)
    row["memory_source"] = _text(run, "memory_source", path, optional=True)
    row["error"], row["error_params"] = _error(run, path)
    row["source"] = _text(run, "source", path)
    return row


def simulated_rows(sim: dict, impl: str, config: dict, section: str, path: str) -> list[dict]:
    """The simulator's two-level (HBM ↔ SRAM) and three-level (with the L2) figures for one algorithm."""
    base = {"section": section, "N": config["N"], "B": config["B"], "H": config["H"], "impl": impl,
            "source": _text(sim, "source", path), "reason": None, "l1_bytes": None}
    l2 = _get(sim, "l2_model", dict, path)
    _int(l2, "l2_bytes", f"{path}.l2_model", optional=True)
    _int(l2, "n_sm", f"{path}.l2_model", hi=2**20, optional=True)
    return [{**base, "model": "two_level", "hbm_read_bytes": _number(sim, "hbm_read_bytes", path),
             "hbm_write_bytes": _number(sim, "hbm_write_bytes", path), "l2_bytes": None},
            {**base, "model": "three_level", "hbm_read_bytes": _number(l2, "hbm_read_bytes", f"{path}.l2_model"),
             "hbm_write_bytes": _number(l2, "hbm_write_bytes", f"{path}.l2_model"),
             "l2_bytes": _number(l2, "l2_traffic_bytes", f"{path}.l2_model")}]


def _flash_config(entry: dict, path: str) -> None:
    """The Triton kernel's configuration a section used (not shown, but part of the report)."""
    config = _get(entry, "flash_config", dict, path, optional=True) or {}
    for key in ("block_m", "block_n", "num_warps", "num_stages"):
        _int(config, key, f"{path}.flash_config", 1, 2**16, optional=True)


def _traffic(entry: dict, section: str, path: str) -> list[dict]:
    """Measured counters (or why there are none) and simulated bytes of one section."""
    c = _config(_get(entry, "config", dict, path), f"{path}.config")
    config = {key: c[key] for key in ("B", "H", "N")}
    _flash_config(entry, path)
    for key in ("simulated_naive_over_tiled_hbm", "measured_naive_over_tiled_hbm"):
        _number(entry, key, path, MAX_FLOAT, optional=True)
    rows = []
    for impl, m in _get(entry, "measured", dict, path).items():
        where = f"{path}.measured.{impl}"
        if impl not in IMPLS or not isinstance(m, dict):
            raise _bad(where)
        rows.append({"section": section, **config, "impl": impl, "model": "measured",
                     "source": _text(m, "source", where, optional=True), "reason": _reason(m, "reason", where),
                     **{key: _number(m, key, where, optional=True) for key in COUNTERS}})
    for algo, sim in _get(entry, "simulated", dict, path).items():
        if algo not in ALGOS:
            raise _bad(f"{path}.simulated.{algo}")
        rows += simulated_rows(sim, algo, config, section, f"{path}.simulated.{algo}")
    return rows


def _runs(entry: dict, key: str, section: str, path: str) -> list[dict]:
    runs = _get(entry, key, dict, path)
    return [run_row(run, section, f"{path}.{key}.{impl}") for impl, run in runs.items()]


def _throughput(entry: dict, section: str, path: str) -> list[dict]:
    """A throughput section's runs, its Triton kernel's best configuration among them; the others checked."""
    rows = _runs(entry, "runs", section, path)
    config = _get(entry, "config", dict, path, optional=True)
    if config is not None:
        _config(config, f"{path}.config")
    for i, run in enumerate(_get(entry, "flash_triton_configs", list, path, optional=True) or []):
        run_row(run, section, f"{path}.flash_triton_configs.{i}")
    _number(entry, "flash_triton_over_sdpa_flash", path, MAX_FLOAT, optional=True)
    if "flash_triton_best" in entry:
        rows.append(run_row(_get(entry, "flash_triton_best", dict, path), section, f"{path}.flash_triton_best"))
    return rows


def _fig2(entry: dict, path: str) -> dict:
    paper = _get(entry, "paper", dict, path)
    checked = {}
    for name in ("standard", "flashattention"):
        row = _get(paper, name, dict, f"{path}.paper")
        checked[name] = {key: _number(row, key, f"{path}.paper.{name}", MAX_FLOAT) for key in ("hbm_gb", "runtime_ms")}
    _text(paper, "note", f"{path}.paper", optional=True)
    paper_config = _get(entry, "paper_config", dict, path, optional=True)
    return {"paper": checked, "config": _config(_get(entry, "config", dict, path), f"{path}.config"),
            "paper_config": _config(paper_config, f"{path}.paper_config", causal=False) if paper_config else None,
            "reduced": _get(entry, "reduced", bool, path, optional=True),
            "forward": _runs(entry, "runs", "preset_flash_fig2", path),
            "forward_backward": (_runs(entry, "runs_backward", "preset_flash_fig2", path)
                                 if "runs_backward" in entry else []),
            # bytes of the forward: measured (counters) and simulated, for the figure's right panel
            "traffic": _traffic(entry, "preset_flash_fig2", path) if "simulated" in entry else []}


def _naive_dies(entry: dict, path: str) -> dict:
    checked = {key: _int(entry, key, path, *PARAM_KINDS[key]) for key in ARITHMETIC + ("needed_bytes", "free_bytes")}
    config = _get(entry, "config", dict, path)
    return {**checked, "refused": _get(entry, "refused", bool, path),
            "config": {"impl": _text(config, "impl", f"{path}.config", choices=IMPLS),
                       **_config(config, f"{path}.config")}}


def parse_report(raw: bytes | str, name: str = "") -> Report:
    """Check and flatten a report: bytes (an upload) or text. Raises ReportError with a code, never anything else."""
    if len(raw) > MAX_BYTES:
        raise ReportError("too_large", {"size": len(raw), "limit": MAX_BYTES})
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ReportError("not_text") from None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # ValueError: also an integer of more than 4,300 digits
        raise ReportError("not_json") from None
    if not isinstance(data, dict) or data.get("bench") != "gpu":
        raise ReportError("not_a_report")
    device = _get(data, "device", dict, "")
    results = _get(data, "results", dict, "")
    kind = _text(device, "kind", "device", choices=("cuda", "cpu"))
    for key in ("cores", "l2_bytes", "memory_bytes"):  # not shown, but part of the report
        _int(device, key, "device", optional=True)
    _text(device, "torch_version", "device", optional=True)
    versions = _get(data, "versions", dict, "")
    for key in versions:
        _text(versions, key, "versions", optional=True)
    l2 = _get(data, "modelled_l2", dict, "", optional=True)
    if l2 is not None:
        l2 = {"l2_bytes": _int(l2, "l2_bytes", "modelled_l2", optional=True),
              "n_sm": _int(l2, "n_sm", "modelled_l2", hi=2**20, optional=True),
              "from": _text(l2, "from", "modelled_l2")}
    runs, traffic = [], []
    for section in RUN_SECTIONS:
        if section in results:
            runs += _throughput(results[section], section, f"results.{section}")
    for section in TRAFFIC_SECTIONS:
        if section in results:
            traffic += _traffic(results[section], section, f"results.{section}")
    for i, entry in enumerate(_get(results, "n_sweep", list, "results", optional=True) or []):
        path = f"results.n_sweep.{i}"
        if isinstance(entry, dict) and "runs" in entry:  # reports written before the sweep was timed have none
            runs += _runs(entry, "runs", "n_sweep", path)
        traffic += _traffic(entry, "n_sweep", path)
    fig2 = _fig2(results["preset_flash_fig2"], "results.preset_flash_fig2") if "preset_flash_fig2" in results \
        else None
    dies = _naive_dies(results["preset_naive_dies"], "results.preset_naive_dies") if "preset_naive_dies" in results \
        else None
    return Report(name, _text(device, "name", "device"), kind, _text(data, "date", ""),
                  _get(data, "quick", bool, "", optional=True) or False, _text(data, "driver", "", optional=True),
                  versions, l2, runs, traffic, fig2, dies)


def bundled_reports() -> list[Path]:
    """The reports shipped under assets/measurements/, newest name last."""
    return sorted(MEASUREMENTS_DIR.glob("*.json"))


def load_report(path: Path) -> Report:
    return parse_report(path.read_bytes(), path.name)


# The measure view's figures (labs/gpu/measure*.py translates and shows them)

def run_config(v: dict, cuda: bool) -> dict:
    """The measured configuration: the page's sizes and blocks; float32 on a CPU (its half-precision matmuls are
    slow and say nothing about a GPU)."""
    dtype = v["dtype"] if cuda else "float32"
    try:
        bm, bn = block_sizes("tiled", v["d"], DTYPE_BYTES[dtype], v["block_m"] or None, v["block_n"] or None,
                             v["sram_kib"] * 1024)
    except MemsimError:  # the page's SRAM cannot hold Algorithm 1's tiles (the simulator view says so): 64 × 64
        bm = bn = 64
    # the Triton kernel takes powers of two from 16 (tl.dot's tiles): Algorithm 1's 96 becomes 64, here and in the
    # simulator's figures next to the measurement
    bm, bn = (max(16, 1 << (b.bit_length() - 1)) for b in (bm, bn))
    return {"B": v["B"], "H": v["H"], "N": v["N"], "d": v["d"], "dtype": dtype, "causal": v["causal"],
            "block_m": bm, "block_n": bn}


def fig2_config(cuda: bool) -> dict:
    """FlashAttention's Figure 2 setting as measured here, in 128 × 128 blocks; on a CPU the same sequences, fewer
    of them (B = 1, H = 4, float32: the paper's 64 × 16 sequences take minutes there)."""
    p = PRESETS["flash_fig2"]
    c = {k: p[k] for k in ("B", "H", "N", "d", "dtype", "causal")} | {"block_m": 128, "block_n": 128}
    return c if cuda else c | {"B": 1, "H": 4, "dtype": "float32"}


def simulated_traffic(c: dict) -> list[dict]:
    """The IO simulator's two-level HBM bytes for naive and tiled at a measured configuration `c`, as traffic rows."""
    common = {"batch_heads": c["B"] * c["H"], "dtype_bytes": DTYPE_BYTES[c["dtype"]], "causal": c["causal"],
              "max_events": 0}
    rows = []
    for algo, blocks in (("naive", {}), ("tiled", {"block_m": c["block_m"], "block_n": c["block_n"]})):
        r = attention_io(algo, c["N"], c["d"], **common, **blocks)
        rows.append({"impl": algo, "model": "two_level", "N": c["N"], "B": c["B"], "H": c["H"],
                     "hbm_read_bytes": r.hbm_read_bytes, "hbm_write_bytes": r.hbm_write_bytes, "l2_bytes": None,
                     "l1_bytes": None, "source": SIMULATED, "reason": None})
    return rows


def time_left(guard: dict, i: int, elapsed: float) -> float:
    """The seconds run `i` of a click planned as `guard` may take after `elapsed` seconds: the device's limit less
    the time spent and what the runs after it are estimated to need, never below 0."""
    reserved = sum(e["seconds"] for e in guard["runs"][i + 1:])
    return max(0.0, guard["limit_s"] - elapsed - reserved)


def guard_summary(guard: dict, lines: int) -> tuple[list[dict], int, float]:
    """A refused click's runs that take time, the longest first: the first `lines` of them, then how many are left
    and the seconds they add up to."""
    runs = sorted((e for e in guard["runs"] if e["seconds"] > 0), key=lambda e: -e["seconds"])
    rest = runs[lines:]
    return runs[:lines], len(rest), sum(e["seconds"] for e in rest)


def arithmetic_figures(p: dict) -> dict | None:
    """The memory guard's figures (memory_needed's, with free_bytes) and the N × N elements of one matrix; None
    without the arithmetic (an out-of-memory run has only the bytes)."""
    return {**p, "elements": p["N"] ** 2} if "matrix_bytes_per_head" in p else None


def table_rows(runs: list[dict], simulated: list[dict]) -> list[dict]:
    """The measure view's table, untranslated: measured runs, then the simulator's bytes, one row each. Keys are
    the columns (impl, N, bh, dtype, pass, time, tflops, peak, hbm_read, hbm_write, l2, l1, source, note), a
    simulated row without those it has no figure for; pass is "fwd" or "fwd_bwd"; note names the row's message:
    "error", "counters" (why there are none, if so) or "model"."""
    rows = []
    for r in runs:
        rows.append({"impl": r["impl"], "N": r["N"], "bh": r["B"] * r["H"], "dtype": r["dtype"],
                     "pass": "fwd_bwd" if r["backward"] else "fwd", "time": r["time_ms"], "tflops": r["tflops_per_s"],
                     "peak": r["peak_bytes"], "hbm_read": r["hbm_read_bytes"], "hbm_write": r["hbm_write_bytes"],
                     "l2": r["l2_bytes"], "l1": r["l1_bytes"],
                     "source": " + ".join(filter(None, (r["source"], r.get("memory_source"), r["counters_source"]))),
                     "note": "error" if r["error"] else "counters"})
    for r in simulated:
        rows.append({"impl": r["impl"], "N": r["N"], "bh": r["B"] * r["H"], "pass": "fwd",
                     "hbm_read": r["hbm_read_bytes"], "hbm_write": r["hbm_write_bytes"], "l2": r["l2_bytes"],
                     "source": r["source"], "note": "model"})
    return rows
