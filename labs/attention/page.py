"""Attention lab: the pipeline stage by stage, the notes' worked numbers, and a tiny transformer trained live."""

import time

import streamlit as st
import torch

from sim.attention import (
    NOTES_SCORES,
    NOTES_VALUES,
    attend_row,
    embed_tokens,
    make_mask,
    random_attention,
    run_pipeline,
    sharpness_by_head_dim,
    softmax_steps,
    weight_stats,
)
from sim.plots.attention import (
    attention_panels,
    bars_figure,
    loss_panel,
    pipeline_figures,
    sharpness_figure,
)
from sim.plots.curves import TEST_COLOR, TRAIN_COLOR
from sim.tasks import CORPORA, LETTERS, MAX_TOKENS, PRESETS, make_task, split_tokens
from sim.text import html, md
from sim.transformer import LMTrainer, TransformerConfig, notes_ffn
from ui import live_plots, live_run
from ui.i18n import t
from ui.player import Player
from labs.attention.schema import PAGE, SCHEMA
from ui.urlstate import PageState

REPORT_S = 2.0  # while playing, what the models generate is redone at most this often
MAX_TEXT = 2000  # longest training text
HEAD_DIMS = (1, 2, 4, 8, 16, 32, 64, 128)
ss = st.session_state


def remembered(draw, key: str, source: str, default: str, **kw) -> str:
    """Draw a text widget whose text survives switching sections and resets when its source (preset) changes."""
    if ss.get(f"{key}.source") != source:
        ss[f"{key}.source"], ss[f"{key}.kept"] = source, default
        ss.pop(key, None)
    # Streamlit drops a widget's state while it is not drawn, so the text is also kept under another key
    ss.setdefault(key, ss[f"{key}.kept"])
    ss[f"{key}.kept"] = draw(key=key, **kw)
    return ss[f"{key}.kept"]


def fmt(values, digits: int = 3) -> str:
    """[a, b, c] with a fixed number of decimals; a matrix (2-D tensor) as a list of its rows."""
    return "[" + ", ".join(fmt(v, digits) if getattr(v, "ndim", 0) else f"{float(v):.{digits}f}" for v in values) + "]"


# ---------- 1. the pipeline ----------
def text_input(state: PageState) -> list[str]:
    """The preset or typed text, cut into at most MAX_TOKENS tokens."""
    preset = state.widget("preset")
    tokens = split_tokens(remembered(st.text_input, "att.text", preset, PRESETS[preset], label=t("att.text"),
                                     max_chars=400))
    if len(tokens) > MAX_TOKENS:
        st.warning(t("att.too_many_tokens", n=len(tokens), max=MAX_TOKENS))
    return tokens[:MAX_TOKENS]


def pipeline_section(state: PageState) -> None:
    st.markdown(t("att.pipeline_intro"))
    c1, c2, c3, c4 = st.columns([3, 2, 2, 1])
    with c1:
        tokens = text_input(state)
    state.widget("d_model", container=c2)
    state.widget("heads", container=c3)
    state.widget("seed", container=c4)
    c1, c2, c3 = st.columns([4, 3, 3])
    mask_kind = state.widget("mask", container=c1)
    if mask_kind in ("window", "causal_window"):
        state.widget("window", container=c2)
    temperature = state.widget("temperature", container=c3)
    c1, c2, c3 = st.columns([6, 2, 2], vertical_alignment="bottom")
    scaled = state.widget("scale", container=c2)
    state.widget("numbers", container=c3)
    v = state.values
    if not tokens:
        st.info(t("att.no_tokens"))
        return
    d_model, n_heads = v["d_model"], v["heads"]
    if d_model % n_heads:
        st.error(t("att.invalid_heads", d=d_model, h=n_heads))
        return
    head = state.widget("head", container=c1, options=("all", *(str(h) for h in range(1, n_heads + 1))))
    heads = list(range(n_heads)) if head == "all" else [int(head) - 1]
    T = len(tokens)
    p = run_pipeline(random_attention(d_model, n_heads, v["seed"]), embed_tokens(tokens, d_model, v["seed"]),
                     make_mask(mask_kind, T, v["window"]), scale_by_sqrt_d=scaled, temperature=temperature)
    d_h = d_model // n_heads
    labels = {k: t(f"att.stage.{k}") for k in ("x", "q", "k", "v", "raw", "weights", "heads_out", "concat", "output",
                                                "head", "row_sum", "masked_cell")}
    divisor = f"√{d_h} = {d_h ** 0.5:.3g}" if scaled else "1"
    labels["scaled"] = t("att.stage.scaled", divisor=divisor, temp=f"{temperature:g}", shape="{shape}")
    labels["masked"] = t("att.stage.masked" if p.mask is not None else "att.stage.no_mask")
    figs = pipeline_figures(p, [html(tok, 20) for tok in tokens], heads, labels, annotate=v["numbers"] and T <= 8)
    rows = (("x",), ("q", "k", "v"), ("raw", "scaled"), ("masked", "weights"), ("heads_out", "concat", "output"))
    for row in rows:
        for col, key in zip(st.columns(len(row)), row):
            col.plotly_chart(figs[key], key=f"att.fig.{key}")
            col.caption(t(f"att.explain.{key}"))
    stats = weight_stats(p.weights[heads])
    c1, c2, c3 = st.columns(3)
    c1.metric(t("att.metric.max_weight"), f"{stats['max_weight']:.3f}")
    c2.metric(t("att.metric.entropy"), f"{stats['entropy']:.3f}",
              help=t("att.metric.entropy_help", uniform=f"{stats['uniform_entropy']:.3f}"))
    c3.metric(t("att.metric.row_sums"), f"{stats['row_sum_min']:.4f} … {stats['row_sum_max']:.4f}")
    st.subheader(t("att.sharpness_title"))
    curves = cached_sharpness()
    st.plotly_chart(sharpness_figure(HEAD_DIMS, curves, {k: t(f"att.sharpness.{k}") for k in
                                                        ("d_h", "max", "scaled", "unscaled")}, current=d_h),
                    key="att.fig.sharpness")
    st.caption(t("att.sharpness_help"))


