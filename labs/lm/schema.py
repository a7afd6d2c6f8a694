"""URL/widget schema of the language-model lab: the text and its tokenizer, the tiny GPT and its sampling, the
published scaling laws' budget and requests, and the measured sweep shown."""
from ui.schema import Param

PAGE = "lm"  # widget keys, i18n keys and session keys of this page start with "lm."
SECTIONS = ("tokens", "train", "laws", "measured")
SCHEMA = [
    Param("section", "choice", "tokens", choices=SECTIONS, widget="segmented"),
    # the text and its tokens
    Param("source", "choice", "synthetic", choices=("synthetic", "own"), widget="segmented"),
    Param("language", "choice", "en", choices=("en", "zh"), widget="segmented"),  # of the synthetic text
    Param("seed", "int", 0, lo=0, hi=999_999, step=1),  # draws the synthetic text
    Param("tokenizer", "choice", "char", choices=("char", "bpe"), widget="segmented"),
    Param("vocab", "choice", 320, choices=(256, 280, 320, 384, 512, 768, 1024)),  # BPE: 256 bytes + merges
    Param("shown", "int", 64, lo=0, hi=768, step=1),  # merges applied in the coloured text
    # the tiny GPT
    Param("context", "choice", 32, choices=(8, 16, 32, 64)),  # tokens the model reads
    Param("layers", "int", 2, lo=1, hi=3, step=1),
    Param("heads", "choice", 2, choices=(1, 2, 4)),
    Param("width", "choice", 32, choices=(16, 32, 64)),
    Param("lr", "choice", 0.003, choices=(0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 1.0)),
    Param("speed", "choice", 1, choices=(1, 2, 5, 10)),  # optimizer steps per frame
    Param("t_seed", "int", 0, lo=0, hi=999_999, step=1),
    Param("temperature", "float", 1.0, lo=0.0, hi=2.0, step=0.05),
    Param("top_k", "int", 0, lo=0, hi=50, step=1),  # 0: all tokens
    Param("top_p", "float", 1.0, lo=0.05, hi=1.0, step=0.05),
    # published laws
    Param("log_c", "float", 23.8, lo=15.0, hi=27.0, step=0.1),  # log10 of the training budget in FLOPs
    Param("fit", "choice", "epoch", choices=("rule20", "hoffmann", "epoch"), widget="segmented"),
    Param("log_served", "float", 13.0, lo=8.0, hi=16.0, step=0.5),  # log10 of tokens served over the model's life
    # the measured laws: the bundled sweep, or the one this class runs here
    Param("sweep", "choice", "bundled", choices=("bundled", "class")),
]
