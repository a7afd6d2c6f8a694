"""The predict-then-reveal bank (labs/classroom/questions.py): every lab has questions, and every reveal shows the
answer the bank marks as right. Each question's reveal is parsed through its lab's schema as a URL would be
(the other settings at their defaults), run through the engine functions the lab's page calls, and OUTCOMES[id]
reads off which option the run shows."""
import importlib
import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
import torch

from apptools import one_thread
from labs import LABS
from labs.classification.config import make_config
from labs.classroom.questions import BANK, questions
from ui.schema import read_query

SCHEMAS = {lab.url_path: importlib.import_module(f"labs.{lab.name}.schema").SCHEMA for lab in LABS}
OUTCOMES: dict[str, Callable[[dict], str]] = {}


def outcome(qid: str):
    def register(f):
        OUTCOMES[qid] = f
        return f
    return register


def nearest(value: float, options: dict[str, float]) -> str:
    """The option whose factor is nearest to value on a log scale."""
    return min(options, key=lambda o: abs(math.log(value / options[o])))


def compare(new: float, old: float, options=("lower", "same", "higher"), tolerance: float = 0.05) -> str:
    lower, same, higher = options
    return lower if new < old * (1 - tolerance) else higher if new > old * (1 + tolerance) else same


# ---------- classification ----------
def trained(v: dict, epochs: int):
    from sim.nets.training import Trainer

    trainer = Trainer(make_config(v))
    trainer.step(epochs)
    return trainer


@outcome("linear_deep")
def _(v):
    """The logit over the plane: straight boundary if it is an affine function of (x1, x2)."""
    trainer = trained(v, 200)
    grid = np.stack(np.meshgrid(np.linspace(-6, 6, 15), np.linspace(-6, 6, 15)), -1).reshape(-1, 2)
    p = np.clip(trainer.predict_proba(grid)[:, 1], 1e-12, 1 - 1e-12)
    logit = np.log(p / (1 - p))
    A = np.column_stack([grid, np.ones(len(grid))])
    residual = logit - A @ np.linalg.lstsq(A, logit, rcond=None)[0]
    return "straight" if np.abs(residual).max() < 1e-6 * max(1.0, np.abs(logit).max()) else "curved"


@outcome("lr_huge")
def _(v):
    """Blown up: diverged, or ended far above the same run at 0.03 (the loss jumps about instead of falling)."""
    trainer, base = trained(v, 300), trained({**v, "lr": 0.03}, 300)
    end, base_end = trainer.history[-1]["train_loss"], base.history[-1]["train_loss"]
    if trainer.diverged or end > 2 * base_end:
        return "blows_up"
    return "faster" if end < 0.95 * base_end else "same"


@outcome("squares")
def _(v):
    assert not v["hidden"]  # logistic regression
    return "yes" if trained(v, 300).history[-1]["val_acc"] >= 0.95 else "no"


# ---------- regression ----------
def reg_data(v: dict):
    from sim.fitting.regression_data import make_dataset

    return make_dataset(*(v[k] for k in ("dataset", "n", "noise", "seed", "outliers", "outlier_size")))


def reg_model(v: dict, data):
    from sim.fitting import regression as reg

    return reg.ModelConfig(degree=v["degree"], standardize=v["standardize"], loss=v["loss"],
                           delta=v["delta"] * data.scale)


@outcome("degree_train")
def _(v):
    from sim.fitting import regression as reg

    data = reg_data(v)
    mse = {d: reg.scores(data, reg.fit(data.x, data.y, reg_model({**v, "degree": d}, data)))["mse"]
           for d in (1, v["degree"])}
    return compare(mse[v["degree"]], mse[1])


@outcome("huber_outliers")
def _(v):
    from sim.fitting import regression as reg

    data = reg_data(v)
    shift = {loss: reg.outlier_fits(data, reg_model(v, data), loss).shift for loss in ("mse", "huber")}
    return compare(shift["huber"], shift["mse"], ("mse", "same", "huber"), 0.2)  # Huber's moved less: MSE's more


def gd_outcome(v: dict) -> str:
    from sim.fitting import regression as reg

    data = reg_data(v)
    run = reg.GDRun(data.x, data.y, reg.GDConfig(model=reg_model(v, data), lr=v["lr"],
                                                 batch_size=None if v["batch_size"] == "full" else v["batch_size"]))
    run.step(100)
    if run.diverged:
        return "blows_up"
    return "zigzag" if np.any(np.diff(run.history) > 0) else "falls"


OUTCOMES["gd_raw"] = OUTCOMES["gd_standardized"] = gd_outcome