@st.cache_data
def cached_sharpness() -> dict[str, list[float]]:
    return sharpness_by_head_dim(list(HEAD_DIMS))


# ---------- 2. the notes' numbers ----------
def examples_section(state: PageState) -> None:
    scores, values = torch.tensor(NOTES_SCORES), torch.tensor(NOTES_VALUES)
    weights, out = attend_row(scores, values)
    steps = softmax_steps(scores)
    st.subheader(t("att.ex.softmax_title"))
    left, right = st.columns([3, 2])
    rows = [f"| {t('att.ex.key')} | s | e^s | e^s / Σ |", "|---|---:|---:|---:|"]
    rows += [f"| key{j} | {s:g} | {e:.4f} | **{w:.3f}** |" for j, (s, e, w) in
             enumerate(zip(scores.tolist(), steps["exp"].tolist(), weights.tolist()))]
    rows.append(f"| Σ | | {steps['exp_sum'].item():.4f} | {steps['stable'].sum().item():.3f} |")
    left.markdown("\n".join(rows))
    left.caption(t("att.ex.softmax_help"))
    right.plotly_chart(bars_figure([f"key{j}" for j in range(3)], {t("att.ex.scores"): scores.tolist(),
                                                                   t("att.ex.weights"): weights.tolist()},
                                   t("att.ex.value")), key="att.fig.softmax")
    st.subheader(t("att.ex.sum_title"))
    terms = " + ".join(f"{w:.3f}×{fmt(v_, 0)}" for w, v_ in zip(weights.tolist(), values.tolist()))
    st.code(f"v0 = {fmt(values[0], 0)}   v1 = {fmt(values[1], 0)}   v2 = {fmt(values[2], 0)}\n"
            f"output = {terms}\n       = {fmt(out)}", language=None)
    st.caption(t("att.ex.sum_help"))

    st.subheader(t("att.ex.ffn_title"))
    ffn, s = notes_ffn()
    st.code(f"x      = {fmt(s['x'], 0)}\nW_up   = {fmt(s['w_up'], 0)}\n"
            f"h      = x·W_up      = {fmt(s['h'], 0)}\nReLU(h)              = {fmt(s['relu'], 0)}\n"
            f"W_down = {fmt(s['w_down'], 0)}\ny      = ReLU(h)·W_down = {fmt(s['y'], 0)}", language=None)
    st.caption(t("att.ex.ffn_help"))

    st.subheader(t("att.ex.stable_title"))
    big = state.widget("big", container=st.columns(2)[0])
    x = torch.tensor([big, big - 1.0, big - 2.0])
    steps = softmax_steps(x)
    rows = [f"| | {t('att.ex.naive')} | {t('att.ex.stable')} |", "|---|---|---|",
            f"| s | {fmt(x, 0)} | s − max = {fmt(steps['shifted'], 0)} |",
            f"| e^… | {fmt(steps['exp'], 4)} | {fmt(steps['exp_shifted'], 4)} |",
            f"| softmax | {fmt(steps['naive'], 3)} | {fmt(steps['stable'], 3)} |"]
    st.markdown("\n".join(rows))
    overflow = torch.isnan(steps["naive"]).any()
    (st.error if overflow else st.success)(t("att.ex.stable_nan" if overflow else "att.ex.stable_ok"))
    st.caption(t("att.ex.stable_help"))


