#!/bin/sh
# The GPU lab's checks on a CUDA machine in one go (at most 9.5 minutes: give the run a 600 s limit); everything lands in $OUT
# (default ./gpu_lab_out): the device's description, the engine tests' log (CUDA tests included), and the
# measurement set as JSON with its log. Run from the repository root: sh benchmarks/gpu_lab_device.sh
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
timeout 150 $PY -m pytest tests/test_memsim.py tests/test_kernels.py tests/test_gpu_measure.py tests/test_gpu.py \
  -q -p no:cacheprovider > "$OUT/pytest.log" 2>&1
echo "pytest exit $?" >> "$OUT/pytest.log"
# written after each section: a run cut short keeps what it measured
timeout 400 $PY -m benchmarks gpu --out "$OUT/gpu_bench.json" > "$OUT/gpu_bench.log" 2>&1
echo "bench exit $?" >> "$OUT/gpu_bench.log"
