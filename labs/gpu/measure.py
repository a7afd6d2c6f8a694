"""The GPU lab's measure view: attention timed on this machine (one size, a sweep over N, the two presets) and the
measurement reports (bundled or uploaded), every number with the label of where it came from."""
from __future__ import annotations

import time
from dataclasses import asdict

import streamlit as st

from sim.gpu.bench import PRESETS
from sim.gpu.measure import DTYPE_BYTES, IMPLS, free_memory, measure_attention, memory_needed, plan_click
from sim.gpu.memsim import MemsimError, attention_io, block_sizes
from sim.gpu.report import (MAX_BYTES, SIMULATED, Report, ReportError, bundled_reports, load_report, parse_report,
                            run_row)
from sim.plots.gpu_measure import fig2_figure, scaling_figures, throughput_figure, traffic_figure
from sim.plots.shapes import human_bytes
from sim.text import html, md
from ui.i18n import t
from ui.schema import parse_value
from ui.sidebar import cached_device
from ui.urlstate import PageState

P = "gpu.measure"
REPEATS = {"cuda": 10, "cpu": 3}
GUARD_LINES = 6  # the longest runs of a refused click, one line each; the rest summed in one
ss = st.session_state


def impl_name(impl: str) -> str:
    """An implementation's name, or the simulator's algorithm ("tiled")."""
    return t(f"gpu.impls.{impl}") if impl in IMPLS else t(f"{P}.algo.{impl}")


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
    runs = sorted((e for e in guard["runs"] if e["seconds"] > 0), key=lambda e: -e["seconds"])
    lines = [guard_line(impl_name(e["impl"]) + (t(f"{P}.guard.backward") if e["backward"] else ""), e)
             for e in runs[:GUARD_LINES]]
    if len(runs) > GUARD_LINES:
        rest = runs[GUARD_LINES:]
        lines.append(t(f"{P}.guard.more", n=len(rest), seconds=_num(sum(e["seconds"] for e in rest))))
    head = t(f"{P}.guard.refused", seconds=_num(guard["seconds"]), limit=_num(guard["limit_s"]), kind=kind)
    return "\n\n".join([head, "\n".join(f"- {line}" for line in lines), t(f"{P}.guard.advice")])


def arithmetic(p: dict) -> str:
    """How the memory guard's figure is made: N × N elements per matrix, matrices, heads, output."""
    if "matrix_bytes_per_head" not in p:
        return ""
    return t(f"{P}.arithmetic", N=f"{p['N']:,}", elements=f"{p['N'] ** 2:,}", elem=p["bytes_per_element"],
             per_head=f"{p['matrix_bytes_per_head']:,}", per_head_h=human_bytes(p["matrix_bytes_per_head"]),
             matrices=p["matrices"], bh=p["batch_heads"], mask=human_bytes(p["mask_bytes"]),
             output=human_bytes(p["output_bytes"]), needed=f"{p['needed_bytes']:,}",
             needed_h=human_bytes(p["needed_bytes"]), free=human_bytes(p["free_bytes"]))


def counters_note(row: dict) -> str:
    """Why a row has no counters (plain text: a table cell, where nothing is Markdown)."""
    reason = row.get("counters_reason") or row.get("reason")
    if not reason:
        return ""
    if reason.startswith("failed"):
        return t(f"{P}.counters.failed", detail=reason.partition(": ")[2])
    return t(f"{P}.counters.{reason}")


def _bytes(value) -> str:
    return "" if value is None else human_bytes(int(value))


def run_table(runs: list[dict], simulated: list[dict]) -> list[dict]:
    """Rows for st.dataframe: measured runs, then the simulator's bytes, each with its source."""
    col = {k: t(f"{P}.col.{k}") for k in ("impl", "N", "bh", "dtype", "pass", "time", "tflops", "peak", "hbm_read",
                                          "hbm_write", "l2", "l1", "source", "note")}
    rows = []
    for r in runs:
        rows.append({col["impl"]: impl_name(r["impl"]), col["N"]: r["N"], col["bh"]: r["B"] * r["H"],
                     col["dtype"]: r["dtype"], col["pass"]: t(f"{P}.pass.{'fwd_bwd' if r['backward'] else 'fwd'}"),
                     col["time"]: r["time_ms"], col["tflops"]: r["tflops_per_s"], col["peak"]: _bytes(r["peak_bytes"]),
                     col["hbm_read"]: _bytes(r["hbm_read_bytes"]), col["hbm_write"]: _bytes(r["hbm_write_bytes"]),
                     col["l2"]: _bytes(r["l2_bytes"]), col["l1"]: _bytes(r["l1_bytes"]),
                     col["source"]: " + ".join(filter(None, (r["source"], r.get("memory_source"),
                                                              r["counters_source"]))),
                     col["note"]: error_text(r) if r["error"] else counters_note(r)})
    for r in simulated:
        rows.append({col["impl"]: impl_name(r["impl"]), col["N"]: r["N"], col["bh"]: r["B"] * r["H"],
                     col["pass"]: t(f"{P}.pass.fwd"), col["hbm_read"]: _bytes(r["hbm_read_bytes"]),
                     col["hbm_write"]: _bytes(r["hbm_write_bytes"]), col["l2"]: _bytes(r["l2_bytes"]),
                     col["source"]: r["source"], col["note"]: t(f"{P}.model.{r['model']}")})
    return rows


