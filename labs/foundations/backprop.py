"""The backpropagation section: a small network as a computational graph, stepped through its forward pass, its
backward pass (the chain rule written out at a node) and one gradient step; the network controls the training-loop
section shares."""
import pandas as pd
import streamlit as st

from labs.foundations.schema import PAGE, SCHEMA
from sim.autograd.network import Graph, NetConfig, Sample, chain_rule, forward_backward, stage, step
from sim.core.text import Markup
from sim.plots.foundations import forward_formula, graph_figure, local_formula, term
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState, set_values

ss = st.session_state


def network_controls(state: PageState) -> NetConfig:
    """The network's widgets, one under another (a section draws them in its "More settings")."""
    for name in ("n_in", "layers", "width", "act", "seed"):
        state.widget(name, help=t(f"fnd.{name}.help"))
    v = state.values
    return NetConfig(v["n_in"], v["layers"], v["width"], v["act"], v["seed"])


@st.cache_data(max_entries=64, show_spinner=False)
def graph(config: NetConfig) -> Graph:
    return forward_backward(config)


def held_slider(state: PageState, name: str, hi: int) -> int:
    """A slider for a parameter held to 0..hi (the graph's size decides hi)."""
    key = state.key(name)
    value = min(max(state.values[name], 0), hi)
    if key not in ss or not 0 <= ss[key] <= hi:
        ss[key] = value
    value = st.slider(t(key), 0, hi, step=1, key=key, help=t(f"{key}.help"))
    state.set(name, value)
    return value


# ---------- the step buttons ----------
def move(n: int, by: int) -> None:
    """One node on (by = 1) or back (−1), across the phases: forward 0..n, backward 0..n, then the update."""
    v = ss[f"_vals.{PAGE}"]
    phase, k = v["phase"], min(max(v["k"], 0), n)
    if by > 0:
        phase, k = (phase, k + 1) if phase != "update" and k < n else \
            ("backward", 0) if phase == "forward" else ("update", n)
    else:
        phase, k = (phase, k - 1) if phase != "update" and k > 0 else \
            ("forward", n) if phase == "backward" else ("backward", n) if phase == "update" else (phase, 0)
    set_values(PAGE, SCHEMA, {"phase": phase, "k": k, "node": -1})


def to_end(n: int) -> None:
    v = ss[f"_vals.{PAGE}"]
    set_values(PAGE, SCHEMA, {"k": n, "node": -1} if v["phase"] != "update" else {"phase": "forward", "k": 0})


def step_buttons(state: PageState, n: int) -> None:
    bar = st.container(horizontal=True, vertical_alignment="center")
    bar.button(t("fnd.bp.prev"), on_click=move, args=(n, -1), icon=":material/arrow_back:", key="fnd.bp_prev")
    bar.button(t("fnd.bp.next"), on_click=move, args=(n, 1), icon=":material/arrow_forward:", key="fnd.bp_next",
               type="primary")
    bar.button(t("fnd.bp.end") if state.values["phase"] != "update" else t("fnd.bp.again"), on_click=to_end,
               args=(n,), icon=":material/fast_forward:", key="fnd.bp_end")


# ---------- the words beside the graph ----------
def names(g: Graph) -> list[str]:
    return [n.label for n in g.nodes]


def forward_text(g: Graph, i: int) -> str:
    node, labels = g.nodes[i], names(g)
    if not node.parents:
        return t("fnd.bp.leaf", name=labels[i], value=f"{node.data:.4g}")
    where = {id(n): j for j, n in enumerate(g.nodes)}
    parents = [labels[where[id(p)]] for p in node.parents]
    return t("fnd.bp.computed", formula=forward_formula(labels[i], node.op, parents, [p.data for p in node.parents],
                                                         node.data))


def chain_text(g: Graph, i: int) -> str:
    """dL/d(node i) as the sum over the nodes it feeds of (their gradient × the local derivative), with numbers."""
    labels, node = names(g), g.nodes[i]
    if i == len(g.nodes) - 1:
        return t("fnd.bp.chain_loss")
    terms = chain_rule(g, i)
    symbolic, numeric = [], []
    for c, grad, local in terms:
        child = g.nodes[c]
        k = next(j for j, p in enumerate(child.parents) if p is node)
        symbolic.append(f"∂L/∂{labels[c]} · ∂{labels[c]}/∂{labels[i]}")
        formula = local_formula(child.op, k, [p.data for p in child.parents], child.data)
        numeric.append(f"{term(f'{grad:.4g}')} × ({formula} = {local:.4g})")
    return t("fnd.bp.chain", name=labels[i], symbolic=" + ".join(symbolic), numeric=" + ".join(numeric),
             grad=f"{node.grad:.4g}", n=len(terms))


