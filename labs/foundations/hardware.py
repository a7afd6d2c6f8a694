"""CPU against GPU: matrix-product throughput against size measured on this CPU (a sweep, once per app process),
arithmetic intensity of a matrix product against an element-wise addition, the roofline from the two measured roofs,
and the GPU lab's published peaks beside them."""
import threading

import streamlit as st

from sim.gpu.memsim import GPUS
from sim.linalg import roofline as rf
from sim.linalg.matmul import flops
from sim.plots.roofline import roofline_figure, sweep_figure
from sim.plots.shapes import human_bytes
from ui import charts
from ui.course import course_note
from ui.i18n import t
from ui.urlstate import PageState

ARTICLE_OUTPUTS_N = 1024  # the article's 1024 × 1024 product: about a million independent outputs
ARTICLE_H100_CORES = 16896  # the CUDA cores the article gives for an H100


@st.cache_resource(show_spinner=False)
def sweeps() -> dict[int, rf.Sweep]:
    """One sweep per largest size, run once per app process and shared by every session (written once)."""
    return {}


@st.cache_resource(show_spinner=False)
def sweep_lock() -> threading.Lock:
    """Two sessions pressing at once: the second waits for the first's sweep and shows it."""
    return threading.Lock()


def sizes_up_to(top: int) -> tuple[int, ...]:
    return tuple(n for n in rf.SWEEP_SIZES if n <= top)


def run(top: int) -> None:
    bar = st.progress(0.0, text=t("fnd.hw.running"))

    def progress(done: int, total: int, label: str) -> None:
        bar.progress(done / total, text=t("fnd.hw.step", done=done, total=total, label=label) if label else
                     t("fnd.hw.running"))

    sweep = rf.run_sweep(sizes_up_to(top), progress=progress)
    sweeps()[top] = sweep


def intensity_part(top: int) -> None:
    n, e = top, rf.STREAM_ELEMENTS
    st.markdown(t("fnd.hw.intensity", n=n, flops=f"{flops(n, n, n):,}", bytes=f"{rf.matmul_bytes(n):,}",
                  i_mm=f"{rf.matmul_intensity(n):.4g}", e=f"{e:,}", e_flops=f"{rf.add_flops(e):,}",
                  e_bytes=f"{rf.add_bytes(e):,}", i_add=f"{rf.add_intensity():.4g}",
                  ratio=f"{rf.matmul_intensity(n) / rf.add_intensity():,.0f}"))


def published_part(sweep: rf.Sweep | None) -> None:
    st.markdown(t("fnd.hw.published.title"))
    cols = [t(f"fnd.hw.col.{c}") for c in ("device", "source", "peak", "bandwidth", "ridge")]
    rows = [(g.name, t("fnd.hw.published"), g.peak_flops / 1e12, g.hbm_bytes_per_s / 1e12,
             rf.ridge(g.peak_flops, g.hbm_bytes_per_s)) for g in GPUS.values()]
    if sweep is not None:
        rows.append((t("fnd.hw.this_cpu", threads=sweep.all_threads), t("fnd.hw.measured"), sweep.peak_flops / 1e12,
                     sweep.bandwidth / 1e12, sweep.ridge))
    st.dataframe({c: [r[i] for r in rows] for i, c in enumerate(cols)}, hide_index=True, key="fnd.hw_table",
                 column_config={cols[2]: st.column_config.NumberColumn(format="%.4g"),
                                cols[3]: st.column_config.NumberColumn(format="%.4g"),
                                cols[4]: st.column_config.NumberColumn(format="%.4g")})
    st.caption(t("fnd.hw.published.note"))


def why_part() -> None:
    n = ARTICLE_OUTPUTS_N
    h100 = GPUS["H100"]
    peak, bw = h100.peak_flops, h100.hbm_bytes_per_s
    st.subheader(t("fnd.hw.why.title"))
    course_note(t("fnd.hw.course.says", cores=f"{ARTICLE_H100_CORES:,}"),
                t("fnd.hw.course.shows", n=n, outputs=f"{n * n:,}", per=f"{n * n / ARTICLE_H100_CORES:.0f}",
                  length=n, cores=f"{ARTICLE_H100_CORES:,}", ridge=f"{rf.ridge(peak, bw):.0f}",
                  i_mm=f"{rf.matmul_intensity(4096, 2):.0f}", i_add=f"{rf.add_intensity(2):.3g}",
                  share=f"{rf.attainable(rf.add_intensity(2), peak, bw) / peak:.2%}"))


