#!/usr/bin/env bash
# #11 on two GPUs (device kind nvidia-h200-x2; carry .device and .whl): psum bandwidth beside
# PyTorch's NCCL all-reduce, the data-parallel MLP step on one and two GPUs in one process, and
# the same step and psum under mpiexec -n 2 with one process per GPU. CSVs into $OUT.
# Host staging goes through pinned memory on GPUs (CLNP_PINNED unset); bench_parallel.py times
# the pageable path beside it (rows *_pageable); export CLNP_PINNED=0 to run everything pageable.
source .device/gpu-env.sh >/dev/null
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD CLNP_CACHE_DIR=/tmp/clnp-cache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
quiet() { grep -v "Warning\|warn(\|lambda: self._prg"; }
sizes=${SIZES:-1,4,16,64,256}
if [ -z "$ONLY_MPI" ]; then     # ONLY_MPI=1: the mpiexec part alone
echo "=== one process, two GPUs: psum and the MLP step"
CLNP_DEVICE=gpu timeout 240 python3 bench/bench_parallel.py --sizes $sizes --reps 7 --mlp \
    --csv $OUT/parallel-nvidia-h200-x2.csv 2>&1 | quiet | tail -12
echo "=== the same with both GPUs in one OpenCL context (device-to-device copies)"
CLNP_SHARED_CONTEXT=1 CLNP_DEVICE=gpu timeout 240 python3 bench/bench_parallel.py --sizes $sizes \
    --reps 7 --mlp --csv $OUT/parallel-nvidia-h200-x2-shared-context.csv 2>&1 | quiet | tail -8
echo "=== the example, 784-1024-1024-10, global batch 512, 1 and 2 GPUs"
for n in 1 2; do
  CLNP_DEVICE=gpu timeout 120 python3 examples/data_parallel_mlp.py --sizes 784,1024,1024,10 \
      --batch 512 --steps 60 --devices $n 2>&1 | quiet | tail -2
done
echo "=== the example on 2 GPUs through pageable host memory (CLNP_PINNED=0), for comparison"
CLNP_PINNED=0 CLNP_DEVICE=gpu timeout 120 python3 examples/data_parallel_mlp.py \
    --sizes 784,1024,1024,10 --batch 512 --steps 60 --devices 2 2>&1 | quiet | tail -2
fi
MPIEXEC=$(command -v mpiexec || command -v mpirun)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1   # the device machine runs as root
if [ -z "$MPIEXEC" ]; then echo "no mpiexec on this machine"; exit 0; fi
echo "=== mpiexec -n 2, one GPU per process ($MPIEXEC)"
# Open MPI starts each rank with its own environment: forward what gpu-env.sh and this script
# set, and call this python by its path
PY=$(command -v python3)
fwd="-x PATH -x PYTHONPATH -x CLNP_CACHE_DIR -x PYTHONUNBUFFERED"
for v in $(env | grep -o '^\(LD_LIBRARY_PATH\|OCL_[A-Z_]*\)='); do fwd="$fwd -x ${v%=}"; done
rank='${OMPI_COMM_WORLD_RANK:-$PMI_RANK}'
timeout 120 $MPIEXEC $fwd -n 2 bash -c "CLNP_DEVICE=nvidia:$rank $PY examples/data_parallel_mlp.py \
    --sizes 784,1024,1024,10 --batch 512 --steps 60" 2>&1 | quiet | tail -4
timeout 200 $MPIEXEC $fwd -n 2 bash -c "CLNP_DEVICE=nvidia:$rank $PY bench/bench_parallel.py --mpi \
    --sizes $sizes --reps 7 --csv $OUT/parallel-mpi-nvidia-h200-x2.csv" 2>&1 | quiet | tail -8