def node_picker(state: PageState, g: Graph, known: list[bool]) -> int | None:
    """The node whose chain rule is written out: -1 follows the pass, or any node whose gradient is known."""
    labels = names(g)
    options = [-1] + [i for i, k in enumerate(known) if k]
    key = state.key("node")
    if ss.get(key) not in options:
        ss[key] = state.values["node"] if state.values["node"] in options else -1
    chosen = st.selectbox(t("fnd.node"), options, key=key, help=t("fnd.node.help"),
                          format_func=lambda i: t("fnd.node.current") if i == -1 else labels[i])
    state.set("node", chosen)
    return None if chosen == -1 else chosen


# ---------- the section ----------
def update_view(config: NetConfig, g: Graph, lr: float) -> None:
    """The gradient step's losses, its rule and every parameter before and after it (below the graph)."""
    new, before, after = step(config, lr)
    rows = []
    for p, value in zip(g.params, new_values(new), strict=True):
        rows.append({t("fnd.bp.col.param"): p.label, t("fnd.bp.col.before"): p.data, t("fnd.bp.col.grad"): p.grad,
                     t("fnd.bp.col.after"): value})
    cols = st.columns(3)
    cols[0].metric(t("fnd.bp.loss_before"), f"{before:.6g}")
    cols[1].metric(t("fnd.bp.loss_after"), f"{after:.6g}", delta=f"{after - before:.3g}", delta_color="inverse")
    cols[2].metric(t("fnd.lr"), f"{lr:g}")
    st.markdown(t("fnd.bp.update_rule", lr=f"{lr:g}"))
    warning = overshoot_text(before, after, lr)
    if warning is not None:
        st.warning(warning, icon=":material/trending_up:")
    left, _ = st.columns(2)  # a table narrower than the graph above it
    left.dataframe(pd.DataFrame(rows), hide_index=True, key="fnd.bp_table",
                   column_config={c: st.column_config.NumberColumn(format="%.5f") for c in list(rows[0])[1:]})


def overshoot_text(before: float, after: float, lr: float) -> Markup | None:
    """The warning the step gets when the loss went up, else None."""
    return t("fnd.bp.overshoot", lr=f"{lr:g}") if after > before else None


def new_values(s: Sample) -> list[float]:
    """The weights then the biases of a sample, in the order of Graph.params."""
    return [w for W in s.weights for row in W for w in row] + [b for B in s.biases for b in B]


def backprop_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        main = st.container()  # the step-through, on view beside the graph; filled once the graph is known
        with state.more(side):
            config = network_controls(state)
            picker = st.container()  # the node explained (once gradients are known)
    g = graph(config)
    n = len(g.nodes)
    with main:
        step_buttons(state, n)
        phase = state.values["phase"]  # already the switch's new value (PageState reads changed widgets first)
        k = held_slider(state, "k", n) if phase != "update" else n
        lr = state.widget("lr", help=t("fnd.lr.help"), fold=False) if phase == "update" else None
        state.widget("phase", fold=False)
    s = stage(g, phase, k)
    notes: dict[tuple[int, int], str] = {}
    explain, text = None, None
    if phase == "forward" and s.current is not None:
        text = forward_text(g, s.current)
    elif phase != "forward":
        with picker:
            picked = node_picker(state, g, [x is not None for x in s.grads])
        explain = picked if picked is not None else s.current
        if explain is not None:
            text = chain_text(g, explain)
            notes = {(explain, c): f"{d:.3g}" for c, d in g.children(explain)}
    fig = graph_figure(names(g), [v.op for v in g.nodes], [[g.index(p) for p in v.parents] for v in g.nodes],
                       s.values, s.grads, explain if explain is not None else s.current, notes,
                       {"value": t("fnd.bp.value"), "grad": t("fnd.bp.grad")})
    with figure:
        charts.plotly_chart(st, fig, key="fnd.fig_graph")
        st.caption(t(f"fnd.bp.where.{phase}", k=k, n=n))
        if text is not None:
            st.markdown(text)
        st.caption(t("fnd.bp.legend"))
    st.markdown(t("fnd.bp.intro"))
    if lr is not None:
        update_view(config, g, lr)
