#!/usr/bin/env bash
# Every benchmark on the GPU machine, CSVs into $OUT (device machine, repo root; carry .device
# and .whl):  bash bench/gpu_all.sh [core,kernels,grad,extended,gemm]
source .device/gpu-env.sh >/dev/null
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD CLNP_DEVICE=gpu
which="${1:-core,kernels,grad,extended}"
dev=nvidia-h200
for b in ${which//,/ }; do
  case $b in
    core) timeout 240 python3 bench/bench_core.py --csv $OUT/core-$dev.csv ;;
    kernels) timeout 120 python3 bench/bench_kernels.py --csv $OUT/kernels-$dev.csv ;;
    grad) timeout 120 python3 bench/bench_grad.py --reps 15 --csv $OUT/grad-$dev.csv ;;
    extended) timeout 200 python3 bench/bench_extended.py --reps 15 --csv $OUT/extended-$dev.csv ;;
    gemm) timeout 150 python3 bench/bench_gemm.py --sizes 1024,2048 --csv $OUT/gemm-$dev.csv ;;
  esac 2>&1 | grep -v "Warning\|warn(\|lambda: self._prg" | tail -30
done
