"""URL/widget schema of the sequence-models lab: one group of parameters per section, each with its seed."""
from sim.sequence.memory import MAX_DISTANCE
from ui.schema import Param

SECTIONS = ("memory", "why", "parallel", "sparse", "encdec", "mamba")

PAGE = "seq"  # widget keys, i18n keys and session keys of this page start with "seq."
SCHEMA = [
    Param("section", "choice", "memory", choices=SECTIONS, widget="segmented"),
    # memory over distance (and why: the same run read at the cursor's step)
    Param("m_distance", "int", 72, lo=4, hi=MAX_DISTANCE, step=4),
    Param("m_hidden", "choice", 64, choices=(16, 32, 64, 128)),
    Param("m_lr", "choice", 0.003, choices=(0.001, 0.003, 0.01)),
    Param("m_speed", "choice", 5, choices=(1, 2, 5, 10)),
    Param("m_seed", "int", 0, lo=0, hi=999_999, step=1),
    # sequential vs parallel: a forward pass timed against length
    Param("p_width", "choice", 64, choices=(32, 64, 128, 256)),
    Param("p_longest", "choice", 1024, choices=(256, 512, 1024, 2048)),
    # sparse attention
    Param("s_T", "int", 64, lo=16, hi=512, step=16),
    Param("s_w", "int", 3, lo=1, hi=32, step=1),
    Param("s_gap", "int", 2, lo=1, hi=8, step=1),
    Param("s_globals", "int", 1, lo=0, hi=8, step=1),
    Param("s_random", "int", 2, lo=0, hi=8, step=1),
    Param("s_layers", "int", 2, lo=1, hi=12, step=1),
    Param("s_causal", "bool", False),
    Param("s_seed", "int", 0, lo=0, hi=999_999, step=1),
    # sparse attention trained: full against window attention on the memory task, live
    Param("w_distance", "int", 48, lo=8, hi=MAX_DISTANCE, step=4),
    Param("w_window", "int", 8, lo=1, hi=32, step=1),
    Param("w_layers", "int", 2, lo=1, hi=4, step=1),
    Param("w_speed", "choice", 5, choices=(1, 2, 5, 10)),
    Param("w_seed", "int", 0, lo=0, hi=999_999, step=1),
    # encoder against decoder: the same tiny transformer trained BERT-style and GPT-style on one text, live
    Param("e_text", "choice", "en", choices=("en", "zh"), widget="segmented"),
    Param("e_layers", "int", 2, lo=1, hi=4, step=1),
    Param("e_width", "choice", 32, choices=(16, 32, 64)),
    Param("e_lr", "choice", 0.003, choices=(0.001, 0.003, 0.01)),
    Param("e_speed", "choice", 5, choices=(1, 2, 5, 10)),
    Param("e_seed", "int", 0, lo=0, hi=999_999, step=1),
    # Mamba: the worked scan, the state against a KV cache, the forms timed
    Param("z_seed", "int", 0, lo=0, hi=999_999, step=1),
    Param("z_steps", "int", 4, lo=2, hi=8, step=1),
    Param("z_layers", "int", 24, lo=1, hi=128, step=1),
    Param("z_width", "choice", 1024, choices=(256, 512, 768, 1024, 2048, 4096, 8192)),
    Param("z_longest", "choice", 2048, choices=(512, 1024, 2048, 4096)),
]
