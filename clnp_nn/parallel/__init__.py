"""clnp_nn.parallel: data parallelism across OpenCL devices and MPI processes (JAX's model).

- ``pmap(fun, axis_name, ...)``: one slice of the leading axis per device, all devices at once;
  results are ``ShardedArray``.
- Collectives inside ``pmap`` (and ``clnp_grad.vmap(..., axis_name=...)``): ``psum``,
  ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``, ``ppermute``,
  ``all_to_all``, ``axis_index``; all differentiable.
- Processes: ``initialize()`` (under ``mpiexec``), ``process_index``, ``process_count``,
  ``local_devices``, ``devices``.

See docs/parallel.md.
"""
from .api import Pmapped, pmap
from . import rules as _rules  # noqa: F401  (registers pmap's transformation rules)
from .collectives import (all_gather, all_to_all, axis_index, axis_size, pmax, pmean, pmin,
                          ppermute, psum, psum_scatter)
from .mpi import (CollectiveTimeoutError, RemoteDevice, device_count, devices, initialize,
                  is_initialized, local_device_count, local_devices, process_count,
                  process_index)
from .sharded import ShardedArray, device_put_replicated, device_put_sharded

__all__ = ["pmap", "Pmapped", "ShardedArray", "device_put_replicated", "device_put_sharded", "psum", "pmean", "pmax", "pmin", "all_gather",
           "psum_scatter", "ppermute", "all_to_all", "axis_index", "axis_size", "initialize",
           "is_initialized", "process_index", "process_count", "local_devices",
           "local_device_count", "devices", "device_count", "RemoteDevice",
           "CollectiveTimeoutError"]