# ---------- generalisation ----------
@outcome("degree_val")
def _(v):
    from sim.fitting.generalization import curve_data, fit_errors

    data = curve_data(v["n"], v["noise"], v["train"], v["val"], v["seed"])
    return compare(fit_errors(data, v["degree"]).val, fit_errors(data, 3).val, tolerance=0.2)


@outcome("group_leak")
def _(v):
    from sim.fitting import leakage

    leak = leakage.leak("group", v["records"], v["seed"]).leaky
    return compare(leak.reported, leak.new)


@outcome("l2_train")
def _(v):
    from sim.fitting.fit import FitConfig, FitTrainer
    from sim.fitting.generalization import curve_data

    data = curve_data(v["n"], v["noise"], v["train"], v["val"], v["seed"])
    losses = {}
    with one_thread():
        for l2 in (0.0, v["l2"]):
            trainer = FitTrainer(FitConfig(hidden=(v["width"],) * 2, lr=v["lr"], l2=l2, l1=v["l1"],
                                           dropout=v["dropout"], seed=v["seed"]), *data.train_val())
            trainer.step(200)
            losses[l2] = trainer.history[-1]["train_loss"]
    return compare(losses[v["l2"]], losses[0.0], tolerance=0.2)


# ---------- optimisers ----------
def opt_runs(v: dict) -> tuple[object, dict]:
    from labs.optimizers.schema import HYPER
    from sim.optim.optimizers import OPTIMIZERS, path, surface

    surf = surface(v["surface"], v["kappa"], v["angle"], v["noise"])
    hyper = {o: {**OPTIMIZERS[o], **{p.name.removeprefix(f"{o}_"): v[p.name] for p in HYPER[o]}} for o in v["opts"]}
    return surf, {o: path(o, surf, (v["x"], v["y"]), v["steps"], v["seed"], **hyper[o]) for o in v["opts"]}


def final_gap(surf, p) -> float:
    from sim.optim.optimizers import diverged_at
    from sim.plots.optimizers import losses

    return math.inf if diverged_at(p) is not None else float(losses(surf, p)[0][-1])


@outcome("sgd_steep")
def _(v):
    surf, runs = opt_runs(v)
    gap = final_gap(surf, runs["sgd"])
    return "diverges" if gap == math.inf else "converges" if gap < 1e-6 else "crawls"


@outcome("rotated_race")
def _(v):
    surf, runs = opt_runs(v)
    gaps = {o: final_gap(surf, p) for o, p in runs.items()}
    best, runner_up = sorted(gaps.values())[:2]
    assert best < runner_up / 10  # a clear winner
    return min(gaps, key=gaps.get)


@outcome("momentum_step")
def _(v):
    from sim.optim.optimizers import momentum_rate

    alpha, ln = v["m_step"] / v["kappa"], v["kappa"]  # as the page: the step is α·λ_max
    assert max(momentum_rate(alpha, 0.0, 1.0), momentum_rate(alpha, 0.0, ln)) >= 1  # plain GD diverges here
    rate = max(momentum_rate(alpha, v["m_beta"], 1.0), momentum_rate(alpha, v["m_beta"], ln))
    return "yes" if rate < 1 else "no"


# ---------- attention ----------
def pipeline(v: dict):
    from sim.transformers.attention import lab_pipeline
    from sim.transformers.tasks import PRESETS, split_tokens

    return lab_pipeline(split_tokens(PRESETS[v["preset"]]), v["d_model"], v["heads"], v["seed"], v["mask"],
                        v["window"], v["scale"], v["temperature"])


@outcome("no_mask")
def _(v):
    return "yes" if bool((pipeline(v).weights[:, 0, -1] > 0).all()) else "no"


@outcome("causal_first")
def _(v):
    first = pipeline(v).weights[:, 0]  # (H, T): the first token's row in every head
    if torch.allclose(first[:, 0], torch.ones(len(first))):
        return "itself"
    return "last" if bool((first.argmax(-1) == first.shape[-1] - 1).all()) else "spread"


@outcome("no_scale")
def _(v):
    from sim.transformers.attention import weight_stats

    peak = {s: weight_stats(pipeline({**v, "scale": s}).weights)["max_weight"] for s in (True, v["scale"])}
    return compare(peak[v["scale"]], peak[True], ("flatter", "same", "sharper"), 0.1)


