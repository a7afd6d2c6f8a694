"""CPU against GPU: matrix-product throughput against size measured on this CPU (a sweep, once per app process),
arithmetic intensity of a matrix product against an element-wise addition, the roofline from the two measured roofs,
and the GPU lab's published peaks beside them."""
import threading

import plotly.graph_objects as go
import streamlit as st

from sim.core.text import Markup
from sim.gpu.memsim import GPUS
from sim.linalg import roofline as rf
from sim.linalg.matmul import flops
from sim.plots.roofline import published_roofs_figure, roofline_figure, sweep_figure
from sim.plots.shapes import human_bytes
from ui import charts
from ui.course import course_note
from ui.i18n import t
from ui.urlstate import PageState

ARTICLE_OUTPUTS_N = 1024  # the article's 1024 × 1024 product: about a million independent outputs


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
    """The published GPUs' table, with this CPU's measured roofs once swept."""
    st.markdown(t("fnd.hw.published.title"))
    cols = [t(f"fnd.hw.col.{c}") for c in ("device", "source", "peak", "bandwidth", "ridge")]
    rows = [(g.name, t("fnd.hw.published"), g.peak_flops / 1e12, g.hbm_bytes_per_s / 1e12,
             rf.ridge(g.peak_flops, g.hbm_bytes_per_s)) for g in GPUS.values()]
    if sweep is not None:
        rows.append((t("fnd.hw.this_cpu", threads=sweep.all_threads), t("fnd.hw.measured"), sweep.peak_flops / 1e12,
                     sweep.bandwidth / 1e12, sweep.ridge))
    st.dataframe({c: [r[i] for r in rows] for i, c in enumerate(cols)}, hide_index=True, key="fnd.hw_table",
                 width="content",  # narrower than the figure above
                 column_config={cols[2]: st.column_config.NumberColumn(format="%.4g"),
                                cols[3]: st.column_config.NumberColumn(format="%.4g"),
                                cols[4]: st.column_config.NumberColumn(format="%.4g")})
    st.caption(t("fnd.hw.published.note"))


def published_figure() -> go.Figure:
    """The rooflines of the GPU lab's published peaks and bandwidths, each with its ridge."""
    roofs = [(t("fnd.hw.fig.published", name=g.name), rf.roof_curve(g.peak_flops, g.hbm_bytes_per_s),
              rf.ridge(g.peak_flops, g.hbm_bytes_per_s)) for g in GPUS.values()]
    return published_roofs_figure(roofs, {"x": t("fnd.hw.fig.intensity"), "y": t("fnd.hw.fig.tflops"),
                                          "ridge": t("fnd.hw.fig.ridge")})


def why_part() -> None:
    st.subheader(t("fnd.hw.why.title"))
    course_note(t("fnd.hw.course.says", cores=f"{rf.H100_CUDA_CORES:,}"), h100_text())


def h100_text() -> Markup:
    """The article's million outputs shared among the H100's units: its CUDA cores at their FP32 peak, its Tensor
    Cores at their bf16 peak, and where a 4096³ product and an addition sit against each peak's ridge."""
    n, h100 = ARTICLE_OUTPUTS_N, GPUS["H100"]
    fp32, bf16, bw = rf.H100_FP32_FLOPS, h100.peak_flops, h100.hbm_bytes_per_s
    i32, i16 = rf.matmul_intensity(4096), rf.matmul_intensity(4096, 2)
    side = lambda i, peak: t(f"fnd.hw.side.{rf.bound(i, rf.ridge(peak, bw))}")  # noqa: E731
    return t("fnd.hw.course.shows", n=n, outputs=f"{n * n:,}", length=n, cores=f"{rf.H100_CUDA_CORES:,}",
             per=f"{n * n / rf.H100_CUDA_CORES:.0f}", fp32=f"{fp32 / 1e12:.0f}", bw=f"{bw / 1e12:.3g}",
             ridge32=f"{rf.ridge(fp32, bw):.0f}", i32=f"{i32:.0f}", side32=side(i32, fp32),
             tensor=rf.H100_TENSOR_CORES, bf16=f"{bf16 / 1e12:g}", speedup=f"{bf16 / fp32:.0f}",
             ridge16=f"{rf.ridge(bf16, bw):.0f}", i16=f"{i16:.0f}", side16=side(i16, bf16),
             i_add=f"{rf.add_intensity(2):.3g}", share=f"{rf.attainable(rf.add_intensity(2), bf16, bw) / bf16:.2%}")


