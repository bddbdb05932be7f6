"""``python -m clnp.tune [--device SPEC] [--dtypes float32,...] [--n N] [--show]``: tune
clnp's GEMM kernels for a device and cache the result (see ``clnp.autotune``)."""
import sys

from ._autotune import main

if __name__ == "__main__":
    sys.exit(main())
