#!/bin/sh
# The GPU lab's checks on a CUDA machine in one go (at most 10 minutes: give the run a 600 s limit); everything lands in
# $OUT (default ./gpu_lab_out): the device's description, the engine tests' log (CUDA tests included), the foundations
# lab's CUDA matrix products, and the measurement set as JSON with its log. Run from the repository root:
#     sh benchmarks/gpu_lab_device.sh
# That machine has torch, Triton and pytest but not the app's Streamlit or Plotly: nothing here may import them.
OUT=${OUT:-gpu_lab_out}
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"
{
  nvidia-smi
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
  echo "ncu: ${NCU:-none}" && [ -n "$NCU" ] && "$NCU" --version
  $PY -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
} > "$OUT/device.txt" 2>&1
# --noconftest: tests/conftest.py brings the app's browser and Streamlit fixtures
timeout 120 $PY -m pytest tests/test_memsim.py tests/test_kernels.py tests/test_gpu_measure.py tests/test_gpu.py \
  -q -n 4 -p no:cacheprovider --noconftest > "$OUT/pytest.log" 2>&1
echo "pytest exit $?" >> "$OUT/pytest.log"
# the foundations lab's CPU-against-GPU sweep: what its page times on a CUDA device (sim.linalg.matmul), bf16
timeout 60 $PY -c "
import json, math
from sim.linalg import matmul
for n in (1024, 4096, 8192, 16384):
    t = matmul.time_matmul_cuda(n)
    assert math.isclose(t.gflops, 2 * n ** 3 / t.seconds / 1e9) and t.seconds > 0
    print(json.dumps({'bench': 'matmul_cuda', 'n': n, 'seconds': t.seconds, 'gflops': round(t.gflops, 1), 'device': t.device}))
try:
    matmul.time_matmul_cuda(1 << 20)
    print('NOT refused: 1 << 20')
except matmul.TooLarge as e:
    print(json.dumps({'bench': 'matmul_cuda', 'refused_n': 1 << 20, 'need': e.need, 'limit': e.limit}))
" > "$OUT/matmul_cuda.log" 2>&1
echo "matmul exit $?" >> "$OUT/matmul_cuda.log"
# written after each section: a run cut short keeps what it measured
timeout 300 $PY -m benchmarks gpu --out "$OUT/gpu_bench.json" > "$OUT/gpu_bench.log" 2>&1
echo "bench exit $?" >> "$OUT/gpu_bench.log"
# each kernel's traffic split by who asks for it (SMs, the link between the L2's halves): where a level differs
# from the IO model, which kernel makes the difference
timeout 120 $PY -m benchmarks gpu_ncu_detail --out "$OUT/ncu_detail.json" > "$OUT/ncu_detail.log" 2>&1
echo "detail exit $?" >> "$OUT/ncu_detail.log"
