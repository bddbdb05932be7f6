#!/usr/bin/env bash
# Make sure this machine has an OpenCL CPU runtime that can compile kernels.
#
# The embedded runtime (pocl-binary-distribution, PoCL 3.0 with LLVM 14) cannot compile on CPUs
# newer than its LLVM: LLVM reports the host as 'generic' and clang rejects '-target-cpu
# generic' (AMD family 1Ah, for one). Debian's PoCL 3.1 (LLVM 15, built with per-CPU kernel
# libraries) works there. This script installs it only when the embedded one is unusable and
# apt-get is available to root; otherwise it does nothing. clnp itself skips unusable devices.
set -euo pipefail
probe() {
  python3 - <<'PY' 2>/dev/null
import pyopencl as cl
ok = False
for p in cl.get_platforms():
    # Oclgrind (the test extra) is a simulator clnp skips by default: it does not make the
    # machine usable.
    if "oclgrind" in p.name.lower():
        continue
    for d in p.get_devices():
        v = d.version.rstrip()
        if not ("HSTR:" in v and v.endswith("-generic")):
            ok = True
print("ok" if ok else "none")
PY
}
python3 -c "import pyopencl" 2>/dev/null || python3 -m pip install -q "pyopencl>=2024.1" "pocl-binary-distribution>=3.0"
if [ "$(probe || echo none)" = "ok" ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "ensure_opencl: the embedded PoCL cannot compile for this CPU; installing Debian's pocl-opencl-icd" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq pocl-opencl-icd >/dev/null
else
  echo "ensure_opencl: no usable OpenCL CPU device; install an OpenCL driver (e.g. pocl-opencl-icd)" >&2
fi