# ---------- 3. the tiny transformer ----------
def training_text(state: PageState) -> str:
    corpus = state.widget("corpus")
    return remembered(st.text_area, "att.train_text", corpus, CORPORA[corpus], label=t("att.train_text"),
                      max_chars=MAX_TEXT, height=90)


def model_controls(state: PageState) -> str:
    """The task and model widgets; returns the training text (text task) or ""."""
    c = st.columns(5)
    task = state.widget("task", container=c[0])
    for col, name in zip(c[1:], ("layers", "t_heads", "width", "lr")):
        state.widget(name, container=col)
    c = st.columns(4)
    state.widget("context" if task == "text" else "length", container=c[0])
    state.widget("speed", container=c[1])
    state.widget("t_seed", container=c[2])
    return training_text(state) if task == "text" else ""


def build_trainer(v: dict, text: str, causal: bool, score_prompt: bool) -> LMTrainer:
    length = v["context"] if v["task"] == "text" else v["length"]
    task = make_task(v["task"], length, text, score_prompt=score_prompt)
    d = v["width"]
    config = TransformerConfig(vocab_size=len(task.vocab), block_size=task.block_size, n_layer=v["layers"],
                               n_head=v["t_heads"], d_model=d, d_ff=4 * d, causal=causal)
    return LMTrainer(config, task, lr=v["lr"], batch_size=32, seed=v["t_seed"])


def current_player(kind: str, v: dict, text: str) -> Player | None:
    """The session's run of this kind (player.model: its trainers, one, or with and without the mask); new ones
    when the settings changed, the old ones on bad input."""
    runs = (v["causal"],) if kind == "train" else (True, False)
    want = (kind, text, runs, *(v[n] for n in ("task", "length", "context", "layers", "t_heads", "width", "lr",
                                               "t_seed")))

    def build() -> Player:
        trainers = [build_trainer(v, text, causal, score_prompt=kind == "compare") for causal in runs]

        def step(n: int) -> None:
            for tr in trainers:
                tr.step(n)

        return Player(step, lambda: {}, lambda: any(tr.diverged for tr in trainers), model=trainers)

    try:
        player = live_run.current_player(f"att.{kind}", want, build)
    except ValueError as e:
        code = str(e).removeprefix("invalid:")
        st.error(t(f"att.invalid.{code}", n=v["context"] + 2))
        return ss.get(f"att.{kind}.player")
    player.speed = v["speed"]
    return player


def probe_text(task) -> tuple[str, str]:
    """(the text whose attention maps are drawn, the prompt to generate from), from the user's probe input."""
    if task.name == "text":
        default = task.text[: task.length]
        raw = st.text_input(t("att.probe_text", n=task.length), value=default, key="att.probe_text")
        if not raw or len(raw) > task.length or any(c not in task.vocab.chars for c in raw):
            st.warning(t("att.bad_probe_text", n=task.length))
            raw = default
        return raw, raw
    default = task.random_prompts(1, torch.Generator().manual_seed(7))[0]
    raw = st.text_input(t("att.probe", n=task.length, letters=LETTERS), value=default,
                        key=f"att.probe.{task.name}.{task.length}").strip().lower()
    if len(raw) != task.length or any(c not in LETTERS for c in raw):
        st.warning(t("att.bad_probe", n=task.length, letters=LETTERS))
        raw = default
    return task.example(raw)[:-1], raw


def run_name(tr: LMTrainer, short: bool = True) -> str:
    """"causal" / "no mask" (short) or the long title of a run."""
    if short:
        return t("att.run.causal_short" if tr.config.causal else "att.run.open_short")
    return t("att.run.causal" if tr.config.causal else "att.run.open")


def loss_text(loss: float | None) -> str:
    return "—" if loss is None else f"{loss:.4f}"


def loss_labels() -> dict:
    return {"step": t("att.plot.step"), "loss": t("att.plot.loss"), "floor": t("att.plot.floor")}


def train_frame(trainers: list[LMTrainer], probe: str) -> dict:
    (tr,) = trainers
    steps, losses = tr.curve()
    maps = [m.numpy() for m in tr.attention(probe)]
    tokens = list(probe[-tr.config.block_size:])
    panels = [loss_panel(t("att.plot.train_loss"), [(t("att.plot.loss"), steps, losses, TRAIN_COLOR)], loss_labels()),
              *attention_panels(maps, tokens, t("att.plot.map"), tr.config.causal)]
    caption = t("att.live_caption", step=tr.steps, loss=loss_text(tr.recent_loss()))
    return {"epoch": tr.steps, "caption": caption, "panels": panels}


