"""Device banner data against what the OS and torch report."""
import os

import pytest
import torch

from sim.gpu.measure import device_info


def test_cpu_description_matches_the_machine():
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    d = device_info()
    assert d.kind == "cpu" and d.cores == os.cpu_count() and d.l2_bytes is None
    assert d.memory_bytes == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert d.torch_version == torch.__version__ and d.name


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_description_matches_torch():
    d, props = device_info(), torch.cuda.get_device_properties(0)
    assert d.kind == "cuda" and d.name == props.name and d.cores == props.multi_processor_count
    assert d.memory_bytes == props.total_memory and d.l2_bytes == props.L2_cache_size > 0
