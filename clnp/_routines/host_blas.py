"""Products in the host's BLAS, through NumPy, on the memory of devices that share it.

On PoCL's CPU device a clnp buffer *is* host memory (``Device.shares_host_memory``), the same
memory NumPy's BLAS (OpenBLAS in NumPy's wheels) can read and write in place. OpenBLAS's
kernels are hand-scheduled for each CPU; clnp's OpenCL GEMM goes through PoCL's compiler and
reached about half their speed on the same cores (2-core AMD EPYC, float32, the products of
the MLP step of ``bench/bench_jit.py``: 44-87 GF/s against 133-165 GF/s). XLA's CPU backend
also hands its products to a tuned library. So there a large product of a BLAS dtype runs as
``numpy.matmul`` on views of the operands' and the result's buffers, instead of a kernel:

- **Order.** The host waits for the device's queue (``finish``): every kernel queued before
  has finished, so the operands are written and no queued kernel still uses the result's
  memory, which the pool may have handed out again. The kernels queued after it run after
  the host's writes. The views come from mappings made once per buffer and kept
  (``Device.host_bytes``): a map and an unmap per operand cost ~175 us a product on PoCL,
  where the wait alone costs ~12 us.
- **Capture.** The product is a ``HostCall``: a jitted step's replay runs it again on its
  buffers (``clnp._core.capture``), so ``grad(jit(f))`` training steps use it too.
- **When.** Operands of one of float32, float64, complex64 and complex128 with the result in
  that dtype; strides NumPy hands to BLAS without a copy (a unit stride along one of each
  matrix's dims; any other layout, which clnp's GEMM kernel takes, stays on the kernel); and
  at least :data:`MIN_WORK` multiply-adds per matrix (NumPy calls BLAS once per matrix of a
  batch). ``CLNP_HOST_BLAS=0`` (read at import) turns it off.

Why the minimum is high: alone, BLAS in place beats the kernel from 128x128x128 on
(``bench/bench_host_blas.py``). Inside a training step each host product drains the queue,
so the Python that enqueues the next kernels no longer overlaps the device's work. With the
character transformer's products (25-33 M multiply-adds each) in BLAS its step took 59-62 ms
against 42-48 ms on the kernel; with the MLP step's (200-270 M) 17.6-18.2 ms against
20.7-27.0 ms. Running the products on a host thread of their own, ordered by a marker and a
barrier on a user event, did not help: ``clSetUserEventStatus`` blocked for 1.6-5.9 ms in one
call of ten on PoCL (the transformer step 57-65 ms).

The kernel and BLAS sum in different orders: results agree to float rounding, not bit for bit.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from .._core import dtypes as dt
from .._core.array import Array
from .._runtime import capture_hooks as _hooks
from .._runtime.device import Device

ENV = "CLNP_HOST_BLAS"        # the switch (read once, at import: enabled())
_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)
# Multiply-adds per matrix (M x N x K) from which a product runs in BLAS (module docstring)
MIN_WORK = 1 << 26
# Tests and measurements: True runs every product that can take BLAS there (whatever its
# size), False none; None: by MIN_WORK
FORCE: bool | None = None


_ENABLED = os.environ.get("CLNP_HOST_BLAS", "1") != "0"


def enabled() -> bool:
    """Whether ``CLNP_HOST_BLAS`` allowed products in the host's BLAS when clnp was imported
    (anything but ``0``; default on). Products are planned once per operand geometry, so the
    switch is read once; tests and measurements set :data:`FORCE` instead.

    Examples
    --------
    >>> from clnp._routines.host_blas import enabled
    >>> isinstance(enabled(), bool)
    True
    """
    return _ENABLED


def _matrix_strides(rows: int, cols: int, s_row: int, s_col: int) -> tuple[int, int] | None:
    """Strides of a ``rows x cols`` matrix that NumPy's matmul hands to BLAS as they are
    (row-major with a leading dimension, or column-major), the strides of unit dims chosen
    freely (they address nothing); None where no choice does."""
    if s_row < 0 or s_col < 0:
        return None
    if rows == 1:
        s_row = max(cols, 1) if s_col == 1 else 1
    if cols == 1:
        s_col = max(rows, 1) if s_row == 1 else 1
    if s_col == 1 and s_row >= cols:
        return s_row, s_col
    if s_row == 1 and s_col >= rows:
        return s_row, s_col
    return None


class HostProduct(_hooks.HostCall):
    """One product's plan in the host's BLAS for a given operand geometry (the counterpart of
    ``dot_general``'s kernel launch plan): ``plan(lhs, rhs)`` returns the product.

    Operands are ``[b0, b1, M, K]`` and ``[b0, b1, K, N]`` views (element strides, offsets
    fixed by the geometry); the result is written as ``[b0, b1, M, N]`` with the strides the
    kernel would write it with."""

    __slots__ = ("device", "dtype", "out_shape", "a", "b", "c")

    def __init__(self, device: Device, dtype: np.dtype, out_shape: tuple[int, ...],
                 a: tuple, b: tuple, c: tuple):
        self.device, self.dtype, self.out_shape = device, dtype, out_shape
        self.a, self.b, self.c = a, b, c        # (offset, shape, strides) in elements

    def __call__(self, lhs: Array, rhs: Array) -> Array:
        dst = Array.empty(self.out_shape, self.dtype, self.device)
        bufs = (lhs._buf, rhs._buf, dst._buf)
        _hooks.note_host_call(self, bufs)
        self.run_on_host(*bufs)
        return dst

    def run_on_host(self, *bufs: Any) -> None:
        """``numpy.matmul`` on views of the three buffers (operands, result), once the queued
        work has finished."""
        device, item, dtype = self.device, self.dtype.itemsize, self.dtype
        device.synchronize()
        a, b, c = (np.ndarray(shape, dtype, buffer=device.host_bytes(buf), offset=off * item,
                              strides=tuple(s * item for s in st))
                   for buf, (off, shape, st) in zip(bufs, (self.a, self.b, self.c)))
        np.matmul(a, b, out=c)


def plan(device: Device, dtype: np.dtype, out_dtype: np.dtype, out_shape: tuple[int, ...],
         m: tuple, n: tuple, k: tuple, bsizes: Sequence[int], bstr: Sequence[Sequence[int]],
         offsets: tuple[int, int]) -> HostProduct | None:
    """The host product of one planned GEMM (``dot_general``'s merged dims: ``m = (M, [sam,
    scm])``, ``n = (N, [sbn, scn])``, ``k = (K, [sak, sbk])``, two batch dims with the lhs,
    rhs and result strides ``bstr``), or None where it stays on the kernel."""
    if not (device.shares_host_memory and dtype in _DTYPES and out_dtype == dtype
            and FORCE is not False and enabled()):
        return None
    (M, (sam, scm)), (N, (sbn, scn)), (K, (sak, sbk)) = m, n, k
    b0, b1 = bsizes
    if FORCE is None and M * N * K < MIN_WORK:
        return None
    sa, sb, sc = (_matrix_strides(M, K, sam, sak), _matrix_strides(K, N, sbk, sbn),
                  _matrix_strides(M, N, scm, scn))
    if sa is None or sb is None or sc is None:
        return None
    # a unit batch dim's stride addresses nothing
    (ab0, ab1), (bb0, bb1), (cb0, cb1) = ([s if size > 1 else 0 for size, s in zip(bsizes, st)]
                                          for st in bstr)
    if min(ab0, ab1, bb0, bb1, cb0, cb1) < 0:
        return None
    return HostProduct(device, dtype, out_shape,
                       (offsets[0], (b0, b1, M, K), (ab0, ab1) + sa),
                       (offsets[1], (b0, b1, K, N), (bb0, bb1) + sb),
                       (0, (b0, b1, M, N), (cb0, cb1) + sc))
