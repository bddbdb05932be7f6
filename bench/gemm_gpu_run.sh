#!/usr/bin/env bash
# GPU session for the GEMM work: tune into $OUT/cache (one process per dtype, so that a kernel
# that breaks the context spoils one dtype only; every candidate's GFLOP/s goes to
# $OUT/tune.log), benchmark against cuBLAS with the tuned kernels, then the GEMM tests on the
# GPU as far as time allows.
# Usage (device machine, repo root): bash bench/gemm_gpu_run.sh [keys] [sizes] [test-seconds]
source .device/gpu-env.sh >/dev/null
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD CLNP_DEVICE=gpu CLNP_CACHE_DIR=$OUT/cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for key in $(echo "${1:-float16,tf32,float32,float64}" | tr , ' '); do
    t=${TUNE_S:-40}; [ "$key" = float64 ] && t=$((t / 2))      # no target for float64
    timeout "$t" python3 -m clnp.tune --dtypes "$key" 2>&1 | grep -v '^ *[{}"]' \
        | sed 's/GFLOP/GF/; s/'"'"'kind'"'"': //' | tee -a $OUT/tune.log | grep -v "^  "
done
timeout 55 python3 bench/bench_gemm.py --sizes "${2:-1024,2048}" \
    --csv $OUT/gemm-nvidia-h200.csv 2>&1
CLNP_TEST_DEVICES=gpu timeout "${3:-40}" python3 -m pytest -q -x -p no:cacheprovider \
    tests/test_gemm_tuning.py -k "tensor_cores or dispatch or small or planned" 2>&1 | tail -4
