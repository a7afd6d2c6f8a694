"""What the GPU lab's measure views share: the words of a run's time, refusal and table, the figures' labels,
and a click's runs measured under one time guard, its refusals shown."""
from __future__ import annotations

import time
from dataclasses import asdict

import streamlit as st

from sim.core.text import html, markup, md
from sim.gpu.claims import memory_notes
from sim.gpu.measure import IMPLS, measure_attention, plan_click
from sim.gpu.report import arithmetic_figures, guard_summary, run_row, simulated_traffic, table_rows, time_left
from sim.plots.gpu import HEIGHT
from sim.plots.gpu_measure import scaling_figures
from sim.plots.shapes import human_bytes
from ui import charts
from ui.i18n import t
from ui.sidebar import cached_device

P = "gpu.measure"
REPEATS = {"cuda": 10, "cpu": 3}
GUARD_LINES = 6  # the longest runs of a refused click, one line each; the rest summed in one
BYTES = ("peak", "hbm_read", "hbm_write", "l2", "l1")  # the table's columns of bytes


def impl_name(impl: str) -> str:
    """An implementation's name, or the simulator's algorithm ("tiled")."""
    return t(f"gpu.impls.{impl}") if impl in IMPLS else t(f"{P}.algo.{impl}")


def _num(x: float) -> str:
    """A figure of the time guard's arithmetic: two decimals below 10, none above."""
    return f"{x:,.2f}" if x < 10 else f"{x:,.0f}"


def guard_line(impl: str, e: dict) -> str:
    """One run's time estimate written out: the call timed here, the size factor, the calls."""
    return t(f"{P}.guard.line_{e['work']}", impl=impl, N=f"{e['n']:,}", bh=f"{e['bh']:,}", cal_n=f"{e['cal_n']:,}",
             cal_bh=f"{e['cal_bh']:,}", cal_ms=_num(e["cal_ms"]), factor=_num(e["factor"]), units=f"{e['units']:,}",
             cal_units=f"{e['cal_units']:,}", calls=e["calls"], seconds=_num(e["seconds"]))


def error_text(row: dict) -> str:
    """The translated reason a run has no time: unavailable, refused for memory or time, out of memory, busy."""
    p, code = row["error_params"], row["error"]
    if code == "unavailable":
        return t(f"{P}.error.unavailable", why=t(f"{P}.unavailable.{p['reason']}"))
    if code in ("too_large", "out_of_memory"):
        return t(f"{P}.error.{code}", needed=human_bytes(p["needed_bytes"]), free=human_bytes(p["free_bytes"]))
    if code == "too_slow":
        return t(f"{P}.error.too_slow", seconds=_num(p["seconds"]), limit=_num(p["limit_s"]),
                 line=guard_line(impl_name(row["impl"]), p))
    if code == "over_time":
        return t(f"{P}.error.over_time", first=_num(p["first_call_s"]), left=_num(p["left_s"]),
                 limit=_num(p["limit_s"]))
    return t(f"{P}.error.{code}")


def guard_text(guard: dict) -> str:
    """Why a click was not started: its runs' estimates, the longest first, against the device's limit."""
    kind = t(f"{P}.kind.{cached_device().kind}")
    if guard["busy"]:
        return t(f"{P}.error.busy")
    shown, more, more_seconds = guard_summary(guard, GUARD_LINES)
    lines = [guard_line(impl_name(e["impl"]) + (t(f"{P}.guard.backward") if e["backward"] else ""), e)
             for e in shown]
    if more:
        lines.append(t(f"{P}.guard.more", n=more, seconds=_num(more_seconds)))
    head = t(f"{P}.guard.refused", seconds=_num(guard["seconds"]), limit=_num(guard["limit_s"]), kind=kind)
    return "\n\n".join([head, "\n".join(f"- {line}" for line in lines), t(f"{P}.guard.advice")])


def arithmetic(p: dict) -> str:
    """How the memory guard's figure is made: N × N elements per matrix, matrices, heads, output."""
    a = arithmetic_figures(p)
    if a is None:
        return ""
    return t(f"{P}.arithmetic", N=f"{a['N']:,}", elements=f"{a['elements']:,}", elem=a["bytes_per_element"],
             per_head=f"{a['matrix_bytes_per_head']:,}", per_head_h=human_bytes(a["matrix_bytes_per_head"]),
             matrices=a["matrices"], bh=a["batch_heads"], mask=human_bytes(a["mask_bytes"]),
             output=human_bytes(a["output_bytes"]), needed=f"{a['needed_bytes']:,}",
             needed_h=human_bytes(a["needed_bytes"]), free=human_bytes(a["free_bytes"]))


def counters_note(row: dict) -> str:
    """Why a row has no counters (plain text: a table cell, where nothing is Markdown)."""
    reason = row.get("counters_reason") or row.get("reason")
    if not reason:
        return ""
    if reason.startswith("failed"):
        return t(f"{P}.counters.failed", detail=reason.partition(": ")[2])
    return t(f"{P}.counters.{reason}")


def bytes_text(value) -> str:
    return "" if value is None else human_bytes(int(value))


