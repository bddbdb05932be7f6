#!/usr/bin/env bash
# One GPU session: tests on the GPU, then the benchmarks whose GPU figures the issues ask for,
# CSVs (and the GPU's ULP table) into $OUT, named by the GPU (nvidia-h100, nvidia-h200).
# Usage (device machine, repo root; carry .device and .whl, see ../shared/device/README.md):
#   bash bench/gpu_session.sh tests,amp,jit,conv,nntrain,ulp [test paths...]
source .device/gpu-env.sh >/dev/null
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD CLNP_DEVICE=gpu CLNP_CACHE_DIR=/tmp/clnp-cache PYTHONUNBUFFERED=1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
dev=nvidia-$(echo "$gpu" | grep -o -i 'h[0-9]00' | head -1 | tr 'A-Z' 'a-z')
echo "$gpu -> $dev"
which="${1:-tests,amp,jit}"; shift
tests=${*:-tests/grad/test_jit_column_reduce.py tests/test_gemm_tuning.py tests/test_float16_storage.py tests/test_bfloat16.py tests/grad/test_jit_rows.py tests/grad/test_jit.py tests/test_accuracy_ulp.py tests/nn/test_bfloat16_functional.py tests/test_linear_algebra.py}
quiet() { grep -v "Warning\|warn(\|lambda: self._prg"; }
for b in ${which//,/ }; do
  echo "=== $b"
  case $b in
    tests) CLNP_TEST_DEVICES=gpu timeout 300 python3 -m pytest -q -p no:cacheprovider -x $tests \
             2>&1 | quiet | tail -15 ;;
    amp) timeout 300 python3 bench/bench_amp.py --large --reps 9 --csv $OUT/amp-$dev.csv 2>&1 \
             | quiet | tail -40 ;;
    jit) JAX_PLATFORMS=cuda timeout 400 python3 bench/bench_jit.py --reps 15 \
             --csv $OUT/jit-$dev.csv 2>&1 | quiet | tail -45 ;;
    conv) JAX_PLATFORMS=cuda timeout 300 python3 bench/bench_nn_conv.py --batch 64 --reps 9 \
             --csv $OUT/nn-conv-$dev.csv 2>&1 | quiet | tail -30 ;;
    nntrain) JAX_PLATFORMS=cuda timeout 300 python3 bench/bench_nn_train.py --batch 64 \
             --reps 15 --csv $OUT/nn-train-$dev.csv 2>&1 | quiet | tail -12 ;;
    transformer) JAX_PLATFORMS=cuda timeout 400 python3 bench/bench_transformer.py --reps 30 \
             --csv $OUT/transformer-$dev.csv 2>&1 | quiet | tail -12 ;;
    xla) JAX_PLATFORMS=cuda timeout 580 python3 bench/xla_table.py --only "${XLA_ONLY:-mlp,chain,logistic,cnn,resnet,transformer}" \
             --csv $OUT/xla-table-$dev.csv 2>&1 | quiet | tail -14 ;;
    ulp) timeout 300 python3 tools/ulp.py -n 30000 --write 2>&1 | tail -8
         cp docs/reliability.md $OUT/reliability-$dev.md ;;
  esac
done
