"""The GPU lab's measurement reports: the bundled ones (a choice) and an uploaded one, with their device, date,
versions, every source label, their figures and their table."""
from __future__ import annotations

import streamlit as st

from labs.gpu.measure_common import P, bytes_text, plot_labels, plot_rows, run_table, scaling
from sim.core.text import markup, md
from sim.core.upload import MB
from sim.gpu.report import MAX_BYTES, Report, ReportError, bundled_reports, load_report, parse_report
from sim.plots.gpu_measure import throughput_figure, traffic_figure
from ui import charts, layout
from ui.i18n import t, t_md


@st.cache_data(show_spinner=False)
def bundled(name: str) -> Report:
    return load_report(next(p for p in bundled_reports() if p.name == name))


def show_report(report: Report, key: str, sweep: bool = True) -> None:
    """A report's device, date and versions, every source label, its tables and figures (its sweep over N too,
    unless `sweep` is False: the view's stage shows it)."""
    st.markdown(t(f"{P}.report.head", device=md(report.device), kind=t(f"{P}.kind.{report.kind}"),
                  date=md(report.date), name=md(report.name)))
    if report.quick:
        st.warning(t(f"{P}.report.quick"), icon=":material/science:")
    labels = plot_labels(report.device)
    if sweep and sweep_runs(report):
        scaling(*sweep_runs(report), report.device, f"{key}_sweep")
    # its other figures as wide as the view's main one (and shorter: they stay readable, and second), where every
    # number comes from beside them
    figures, notes = st.columns(layout.STAGE, gap="medium")
    versions = markup(", ".join(md(f"{k} {v}") for k, v in report.versions.items() if v))
    driver = md(report.driver) if report.driver else "—"
    notes.caption(t(f"{P}.report.versions", versions=versions or "—", driver=driver))
    if report.modelled_l2:
        l2 = report.modelled_l2
        notes.caption(t(f"{P}.report.l2", l2=bytes_text(l2["l2_bytes"]) or "—", sms=l2["n_sm"] or "—",
                        chip=md(l2["from"])))
    notes.caption(t(f"{P}.report.sources", sources=markup(" | ".join(map(md, report.sources)))))
    throughput = [r for r in report.runs if r["section"].startswith("throughput")]
    if throughput:
        charts.plotly_chart(figures, throughput_figure(plot_rows(throughput), labels), key=f"{P}.{key}_throughput")
    if report.traffic:
        charts.plotly_chart(figures, traffic_figure(plot_rows(report.traffic), labels), key=f"{P}.{key}_traffic")
    with st.expander(t(f"{P}.report.table")):
        st.dataframe(run_table(report.runs, [r for r in report.traffic if r["model"] != "measured"]),
                     hide_index=True, key=f"{P}.{key}_table")


def sweep_runs(report: Report) -> tuple[list[dict], list[dict]] | None:
    """A report's sweep over N: (its measured runs, the simulator's rows for the same sizes), None when it has none."""
    runs = [r for r in report.runs if r["section"] == "n_sweep"]
    return (runs, [r for r in report.traffic if r["section"] == "n_sweep"]) if runs else None


def uploaded() -> Report | None:
    """The report the user loads (None: none, or a file that is not one, and the error says why)."""
    upload = st.file_uploader(t(f"{P}.upload"), type=["json"], key=f"{P}.upload",
                              max_upload_size=MAX_BYTES // MB)
    if upload is None:
        return None
    try:
        return parse_report(upload.getvalue(), upload.name)
    except ReportError as e:  # the field's name holds the report's own keys: shown as code
        st.error(t_md(f"{P}.report_error.{e.code}", **e.params), icon=":material/error:")
        return None


def bundled_pick() -> Report | None:
    """A choice of the bundled reports, a device's own measurements first (the newest), then the CPU's: a class
    without a GPU sees real counters."""
    names = [p.name for p in bundled_reports()]
    names = [n for n in reversed(names) if not n.startswith("cpu-")] + [n for n in names if n.startswith("cpu-")]
    if not names:
        return None
    return bundled(st.selectbox(t(f"{P}.bundled_pick"), names, key=f"{P}.bundled_pick"))


def reports(shown: Report | None, key: str, sweep: bool) -> None:
    """The report shown (bundled or loaded, `key`): what it is and where each number comes from, its figures and
    its table."""
    st.subheader(t(f"{P}.reports"))
    st.caption(t(f"{P}.reports_help"))
    if shown is not None:
        show_report(shown, key, sweep)