def results_part(sweep: rf.Sweep) -> None:
    x_label = t("fnd.hw.fig.n")
    series = [(t("fnd.hw.fig.threads", threads=k), [p.n for p in sweep.matmul_at(k)],
               [p.flops_per_s / 1e9 for p in sweep.matmul_at(k)]) for k in sweep.threads]
    charts.plotly_chart(st, sweep_figure(series, {"x": x_label, "y": t("fnd.hw.fig.gflops")}), key="fnd.fig_sweep")
    peak, bw = sweep.peak_point, sweep.bandwidth_point
    st.markdown(t("fnd.hw.roofs", peak=f"{sweep.peak_flops / 1e9:.1f}", n=peak.n, threads=peak.threads,
                  bw=f"{sweep.bandwidth / 1e9:.1f}", op=t(f"fnd.hw.op.{bw.op}"), size=human_bytes(bw.n * rf.FLOAT32),
                  bw_threads=bw.threads,
                  ridge=f"{sweep.ridge:.3g}", wall=f"{sweep.seconds:.1f}"))
    groups = [(t("fnd.hw.fig.matmul", threads=k), [p.intensity for p in sweep.matmul_at(k)],
               [p.flops_per_s for p in sweep.matmul_at(k)], [f"n = {p.n}" for p in sweep.matmul_at(k)])
              for k in sweep.threads]
    add = (t("fnd.hw.fig.add"), [p.intensity for p in sweep.add], [p.flops_per_s for p in sweep.add],
           [t("fnd.hw.fig.threads", threads=p.threads) for p in sweep.add])
    roof = rf.roof_curve(sweep.peak_flops, sweep.bandwidth)
    charts.plotly_chart(st, roofline_figure(roof, sweep.ridge, groups, add, {
        "x": t("fnd.hw.fig.intensity"), "y": t("fnd.hw.fig.gflops"), "roof": t("fnd.hw.fig.roof"),
        "ridge": t("fnd.hw.fig.ridge")}), key="fnd.fig_roofline")
    fastest_add = max(sweep.add, key=lambda p: p.flops_per_s)
    big = sweep.matmul_at(sweep.all_threads)[-1]
    bound = "compute" if big.intensity >= sweep.ridge else "memory"
    st.markdown(t("fnd.hw.placed", i_add=f"{fastest_add.intensity:.3g}", add=f"{fastest_add.flops_per_s / 1e9:.3g}",
                  add_roof=f"{sweep.attainable(fastest_add.intensity) / 1e9:.3g}",
                  add_share=f"{fastest_add.flops_per_s / sweep.peak_flops:.1%}"))
    st.markdown(t(f"fnd.hw.placed.{bound}", n=big.n, i_mm=f"{big.intensity:.4g}", mm=f"{big.flops_per_s / 1e9:.3g}",
                  mm_roof=f"{sweep.attainable(big.intensity) / 1e9:.3g}"))


def hardware_section(state: PageState) -> None:
    st.markdown(t("fnd.hw.intro"))
    with state.controls():
        top = state.widget("hw_max", help=t("fnd.hw_max.help"))
    intensity_part(top)
    sweep = sweeps().get(top)
    if sweep is None and st.button(t("fnd.hw.run", sizes=", ".join(map(str, sizes_up_to(top)))),
                                   icon=":material/speed:", key="fnd.hw_run"):
        with sweep_lock():
            if top not in sweeps():
                run(top)
        st.rerun()  # drawn again with the figures, and without the button
    if sweep is None:
        st.caption(t("fnd.hw.not_yet"))
    else:
        results_part(sweep)
    published_part(sweep)
    why_part()