def results_part(sweep: rf.Sweep, figure) -> None:
    """The roofline with the measured operations on it, and what it shows under it, in the stage (`figure`)."""
    groups = [(t("fnd.hw.fig.matmul", threads=k), [p.intensity for p in sweep.matmul_at(k)],
               [p.flops_per_s for p in sweep.matmul_at(k)], [f"n = {p.n}" for p in sweep.matmul_at(k)])
              for k in sweep.threads]
    add = (t("fnd.hw.fig.add"), [p.intensity for p in sweep.add], [p.flops_per_s for p in sweep.add],
           [t("fnd.hw.fig.threads", threads=p.threads) for p in sweep.add])
    roof = rf.roof_curve(sweep.peak_flops, sweep.bandwidth)
    fastest_add = max(sweep.add, key=lambda p: p.flops_per_s)
    big = sweep.matmul_at(sweep.all_threads)[-1]
    bound = rf.bound(big.intensity, sweep.ridge)
    with figure:
        charts.plotly_chart(st, roofline_figure(roof, sweep.ridge, groups, add, {
            "x": t("fnd.hw.fig.intensity"), "y": t("fnd.hw.fig.gflops"), "roof": t("fnd.hw.fig.roof"),
            "ridge": t("fnd.hw.fig.ridge")}), key="fnd.fig_roofline")
        st.markdown(t("fnd.hw.placed", i_add=f"{fastest_add.intensity:.3g}",
                      add=f"{fastest_add.flops_per_s / 1e9:.3g}",
                      add_roof=f"{sweep.attainable(fastest_add.intensity) / 1e9:.3g}",
                      add_share=f"{fastest_add.flops_per_s / sweep.peak_flops:.1%}"))
        st.markdown(t(f"fnd.hw.placed.{bound}", n=big.n, i_mm=f"{big.intensity:.4g}",
                      mm=f"{big.flops_per_s / 1e9:.3g}", mm_roof=f"{sweep.attainable(big.intensity) / 1e9:.3g}"))


def results_below(sweep: rf.Sweep) -> None:
    """The throughput sweep (narrower than the roofline above), beside the two roofs it measured."""
    peak, bw = sweep.peak_point, sweep.bandwidth_point
    series = [(t("fnd.hw.fig.threads", threads=k), [p.n for p in sweep.matmul_at(k)],
               [p.flops_per_s / 1e9 for p in sweep.matmul_at(k)]) for k in sweep.threads]
    left, right = st.columns(2, gap="medium")
    charts.plotly_chart(left, sweep_figure(series, {"x": t("fnd.hw.fig.n"), "y": t("fnd.hw.fig.gflops")}),
                        key="fnd.fig_sweep")
    right.markdown(t("fnd.hw.roofs", peak=f"{sweep.peak_flops / 1e9:.1f}", n=peak.n, threads=peak.threads,
                     bw=f"{sweep.bandwidth / 1e9:.1f}", op=t(f"fnd.hw.op.{bw.op}"),
                     size=human_bytes(bw.n * rf.FLOAT32), bw_threads=bw.threads, ridge=f"{sweep.ridge:.3g}",
                     wall=f"{sweep.seconds:.1f}"))


def hardware_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        top = state.widget("hw_max", help=t("fnd.hw_max.help"), fold=False)
        sweep = sweeps().get(top)
        pressed = sweep is None and st.button(t("fnd.hw.run", sizes=", ".join(map(str, sizes_up_to(top)))),
                                              icon=":material/speed:", key="fnd.hw_run")
    if pressed:
        with figure, sweep_lock():
            if top not in sweeps():
                run(top)
        st.rerun()  # drawn again with the figures, and without the button
    if sweep is None:  # until this CPU is measured: the published rooflines it will stand beside
        with figure:
            charts.plotly_chart(st, published_figure(), key="fnd.fig_published")
            st.caption(t("fnd.hw.not_yet"))
    else:
        results_part(sweep, figure)
    st.markdown(t("fnd.hw.intro"))
    if sweep is not None:
        results_below(sweep)
    intensity_part(top)
    published_part(sweep)
    why_part()
