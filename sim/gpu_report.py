"""Measurement reports written by `python -m sim.bench gpu`: load and check one (bundled or uploaded), list the
bundled ones, and flatten one into rows for tables and figures, each row with the label of its source.

A report is checked by building every row from it: a field the rows read that is missing or of the wrong type is
a ReportError("bad_field", {"field": "results.n_sweep.0.runs.naive.time_ms"}), never a KeyError later on the page.
Sections are optional (the bench saves after each one, so a run cut short is still a report).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sim.errors import CodedError

MEASUREMENTS_DIR = Path(__file__).resolve().parent.parent / "assets" / "measurements"
MAX_BYTES = 4 * 1024 * 1024  # the CPU report is ~50 kB, a GPU one a few times that
ERROR_CODES = ("too_large", "not_text", "not_json", "not_a_report", "bad_field")
SIMULATED = "simulated · IO model"  # the source label of the IO simulator's figures (as the bench writes it)
COUNTERS = ("hbm_read_bytes", "hbm_write_bytes", "l2_bytes", "l1_bytes")
RUN_SECTIONS = ("throughput_causal_False", "throughput_causal_True")
TRAFFIC_SECTIONS = ("hbm_causal_False", "hbm_causal_True")
NUMBER = (int, float)


class ReportError(CodedError):
    """A file that is not a measurement report: `code` names the reason, `params` fills the translated message."""

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
    fig2: dict | None  # the FlashAttention Figure 2 preset: paper's row, config, forward and forward+backward runs
    naive_dies: dict | None  # the seed's N = 100,000 preset: the arithmetic and whether it was refused

    @property
    def sources(self) -> list[str]:
        """Every source label in the report, in order of appearance."""
        labels = [r["source"] for r in self.runs + self.traffic if r["source"]]
        return list(dict.fromkeys(labels))


def _get(d: dict, key: str, types: type | tuple, path: str, optional: bool = False):
    """d[key] if it has one of `types` (None allowed when optional), else a bad_field error naming path.key."""
    value = d.get(key) if isinstance(d, dict) else None
    types = types if isinstance(types, tuple) else (types,)
    if value is None and optional:
        return None
    if isinstance(value, types) and (bool in types or not isinstance(value, bool)):  # True is not a number here
        return value
    raise ReportError("bad_field", {"field": f"{path}.{key}" if path else key})


def run_row(run: dict, section: str = "", path: str = "run") -> dict:
    """One measured run (a Measurement as a dict, as the bench writes it) as a flat row."""
    config = _get(run, "config", dict, path)
    row = {"section": section, "impl": _get(run, "impl", str, path)}
    for key in ("B", "H", "N", "d"):
        row[key] = _get(config, key, int, f"{path}.config")
    row["dtype"] = _get(config, "dtype", str, f"{path}.config")
    row["causal"] = _get(config, "causal", bool, f"{path}.config")
    row["backward"] = _get(config, "backward", bool, f"{path}.config", optional=True) or False
    row["time_ms"] = _get(run, "time_ms", NUMBER, path, optional=True)
    row["peak_bytes"] = _get(run, "peak_bytes", NUMBER, path, optional=True)
    row["flops"] = _get(run, "flops", NUMBER, path)
    row["tflops_per_s"] = row["flops"] / row["time_ms"] / 1e9 if row["time_ms"] else None
    for key in COUNTERS:
        row[key] = _get(run, key, NUMBER, path, optional=True)
    row["counters_source"] = _get(run, "counters_source", str, path, optional=True)
    row["counters_reason"] = _get(run, "counters_reason", str, path, optional=True)
    row["error"] = _get(run, "error", str, path, optional=True)
    row["error_params"] = _get(run, "error_params", dict, path, optional=True) or {}
    row["source"] = _get(run, "source", str, path)
    return row


def simulated_rows(sim: dict, impl: str, config: dict, section: str, path: str) -> list[dict]:
    """The simulator's two-level (HBM ↔ SRAM) and three-level (with the L2) figures for one algorithm."""
    base = {"section": section, "N": config["N"], "B": config["B"], "H": config["H"], "impl": impl,
            "source": _get(sim, "source", str, path), "reason": None, "l1_bytes": None}
    l2 = _get(sim, "l2_model", dict, path)
    return [{**base, "model": "two_level", "hbm_read_bytes": _get(sim, "hbm_read_bytes", NUMBER, path),
             "hbm_write_bytes": _get(sim, "hbm_write_bytes", NUMBER, path), "l2_bytes": None},
            {**base, "model": "three_level", "hbm_read_bytes": _get(l2, "hbm_read_bytes", NUMBER, f"{path}.l2_model"),
             "hbm_write_bytes": _get(l2, "hbm_write_bytes", NUMBER, f"{path}.l2_model"),
             "l2_bytes": _get(l2, "l2_traffic_bytes", NUMBER, f"{path}.l2_model")}]