def run_table(runs: list[dict], simulated: list[dict]) -> list[dict]:
    """Rows for st.dataframe: measured runs, then the simulator's bytes, each with its source."""
    col = {k: t(f"{P}.col.{k}") for k in ("impl", "N", "bh", "dtype", "pass", "time", "tflops", "peak", "hbm_read",
                                          "hbm_write", "l2", "l1", "source", "note")}
    notes = {"error": error_text, "counters": counters_note, "model": lambda r: t(f"{P}.model.{r['model']}")}
    rows = []
    for row, r in zip(table_rows(runs, simulated), runs + simulated, strict=True):
        cells = row | {"impl": impl_name(row["impl"]), "pass": t(f"{P}.pass.{row['pass']}"),
                       "note": notes[row["note"]](r)}
        rows.append({col[k]: bytes_text(v) if k in BYTES else v for k, v in cells.items()})
    return rows


@st.cache_data(max_entries=256, show_spinner=False)
def simulated(c: tuple) -> list[dict]:
    """The IO simulator's two-level HBM bytes for naive and tiled at the measured configuration."""
    return simulated_traffic(dict(c))


def measure_all(runs: list[tuple[str, dict, bool]]) -> dict:
    """Every (implementation, configuration, backward) of one click, guarded as one: not started when the runs'
    estimates add up to more than the device's limit, else run one by one with a progress bar, each given the time
    left but what the runs after it are estimated to need. {"runs": rows (refusals included), "guard": the plan}."""
    kind = cached_device().kind
    with st.spinner(t(f"{P}.calibrating")):
        guard = plan_click(runs, REPEATS[kind])
    if guard["busy"] or guard["refused"]:
        return {"runs": [], "guard": guard}
    bar = st.progress(0.0, text=t(f"{P}.progress", done=0, total=len(runs)))
    start, rows = time.monotonic(), []
    for i, (impl, c, backward) in enumerate(runs):
        left = time_left(guard, i, time.monotonic() - start)
        m = measure_attention(impl, c["B"], c["H"], c["N"], c["d"], c["dtype"], c["causal"], block_m=c["block_m"],
                              block_n=c["block_n"], repeats=REPEATS[kind], backward=backward, limit_s=left)
        rows.append(run_row(asdict(m)))
        bar.progress((i + 1) / len(runs), text=t(f"{P}.progress", done=i + 1, total=len(runs)))
    bar.empty()
    return {"runs": rows, "guard": guard}


def show_guard(done: dict) -> None:
    """A click the time guard (or a busy lock) did not start: why, with the arithmetic."""
    guard = done.get("guard")
    if guard and (guard["busy"] or guard["refused"]):
        st.warning(guard_text(guard), icon=":material/timer:")


def show_refusals(rows: list[dict]) -> None:
    """One message per refused run, with the memory arithmetic where there is one."""
    for r in rows:
        if r["error"]:
            text = f"{impl_name(r['impl'])}: {error_text(r)}"
            if r["error"] in ("too_large", "out_of_memory"):
                text += "  \n" + arithmetic(r["error_params"])
            (st.info if r["error"] == "unavailable" else st.error)(text, icon=":material/block:")


def scaling(runs: list[dict], sims: list[dict], device: str, key: str, boxes: tuple | None = None,
            height: int = HEIGHT) -> None:
    """Measured time against N in the first of `boxes`, peak memory in the second with the notes on both (default:
    two columns side by side), `height` px tall."""
    labels = plot_labels(device)
    time_fig, memory_fig = scaling_figures(plot_rows(runs), plot_rows(sims), labels, height)
    left, right = boxes or st.columns(2, gap="medium")
    charts.plotly_chart(left, time_fig, key=f"{P}.{key}_time")
    charts.plotly_chart(right, memory_fig, key=f"{P}.{key}_memory")
    right.caption(t(f"{P}.scaling_note"))
    memory = list(dict.fromkeys(r["memory_source"] for r in runs if r.get("memory_source")))
    head = [t(f"{P}.memory_note", sources=markup(" | ".join(map(md, memory))))] if memory else []
    right.caption(" ".join([*head, *(t(f"{P}.memory_note.{kind}") for kind in memory_notes(runs))]))


def plot_rows(rows: list[dict]) -> list[dict]:
    """Rows for a figure: their source labels (a report's text, which Plotly would read as HTML) escaped."""
    return [{**r, "source": html(r["source"]) if r.get("source") else r.get("source")} for r in rows]


def plot_labels(device: str) -> dict:
    """The figures' words; `device` (a report's text too) is escaped for Plotly."""
    words = ("x_n", "y_time", "y_bytes", "y_tflops", "y_ms", "y_gb", "sim_hbm", "hbm", "l2", "two_level",
             "three_level", "causal", "full", "runtime", "traffic", "forward", "forward_backward", "paper_standard",
             "paper_flash", "paper_source")
    labels = {w: t(f"{P}.plot.{w}") for w in words}
    labels |= {f"title_{w}": t(f"{P}.plot.title_{w}", device=markup(html(device)))
               for w in ("time", "memory", "traffic", "throughput", "fig2")}
    labels["impl"] = {impl: impl_name(impl) for impl in ("naive", "tiled_torch", "flash_triton", "sdpa_flash",
                                                         "sdpa_math", "tiled")}
    return labels
