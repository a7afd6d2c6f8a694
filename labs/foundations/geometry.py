"""The vectors and matrices sections: two 2-D vectors and everything measured between them; 2×2 matrices as maps of
the plane, composition, AB ≠ BA, the transpose; what a matrix product costs and takes on this CPU."""
import streamlit as st

from labs.foundations.schema import PAGE, SCHEMA
from labs.foundations.vector_pad import vector_pad
from sim.core.text import Markup
from sim.gpu.memsim import GPUS
from sim.linalg import matrices as mx
from sim.linalg.matmul import (
    ARTICLE_N,
    Timing,
    TooLarge,
    check_size,
    cpu_threads,
    cuda_available,
    flops,
    matrix_bytes,
    time_matmul,
    time_matmul_cuda,
    versus,
)
from sim.linalg.vectors import ARTICLE_VECTOR, norm
from sim.plots.foundations import plane_figure, term, throughput_figure
from sim.plots.shapes import human_bytes
from ui import charts
from ui.course import course_note
from ui.i18n import t
from ui.urlstate import PageState, set_values

COMPOSE_HEIGHT = 320  # px: the maps of AB and BA, below the stage, shorter than those of A and B (400)
VECTOR_PRESETS = {"same": (2.0, 1.0, 4.0, 2.0), "perpendicular": (2.0, 1.0, -1.0, 2.0),
                  "opposite": (2.0, 1.0, -4.0, -2.0), "zero": (0.0, 0.0, 1.0, 2.0)}


# ---------- vectors ----------
def set_vectors(name: str) -> None:
    set_values(PAGE, SCHEMA, dict(zip(("ax", "ay", "bx", "by"), VECTOR_PRESETS[name], strict=True)))


def vectors_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:  # the pad is dragged itself: beside it the scalar and the examples, the coordinates folded
        state.widget("scalar", fold=False)
        bar = st.container(horizontal=True, vertical_alignment="center")
        bar.caption(t("fnd.vec.presets"))
        for name in VECTOR_PRESETS:
            bar.button(t(f"fnd.vec.preset.{name}"), on_click=set_vectors, args=(name,), key=f"fnd.vec_{name}")
        with state.more(side):
            for name in ("ax", "ay", "bx", "by"):
                state.widget(name)
    v = state.values
    with figure:
        vector_pad(state, (v["ax"], v["ay"]), (v["bx"], v["by"]), v["scalar"])  # it writes the numbers too
    st.markdown(t("fnd.vec.intro"))
    x = ARTICLE_VECTOR
    course_note(t("fnd.vec.course.says"), t("fnd.vec.course.shows", x=f"{x[0]:g}", y=f"{x[1]:g}", z=f"{x[2]:g}",
                                            s=f"{sum(c * c for c in x):g}", norm=f"{norm(x):.4f}",
                                            unit=", ".join(f"{c / norm(x):.3f}" for c in x)))


# ---------- matrices ----------
def matrix(v: dict, name: str) -> mx.Matrix:
    return tuple(v[f"{name}{i}"] for i in (11, 12, 21, 22))


def set_matrix(name: str, preset: str) -> None:
    set_values(PAGE, SCHEMA, dict(zip((f"{name}{i}" for i in (11, 12, 21, 22)), mx.PRESETS[preset], strict=True)))


def article_example() -> None:
    """The article's analogy: rotate by 45° then mirror, against mirror then rotate."""
    set_matrix("a", "mirror")
    set_matrix("b", "rotate45")


def terms(m: mx.Matrix, name: str) -> dict[str, str]:
    """The entries as terms of a formula (negative ones bracketed), by placeholder: a11, a12, a21, a22."""
    return {f"{name}{i}": term(f"{x:g}") for i, x in zip((11, 12, 21, 22), m, strict=True)}


def latex(m: mx.Matrix) -> str:
    return r"\begin{pmatrix}" + f"{m[0]:.3g} & {m[1]:.3g} \\\\ {m[2]:.3g} & {m[3]:.3g}" + r"\end{pmatrix}"


def det_text(A: mx.Matrix) -> Markup:
    """det A written out, the signed area of the unit square's image, and what its sign says of this map."""
    orientation = mx.orientation(A)  # "flat" also for a det that is only rounding error away from 0
    det, area = (0.0, 0.0) if orientation == "flat" else (mx.det(A), mx.polygon_area(mx.unit_square(A)))
    return t("fnd.mat.det", **terms(A, "a"), det=f"{det:.4g}", area=f"{area:.4g}",
             orientation=t(f"fnd.mat.orient.{orientation}"))


def transpose_text(A: mx.Matrix) -> Markup:
    return t("fnd.mat.transpose", a12=f"{A[1]:g}", a21=f"{A[2]:g}",
             symmetric=t("fnd.mat.symmetric" if mx.symmetric(A) else "fnd.mat.not_symmetric"))


def matrix_sliders(state: PageState, name: str) -> None:
    """A matrix's four entries, laid out as the matrix (row by row), on view beside the maps."""
    st.markdown(t(f"fnd.mat.{name}"))
    cols = st.columns(2)
    for i, idx in enumerate((11, 12, 21, 22)):
        state.widget(f"{name}{idx}", container=cols[i % 2], fold=False)


def matrix_presets(name: str) -> None:
    st.markdown(t(f"fnd.mat.{name}"))
    bar = st.container(horizontal=True)
    for preset in mx.PRESETS:
        bar.button(t(f"fnd.mat.preset.{preset}"), on_click=set_matrix, args=(name, preset),
                   key=f"fnd.mat_{name}_{preset}")


