"""URL/widget schema of the transformer-block lab: one group of parameters per section, each with its seed."""
from sim.transformers.blocks import INITS, NORMS
from sim.transformers.tasks import TASKS
from ui.schema import Param

SECTIONS = ("norm", "residual", "init", "position", "ffn", "moe", "kv")
DEPTH_TASKS = tuple(t for t in TASKS if t != "text")

PAGE = "blk"  # widget keys, i18n keys and session keys of this page start with "blk."
SCHEMA = [
    Param("section", "choice", "norm", choices=SECTIONS, widget="segmented"),
    # normalisation: a (B, T, d) tensor and the cell whose group is outlined
    Param("n_kind", "choice", "layer", choices=NORMS, widget="segmented"),
    Param("n_B", "int", 2, lo=1, hi=4, step=1),
    Param("n_T", "int", 3, lo=1, hi=6, step=1),
    Param("n_d", "int", 4, lo=2, hi=8, step=1),
    Param("n_b", "int", 0, lo=0, hi=3, step=1),  # the chosen cell (held inside the tensor)
    Param("n_t", "int", 0, lo=0, hi=5, step=1),
    Param("n_j", "int", 0, lo=0, hi=7, step=1),
    Param("n_seed", "int", 0, lo=0, hi=999_999, step=1),
    # Pre-LN against Post-LN: a deep tiny transformer, four runs (two arrangements, without and with warmup)
    Param("r_task", "choice", "reverse", choices=DEPTH_TASKS),
    Param("r_layers", "int", 12, lo=2, hi=12, step=1),
    Param("r_width", "choice", 32, choices=(16, 32)),
    Param("r_lr", "choice", 0.01, choices=(0.001, 0.003, 0.005, 0.01, 0.02)),
    Param("r_warmup", "int", 300, lo=50, hi=1000, step=50),
    Param("r_speed", "choice", 1, choices=(1, 2, 5)),
    Param("r_seed", "int", 0, lo=0, hi=999_999, step=1),
    # initialisation and depth: a plain MLP at initialisation
    Param("i_init", "choice", "default", choices=INITS, widget="segmented"),
    Param("i_act", "choice", "tanh", choices=("tanh", "relu", "gelu"), widget="segmented"),
    Param("i_depth", "int", 20, lo=2, hi=50, step=1),
    Param("i_width", "choice", 256, choices=(32, 64, 128, 256)),
    Param("i_seed", "int", 0, lo=0, hi=999_999, step=1),
    # position encodings: the user's q and k (from a seed), positions m, n and a shift; the trained comparison
    Param("p_dim", "choice", 8, choices=(2, 4, 8, 16, 32, 64)),
    Param("p_seed", "int", 0, lo=0, hi=999_999, step=1),
    Param("p_m", "int", 5, lo=0, hi=64, step=1),
    Param("p_n", "int", 2, lo=0, hi=64, step=1),
    Param("p_shift", "int", 10, lo=1, hi=1000, step=1),
    Param("p_base", "choice", 10000.0, choices=(10.0, 100.0, 1000.0, 10000.0, 500000.0)),
    Param("p_positions", "int", 16, lo=2, hi=64, step=1),  # positions drawn turning
    Param("p_train", "int", 12, lo=4, hi=32, step=1),  # trained length
    Param("p_test", "int", 24, lo=8, hi=64, step=1),  # length read after training
    Param("p_train_seed", "int", 0, lo=0, hi=999_999, step=1),
    # FFN
    Param("f_d", "choice", 768, choices=(64, 128, 256, 512, 768, 1024, 2048, 4096, 8192)),
    Param("f_ratio", "int", 4, lo=1, hi=8, step=1),
    # MoE: three runs (no balancing, the auxiliary loss, the expert bias)
    Param("m_experts", "choice", 8, choices=(4, 8, 16)),
    Param("m_k", "choice", 1, choices=(1, 2)),
    Param("m_cf", "choice", 1.25, choices=(1.0, 1.25, 1.5, 2.0, 4.0)),
    Param("m_alpha", "choice", 0.01, choices=(0.001, 0.01, 0.1)),
    Param("m_gamma", "choice", 0.01, choices=(0.001, 0.003, 0.01, 0.03)),
    Param("m_clusters", "int", 8, lo=2, hi=16, step=1),
    Param("m_lr", "choice", 0.01, choices=(0.001, 0.003, 0.01, 0.03)),
    Param("m_speed", "choice", 2, choices=(1, 2, 5, 10)),
    Param("m_seed", "int", 0, lo=0, hi=999_999, step=1),
    # KV cache (defaults: DeepSeek-V2's attention)
    Param("k_layers", "int", 60, lo=1, hi=128, step=1),
    Param("k_heads", "int", 128, lo=1, hi=128, step=1),
    Param("k_dhead", "choice", 128, choices=(32, 64, 96, 128, 192, 256)),
    Param("k_kv", "int", 8, lo=1, hi=128, step=1),  # GQA's key/value heads
    Param("k_dc", "int", 512, lo=16, hi=4096, step=16),  # MLA's latent
    Param("k_drope", "int", 64, lo=0, hi=256, step=16),  # MLA's decoupled RoPE key
    Param("k_seq", "int", 32_768, lo=1, hi=1_048_576, step=1),
    Param("k_batch", "int", 1, lo=1, hi=256, step=1),
    Param("k_dtype", "choice", 2, choices=(1, 2, 4)),
]
