"""Layer 1, the runtime: OpenCL devices, contexts and in-order queues, launches (bound
kernels, the zero-work guard), the memory pool and its accounting, the program cache, pinned
staging buffers, the hooks of launch capture, PoCL's private-memory limits, the dtype facts
devices need, and where warnings point.

It knows buffers and programs, not arrays, and imports nothing else of clnp
(docs/architecture.md).
"""
# Pickles made before the package layout (clnp < 0.2 layout) name this function by its old
# module, clnp._runtime, which is now this package.
from .device import _device_by_index  # noqa: F401
