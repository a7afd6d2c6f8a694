"""One intra-op thread for the tiny tensors of the labs."""
from collections.abc import Iterator
from contextlib import contextmanager

import torch


@contextmanager
def single_thread() -> Iterator[None]:
    """Run on one intra-op thread, then restore the caller's setting."""
    # Every op of these tiny models is far below ATen's parallel grain size, so a second thread never
    # speeds training up (measured: same epochs/s on 1 or 2 threads). It can only hurt: OpenMP workers
    # spin after a parallel region, taking the core that another classroom session on the same server
    # needs (measured: a tiny-transformer step took 280-700 ms instead of 15-30 ms on a busy machine).
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
