"""URL/widget schema of the GPU memory hierarchy lab: the attention size, the chip modelled, the view."""
from sim.gpu.measure import IMPLS
from sim.gpu.memsim import GPUS
from ui.schema import Param

BLOCKS = (0, 16, 32, 64, 128, 256)  # 0: Algorithm 1's rule from the SRAM size

PAGE = "gpu"  # widget keys, i18n keys and session keys of this page start with "gpu."
SCHEMA = [
    Param("view", "choice", "animate", choices=("animate", "sweep", "roofline", "measure"), widget="segmented"),
    # one attention forward pass: B sequences × H heads, N tokens, head width d
    Param("N", "int", 1024, lo=16, hi=131_072, step=1),
    Param("d", "choice", 64, choices=(16, 32, 64, 128)),
    Param("B", "int", 1, lo=1, hi=128, step=1),
    Param("H", "int", 16, lo=1, hi=128, step=1),
    Param("dtype", "choice", "float16", choices=("float16", "bfloat16", "float32")),
    Param("causal", "bool", False),
    # the chip modelled: its L2 and SM count, bandwidth and peak FLOP/s; SRAM per thread block; tile sizes
    Param("gpu", "choice", "H200", choices=tuple(GPUS), widget="segmented"),
    Param("l2", "bool", True),  # model the L2 cache between HBM and the SMs
    Param("sram_kib", "int", 64, lo=1, hi=1024, step=1),
    Param("block_m", "choice", 0, choices=BLOCKS),
    Param("block_n", "choice", 0, choices=BLOCKS),
    # the animation
    Param("algo", "choice", "tiled", choices=("naive", "tiled"), widget="segmented"),
    Param("speed", "int", 20, lo=1, hi=200, step=1),  # animation steps per second
    # measurements on this machine's device
    Param("impls", "multi", IMPLS, choices=IMPLS),
    Param("ns", "ints", (256, 512, 1024, 2048), lo=16, hi=131_072, max_len=8),
]
