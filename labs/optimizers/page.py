"""Optimiser lab: optimisers racing on 2-D surfaces, momentum's theory, learning-rate schedules, state memory,
Muon's orthogonalisation and Adam's L2 against AdamW's decoupled weight decay."""
import streamlit as st

from labs.optimizers.decay import decay_section
from labs.optimizers.muon import muon_section
from labs.optimizers.race import race_section
from labs.optimizers.schema import HYPER, LRS, PAGE, SCHEMA
from labs.optimizers.views import bounded, memory_section, momentum_section, opt_names, schedules_section
from sim.optim.optimizers import OPTIMIZERS, RULE_SOURCE, diverged_at, path, stable_lr, surface, trace
from sim.plots.optimizers import BRUSH, brushed_steps, loss_chart, losses, paths_figure, update_latex
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState, set_values

ss = st.session_state
PATH_LABELS = ("x", "y", "start", "minimum", "diverged", "play", "pause", "step", "loss")


def labels() -> dict:
    return {k: t(f"opt.fig.{k}") for k in PATH_LABELS}


def new_surface() -> None:
    """A surface picked: the start goes to that surface's own, and on a surface with a minimum each learning
    rate is its default, lowered where that would blow up there (stable_lr); the saddle keeps them, as running
    off it is its lesson."""
    v = ss[f"_vals.{PAGE}"]
    surf = surface(ss[f"{PAGE}.surface"], v["kappa"], v["angle"], v["noise"])
    lrs = {} if surf.minimum is None else {
        f"{o}_lr": stable_lr(o, surf, surf.start, v["steps"], LRS, v["seed"]) for o in OPTIMIZERS}
    set_values(PAGE, SCHEMA, {"x": surf.start[0], "y": surf.start[1], **lrs})


def hyper(state: PageState, opt: str) -> dict:
    """The optimiser's hyper-parameters: its defaults with the ones the page sets."""
    return {**OPTIMIZERS[opt], **{p.name.removeprefix(f"{opt}_"): state.values[p.name] for p in HYPER[opt]}}


def surface_controls(state: PageState):
    """The surface and the steps (on view beside the figure), the surface's shape and the start (folded)."""
    name = state.widget("surface", on_change=new_surface, help=t("opt.surface.help"), fold=False)
    state.widget("steps", fold=False)
    v = state.values
    with state.more(st.container()):
        if name == "quadratic":
            state.widget("kappa", help=t("opt.kappa.help"))
            state.widget("angle")
        state.widget("noise", help=t("opt.noise.help"))
        surf = surface(name, v["kappa"], v["angle"], v["noise"])
        if not ss.get(f"_start.{PAGE}") and "x" not in st.query_params and "y" not in st.query_params:
            state.set("x", surf.start[0])  # a link without a start: the surface's own
            state.set("y", surf.start[1])
        ss[f"_start.{PAGE}"] = True
        (x0, x1), (y0, y1) = surf.bounds
        start = (bounded(state, "x", x0, x1, 0.01), bounded(state, "y", y0, y1, 0.01))
        if v["noise"] > 0:
            state.widget("seed")
    return surf, start


def hyper_controls(state: PageState, opts: tuple) -> None:
    """Each chosen optimiser's hyper-parameters, a bordered box each."""
    for opt in opts:
        box = st.container(border=True)
        box.markdown(f"**{t(f'opt.opts.{opt}')}**")
        for p in HYPER[opt]:
            state.widget(p.name, container=box, label=t(f"opt.h.{p.name.removeprefix(opt + '_')}"))


def paths_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:  # the surface first: the optimisers' pills wrap to several rows on a projector
        surf, start = surface_controls(state)
        opts = state.widget("opts", fold=False)
        with state.more(st.container()):
            hyper_controls(state, opts)
    if not opts:
        figure.info(t("opt.none"), icon=":material/info:")
        return
    v, names = state.values, opt_names(opts)
    runs = {o: path(o, surf, start, v["steps"], v["seed"], **hyper(state, o)) for o in opts}
    ends = {o: diverged_at(p) for o, p in runs.items()}
    lab = labels()
    brushed = brushed_steps(ss.get("opt.fig.loss"), v["steps"])  # the steps dragged over on the loss chart
    with figure:
        charts.plotly_chart(st, paths_figure(surf, runs, names, lab, ends, highlight=brushed), key="opt.fig.paths")
        for o, k in ends.items():
            if k is not None:
                st.warning(t("opt.diverged", name=names[o], step=k, lr=f"{hyper(state, o)['lr']:g}"),
                           icon=":material/trending_up:")
        st.caption(t("opt.paths.intro") + " " + t("opt.paths.help"))
        if brushed:
            st.caption(t("opt.paths.brushed", first=brushed[0], last=brushed[1]))
    gaps = {o: losses(surf, p) for o, p in runs.items()}
    log = all(g[1] for g in gaps.values())
    left, right = st.columns(2, gap="medium")  # below the stage, each smaller than the paths
    charts.altair_chart(left, loss_chart({o: g[0] for o, g in gaps.items()}, names, lab, ends, log=log),
                        key="opt.fig.loss", on_select="rerun", selection_mode=BRUSH, width="stretch")
    left.caption(t("opt.loss.help" if log else "opt.loss.help_linear") + " " + t("opt.loss.brush"))
    with right:
        formulas(state, surf, start, opts, names, ends)


def formulas(state: PageState, surf, start, opts: tuple, names: dict, ends: dict) -> None:
    st.subheader(t("opt.formulas"))
    k = bounded(state, "at", 1, state.values["steps"], 1, help=t("opt.at.help"))
    st.caption(t("opt.formulas.help"))
    for o in opts:
        h = hyper(state, o)
        steps = trace(o, surf, start, k, state.values["seed"], **h)
        st.markdown(f"**{names[o]}**")
        if len(steps) < k:  # the path diverged before step k
            st.error(t("opt.diverged_before", name=names[o], step=ends[o] or len(steps) + 1, at=k),
                     icon=":material/error:")
            continue
        st.latex(update_latex(o, steps[-1], h))


def about() -> str:
    """The longer explanation, naming which rules follow torch.optim and which one a paper (RULE_SOURCE)."""
    names, sep = opt_names(OPTIMIZERS), t("opt.list_sep")
    torch = [o for o in OPTIMIZERS if RULE_SOURCE[o].startswith("torch.optim.")]
    paper = [o for o in OPTIMIZERS if o not in torch]
    return t("opt.about", torch=sep.join(names[o] for o in torch), paper=sep.join(names[o] for o in paper),
             source=sep.join(RULE_SOURCE[o] for o in paper))


def main() -> None:
    PageState(PAGE, SCHEMA).sections(t("opt.title"), t("opt.intro"), {
        "paths": paths_section, "momentum": momentum_section, "schedules": schedules_section,
        "memory": memory_section, "muon": muon_section, "adamw": decay_section,
        "race": race_section}, about())


main()