# ---------- language model ----------
@outcome("bpe_chinese")
def _(v):
    """The tokens section's table (sim.language.lm.language_costs): its BPE of the chosen text, and each language's
    own BPE, both read the same way."""
    from sim.language.lm import SYNTHETIC_CHARS, language_costs, synthetic_text

    costs = language_costs(synthetic_text(v["language"], SYNTHETIC_CHARS, v["seed"])[0], v["vocab"], v["seed"])
    answers = {compare(costs["zh"][col], costs["en"][col], ("fewer", "same", "more")) for col in ("this", "own")}
    return answers.pop() if len(answers) == 1 else "ambiguous"


@outcome("budget_10x")
def _(v):
    from sim.language.scaling import RULES, compute_optimal

    ratios = [compute_optimal(10 ** v["log_c"], f)[0] / compute_optimal(10 ** (v["log_c"] - 1), f)[0] for f in RULES]
    answers = {nearest(r, {"x10": 10, "x3": 3, "same": 1}) for r in ratios}
    assert len(answers) == 1  # every fit the page lists agrees
    return answers.pop()


@outcome("served_more")
def _(v):
    from sim.language.scaling import inference_optimal

    N = {s: inference_optimal(10 ** v["log_c"], v["fit"], 10 ** s)["N"] for s in (v["log_served"] - 2, v["log_served"])}
    return compare(N[v["log_served"]], N[v["log_served"] - 2], ("smaller", "same", "larger"))


# ---------- tensor shapes ----------
def shape_trace(v: dict, **change):
    from labs.shapes.schema import SCHEMA
    from sim.transformers.shapes import ShapeConfig, trace_model

    return trace_model(replace(ShapeConfig(**{p.name: v[p.name] for p in SCHEMA}), **change))


def scores_step(trace):
    """q·kᵀ: the first matrix product of block 0's attention, (B, H, T, T)."""
    return next(s for s in trace.steps if s.op == "matmul")


@outcome("batch_params")
def _(v):
    ratio = shape_trace(v).totals["params"] / shape_trace(v, batch=2).totals["params"]
    return nearest(ratio, {"x4": 4, "same": 1, "x2": 2})


@outcome("seq_scores")
def _(v):
    ratio = scores_step(shape_trace(v)).bytes / scores_step(shape_trace(v, seq_len=5)).bytes
    return nearest(ratio, {"x2": 2, "x4": 4, "same": 1})


@outcome("heads_width")
def _(v):
    return str(scores_step(shape_trace(v)).in_shapes[0][-1])  # q's last axis: d_h


# ---------- transformer block ----------
@outcome("init_depth")
def _(v):
    from sim.transformers.blocks import init_stats

    with one_thread():
        s = init_stats(v["i_depth"], v["i_width"], v["i_init"], v["i_act"], v["i_seed"])
    return "vanishes" if s.act_std[-1] < 1e-3 else "explodes" if s.act_std[-1] > 1e3 else "same"


@outcome("rope_shift")
def _(v):
    from sim.transformers.blocks import rope_scores, vectors

    q, k = vectors(v["p_dim"], v["p_seed"])
    rows = rope_scores(q, k, v["p_m"], v["p_n"], [0, v["p_shift"]], v["p_base"])
    return "same" if abs(rows[0][3] - rows[1][3]) < 1e-9 else "changes"


@outcome("kv_groups")
def _(v):
    from sim.transformers.blocks import kv_bytes_per_token_layer

    per = {kind: kv_bytes_per_token_layer(kind, v["k_heads"], v["k_dhead"], v["k_kv"], v["k_dc"], v["k_drope"],
                                          v["k_dtype"]) for kind in ("mha", "gqa")}
    return nearest(per["mha"] / per["gqa"], {"x2": 2, "x16": 16, "x128": 128})


# ---------- sequence models ----------
@outcome("rnn_gradient")
def _(v):
    from labs.sequence.memory import memory_spec
    from sim.sequence.memory import gradients_through_time

    with one_thread():
        g = gradients_through_time(memory_spec(v).build().trainer("rnn"))  # the revealed run at its step 0
    ratio = g[0] / g[-1]  # the key's step (the longest distance) against the query's
    return "x1000" if ratio < 1e-3 else "larger" if ratio > 1 else "same"


