"""Attention lab: the pipeline redraw after a slider change, and the tiny transformer live (the page's functions)."""
import argparse
import json
import time
from functools import partial

from benchmarks import KeyLabels, best_seconds


def attention(args: argparse.Namespace) -> None:
    """Attention lab: what the page computes after a slider change (the pipeline, 32 tokens and 4 heads; the worked
    examples), the tiny transformer trained on copy, and what the live view does per frame."""
    import plotly.io as pio

    from sim.core.text import html
    from sim.plots.attention import bars_figure, live_frame, permutation_figures, pipeline_figures, sharpness_figure
    from sim.transformers.attention import (
        SHARPNESS_HEAD_DIMS,
        head_choices,
        head_indices,
        head_stats,
        lab_pipeline,
        notes_bars,
        notes_softmax_table,
        notes_weighted_sum_text,
        permutation_check,
        permutation_stats,
        sharpness_by_head_dim,
        stable_softmax_table,
    )
    from sim.transformers.tasks import lab_task, split_tokens
    from sim.transformers.transformer import generation_report, lab_trainer, notes_ffn_text

    labels = KeyLabels()
    curves = sharpness_by_head_dim(list(SHARPNESS_HEAD_DIMS))  # the page caches these

    def redraw(text: str, d_model: int, n_heads: int, mask: str, head: str) -> None:
        """The pipeline section's computations and figures (as sent to the browser) after a slider change."""
        tokens = split_tokens(text)
        heads = head_indices(head, n_heads)
        p = lab_pipeline(tokens, d_model, n_heads, 0, mask, 4, True, 1.0)
        figs = pipeline_figures(p.arrays(), [html(tok, 20) for tok in tokens], heads, labels, numbers=True)
        head_stats(p, heads)
        figs["sharpness"] = sharpness_figure(SHARPNESS_HEAD_DIMS, curves, labels, current=p.d_head)
        c = permutation_check(tokens, d_model, n_heads, 0, "reverse")  # the permutation check below the pipeline
        permutation_stats(c)
        figs["perm_before"], figs["perm_after"] = permutation_figures(c.output.numpy(), c.permuted_output.numpy(),
                                                                      tokens, c.permuted_tokens, labels)
        for fig in figs.values():
            pio.to_json(fig)

    cases = {"notes_3tok": ("猫追狗", 8, 2), "32tok_4heads": (" ".join(f"w{i}" for i in range(32)), 64, 4)}
    for name, (text, d_model, n_heads) in cases.items():
        for mask in ("none", "causal", "causal_window"):
            for head in (head_choices(n_heads)[0], head_choices(n_heads)[1]):  # all heads, then head 1
                fn = partial(redraw, text, d_model, n_heads, mask, head)
                fn()  # warm-up
                print(json.dumps({"bench": "attention", "case": name, "mask": mask,
                                  "heads_shown": len(head_indices(head, n_heads)),
                                  "redraw_ms": round(best_seconds(fn, args.repeats) * 1e3, 1),
                                  "redraw_cpu_ms": round(best_seconds(fn, args.repeats, time.process_time) * 1e3, 1),
                                  "target_ms": 300}))

    def examples() -> None:
        """The worked-examples section: its tables, texts and figure."""
        notes_softmax_table("key")
        names, scores, weights = notes_bars()
        pio.to_json(bars_figure(names, {"scores": scores, "weights": weights}, "value"))
        notes_weighted_sum_text()
        notes_ffn_text()
        stable_softmax_table(1000, "naive", "stable")

    examples()
    ms = best_seconds(examples, args.repeats) * 1e3
    print(json.dumps({"bench": "attention", "case": "examples", "redraw_ms": round(ms, 1), "target_ms": 300}))

    # the page's default run: copy 5 letters, 1 layer, 2 heads, width 32, Adam 3e-3, seed 0
    task = lab_task("copy", 5, 16)
    trainer = lab_trainer(task, 1, 2, 32, 3e-3, 0)
    start = time.perf_counter()
    while time.perf_counter() - start < 60 and (trainer.recent_loss() is None or trainer.recent_loss() > 0.01):
        trainer.step(10)
    seconds = time.perf_counter() - start
    print(json.dumps({"bench": "attention", "case": "copy_to_near_zero", "seconds": round(seconds, 2),
                      "steps": trainer.steps, "final_loss": round(trainer.recent_loss(), 5), "threshold": 0.01,
                      "exact_generation": trainer.generation_accuracy(), "target_s": 60}))
    probe, prompt, _ = task.read_probe(task.default_probe())  # the page's probe

    # what the live view does per frame at the page's default 2 steps per frame: the player's step, then its
    # snapshot (the page's, with its labels), sent as JSON
    compare_task = lab_task("copy", 5, 16, score_prompt=True)
    runs = {"train": [trainer], "compare": [lab_trainer(compare_task, 1, 2, 32, 3e-3, 0, causal) for causal in
                                            (True, False)]}
    for kind, trainers in runs.items():
        def one_frame(kind: str = kind, trainers: list = trainers) -> None:
            for tr in trainers:
                tr.step(2)
            json.dumps(live_frame(kind, [tr.view(probe) for tr in trainers], labels))

        ms = best_seconds(one_frame, args.repeats) * 1e3
        cpu_ms = best_seconds(one_frame, args.repeats, time.process_time) * 1e3
        print(json.dumps({"bench": "attention", "case": f"live_frame_{kind}_2_steps", "frame_ms": round(ms, 1),
                          "frame_cpu_ms": round(cpu_ms, 1), "frames_per_s_bound": round(1e3 / ms, 1),
                          "target_fps": 10}))
        # what the runs generate, redone at most every 2 s while playing
        report_ms = best_seconds(partial(generation_report, trainers, prompt, labels), args.repeats) * 1e3
        print(json.dumps({"bench": "attention", "case": f"generation_report_{kind}", "report_ms": round(report_ms, 1),
                          "every_s": 2.0}))
