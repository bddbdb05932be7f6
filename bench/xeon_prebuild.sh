#!/usr/bin/env bash
# Run on a device machine from the repository root: run(command="bash bench/xeon_prebuild.sh",
# carry=[".cpuwheels"]), .cpuwheels/ holding the wheels of pyopencl, pocl-binary-distribution and
# the test dependencies for its Python (cp312); $OUT receives the CSV.
# clnp.prebuild on this host's CPU with only the embedded PoCL (what a pip user has), from a
# fresh copy: the store's build time, then the six-operation script cold / warm / prebuilt;
# then tests/test_prebuild.py there and on the GPU.
export PYTHONUNBUFFERED=1; lscpu | grep -m1 "Model name"; nproc
mkdir -p /tmp/hidden; mv /etc/OpenCL/vendors/*.icd /tmp/hidden/ 2>/dev/null
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .cpuwheels/*.whl || exit 1
export PYTHONPATH=/tmp/site
rm -rf /tmp/fresh && mkdir /tmp/fresh && tar --exclude=./.cpuwheels -cf - . | tar -xf - -C /tmp/fresh && cd /tmp/fresh
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . 2>&1 | tail -2
export PYTHONPATH=/tmp/fresh:/tmp/site
python3 -c "import clnp; print(clnp.default_device())"
start=$(date +%s.%N)
python3 -m clnp.prebuild --dir /tmp/store 2>&1 | tail -3
echo "prebuild wall $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
timeout 300 python3 bench/bench_startup.py --only six_ops --modes cold warm prebuilt --reps 3 --cold-reps 2 --prebuilt-dir /tmp/store --label xeon --csv $OUT/startup-six-ops-xeon.csv 2>&1 | tail -5
CLNP_PREBUILT_DIR= timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_prebuild.py tests/test_creation.py -x 2>&1 | tail -3
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
CLNP_TEST_DEVICES=nvidia:0 timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_prebuild.py tests/test_program_cache.py 2>&1 | tail -3