def _traffic(entry: dict, section: str, path: str) -> list[dict]:
    """Measured counters (or why there are none) and simulated bytes of one section."""
    c = _get(entry, "config", dict, path)
    config = {key: _get(c, key, int, f"{path}.config") for key in ("B", "H", "N")}
    rows = []
    for impl, m in _get(entry, "measured", dict, path).items():
        where = f"{path}.measured.{impl}"
        if not isinstance(m, dict):
            raise ReportError("bad_field", {"field": where})
        rows.append({"section": section, **config, "impl": impl, "model": "measured",
                     "source": _get(m, "source", str, where, optional=True),
                     "reason": _get(m, "reason", str, where, optional=True),
                     **{key: _get(m, key, NUMBER, where, optional=True) for key in COUNTERS}})
    for algo, sim in _get(entry, "simulated", dict, path).items():
        rows += simulated_rows(sim, algo, config, section, f"{path}.simulated.{algo}")
    return rows


def _runs(entry: dict, key: str, section: str, path: str) -> list[dict]:
    runs = _get(entry, key, dict, path)
    return [run_row(run, section, f"{path}.{key}.{impl}") for impl, run in runs.items()]


def _fig2(entry: dict, path: str) -> dict:
    paper = _get(entry, "paper", dict, path)
    for name in ("standard", "flashattention"):
        row = _get(paper, name, dict, f"{path}.paper")
        for key in ("hbm_gb", "runtime_ms"):
            _get(row, key, NUMBER, f"{path}.paper.{name}")
    config = _get(entry, "config", dict, path)
    for key in ("B", "H", "N", "d"):
        _get(config, key, int, f"{path}.config")
    _get(config, "dtype", str, f"{path}.config")
    return {"paper": paper, "config": config,
            "paper_config": _get(entry, "paper_config", dict, path, optional=True),
            "reduced": _get(entry, "reduced", bool, path, optional=True),
            "forward": _runs(entry, "runs", "preset_flash_fig2", path),
            "forward_backward": (_runs(entry, "runs_backward", "preset_flash_fig2", path)
                                 if "runs_backward" in entry else [])}


def _naive_dies(entry: dict, path: str) -> dict:
    keys = ("needed_bytes", "matrix_bytes_per_head", "matrices", "batch_heads", "N", "bytes_per_element",
            "free_bytes")
    return {**{key: _get(entry, key, int, path) for key in keys}, "refused": _get(entry, "refused", bool, path),
            "config": _get(entry, "config", dict, path)}


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
    except (ValueError, RecursionError):
        raise ReportError("not_json") from None
    if not isinstance(data, dict) or data.get("bench") != "gpu":
        raise ReportError("not_a_report")
    device = _get(data, "device", dict, "")
    results = _get(data, "results", dict, "")
    kind = _get(device, "kind", str, "device")
    if kind not in ("cuda", "cpu"):
        raise ReportError("bad_field", {"field": "device.kind"})
    versions = _get(data, "versions", dict, "")
    for key in versions:
        _get(versions, key, str, "versions", optional=True)
    l2 = _get(data, "modelled_l2", dict, "", optional=True)
    if l2 is not None:
        for key, types in (("l2_bytes", int), ("n_sm", int)):
            _get(l2, key, types, "modelled_l2", optional=True)
        _get(l2, "from", str, "modelled_l2")
    runs, traffic = [], []
    for section in RUN_SECTIONS:
        if section in results:
            runs += _runs(results[section], "runs", section, f"results.{section}")
            entry = results[section]
            if "flash_triton_best" in entry:
                best = _get(entry, "flash_triton_best", dict, f"results.{section}")
                runs.append(run_row(best, section, f"results.{section}.flash_triton_best"))
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
    return Report(name, _get(device, "name", str, "device"), kind, _get(data, "date", str, ""),
                  _get(data, "quick", bool, "", optional=True) or False, _get(data, "driver", str, "", optional=True),
                  versions, l2, runs, traffic, fig2, dies)


def bundled_reports() -> list[Path]:
    """The reports shipped under assets/measurements/, newest name last."""
    return sorted(MEASUREMENTS_DIR.glob("*.json"))


def load_report(path: Path) -> Report:
    return parse_report(path.read_bytes(), path.name)
