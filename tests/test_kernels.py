"""The three attention kernels against torch's scaled_dot_product_attention.

The Triton kernel runs on the CPU in Triton's interpreter, in a subprocess: TRITON_INTERPRET=1 must be set before
the kernel is defined, and this process may already have imported it compiled (for the CUDA tests).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from sim.gpu.kernels import naive_attention, tiled_attention

ROOT = Path(__file__).resolve().parent.parent
cuda_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def _inputs(B, H, N, d, dtype=torch.float32, device="cpu", seed=0):
    g = torch.Generator(device=device).manual_seed(seed)
    return [torch.randn(B, H, N, d, generator=g, dtype=dtype, device=device) for _ in range(3)]


def _reference(q, k, v, causal):
    return F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)


@pytest.mark.parametrize("d", [16, 32, 64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_naive_and_tiled_match_sdpa(d, causal):
    q, k, v = _inputs(2, 3, 100, d)  # 100 rows: partial edge blocks for both block sizes below
    ref = _reference(q, k, v, causal)
    torch.testing.assert_close(naive_attention(q, k, v, causal), ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(tiled_attention(q, k, v, causal, block_m=32, block_n=48), ref, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("block_m, block_n", [(1, 1), (7, 5), (64, 64), (256, 16)])
def test_tiled_is_exact_for_any_block_size(block_m, block_n):
    q, k, v = _inputs(1, 2, 70, 16)
    out = tiled_attention(q, k, v, True, block_m, block_n)
    torch.testing.assert_close(out, _reference(q, k, v, True), atol=1e-5, rtol=1e-5)


def test_tiled_keeps_the_input_precision():
    q, k, v = _inputs(1, 2, 90, 32, torch.float16)
    out = tiled_attention(q, k, v, False, 32, 32)
    assert out.dtype == torch.float16
    torch.testing.assert_close(out.float(), _reference(q, k, v, False), atol=2e-3, rtol=2e-3)


# (dtype, causal, B, H, N, d, block_m, block_n): tiny sizes, the interpreter runs every program in Python
INTERPRETED = [("float32", False, 1, 2, 50, 16, 16, 16), ("float32", True, 2, 1, 70, 32, 32, 16),
               ("float16", False, 1, 2, 33, 64, 16, 32), ("float16", True, 1, 1, 45, 128, 16, 16),
               ("float32", True, 1, 1, 20, 24, 16, 16)]  # d = 24: padded to 32 inside the kernel
INTERPRETER_SCRIPT = r"""
import json, sys
from triton.runtime import interpreter

# Triton 3.6's interpreter turns loop bounds into ints with int(array), which NumPy 2.4 refuses for 1-element
# arrays (triton-lang/triton#9171); the fix merged upstream, applied here
_patch = interpreter._patch_lang_tensor
def _patch_index(tensor, scope):
    _patch(tensor, scope)
    scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.item()))
interpreter._patch_lang_tensor = _patch_index

import torch, torch.nn.functional as F
from sim.gpu.kernels.flash import flash_attention
errors = []
for dtype, causal, B, H, N, d, bm, bn in json.loads(sys.argv[1]):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(B, N, H, d, generator=g).to(getattr(torch, dtype)).transpose(1, 2) for _ in range(3))
    out = flash_attention(q, k, v, causal, bm, bn)  # q, k, v strided: (B, N, H, d) memory seen as (B, H, N, d)
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    errors.append([str(out.dtype), (out.float() - ref).abs().max().item()])
print(json.dumps(errors))
"""


@pytest.fixture(scope="module")
def interpreted_errors():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", INTERPRETER_SCRIPT, json.dumps(INTERPRETED)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", range(len(INTERPRETED)), ids=lambda n: "-".join(map(str, INTERPRETED[n][:2])))
def test_flash_kernel_in_the_interpreter_matches_sdpa(interpreted_errors, case):
    dtype, *_ = INTERPRETED[case]
    out_dtype, error = interpreted_errors[case]
    assert out_dtype == f"torch.{dtype}"
    assert error < (2e-3 if dtype == "float16" else 1e-5)


def test_flash_refuses_bad_blocks_and_cpu_tensors_when_compiled():
    from sim.gpu.kernels.flash import flash_attention

    q, k, v = _inputs(1, 1, 32, 16)
    with pytest.raises(ValueError, match="power of two"):
        flash_attention(q, k, v, block_m=48)
    with pytest.raises(ValueError, match="power of two"):
        flash_attention(q, k, v, block_n=8)
    if not torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1":
        with pytest.raises(RuntimeError, match="CUDA"):
            flash_attention(q, k, v)


# (dtype, d, block_m, block_n): every head size in half precision, a few in bfloat16 and float32 (compiles are slow)
CUDA_CASES = ([(torch.float16, d, bm, 64) for d in (16, 32, 64, 128) for bm in (64, 128)]
              + [(torch.bfloat16, d, 128, 64) for d in (64, 128)] + [(torch.float32, d, 64, 32) for d in (16, 64)])
TOLERANCE = {torch.float16: 2e-3, torch.bfloat16: 2e-2, torch.float32: 1e-4}


@pytest.mark.cuda
@cuda_only
@pytest.mark.parametrize("dtype, d, block_m, block_n", CUDA_CASES)
@pytest.mark.parametrize("causal", [False, True])
def test_flash_kernel_on_cuda_matches_sdpa(dtype, d, block_m, block_n, causal):
    from sim.gpu.kernels import flash_attention

    q, k, v = _inputs(2, 3, 1000, d, dtype, "cuda")  # 1000 rows: partial edge blocks
    out = flash_attention(q, k, v, causal, block_m, block_n)
    assert out.dtype == dtype
    tol = TOLERANCE[dtype]
    torch.testing.assert_close(out.float(), _reference(q, k, v, causal), atol=tol, rtol=tol)


@pytest.mark.cuda
@cuda_only
@pytest.mark.parametrize("impl", [naive_attention, tiled_attention])
def test_torch_kernels_on_cuda_match_sdpa(impl):
    q, k, v = _inputs(2, 4, 777, 64, torch.float16, "cuda")
    for causal in (False, True):
        torch.testing.assert_close(impl(q, k, v, causal).float(), _reference(q, k, v, causal), atol=2e-3, rtol=2e-3)
