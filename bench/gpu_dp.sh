#!/usr/bin/env bash
# Issue #24's multi-GPU measurements, in one call on a machine of 4 GPUs (nvidia-h200-x4):
# the data-parallel MLP step on 1, 2 and 4 GPUs (one process, then one process per GPU under
# mpiexec) beside PyTorch DDP, the psum bandwidth beside torch.distributed, and the NCCL
# tests. From the repository root on the device machine, with .device carried:
#     bash bench/gpu_dp.sh "$OUT"
set -u
out=${1:-bench/results}
mkdir -p "$out"
source .device/gpu-env.sh >/dev/null 2>&1 || { echo "gpu-env.sh failed"; exit 1; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export CLNP_DEVICE=gpu PYTHONUNBUFFERED=1
step() { local lim=$1; shift; echo "+ $* (limit ${lim}s)"; timeout "$lim" "$@"; echo "rc=$?"; }
nvidia-smi -L
step 140 python3 bench/bench_dp_scaling.py --ndev 1,2,4 --csv "$out/dp-scaling-h200.csv" \
  | tee "$out/dp.log"
base=$(awk '/RESULT clnp pmap ndev=1 /{for(i=1;i<=NF;i++) if($i ~ /^step_ms=/){sub("step_ms=","",$i); print $i}}' "$out/dp.log")
step 90 python3 bench/bench_ddp.py --ngpu 1,2,4 --csv "$out/dp-scaling-h200.csv"
step 60 python3 bench/bench_allreduce.py --ndev 2,4 --impl clnp --csv "$out/allreduce-h200.csv"
step 80 python3 bench/bench_allreduce.py --ndev 2,4 --impl torch --csv "$out/allreduce-h200.csv"
mpiexec=$(command -v mpiexec || true)
if [ -n "$mpiexec" ]; then
  "$mpiexec" --version 2>&1 | head -2
  python3 -c "from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0])"
  extra=""; "$mpiexec" --version 2>&1 | grep -qiE "open ?mpi|openrte" && \
    extra="--allow-run-as-root -x PYTHONPATH -x PATH -x CLNP_DEVICE -x NCCL_NVLS_ENABLE"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for n in 2 4; do
    step 80 "$mpiexec" $extra -n $n "$(command -v python3)" \
      bench/bench_dp_scaling.py --base-ms "${base:-0}" \
      --csv "$out/dp-scaling-h200.csv"
  done
else
  echo "no mpiexec on this machine"
fi
step 60 python3 -m pytest -q -p no:cacheprovider tests/parallel/test_nccl.py
