#!/usr/bin/env bash
# GPU session for jit (#9) and what rests on it: tests on the GPU, then bench/bench_jit.py
# with GPU peers (torch CUDA, JAX with JAX_PLATFORMS=cuda, CuPy).
# Usage (device machine, repo root; carry .device and .whl):
#   bash bench/gpu_jit.sh [test-seconds] [test paths...]
source .device/gpu-env.sh >/dev/null
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD CLNP_DEVICE=gpu CLNP_CACHE_DIR=/tmp/clnp-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
secs=${1:-150}; shift
tests=${*:-tests/grad/test_jit.py tests/grad/test_lax.py tests/grad/test_random_functional.py tests/test_custom_kernels.py tests/test_program_cache.py}
CLNP_TEST_DEVICES=gpu timeout "$secs" python3 -m pytest -q -p no:cacheprovider $tests 2>&1 \
    | grep -v "Warning\|warn(" | tail -25
JAX_PLATFORMS=cuda timeout 400 python3 bench/bench_jit.py --reps 15 \
    --csv $OUT/jit-nvidia-h200.csv 2>&1 | grep -v "Warning\|warn(" | tail -45
