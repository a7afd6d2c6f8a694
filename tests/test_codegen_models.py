"""Show me the code (sim.codegen), part B: the attention, language-model, transformer-block, sequence-models and
assistant labs' files. Each generated file runs in a subprocess with `python -I` (no project on the path) and its
losses at 3 steps must equal the lab's engine's at the same settings, to 1e-6 relative, for the defaults and three
other settings (the engine's run is built by the same spec functions the pages call); each file is at most 150 lines
at the defaults, imports only the standard library, numpy and torch, and passes ruff. No torch thread setting is
needed: on this CPU the files and the engines agree bit for bit with torch's default threads."""
from __future__ import annotations

from pathlib import Path

import pytest
from codegentools import assert_short_plain_clean, page_values, relative_error, run_file

import sim.codegen as codegen
import sim.codegen.assistant as assistant_code
from labs.assistant.pipeline import pipeline_spec
from labs.attention.training import live_spec as attention_spec
from labs.blocks.live import depth_spec
from labs.blocks.moe import moe_spec
from labs.lm.training import live_spec as lm_spec
from labs.sequence.encdec import encdec_spec
from labs.sequence.memory import memory_spec, window_spec
from sim.language.lm import SYNTHETIC_CHARS, read_text, synthetic_text
from sim.transformers.tasks import CORPORA

STEPS = 3
RTOL = 1e-6
# the user's own text of the language-model lab (not in the link: the file reads it with --text)
OWN_TEXT = ("the quick brown fox jumps over the lazy dog.\r\n" * 12 + "数据和模型。" * 20).encode("utf-8")
# per lab: the defaults (of the section with a live run, where the lab has sections) and three other settings
SETTINGS = {
    "attention": ["section=train",
                  "section=compare&task=repeat&length=3&pos=sinusoidal&t_seed=4",
                  "section=train&task=text&corpus=zh&context=8&layers=2&t_heads=4&width=16&lr=0.01&causal=0&t_seed=5",
                  "section=train&task=sort&length=7&width=64&lr=0.03&t_seed=11"],
    "lm": ["section=train",
           "section=train&tokenizer=bpe&language=zh&vocab=280&seed=3&t_seed=5",
           "section=train&context=8&layers=1&heads=4&width=64&lr=0.01&t_seed=2&language=zh&seed=1",
           "section=train&source=own&context=16&layers=3&width=16&lr=0.001&t_seed=7"],
    "blocks": ["section=residual",
               "section=residual&r_task=repeat&r_layers=3&r_width=16&r_lr=0.003&r_warmup=50&r_seed=4",
               "section=moe",
               "section=moe&m_experts=4&m_k=2&m_cf=1.0&m_alpha=0.1&m_gamma=0.03&m_clusters=3&m_lr=0.03&m_seed=9"],
    "sequence": ["section=memory",
                 "section=why&m_distance=20&m_hidden=16&m_lr=0.01&m_seed=7",
                 "section=sparse&w_distance=24&w_window=3&w_layers=2&w_seed=2",
                 "section=encdec&e_text=zh&e_layers=1&e_width=16&e_lr=0.01&e_seed=3"],
    "assistant": ["section=pipeline",
                  "section=pipeline&pipe_seed=3",
                  "section=pipeline&pipe_seed=42&pipe_beta=4.0&pipe_kl=0.0&pipe_nll=0.0"],
}
CASES = [(lab, q) for lab, queries in SETTINGS.items() for q in queries]
DEFAULTS = [(lab, queries[0]) for lab, queries in SETTINGS.items()] + [("blocks", "section=moe")]
SHORT_PIPELINE = {"pretrain": 2, "sft": 3, "reward": 1, "dpo": 1, "rlhf": 1, "hack": 1}




def by_name(trainers, name, steps: int) -> list[dict]:
    """Per step, each trainer's loss under its name(trainer)."""
    histories = {name(tr): [h["loss"] for h in tr.history] for tr in trainers}
    assert all(len(h) == steps for h in histories.values()), histories
    return [{n: h[i] for n, h in histories.items()} for i in range(steps)]


