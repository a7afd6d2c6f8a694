"""The sequence-models lab's encoder-against-decoder section: the same tiny transformer trained BERT-style (masked
characters, no mask between positions) and GPT-style (next character, causal mask) on the same text, live
(sim.sequence.live.EncDecRun); their masks, each model's loss on both tasks at the cursor's step, and the user's own
blank to fill and prefix to continue (both read when the run is paused: the view on screen moves on while it plays)."""
import streamlit as st

from sim.core.live import Cursor, LiveSpec
from sim.plots.sequence import encdec_frame, masks_figure
from sim.sequence.claims import NEAR, ahead
from sim.sequence.encdec import BLANK, STYLES, continue_text, cross_losses, fill_blank, masks, parse_blank
from sim.sequence.live import encdec_run
from ui import charts, live_plots, live_run
from ui.i18n import t
from ui.urlstate import PageState

KEY = "seq.encdec"
SETTINGS = ("e_text", "e_layers", "e_width", "e_lr", "e_seed")
DEFAULT_BLANK = {"en": "the cat s_t on", "zh": "猫坐在_子上"}
DEFAULT_PREFIX = {"en": "the dog ", "zh": "小猫"}
SHOWN_T = 12  # the masks drawn for a window of this many positions
TYPED_CHARS = 200  # the longest blank or prefix typed (the models read a window far shorter)


def encdec_spec(v: dict) -> LiveSpec:
    v = dict(v)

    def build():
        return encdec_run(v["e_text"], v["e_layers"], v["e_width"], v["e_lr"], v["e_seed"])

    return LiveSpec(KEY, tuple(v[n] for n in SETTINGS), build, speed=v["e_speed"], step_size=v["e_speed"] * 2)


def name(style: str) -> str:
    return str(t(f"seq.ed.{style}"))


def drawn(frame: dict, labels: dict) -> dict:
    runs = [{**r, "name": name(r["kind"])} for r in frame["runs"]]
    return {**encdec_frame(runs, labels), "step": frame["step"], "run": frame["run"], "n": frame["n"]}


def encdec_section(state: PageState) -> None:
    figure, side = state.stage()
    with side:
        for n in ("e_text", "e_lr", "e_layers"):
            state.widget(n, fold=False)
        with state.more(side):
            for n in ("e_width", "e_speed", "e_seed"):
                state.widget(n)
    v = state.values
    spec = encdec_spec(v)
    frame_labels = {k: str(t(f"seq.fig.{k}")) for k in ("step", "loss", "caption")} | {
        "loss_title": str(t("seq.ed.loss_title"))}

    show = live_plots.frames_view(spec, lambda f: drawn(f, frame_labels))

    def messages(cursor: Cursor) -> None:
        for r in cursor.frame()["runs"]:
            if r["diverged"]:
                st.error(t("seq.diverged", name=name(r["kind"]), step=r["steps"]))

    with figure:
        cursor = live_run.live_lab(spec, show, prefix="seq", messages=messages,
                                   bad_settings=lambda e: st.error(t("seq.bad_settings")), n=v["e_speed"])
    st.markdown(t("seq.ed.intro"))
    left, right = st.columns(2, gap="medium")  # below the stage: the masks and the table smaller than the losses
    labels = {n: name(n) for n in STYLES} | {k: str(t(f"seq.sp.fig.{k}")) for k in ("share", "query", "key")}
    charts.plotly_chart(left, masks_figure(masks(SHOWN_T), labels, height=240), key="seq.ed.masks")
    if cursor is None:
        return
    if cursor.playing:  # the table and the answers are read at the cursor's step, which the view has left behind
        right.caption(t("seq.playing"))
    else:
        table = cursor.memo(("cross",), lambda run: cross_losses({tr.style: tr for tr in run.trainers}))
        right.caption(t("seq.ed.at_step", step=cursor.pos))
        rows = [{t("seq.ed.col.model"): name(s), t("seq.ed.col.blank"): f"{table[s]['blank']:.3f}",
                 t("seq.ed.col.next"): f"{table[s]['next']:.3f}"} for s in STYLES]
        right.dataframe(rows, hide_index=True)
        right.markdown(t("seq.ed.explain", bert_blank=f"{table['bert']['blank']:.3f}",
                         gpt_blank=f"{table['gpt']['blank']:.3f}", bert_next=f"{table['bert']['next']:.3f}",
                         gpt_next=f"{table['gpt']['next']:.3f}") + " "
                       + t(f"seq.ed.on_blank.{ahead(table['bert']['blank'], table['gpt']['blank'])}", near=NEAR)
                       + " " + t(f"seq.ed.on_next.{ahead(table['bert']['next'], table['gpt']['next'])}", near=NEAR))
    lang = "zh" if v["e_text"] == "zh" else "en"
    left, right = st.columns(2)
    blank = left.text_input(t("seq.ed.blank", blank=BLANK), value=DEFAULT_BLANK[lang], key=f"seq.ed.blank.{lang}",
                            max_chars=TYPED_CHARS)
    prefix = right.text_input(t("seq.ed.prefix"), value=DEFAULT_PREFIX[lang], key=f"seq.ed.prefix.{lang}",
                              max_chars=TYPED_CHARS)
    if cursor.playing:
        return
    with cursor.model() as run:
        task = run.trainers[0].task
        try:
            a, b = parse_blank(task, blank)
        except ValueError as e:
            left.warning(bad_text(e, task, blank.replace(BLANK, "")))  # the blank is asked for, not refused
        else:
            for s in STYLES:
                guesses = ", ".join(f"“{c}” {p:.0%}" for c, p in fill_blank(run.trainer(s), a, b))
                left.markdown(t("seq.ed.filled", model=name(s), text=f"{a}{BLANK}{b}", guesses=guesses))
        try:
            outs = {s: continue_text(run.trainer(s), prefix) for s in STYLES}
        except ValueError as e:
            right.warning(bad_text(e, task, prefix))
        else:
            for s in STYLES:
                right.markdown(t("seq.ed.continued", model=name(s), prefix=prefix, text=outs[s]))


def bad_text(e: ValueError, task, raw: str) -> str:
    reason = str(e).removeprefix("invalid:")
    if reason == "chars":
        return str(t("seq.ed.bad_chars", chars=" ".join(task.unknown(raw)), allowed=task.chars.replace(" ", "␣")))
    return str(t(f"seq.ed.bad_{reason}", blank=BLANK))