@st.cache_data(max_entries=256, show_spinner=False)
def simulated(c: tuple) -> list[dict]:
    """The IO simulator's two-level HBM bytes for naive and tiled at the measured configuration."""
    c = dict(c)
    common = {"batch_heads": c["B"] * c["H"], "dtype_bytes": DTYPE_BYTES[c["dtype"]], "causal": c["causal"],
              "max_events": 0}
    rows = []
    for algo, blocks in (("naive", {}), ("tiled", {"block_m": c["block_m"], "block_n": c["block_n"]})):
        r = attention_io(algo, c["N"], c["d"], **common, **blocks)
        rows.append({"impl": algo, "model": "two_level", "N": c["N"], "B": c["B"], "H": c["H"],
                     "hbm_read_bytes": r.hbm_read_bytes, "hbm_write_bytes": r.hbm_write_bytes, "l2_bytes": None,
                     "l1_bytes": None, "source": SIMULATED, "reason": None})
    return rows


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
        reserved = sum(e["seconds"] for e in guard["runs"][i + 1:])
        left = guard["limit_s"] - (time.monotonic() - start) - reserved
        m = measure_attention(impl, c["B"], c["H"], c["N"], c["d"], c["dtype"], c["causal"], block_m=c["block_m"],
                              block_n=c["block_n"], repeats=REPEATS[kind], backward=backward, limit_s=max(0.0, left))
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


def ns_input(state: PageState) -> tuple[int, ...]:
    """The list of N for the sweep, typed as "256, 512, 1024"; a bad list is reported and the last good one kept."""
    param, key = state.params["ns"], state.key("ns")
    if key not in ss:
        ss[key] = ", ".join(map(str, state.values["ns"]))
    text = st.text_input(t("gpu.ns"), key=key, help=t(f"{P}.ns_help", lo=param.lo, hi=f"{param.hi:,}",
                                                     n=param.max_len))
    try:
        ns = parse_value(param, text.replace(" ", "")) if text.strip() else ()
        if not ns:
            raise ValueError(text)
    except (ValueError, OverflowError):
        st.error(t(f"{P}.ns_bad", text=md(text[:60]), lo=param.lo, hi=f"{param.hi:,}", n=param.max_len,
                   kept=", ".join(map(str, state.values["ns"]))), icon=":material/error:")
        return state.values["ns"]
    state.set("ns", tuple(sorted(set(ns))))
    return state.values["ns"]


def measure_now(state: PageState, c: dict) -> None:
    st.subheader(t(f"{P}.now"))
    st.caption(t(f"{P}.now_help", B=c["B"], H=c["H"], N=f"{c['N']:,}", d=c["d"], dtype=c["dtype"],
                 causal=t(f"{P}.causal.{c['causal']}"), bm=c["block_m"], bn=c["block_n"]))
    impls = state.values["impls"]
    if st.button(t(f"{P}.run"), icon=":material/speed:", type="primary", key=f"{P}.run", disabled=not impls):
        ss[f"{P}.now"] = {**measure_all([(impl, c, False) for impl in impls]), "config": c}
    done = ss.get(f"{P}.now")
    if done:
        show_guard(done)
        show_refusals(done["runs"])
        st.dataframe(run_table(done["runs"], simulated(tuple(done["config"].items()))), hide_index=True,
                     key=f"{P}.now_table")


def sweep(state: PageState, c: dict) -> None:
    st.subheader(t(f"{P}.sweep"))
    ns = ns_input(state)
    impls = state.values["impls"]
    if st.button(t(f"{P}.sweep_run", n=len(ns)), icon=":material/stacked_line_chart:", key=f"{P}.sweep_run",
                 disabled=not impls):
        configs = [{**c, "N": N} for N in ns]
        ss[f"{P}.sweep"] = {**measure_all([(impl, cfg, False) for cfg in configs for impl in impls]),
                            "configs": configs}
    done = ss.get(f"{P}.sweep")
    if done:
        show_guard(done)
        show_refusals([r for r in done["runs"] if r["error"] not in (None, "unavailable")])
        sims = [row for cfg in done["configs"] for row in simulated(tuple(cfg.items()))]
        scaling(done["runs"], sims, cached_device().name, "sweep")


