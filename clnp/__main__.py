"""``python -m clnp``: list the OpenCL devices and run a short workload on the default one."""
from __future__ import annotations

import time

import numpy

import clnp as np


def main() -> None:
    print("clnp", np.__version__, "- OpenCL devices:")
    for d in np.devices():
        flags = ", ".join(f for f, on in (("fp64", d.has_fp64), ("fp16", d.has_fp16)) if on)
        print(f"  [{d.index}] {d.key:10s} {d.name} ({d.platform_name}; {flags or 'fp32 only'})")
    dev = np.default_device()
    print("default device:", dev)
    n = 1 << 20
    x = np.linspace(0, 2 * np.pi, n, dtype=np.float32)
    t = time.perf_counter()
    y = np.sin(x) ** 2 + np.cos(x) ** 2
    total = float(np.sum(y))
    dt = time.perf_counter() - t
    ref = numpy.sin(numpy.linspace(0, 2 * numpy.pi, n, dtype=numpy.float32)) ** 2
    print(f"sum(sin^2 + cos^2) over {n} points = {total:.1f} (expected {n}); {dt * 1e3:.1f} ms "
          f"including first-use kernel builds")
    m = np.reshape(np.arange(12, dtype=np.float32), (3, 4))
    print("row sums of arange(12).reshape(3, 4):", np.sum(m, axis=1).tolist())
    print("mean of sin^2 (NumPy reference %.6f): %.6f" % (ref.mean(), float(np.mean(np.sin(x) ** 2))))
    assert abs(total - n) < 1e-3 * n, "device result disagrees with the expected value"
    print("OK")


if __name__ == "__main__":
    main()