def compare_frame(trainers: list[LMTrainer], probe: str) -> dict:
    floor = trainers[0].task.loss_floor()
    curves = [tr.curve() for tr in trainers]
    top = max([max(ls[:50], default=0.0) for _, ls in curves] + [floor or 0.0, 0.1])
    panels = []
    for tr, (steps, losses), colour in zip(trainers, curves, (TEST_COLOR, TRAIN_COLOR)):
        panels.append(loss_panel(run_name(tr, short=False), [(t("att.plot.loss"), steps, losses, colour)],
                                 loss_labels(), floor=floor, y_max=top, width=320))
    tokens = list(probe[-trainers[0].config.block_size:])
    for tr in trainers:
        title = f"{run_name(tr)} · {t('att.plot.map')}"
        panels += attention_panels([tr.attention(probe)[0].numpy()], tokens, title, tr.config.causal, size=180)
    caption = " · ".join(t("att.compare_caption", run=run_name(tr), step=tr.steps, loss=loss_text(tr.recent_loss()))
                         for tr in trainers)
    return {"epoch": trainers[0].steps, "caption": caption, "panels": panels}


def generation_report(trainers: list[LMTrainer], prompt: str) -> list[str]:
    """What each model generates from the prompt, next to the right answer (generated tasks), as Markdown lines."""
    lines = []
    for tr in trainers:
        run, task = run_name(tr), tr.task
        if task.name == "text":
            lines.append(t("att.generated_text", run=run, prompt=md(prompt), greedy=md(tr.complete(prompt, 40)),
                           sampled=md(tr.complete(prompt, 40, greedy=False, seed=1))))
        else:
            answer = task.answer(prompt)
            got = tr.complete(task.prompt_text(prompt), len(answer))
            lines.append(t("att.generated", run=run, prompt=md(task.prompt_text(prompt)), got=md(got),
                           answer=md(answer), mark="✅" if got == answer else "❌",
                           acc=f"{tr.generation_accuracy():.0%}"))
    return lines


def live_panel(kind: str, player: Player, probe: str, prompt: str) -> None:
    trainers = player.model
    make_frame = train_frame if kind == "train" else compare_frame
    player.snapshot = lambda: make_frame(trainers, probe)  # the probe text may change without the model changing

    def diverged() -> bool:
        return any(tr.diverged for tr in trainers)

    def messages() -> None:
        if diverged():
            st.error(t("att.diverged", lr=trainers[0].lr))
        # what the models generate: a few hundred forward passes, so while playing at most every REPORT_S
        key = f"att.{kind}.report"
        if not player.playing or time.monotonic() - ss.get(f"{key}_at", 0.0) > REPORT_S or key not in ss:
            with player.lock:
                ss[key], ss[f"{key}_at"] = generation_report(trainers, prompt), time.monotonic()
        for line in ss[key]:
            st.markdown(line)

    def show(frames: list[dict], seq: int, status: str) -> None:
        live_plots.show_frames(frames, key=f"att.{kind}.view", seq=seq,
                               status="diverged" if status == "stopped" else status)

    live_run.live_view("att", f"att.{kind}", player, show, diverged, messages=messages, n=player.speed)


def trained_panel(kind: str, state: PageState, text: str) -> bool:
    """The live panel of the run(s) of `kind` for these settings; False when they could not be built."""
    player = current_player(kind, state.values, text)
    if player is not None:
        live_panel(kind, player, *probe_text(player.model[0].task))
    return player is not None


def train_section(state: PageState) -> None:
    st.markdown(t("att.train_intro"))
    text = model_controls(state)
    state.widget("causal")
    if trained_panel("train", state, text):
        st.caption(t("att.train_help"))


def compare_section(state: PageState) -> None:
    st.markdown(t("att.compare_intro"))
    with st.expander(t("att.compare_settings")):
        text = model_controls(state)
    if trained_panel("compare", state, text):
        st.markdown(t("att.compare_explain"))


# ---------- page ----------
def main() -> None:
    state = PageState(PAGE, SCHEMA)
    with state.frame(t("att.title"), t("att.intro")):
        section = state.widget("section", label_visibility="collapsed")
        {"pipeline": pipeline_section, "examples": examples_section, "train": train_section,
         "compare": compare_section}[section](state)


main()