def scaling(runs: list[dict], sims: list[dict], device: str, key: str) -> None:
    labels = plot_labels(device)
    time_fig, memory_fig = scaling_figures(plot_rows(runs), plot_rows(sims), labels)
    left, right = st.columns(2, gap="medium")
    left.plotly_chart(time_fig, key=f"{P}.{key}_time", config={"displayModeBar": False})
    right.plotly_chart(memory_fig, key=f"{P}.{key}_memory", config={"displayModeBar": False})
    st.caption(t(f"{P}.scaling_note"))
    memory = list(dict.fromkeys(r["memory_source"] for r in runs if r.get("memory_source")))
    if memory:
        st.caption(t(f"{P}.memory_note", sources=" | ".join(map(md, memory))))


def plot_rows(rows: list[dict]) -> list[dict]:
    """Rows for a figure: their source labels (a report's text, which Plotly would read as HTML) escaped."""
    return [{**r, "source": html(r["source"]) if r.get("source") else r.get("source")} for r in rows]


def plot_labels(device: str) -> dict:
    """The figures' words; `device` (a report's text too) is escaped for Plotly."""
    words = ("x_n", "y_time", "y_bytes", "y_tflops", "y_ms", "y_gb", "sim_hbm", "hbm", "l2", "two_level",
             "three_level", "causal", "full", "runtime", "traffic", "forward", "forward_backward", "paper_standard",
             "paper_flash", "paper_source")
    labels = {w: t(f"{P}.plot.{w}") for w in words}
    labels |= {f"title_{w}": t(f"{P}.plot.title_{w}", device=html(device))
               for w in ("time", "memory", "traffic", "throughput", "fig2")}
    labels["impl"] = {impl: impl_name(impl) for impl in ("naive", "tiled_torch", "flash_triton", "sdpa_flash",
                                                         "sdpa_math", "tiled")}
    return labels


def naive_dies() -> None:
    """The seed's N = 100,000: the arithmetic and the refusal, for one layer's heads; never run."""
    p = PRESETS["naive_dies"]
    cuda = cached_device().kind == "cuda"
    need = memory_needed(p["impl"], p["B"], p["H"], p["N"], p["d"], p["dtype"], p["causal"])
    free = free_memory(cuda)
    st.markdown(t(f"{P}.dies.intro", N=f"{p['N']:,}", H=p["H"], dtype=p["dtype"]))
    st.markdown(arithmetic({**need, "free_bytes": free}))
    if need["needed_bytes"] > free:
        st.error(t(f"{P}.dies.refused", needed=human_bytes(need["needed_bytes"]), free=human_bytes(free),
                   device=md(cached_device().name)), icon=":material/block:")


def fig2_preset(report: Report | None) -> None:
    """FlashAttention's Figure 2 setting: the paper's row, measured here (forward, forward + backward)."""
    p = PRESETS["flash_fig2"]
    cuda = cached_device().kind == "cuda"
    c = {k: p[k] for k in ("B", "H", "N", "d", "dtype", "causal")} | {"block_m": 128, "block_n": 128}
    if not cuda:  # the paper's 64 × 16 sequences take minutes on a CPU: the same sequences, fewer of them
        c |= {"B": 1, "H": 4, "dtype": "float32"}
    paper = p["paper"]
    st.markdown(t(f"{P}.fig2.intro", std_gb=paper["standard"]["hbm_gb"], std_ms=paper["standard"]["runtime_ms"],
                  fa_gb=paper["flashattention"]["hbm_gb"], fa_ms=paper["flashattention"]["runtime_ms"]))
    if not cuda:
        st.info(t(f"{P}.fig2.reduced", B=c["B"], H=c["H"], dtype=c["dtype"]), icon=":material/computer:")
    if st.button(t(f"{P}.fig2.run"), icon=":material/speed:", key=f"{P}.fig2_run"):
        impls = ("naive", "sdpa_flash", "sdpa_math")
        ss[f"{P}.fig2"] = {**measure_all([(impl, c, backward) for backward in (False, True) for impl in impls]),
                           "config": c}
    done = ss.get(f"{P}.fig2")
    if done:
        show_guard(done)
    if done and done["runs"]:
        runs = done["runs"]
        show_refusals(runs)
        st.dataframe(run_table(runs, simulated(tuple(done["config"].items()))), hide_index=True,
                     key=f"{P}.fig2_table")
        forward, both = ([r for r in runs if r["backward"] is backward] for backward in (False, True))
        st.plotly_chart(fig2_figure(paper, plot_rows(forward), plot_rows(both),
                                    simulated(tuple(done["config"].items())), plot_labels(cached_device().name)),
                        key=f"{P}.fig2_fig", config={"displayModeBar": False})
    elif report and report.fig2:
        st.caption(t(f"{P}.fig2.from_report", device=md(report.device), date=md(report.date)))
        st.plotly_chart(fig2_figure(paper, plot_rows(report.fig2["forward"]),
                                    plot_rows(report.fig2["forward_backward"]), plot_rows(report.fig2["traffic"]),
                                    plot_labels(report.device)), key=f"{P}.fig2_report_fig",
                        config={"displayModeBar": False})