def engine_losses(lab: str, v: dict, steps: int, pipeline: dict | None = None) -> list:
    """The losses the lab shows at steps 1..steps, from the run its page builds (its live spec's build); a run of
    models stepped in turn advances steps × models."""
    if lab == "attention":
        kind = v["section"]
        run = attention_spec(kind, v, CORPORA[v["corpus"]] if v["task"] == "text" else "").build()
        run.advance(steps)
        if kind == "train":
            return [h["loss"] for h in run.trainers[0].history]
        return by_name(run.trainers, lambda tr: "causal" if tr.config.causal else "open", steps)
    if lab == "lm":
        if v["source"] == "own":
            text, floor = read_text(OWN_TEXT), None
        else:
            text, floor = synthetic_text(v["language"], SYNTHETIC_CHARS, v["seed"])  # the page's cached_synthetic
        run = lm_spec(v, text, floor).build()
        run.advance(steps)
        return [h["loss"] for h in run.trainer.history]
    if lab == "blocks" and v["section"] == "residual":
        run = depth_spec(v).build()
        run.advance(steps * 4)
        return by_name(run.trainers, lambda tr: tr.config.ln + ("+warmup" if tr.warmup else ""), steps)
    if lab == "blocks":
        run = moe_spec(v).build()
        run.advance(steps * 3)
        return by_name(run.trainers, lambda tr: tr.mode, steps)
    if lab == "sequence":
        spec = {"memory": memory_spec, "why": memory_spec, "sparse": window_spec, "encdec": encdec_spec}[v["section"]]
        run = spec(v).build()
        run.advance(steps * len(run.trainers))
        name = (lambda tr: tr.style) if v["section"] == "encdec" else (lambda tr: tr.config.kind)
        return by_name(run.trainers, name, steps)
    if lab == "assistant":
        run = pipeline_spec(v, pipeline).build()
        run.advance(steps)
        losses = [y for s in ("pretrain", "sft") for y in run.curves[s].get("loss", ([], []))[1]]
        return losses[:steps]
    raise AssertionError(lab)






def file_losses(lab: str, v: dict, link: str, path: Path, steps: int) -> list[dict]:
    path.write_text(codegen.script(lab, v, link), encoding="utf-8")
    extra = ()
    if lab == "lm" and v["source"] == "own":
        (path.parent / "own.txt").write_bytes(OWN_TEXT)
        extra = ("--text", str(path.parent / "own.txt"))
    return run_file(path, steps, *extra)


@pytest.mark.parametrize(("lab", "query"), CASES)
def test_the_file_trains_as_the_lab(lab, query, tmp_path):
    """The file, run alone (python -I: no project on the path), prints the lab's losses at steps 1..3."""
    v, link = page_values(lab, query)
    records = file_losses(lab, v, link, tmp_path / "run.py", STEPS)
    assert [r["step"] for r in records] == list(range(1, STEPS + 1))
    want = engine_losses(lab, v, STEPS)
    assert len(want) == STEPS
    errors = [relative_error(r["loss"], w) for r, w in zip(records, want, strict=True)]
    assert max(errors) <= RTOL, (records, want)


def test_the_assistant_file_goes_on_from_pretraining_to_sft(tmp_path, monkeypatch):
    """The assistant's file trains the pipeline's supervised stages in turn: with short stages (the pipeline's
    steps per stage, a setting only its tests change), its SFT steps after pretraining are the lab's too."""
    monkeypatch.setattr(assistant_code, "STEPS", SHORT_PIPELINE)
    v, link = page_values("assistant", "section=pipeline&pipe_seed=7")
    records = file_losses("assistant", v, link, tmp_path / "run.py", 6)  # one step asked past the stages
    assert [r["stage"] for r in records] == ["pretrain"] * 2 + ["sft"] * 3
    want = engine_losses("assistant", v, 5, SHORT_PIPELINE)
    assert max(relative_error(r["loss"], w) for r, w in zip(records, want, strict=True)) <= RTOL




@pytest.mark.parametrize(("lab", "query"), DEFAULTS)
def test_the_file_is_short_plain_and_clean(lab, query, tmp_path):
    """At the defaults: at most 150 lines, the link in its first lines, only the standard library, numpy and torch
    imported, and `ruff check` (the repository's rules) finds nothing; every other setting tested is clean too."""
    assert_short_plain_clean(lab, [query, *SETTINGS[lab]], tmp_path)


@pytest.mark.parametrize(("lab", "query"), [("attention", "section=pipeline"), ("attention", "section=examples"),
                                            ("lm", "section=tokens"), ("lm", "section=laws"),
                                            ("blocks", "section=norm"), ("blocks", "section=position"),
                                            ("sequence", "section=parallel"), ("sequence", "section=mamba"),
                                            ("assistant", "section=paradigms"), ("assistant", "section=data")])
def test_a_section_without_a_live_run_has_no_file(lab, query):
    v, link = page_values(lab, query)
    with pytest.raises(LookupError):
        codegen.script(lab, v, link)
    assert not codegen.available(lab, v)