@outcome("window_double")
def _(v):
    from sim.sequence.masks import share_computed, window

    T, w = v["s_T"], v["s_w"]
    return nearest(share_computed(window(T, w, v["s_causal"])) / share_computed(window(T // 2, w, v["s_causal"])),
                   {"half": 0.5, "same": 1.0, "double": 2.0})


@outcome("mamba_kv")
def _(v):
    from sim.ssm.cost import kv_cache_numbers, mamba_state_numbers

    return compare(kv_cache_numbers(v["z_layers"], v["z_width"], 32_768),
                   mamba_state_numbers(v["z_layers"], v["z_width"]), ("mamba", "equal", "kv"))


# ---------- from pretrained model to assistant ----------
def near_recall(v: dict) -> float:
    """The share of the corpus's near-duplicate lines that the page's cleaning steps remove."""
    from labs.assistant.data import config
    from sim.dedup.clean import clean
    from sim.dedup.corpus import make_corpus

    corpus = make_corpus(v["d_seed"])
    removed = {i for step in clean(corpus, config(v)).steps for i in step.removed}
    near = np.flatnonzero(corpus.near)
    return sum(int(i) in removed for i in near) / len(near)


@outcome("exact_near")
def _(v):
    share = near_recall(v)
    return "all" if share > 0.9 else "almost_none" if share < 0.1 else "half"


@outcome("threshold_high")
def _(v):
    default = {p.name: p.default for p in SCHEMAS["assistant"]}
    return compare(near_recall(v), near_recall({**v, "d_threshold": default["d_threshold"]}),
                   ("fewer", "same", "more"))


@outcome("own_covariance")
def _(v):
    from sim.paradigms.generative import fit_gaussians, two_classes

    X, y = two_classes(v["p_n"], v["p_sep"], v["p_seed"])
    model = fit_gaussians(X, y, shared=v["p_shared"])
    # the boundary is where the log-odds is 0: straight when the log-odds is linear in x, so its second difference
    # along lines through the plane is zero
    t = np.linspace(-3, 3, 7)
    lines = [np.stack([t, 0 * t], 1), np.stack([0 * t, t], 1), np.stack([t, t], 1), np.stack([t, -t], 1)]
    log_odds = [np.diff(model.log_joint(x), axis=1)[:, 0] for x in lines]  # log P(x, y=1) - log P(x, y=0)
    curvature = max(np.abs(np.diff(lo, 2)).max() for lo in log_odds)
    return "curved" if curvature > 1e-6 else "straight"


# ---------- GPU memory ----------
def gpu_reports(v: dict, **change) -> dict[str, list]:
    """Each pass's reports the page's summary shows: two levels, and with the L2 where it is modelled (as
    labs/gpu/simulated.py's simulation: sim.gpu.sweeps.lab_reports)."""
    from labs.gpu.simulated import io_config
    from sim.gpu.memsim import GPUS, IOReport
    from sim.gpu.sweeps import Chip, lab_reports

    v = {**v, **change}
    spec = GPUS[v["gpu"]]
    chip = Chip(v["sram_kib"] * 1024, spec.l2_bytes if v["l2"] else None, spec.n_sm)
    lab = lab_reports(v["N"], v["d"], io_config(v), chip)
    return {algo: [r for r in (lab.two_level[algo], lab.with_l2[algo]) if isinstance(r, IOReport)]
            for algo in lab.two_level}


def one_answer(answers: set[str]) -> str:
    """The answer every figure shown gives; "ambiguous" when two of them answer differently (or none is shown)."""
    return answers.pop() if len(answers) == 1 else "ambiguous"


@outcome("n_double")
def _(v):
    pairs = zip(gpu_reports(v)["naive"], gpu_reports(v, N=v["N"] // 2)["naive"], strict=True)
    return one_answer({nearest(a.hbm_bytes / b.hbm_bytes, {"x2": 2, "x4": 4, "x8": 8}) for a, b in pairs})


@outcome("sram_small")
def _(v):
    pairs = zip(gpu_reports(v)["tiled"], gpu_reports(v, sram_kib=64)["tiled"], strict=True)
    return one_answer({compare(a.hbm_bytes, b.hbm_bytes, ("falls", "same", "grows")) for a, b in pairs})


@outcome("who_writes")
def _(v):
    matrix = v["N"] ** 2 * v["B"] * v["H"]  # elements of the N × N scores of every (batch, head)
    writes = {algo: {r.hbm_write_bytes >= matrix * r.dtype_bytes for r in shown}
              for algo, shown in gpu_reports(v).items()}
    assert all(len(w) == 1 for w in writes.values())  # every figure shown agrees
    writes = {algo: w.pop() for algo, w in writes.items()}
    return "both" if all(writes.values()) else "naive" if writes["naive"] else "tiled"


# ---------- foundations ----------
def net_config(v: dict):
    from sim.autograd.network import NetConfig

    return NetConfig(v["n_in"], v["layers"], v["width"], v["act"], v["seed"])


@outcome("forget_zero_grad")
def _(v):
    from sim.autograd.loop import train

    run = train(net_config(v), v["l_lr"], v["l_steps"], zero_grad=False)
    held, own = run.grad[2], run.fresh[2]
    return ("zero" if held == 0 else "sum" if math.isclose(held, run.fresh[:3].sum(), rel_tol=1e-9)
            and not math.isclose(held, own, rel_tol=1e-3) else "this_step")


@outcome("sigmoid_depth")
def _(v):
    from sim.autograd.depth import layer_grad_norms

    (act,) = v["d_act"]
    n = layer_grad_norms(act, v["d_depth"], v["d_scale"], seed=v["d_seed"])
    return nearest(n[0] / n[-1], {"smaller": 1e-3, "same": 1.0, "larger": 1e3})


@outcome("eval_dropout")
def _(v):
    from sim.autograd.loop import dropout_outputs

    _, eval_out, _ = dropout_outputs(net_config(v), v["l_dropout"])
    return "same" if len(set(eval_out)) == 1 else "different"


@outcome("ab_ba")
def _(v):
    from sim.linalg.matrices import product

    a, b = (tuple(v[f"{m}{i}"] for i in (11, 12, 21, 22)) for m in "ab")
    return "yes" if np.allclose(product(a, b), product(b, a)) else "no"


@outcome("lookup_onehot")
def _(v):
    from sim.linalg.lookup import lookup

    return "same" if lookup(v["lk_ids"], v["lk_vocab"], v["lk_dim"], v["lk_seed"]).equal else "different"


# ---------- the bank ----------
def test_every_lab_has_three_questions_with_an_answer_among_its_options():
    for lab in LABS:
        if lab.name not in ("home", "classroom"):
            assert len(questions(lab.url_path)) >= 3, lab.url_path
    assert len({q.id for q in BANK}) == len(BANK)
    for q in BANK:
        assert q.answer in q.options and len(set(q.options)) == len(q.options), q.id


def test_every_question_has_an_outcome():
    assert set(OUTCOMES) == {q.id for q in BANK}


@pytest.mark.parametrize("q", BANK, ids=lambda q: q.id)
def test_the_reveal_shows_the_marked_answer(q):
    values, rejected = read_query(SCHEMAS[q.lab], q.reveal)  # as the URL of the revealed lab is read
    assert not rejected
    assert OUTCOMES[q.id](values) == q.answer


@pytest.mark.parametrize("qid", ["n_double", "sram_small"])
def test_the_gpu_reveals_leave_the_l2_out_because_it_would_answer_otherwise(qid):
    """With the L2 modelled (the lab's default) the page shows HBM figures with the L2 too, and they answer these
    questions otherwise (naive at N = 2,048 moves 6.5× its bytes at 1,024 with the L2, whose S and P at 1,024 still
    fit in it; tiled with the L2 moves the same bytes at 16 KiB as at 64): the reveals switch it off, and the
    questions say so."""
    q = next(q for q in BANK if q.id == qid)
    values, _ = read_query(SCHEMAS["gpu"], {k: v for k, v in q.reveal.items() if k != "l2"})
    assert values["l2"] and OUTCOMES[qid](values) == "ambiguous"


TEACHER = {"gpu": [{"block_m": "64", "block_n": "64"}, {"causal": "1", "dtype": "float32", "d": "128", "B": "4"},
                   {"gpu": "A100", "l2": "1", "N": "256", "sram_kib": "32"}, {"d": "32"}],
           "lm": [{"log_c": "18"}, {"log_c": "27", "fit": "epoch"}, {"source": "own", "vocab": "1024", "seed": "7"}],
           "classification": [{"problem": "regression", "dataset": "plane"}]}


@pytest.mark.parametrize("q", [q for q in BANK if q.lab in TEACHER], ids=lambda q: q.id)
def test_the_reveal_shows_the_marked_answer_whatever_the_teacher_had_set(q):
    """The reveal keeps the teacher's other settings of the lab (labs/classroom/page.py reveal): the questions pin
    what their answer depends on. Before, hand-set 64 × 64 tiles made "sram_small" fail (they do not fit in 16 KiB),
    and so did d = 32 (16 KiB is past its M = 4d², where the tiles no longer change); a teacher in regression mode
    gave the classification questions a regression data set."""
    for before in TEACHER[q.lab]:
        values, rejected = read_query(SCHEMAS[q.lab], {**before, **q.reveal})
        assert not rejected and OUTCOMES[q.id](values) == q.answer, before