@st.cache_data(show_spinner=False)
def bundled(name: str) -> Report:
    return load_report(next(p for p in bundled_reports() if p.name == name))


def show_report(report: Report, key: str) -> None:
    """A report's device, date and versions, every source label, its tables and figures."""
    st.markdown(t(f"{P}.report.head", device=md(report.device), kind=t(f"{P}.kind.{report.kind}"),
                  date=md(report.date), name=md(report.name)))
    versions = ", ".join(md(f"{k} {v}") for k, v in report.versions.items() if v)
    driver = md(report.driver) if report.driver else "—"
    st.caption(t(f"{P}.report.versions", versions=versions or "—", driver=driver))
    if report.modelled_l2:
        l2 = report.modelled_l2
        st.caption(t(f"{P}.report.l2", l2=_bytes(l2["l2_bytes"]) or "—", sms=l2["n_sm"] or "—",
                     chip=md(l2["from"])))
    st.caption(t(f"{P}.report.sources", sources=" | ".join(map(md, report.sources))))
    if report.quick:
        st.warning(t(f"{P}.report.quick"), icon=":material/science:")
    labels = plot_labels(report.device)
    sweep_runs = [r for r in report.runs if r["section"] == "n_sweep"]
    if sweep_runs:
        sims = [r for r in report.traffic if r["section"] == "n_sweep"]
        scaling(sweep_runs, sims, report.device, f"{key}_sweep")
    throughput = [r for r in report.runs if r["section"].startswith("throughput")]
    if throughput:
        st.plotly_chart(throughput_figure(plot_rows(throughput), labels), key=f"{P}.{key}_throughput",
                        config={"displayModeBar": False})
    if report.traffic:
        st.plotly_chart(traffic_figure(plot_rows(report.traffic), labels), key=f"{P}.{key}_traffic",
                        config={"displayModeBar": False})
    with st.expander(t(f"{P}.report.table")):
        st.dataframe(run_table(report.runs, [r for r in report.traffic if r["model"] != "measured"]),
                     hide_index=True, key=f"{P}.{key}_table")


def reports(cuda: bool) -> Report | None:
    """The bundled reports (a choice) and an uploaded one; returns the report shown."""
    st.subheader(t(f"{P}.reports"))
    st.caption(t(f"{P}.reports_help"))
    names = [p.name for p in bundled_reports()]
    upload = st.file_uploader(t(f"{P}.upload"), type=["json"], key=f"{P}.upload",
                              max_upload_size=MAX_BYTES // 2**20)
    shown = None
    if upload is not None:
        try:
            shown = parse_report(upload.getvalue(), upload.name)
        except ReportError as e:  # the field's name holds the report's own keys: escaped
            params = {k: md(v) if isinstance(v, str) else v for k, v in e.params.items()}
            st.error(t(f"{P}.report_error.{e.code}", **params), icon=":material/error:")
    if shown is None and names:
        with st.expander(t(f"{P}.bundled", n=len(names)), expanded=not cuda):
            name = st.selectbox(t(f"{P}.bundled_pick"), names, key=f"{P}.bundled_pick")
            shown = bundled(name)
            show_report(shown, "bundled")
    elif shown is not None:
        show_report(shown, "upload")
    return shown


def measure_section(state: PageState) -> None:
    """The measure view of the GPU lab, for the page's configuration in `state`."""
    device = cached_device()
    cuda = device.kind == "cuda"
    st.info(t(f"{P}.device_{device.kind}", name=md(device.name)), icon=":material/memory:")
    state.widget("impls")
    c = run_config(state.values, cuda)
    if not cuda and state.values["dtype"] != "float32":
        st.caption(t(f"{P}.cpu_float32", dtype=state.values["dtype"]))
    measure_now(state, c)
    sweep(state, c)
    report = reports(cuda)
    st.subheader(t(f"{P}.presets"))
    with st.expander(t(f"{P}.dies.title"), expanded=True):
        naive_dies()
    with st.expander(t(f"{P}.fig2.title"), expanded=True):
        fig2_preset(report)
