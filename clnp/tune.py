"""``python -m clnp.tune [--device SPEC] [--dtypes float32,...] [--n N] [--show]``: tune
clnp's GEMM kernels for a device and cache the result (see ``clnp.autotune``)."""
import sys as _sys

from ._routines.autotune import main

__all__ = ["main"]

if __name__ == "__main__":
    _sys.exit(main())
