"""The generalisation lab's leakage section: one scenario at a time, its leaky and honest protocols' scores beside
the setting that makes it leak, a picture of one draw below."""
import streamlit as st

from labs.generalization import labels
from sim.fitting import claims, leakage
from sim.plots import generalization as plots
from ui import charts
from ui.i18n import t
from ui.urlstate import PageState

KNOBS = {"scaling": "strength", "group": "records", "time": "spell"}  # each scenario's own setting


@st.cache_data(max_entries=32, show_spinner=False)
def cached_leak(scenario: str, knob: float, seed: int) -> leakage.Leak:
    return leakage.leak(scenario, knob, seed)


def leakage_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        scenario = state.widget("scenario", fold=False)
        value = state.widget(KNOBS[scenario], fold=False)
    leak = cached_leak(scenario, value, state.values["seed"])
    bar_labels = labels.leak_bars(scenario)
    example, bars = plots.leak_figures(scenario, leak, labels.leak_example(scenario), bar_labels)
    with figure:
        charts.plotly_chart(st, bars, key=f"gen.leak.{scenario}.bars")
        st.caption(summary(leak, bar_labels))
    picture, words = st.columns(2, gap="medium")  # half the page's width: smaller than the bars above
    charts.plotly_chart(picture, example, key=f"gen.leak.{scenario}.example")
    words.markdown(t(f"gen.leak.{scenario}.text"))
    # what makes the leaky protocol flatter, measured on the draw the picture shows
    measured = {k: f"{v:.0%}" if scenario != "scaling" else f"{v:.2f}"  # shares; the scaling ratios as such
              for k, v in claims.leak_mechanism(scenario, leak.example).items()}
    words.caption(t(f"gen.leak.{scenario}.draw", **measured))
    st.markdown(t("gen.leak.intro"))


def summary(leak: leakage.Leak, names: dict) -> str:
    """Each protocol's reported and new-data accuracy, in the words its gap allows (claims.protocol_verdict), and
    how many draws they are means over."""
    parts = []
    for name, s in (("leaky", leak.leaky), ("honest", leak.honest)):
        verdict = claims.protocol_verdict(s, leak.draws)
        parts.append(t(f"gen.leak.protocol.{verdict}", name=names[name], reported=f"{s.reported:.0%}",
                       new=f"{s.new:.0%}", gap=f"{s.gap * 100:+.0f} ± {s.spread * 100:.0f}"))
    return " ".join([*parts, t("gen.leak.draws", draws=leak.draws)])
