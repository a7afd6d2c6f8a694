"""The question bank of predict-then-reveal: per lab, a question, its options, the option that is right, and the
lab settings whose run shows it (the reveal opens that lab with them, and the class follows). Texts are i18n keys:
room.q.<id> the question, room.q.<id>.<option> each option (assets/i18n/*/classroom.json).
tests/test_classroom_bank.py runs every reveal through the lab's engine and checks that it shows `answer`."""
from dataclasses import dataclass


@dataclass(frozen=True)
class BankQuestion:
    id: str
    lab: str  # the lab's url_path
    options: tuple[str, ...]
    answer: str  # the right option
    reveal: dict  # the lab's URL values that run the experiment


BANK = (
    # classification (the reveal keeps the teacher's other settings: a teacher left in regression mode would get a
    # data set of the other problem)
    BankQuestion("linear_deep", "classification", ("curved", "straight", "depends"), "straight",
                 {"problem": "classification", "dataset": "circle", "features": "x1,x2", "hidden": "4,4,4",
                  "activation": "linear"}),
    BankQuestion("lr_huge", "classification", ("faster", "same", "blows_up"), "blows_up",
                 {"problem": "classification", "dataset": "circle", "lr": "10", "activation": "relu", "speed": "10"}),
    BankQuestion("squares", "classification", ("yes", "no"), "yes",
                 {"problem": "classification", "dataset": "circle", "features": "x1sq,x2sq", "hidden": "none",
                  "lr": "0.03"}),
    # regression
    BankQuestion("degree_train", "regression", ("lower", "same", "higher"), "lower",
                 {"dataset": "linear", "n": "30", "noise": "0.3", "degree": "12", "standardize": "1"}),
    BankQuestion("huber_outliers", "regression", ("mse", "huber", "same"), "mse",
                 {"outliers": "3", "outlier_size": "8", "loss": "huber", "panel": "outliers"}),
    BankQuestion("gd_raw", "regression", ("falls", "zigzag", "blows_up"), "blows_up",
                 {"dataset": "area_price", "solver": "gd", "lr": "0.01", "standardize": "0", "degree": "1",
                  "loss": "mse", "batch_size": "full"}),
    BankQuestion("gd_standardized", "regression", ("falls", "zigzag", "blows_up"), "falls",
                 {"dataset": "area_price", "solver": "gd", "lr": "0.01", "standardize": "1", "degree": "1",
                  "loss": "mse", "batch_size": "full"}),
    # generalisation
    BankQuestion("degree_val", "generalization", ("lower", "same", "higher"), "higher",
                 {"section": "capacity", "degree": "15", "n": "40", "noise": "0.5", "train": "0.6", "val": "0.2",
                  "seed": "0"}),
    BankQuestion("group_leak", "generalization", ("higher", "same", "lower"), "higher",
                 {"section": "leakage", "records": "20", "seed": "0"}),
    BankQuestion("l2_train", "generalization", ("lower", "same", "higher"), "higher",
                 {"section": "regularization", "l2": "0.1", "l1": "0", "dropout": "0", "width": "64", "lr": "0.003",
                  "seed": "0"}),
    # optimisers
    BankQuestion("sgd_steep", "optimizers", ("converges", "crawls", "diverges"), "diverges",
                 {"section": "paths", "surface": "quadratic", "kappa": "100", "angle": "0", "noise": "0",
                  "opts": "sgd", "sgd_lr": "0.15", "x": "-2.5", "y": "2", "steps": "150"}),
    BankQuestion("rotated_race", "optimizers", ("sgd", "momentum", "adam"), "momentum",
                 {"section": "paths", "surface": "quadratic", "kappa": "100", "angle": "45", "noise": "0",
                  "opts": "sgd,momentum,adam", "sgd_lr": "0.01", "momentum_lr": "0.01", "momentum_beta": "0.9",
                  "adam_lr": "0.1", "x": "-2.5", "y": "2", "steps": "150"}),
    BankQuestion("momentum_step", "optimizers", ("yes", "no"), "yes",
                 {"section": "momentum", "kappa": "10", "m_step": "3", "m_beta": "0.9"}),
    # attention
    BankQuestion("no_mask", "attention", ("yes", "no"), "yes", {"section": "pipeline", "mask": "none"}),
    BankQuestion("causal_first", "attention", ("itself", "spread", "last"), "itself",
                 {"section": "pipeline", "preset": "cat", "mask": "causal"}),
    BankQuestion("no_scale", "attention", ("sharper", "flatter", "same"), "sharper",
                 {"section": "pipeline", "preset": "animal", "d_model": "64", "heads": "1", "scale": "0",
                  "mask": "none", "temperature": "1", "seed": "0"}),
    # language model
    BankQuestion("bpe_chinese", "lm", ("fewer", "same", "more"), "more",
                 {"section": "tokens", "source": "synthetic", "language": "en", "tokenizer": "bpe", "vocab": "320",
                  "seed": "0"}),
    BankQuestion("budget_10x", "lm", ("x10", "x3", "same"), "x3", {"section": "laws", "log_c": "24.8"}),
    BankQuestion("served_more", "lm", ("smaller", "same", "larger"), "smaller",
                 {"section": "laws", "fit": "hoffmann", "log_served": "15"}),
    # tensor shapes
    BankQuestion("batch_params", "shapes", ("x4", "same", "x2"), "same", {"batch": "8"}),
    BankQuestion("seq_scores", "shapes", ("x2", "x4", "same"), "x4", {"seq_len": "10"}),
    BankQuestion("heads_width", "shapes", ("1", "2", "4"), "1", {"d_model": "8", "n_head": "8", "n_kv_head": "8"}),
    # transformer block
    BankQuestion("init_depth", "blocks", ("vanishes", "same", "explodes"), "vanishes",
                 {"section": "init", "i_init": "default", "i_act": "tanh", "i_depth": "20", "i_width": "64",
                  "i_seed": "0"}),
    BankQuestion("rope_shift", "blocks", ("same", "changes"), "same",
                 {"section": "position", "p_m": "5", "p_n": "2", "p_shift": "10"}),
    BankQuestion("kv_groups", "blocks", ("x2", "x16", "x128"), "x16",
                 {"section": "kv", "k_heads": "128", "k_kv": "8"}),
    # sequence models
    BankQuestion("rnn_gradient", "sequence", ("same", "x1000", "larger"), "x1000",
                 {"section": "why", "m_distance": "48", "m_hidden": "64", "m_seed": "0"}),
    BankQuestion("window_double", "sequence", ("half", "same", "double"), "half",
                 {"section": "sparse", "s_T": "512", "s_w": "3", "s_causal": "0"}),
    BankQuestion("mamba_kv", "sequence", ("mamba", "kv", "equal"), "kv",
                 {"section": "mamba", "z_layers": "24", "z_width": "1024"}),
    # from pretrained model to assistant
    BankQuestion("exact_near", "assistant", ("all", "half", "almost_none"), "almost_none",
                 {"section": "data", "d_steps": "exact"}),
    BankQuestion("threshold_high", "assistant", ("more", "same", "fewer"), "fewer",
                 {"section": "data", "d_threshold": "0.9"}),
    BankQuestion("own_covariance", "assistant", ("straight", "curved"), "curved",
                 {"section": "paradigms", "p_shared": "0"}),
    # GPU memory
    # without the L2 (its figures would answer otherwise: S and P of N = 1,024 still fit in it, and tiled's K and V
    # re-reads are served by it whatever the SRAM); the SRAM decides the tiles only on auto (the reveal keeps the
    # teacher's other settings), and only below M = 4d² (d = 32: 8 KiB, where 16 KiB answers "the same")
    BankQuestion("n_double", "gpu", ("x2", "x4", "x8"), "x4", {"view": "sweep", "N": "2048", "l2": "0"}),
    BankQuestion("sram_small", "gpu", ("falls", "same", "grows"), "grows",
                 {"view": "sweep", "sram_kib": "16", "d": "64", "l2": "0", "block_m": "0", "block_n": "0"}),
    BankQuestion("who_writes", "gpu", ("naive", "tiled", "both"), "naive", {"view": "animate", "algo": "naive"}),
    # foundations
    BankQuestion("forget_zero_grad", "foundations", ("this_step", "sum", "zero"), "sum",
                 {"section": "loop", "l_lr": "0.1", "l_steps": "60"}),
    BankQuestion("sigmoid_depth", "foundations", ("smaller", "same", "larger"), "smaller",
                 {"section": "depth", "d_act": "sigmoid", "d_depth": "20", "d_scale": "1"}),
    BankQuestion("eval_dropout", "foundations", ("same", "different"), "same",
                 {"section": "loop", "l_dropout": "0.5"}),
    BankQuestion("ab_ba", "foundations", ("yes", "no"), "no",
                 {"section": "matrices", "a11": "1", "a12": "0", "a21": "0", "a22": "-1", "b11": "0.7071",
                  "b12": "-0.7071", "b21": "0.7071", "b22": "0.7071"}),
    BankQuestion("lookup_onehot", "foundations", ("same", "different"), "same",
                 {"section": "lookup", "lk_ids": "4,18,7", "lk_vocab": "20", "lk_dim": "4"}),
)
BANK_LABS = tuple(dict.fromkeys(q.lab for q in BANK))


def questions(lab: str) -> list[BankQuestion]:
    return [q for q in BANK if q.lab == lab]
