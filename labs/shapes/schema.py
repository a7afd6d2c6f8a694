"""URL/widget schema of the tensor shape chain lab: the model's sizes, named as ShapeConfig's fields."""
from sim.transformers.shapes import DTYPES, ShapeConfig
from ui.schema import Param

D = ShapeConfig()  # the defaults are the course notes' example

PAGE = "shp"  # widget keys, i18n keys and session keys of this page start with "shp."
SCHEMA = [
    Param("batch", "int", D.batch, lo=1, hi=64, step=1),
    Param("seq_len", "int", D.seq_len, lo=1, hi=131_072, step=1),
    Param("d_model", "int", D.d_model, lo=1, hi=16_384, step=1),
    Param("n_head", "int", D.n_head, lo=1, hi=128, step=1),
    Param("n_kv_head", "int", D.n_kv_head, lo=1, hi=128, step=1),
    Param("d_ff", "int", D.d_ff, lo=1, hi=65_536, step=1),
    Param("vocab_size", "int", D.vocab_size, lo=1, hi=262_144, step=1),
    Param("n_layer", "int", D.n_layer, lo=1, hi=128, step=1),
    Param("dtype", "choice", D.dtype, choices=tuple(DTYPES)),
    Param("tie_embeddings", "bool", D.tie_embeddings),  # the head shares the token embedding (GPT-2: yes)
]
