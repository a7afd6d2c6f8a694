"""URL/widget schema of the foundations lab: one group of parameters per section."""
from sim.autograd.depth import ACTIVATIONS as DEPTH_ACTIVATIONS
from sim.autograd.network import ACTIVATIONS, MAX_INPUTS, MAX_LAYERS, MAX_WIDTH, PHASES
from sim.language.embeddings import DIMS as EMB_DIMS
from sim.language.embeddings import RATES as EMB_RATES
from sim.linalg.lookup import MAX_DIM as LOOKUP_DIM
from sim.linalg.lookup import MAX_IDS as LOOKUP_IDS
from sim.linalg.lookup import MAX_VOCAB as LOOKUP_VOCAB
from sim.linalg.matmul import SIZES
from sim.linalg.retrieval import MAX_QUERY as RAG_MAX_QUERY
from sim.linalg.roofline import SWEEP_SIZES
from ui.schema import Param

SECTIONS = ("backprop", "loop", "depth", "vectors", "matrices", "hardware", "embeddings", "retrieval", "lookup")
RATES = (0.01, 0.03, 0.1, 0.3, 1.0, 2.0)
SCALES = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)

PAGE = "fnd"  # widget keys, i18n keys and session keys of this page start with "fnd."
SCHEMA = [
    Param("section", "choice", "backprop", choices=SECTIONS, widget="segmented"),
    # the network of the backpropagation and training-loop sections
    Param("n_in", "int", 2, lo=1, hi=MAX_INPUTS, step=1),
    Param("layers", "int", 1, lo=1, hi=MAX_LAYERS, step=1),
    Param("width", "int", 2, lo=1, hi=MAX_WIDTH, step=1),
    Param("act", "choice", "tanh", choices=ACTIVATIONS),
    Param("seed", "int", 0, lo=0, hi=999_999, step=1),
    # backpropagation: where the step-through is, the node explained, the learning rate of the one step
    Param("phase", "choice", "forward", choices=PHASES, widget="segmented"),
    Param("k", "int", 0, lo=0, hi=200, step=1),  # nodes done in this phase (held to the graph's size)
    Param("node", "int", -1, lo=-1, hi=200, step=1),  # the node whose chain rule is written out; -1: the current one
    Param("lr", "choice", 0.1, choices=RATES),
    # the training loop's calls
    Param("l_lr", "choice", 0.1, choices=RATES),
    Param("l_steps", "int", 60, lo=5, hi=300, step=5),
    Param("l_batch", "choice", 1024, choices=(1, 16, 256, 1024, 4096, 65536)),
    Param("l_dropout", "choice", 0.5, choices=(0.1, 0.2, 0.5, 0.8)),
    # vanishing and exploding gradients
    Param("d_act", "multi", DEPTH_ACTIVATIONS, choices=DEPTH_ACTIVATIONS),
    Param("d_depth", "int", 20, lo=2, hi=60, step=1),
    Param("d_scale", "choice", 1.0, choices=SCALES),
    Param("d_seed", "int", 0, lo=0, hi=999_999, step=1),
    # two vectors
    Param("ax", "float", 3.0, lo=-5.0, hi=5.0, step=0.1),
    Param("ay", "float", 1.0, lo=-5.0, hi=5.0, step=0.1),
    Param("bx", "float", 1.0, lo=-5.0, hi=5.0, step=0.1),
    Param("by", "float", 3.0, lo=-5.0, hi=5.0, step=0.1),
    Param("scalar", "float", 1.5, lo=-3.0, hi=3.0, step=0.1),
    # two 2×2 matrices (row by row)
    *(Param(f"{m}{i}", "float", v, lo=-3.0, hi=3.0, step=0.1)
      for m, values in (("a", (1.0, 1.0, 0.0, 1.0)), ("b", (0.0, -1.0, 1.0, 0.0)))
      for i, v in zip((11, 12, 21, 22), values, strict=True)),
    Param("mm_n", "choice", 4096, choices=SIZES),
    # CPU against GPU: the largest size of the throughput sweep
    Param("hw_max", "choice", SWEEP_SIZES[-1], choices=SWEEP_SIZES[2:]),
    # word embeddings learnt live (skip-gram with negative sampling), the word whose neighbours are listed
    Param("emb_dim", "choice", 8, choices=EMB_DIMS),
    Param("emb_lr", "choice", 1.0, choices=EMB_RATES),
    Param("emb_speed", "choice", 10, choices=(1, 2, 5, 10, 20)),
    Param("emb_seed", "int", 0, lo=0, hi=999_999, step=1),
    Param("emb_word", "int", 6, lo=0, hi=31, step=1),  # an index into the language's words (held to its size)
    # the retrieval: the question ("": the page's first example question) and the paragraphs shown
    Param("rag_q", "text", "", max_len=RAG_MAX_QUERY),
    Param("rag_k", "int", 3, lo=1, hi=5, step=1),
    # the embedding lookup: the notes' ids [4, 18, 7] in a V × d table
    Param("lk_ids", "ints", (4, 18, 7), lo=0, hi=LOOKUP_VOCAB - 1, max_len=LOOKUP_IDS, min_len=1),
    Param("lk_vocab", "int", 20, lo=2, hi=LOOKUP_VOCAB, step=1),
    Param("lk_dim", "int", 4, lo=1, hi=LOOKUP_DIM, step=1),
    Param("lk_seed", "int", 0, lo=0, hi=999_999, step=1),
]
