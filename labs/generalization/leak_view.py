"""The generalisation lab's leakage section: one scenario at a time, its leaky and honest protocols' scores beside
the setting that makes it leak, a picture of one draw below."""
import streamlit as st

from labs.generalization import labels
from sim.fitting import leakage
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
        gap = {name: f"{s.gap * 100:+.0f} ± {s.spread * 100:.0f}"
               for name, s in (("leaky", leak.leaky), ("honest", leak.honest))}
        st.caption(t("gen.leak.summary", leaky=bar_labels["leaky"], honest=bar_labels["honest"],
                     lr=f"{leak.leaky.reported:.0%}", ln=f"{leak.leaky.new:.0%}", gap=gap["leaky"],
                     hr=f"{leak.honest.reported:.0%}", hn=f"{leak.honest.new:.0%}", hgap=gap["honest"],
                     repeats=leakage.REPEATS))
    picture, words = st.columns(2, gap="medium")  # half the page's width: smaller than the bars above
    charts.plotly_chart(picture, example, key=f"gen.leak.{scenario}.example")
    words.markdown(t(f"gen.leak.{scenario}.text"))
    st.markdown(t("gen.leak.intro"))
