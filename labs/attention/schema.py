"""URL/widget schema of the attention lab: the step-by-step pipeline and the tiny transformer."""
from sim.transformers.attention import PERMUTATIONS
from sim.transformers.tasks import CORPORA, PRESETS, TASKS
from sim.transformers.transformer import POSITIONS
from ui.schema import Param

MAX_HEADS = 8

PAGE = "att"  # widget keys, i18n keys and session keys of this page start with "att."
SCHEMA = [
    Param("section", "choice", "pipeline", choices=("pipeline", "examples", "train", "compare"), widget="segmented"),
    # the pipeline
    Param("preset", "choice", "cat", choices=tuple(PRESETS)),
    Param("d_model", "choice", 8, choices=(2, 4, 6, 8, 12, 16, 24, 32, 48, 64)),
    Param("heads", "choice", 2, choices=(1, 2, 3, 4, 6, 8)),
    Param("seed", "int", 0, lo=0, hi=999_999, step=1),
    Param("mask", "choice", "causal", choices=("none", "causal", "window", "causal_window"), widget="segmented"),
    Param("window", "int", 2, lo=1, hi=32, step=1),
    Param("scale", "bool", True),  # divide the scores by √d_h
    Param("temperature", "float", 1.0, lo=0.1, hi=5.0, step=0.1),
    Param("head", "choice", "all", choices=("all", *(str(h) for h in range(1, MAX_HEADS + 1))), widget="segmented"),
    Param("numbers", "bool", True),  # numbers in the cells (when they fit)
    Param("perm", "choice", "reverse", choices=PERMUTATIONS, widget="segmented"),  # how the tokens are reordered
    Param("big", "int", 1000, lo=0, hi=1000, step=10),  # largest score of the stable-softmax example
    Param("ex_temp", "float", 1.0, lo=0.1, hi=5.0, step=0.1),  # temperature of the notes' softmax (theirs: 1)
    # the tiny transformer
    Param("task", "choice", "copy", choices=TASKS),
    Param("length", "int", 5, lo=2, hi=8, step=1),  # letters per prompt
    Param("corpus", "choice", "en", choices=tuple(CORPORA)),
    Param("context", "int", 16, lo=4, hi=32, step=1),  # tokens the model reads in the text task
    Param("layers", "int", 1, lo=1, hi=2, step=1),
    Param("t_heads", "choice", 2, choices=(1, 2, 4)),
    Param("width", "choice", 32, choices=(16, 32, 64)),
    Param("lr", "choice", 0.003, choices=(0.0003, 0.001, 0.003, 0.01, 0.03, 0.1)),
    Param("causal", "bool", True),
    Param("pos", "choice", "learned", choices=POSITIONS, widget="segmented"),  # the position encoding
    Param("speed", "choice", 2, choices=(1, 2, 5, 10, 20)),  # optimizer steps per animation frame
    Param("t_seed", "int", 0, lo=0, hi=999_999, step=1),
]
