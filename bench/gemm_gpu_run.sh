#!/usr/bin/env bash
# GPU session for the GEMM work: the GEMM tests on the GPU, tune into $OUT/cache (every
# candidate's GFLOP/s is printed), then benchmark against cuBLAS with the tuned kernels.
# Usage (device machine, repo root): bash bench/gemm_gpu_run.sh [keys] [sizes]
source .device/gpu-env.sh >/dev/null
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD CLNP_DEVICE=gpu CLNP_CACHE_DIR=$OUT/cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
CLNP_TEST_DEVICES=gpu timeout 100 python3 -m pytest -q -x -p no:cacheprovider \
    tests/test_gemm_tuning.py 2>&1 | tail -4
timeout 120 python3 -m clnp.tune --dtypes "${1:-float32,tf32,float16,float64}" 2>&1 \
    | grep -v '^ *[{}"]' | sed 's/GFLOP/GF/'
timeout 90 python3 bench/bench_gemm.py --sizes "${2:-1024,2048}" \
    --csv $OUT/gemm-nvidia-h200.csv 2>&1
