"""Attention lab: the pipeline redraw after a slider change, and the tiny transformer live."""
import argparse
import json
import time

from benchmarks import best_seconds


def attention(args: argparse.Namespace) -> None:
    """Attention lab: pipeline redraw after a slider change (32 tokens, 4 heads); the tiny transformer on copy."""
    import plotly.io as pio

    from sim.attention import embed_tokens, make_mask, random_attention, run_pipeline
    from sim.plots.attention import attention_panels, loss_panel, pipeline_figures
    from sim.tasks import make_task
    from sim.transformer import LMTrainer, TransformerConfig

    keys = ("x", "q", "k", "v", "raw", "scaled", "masked", "weights", "heads_out", "concat", "output")
    labels = {**{k: k + " {shape}" for k in keys}, "head": "head {h}", "masked_cell": "masked", "row_sum": "sum"}

    def redraw(tokens: list[str], d_model: int, n_heads: int, mask: str, heads: list[int]) -> None:
        p = run_pipeline(random_attention(d_model, n_heads, 0), embed_tokens(tokens, d_model, 0),
                         make_mask(mask, len(tokens), 4))
        for fig in pipeline_figures(p, tokens, heads, labels, annotate=len(tokens) <= 8).values():
            pio.to_json(fig)

    cases = {"notes_3tok": (list("猫追狗"), 8, 2), "32tok_4heads": ([f"w{i}" for i in range(32)], 64, 4)}
    for name, (tokens, d_model, n_heads) in cases.items():
        for mask in ("none", "causal", "causal_window"):
            for heads in (list(range(n_heads)), [0]):
                fn = lambda: redraw(tokens, d_model, n_heads, mask, heads)  # noqa: E731
                fn()  # warm-up
                print(json.dumps({"bench": "attention", "case": name, "mask": mask, "heads_shown": len(heads),
                                  "redraw_ms": round(best_seconds(fn, args.repeats) * 1e3, 1),
                                  "redraw_cpu_ms": round(best_seconds(fn, args.repeats, time.process_time) * 1e3, 1),
                                  "target_ms": 300}))

    # the page's default run: copy 5 letters, 1 layer, 2 heads, d_model 32, Adam 3e-3, batches of 32
    task = make_task("copy", 5)
    config = TransformerConfig(len(task.vocab), task.block_size, n_layer=1, n_head=2, d_model=32, d_ff=128)
    trainer = LMTrainer(config, task, lr=3e-3, seed=0)
    start = time.perf_counter()
    while time.perf_counter() - start < 60 and (trainer.recent_loss() is None or trainer.recent_loss() > 0.01):
        trainer.step(10)
    seconds = time.perf_counter() - start
    print(json.dumps({"bench": "attention", "case": "copy_to_near_zero", "seconds": round(seconds, 2),
                      "steps": trainer.steps, "final_loss": round(trainer.recent_loss(), 5), "threshold": 0.01,
                      "exact_generation": trainer.generation_accuracy(), "target_s": 60}))
    probe = task.example("hebgd")[:-1]

    def frame() -> None:  # what the live view does per frame at the page's default 2 steps per frame
        trainer.step(2)
        steps, losses = trainer.curve()
        panels = [loss_panel("loss", [("loss", steps, losses, "#f59322")], {"step": "", "loss": "", "floor": ""}),
                  *attention_panels([m.numpy() for m in trainer.attention(probe)], list(probe), "{layer}{head}", True)]
        json.dumps(panels)

    ms = best_seconds(frame, args.repeats) * 1e3
    cpu_ms = best_seconds(frame, args.repeats, time.process_time) * 1e3
    print(json.dumps({"bench": "attention", "case": "live_frame_2_steps", "frame_ms": round(ms, 1),
                      "frame_cpu_ms": round(cpu_ms, 1), "frames_per_s_bound": round(1e3 / ms, 1), "target_fps": 10}))