def matrices_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        matrix_sliders(state, "a")
        matrix_sliders(state, "b")
        st.button(t("fnd.mat.article"), on_click=article_example, icon=":material/menu_book:", key="fnd.mat_article")
        with state.more(side):
            matrix_presets("a")
            matrix_presets("b")
    v = state.values
    A, B = matrix(v, "a"), matrix(v, "b")
    AB, BA = mx.product(A, B), mx.product(B, A)
    labels = {"before": t("fnd.mat.fig.before"), "after": t("fnd.mat.fig.after")}
    with figure:
        charts.plotly_chart(st, plane_figure([(t("fnd.mat.fig.map", name="A"), mx.grid_lines(A), mx.unit_square(A)),
                                              (t("fnd.mat.fig.map", name="B"), mx.grid_lines(B), mx.unit_square(B))],
                                             labels), key="fnd.fig_maps")
        st.markdown(det_text(A))
    st.markdown(t("fnd.mat.intro"))
    st.latex(r"A = " + latex(A) + r",\quad A^\top = " + latex(mx.transpose(A)))
    st.markdown(transpose_text(A))
    inv = mx.inverse(A)
    if inv is None:
        st.warning(t("fnd.mat.singular"), icon=":material/block:")
    else:
        st.latex(r"A^{-1} = " + latex(inv))
    st.subheader(t("fnd.mat.compose.title"))
    left, right = st.columns(2, gap="medium")  # below the stage: smaller than the maps of A and B
    charts.plotly_chart(left, plane_figure([(t("fnd.mat.fig.ab"), mx.grid_lines(AB), mx.unit_square(AB)),
                                            (t("fnd.mat.fig.ba"), mx.grid_lines(BA), mx.unit_square(BA))], labels,
                                           height=COMPOSE_HEIGHT), key="fnd.fig_compose")
    right.latex(r"AB = " + latex(AB) + r",\quad BA = " + latex(BA))
    right.markdown(t("fnd.mat.compose.same" if mx.commute(A, B) else "fnd.mat.compose.differ", c11=f"{AB[0]:.3g}",
                     **terms(A, "a"), **terms(B, "b")))
    cost_part(state)


# ---------- the cost of a matrix product ----------
@st.cache_resource(show_spinner=False)
def timings() -> dict[int, list[Timing]]:
    """Each size timed once per app process (1 thread, all threads, and the CUDA device where there is one); shared
    by every session, written once."""
    return {}


def measure(n: int) -> None:
    store = timings()
    if n not in store:
        runs = [time_matmul(n, 1), time_matmul(n, cpu_threads())]
        if cuda_available():
            try:
                runs.append(time_matmul_cuda(n))
            except TooLarge:
                pass  # the CPU figures stand alone; the device's memory is said nowhere else
        store[n] = runs


def result_text(m: Timing) -> Markup:
    """A timing beside the A100's published peak, which is said faster or slower than it as the numbers are."""
    a100 = GPUS["A100"].peak_flops
    way, factor = versus(a100, m.gflops * 1e9)
    args = dict(n=m.n, s=f"{m.seconds:.3g}", gflops=f"{m.gflops:.1f}", a100=f"{flops(m.n, m.n, m.n) / a100 * 1e3:.3g}",
                versus=t(f"fnd.cost.vs.{way}", ratio=f"{factor:,.1f}"))
    return t("fnd.cost.result", threads=m.threads, **args) if m.device == "cpu" else \
        t("fnd.cost.result_cuda", name=m.device, **args)


def cost_part(state: PageState) -> None:
    st.subheader(t("fnd.cost.title"))
    a100 = GPUS["A100"].peak_flops
    article = flops(ARTICLE_N, ARTICLE_N, ARTICLE_N)
    st.markdown(t("fnd.cost.intro", n=ARTICLE_N, flops=f"{article:.3e}", gflops=f"{article / 1e9:.0f}",
                  ms=f"{article / a100 * 1e3:.2f}"))
    left, right = st.columns(2, gap="medium")  # below the stage: the throughput chart narrower than the maps
    with left:
        with state.controls():
            n = state.widget("mm_n", help=t("fnd.mm_n.help"))
        st.markdown(t("fnd.cost.size", n=n, flops=f"{flops(n, n, n):.3e}", mem=human_bytes(matrix_bytes(n))))
        try:
            check_size(n)
        except TooLarge as e:
            st.error(t("fnd.cost.too_large", n=n, need=human_bytes(e.need), limit=human_bytes(e.limit)),
                     icon=":material/memory:")
            return
        measured = timings().get(n)
        if measured is None:
            if st.button(t("fnd.cost.measure", n=n, threads=cpu_threads()), icon=":material/timer:",
                         key="fnd.measure"):
                with st.spinner(t("fnd.cost.measuring")):
                    measure(n)
                measured = timings()[n]
        if measured is None:
            st.caption(t("fnd.cost.not_yet"))
            return
        for m in measured:
            st.markdown(result_text(m))
    rows = [(t("fnd.cost.here", threads=m.threads) if m.device == "cpu" else t("fnd.cost.here_cuda", name=m.device),
             m.gflops * 1e9, True) for m in measured]
    rows += [(t("fnd.cost.published", name=g.name), g.peak_flops, False) for g in GPUS.values()]
    charts.plotly_chart(right, throughput_figure(rows, {"axis": t("fnd.cost.axis"), "measured": t("fnd.cost.measured"),
                                                        "published": t("fnd.cost.published_legend")}),
                        key="fnd.fig_cost")
    right.caption(t("fnd.cost.why"))
