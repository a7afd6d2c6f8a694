"""One intra-op thread for the tiny tensors of the labs, set once for the whole process."""
from functools import cache


@cache
def configure_threads() -> None:
    """Give torch one intra-op thread; the first call sets it (main.py at start-up, the benchmarks), later ones do
    nothing.

    Process-wide on purpose: every session of a Streamlit server is a thread of one process, so a per-call
    set-and-restore by overlapping sessions would leave whatever the last one restored for everyone.
    """
    # Every op of these tiny models is far below ATen's parallel grain size, so a second thread never
    # speeds training up (measured: same epochs/s on 1 or 2 threads). It can only hurt: OpenMP workers
    # spin after a parallel region, taking the core that another classroom session on the same server
    # needs (measured: a tiny-transformer step took 280-700 ms instead of 15-30 ms on a busy machine).
    import torch  # here, not at the top: main.py calls this after its first paint

    torch.set_num_threads(1)
