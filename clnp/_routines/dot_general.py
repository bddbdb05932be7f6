"""Eager implementation of ``dot_general`` (JAX's generalised batched tensor contraction).

``dot_general(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)), preferred_element_type)``
contracts dims ``lc`` of ``lhs`` with dims ``rc`` of ``rhs`` for every index of the batch dims
``lb``/``rb`` (equal sizes; a broadcast batch is a stride-0 view); the result has the batch
dims, then the free dims of ``lhs``, then those of ``rhs``, each group in operand order, and
the dtype ``preferred_element_type`` (default: the operands' promoted dtype). Operands of
different dtypes are promoted: they are converted to the kernel's computing dtype
(``clnp._kernels.gemm.gemm_dtype``) here, where stride-0 (broadcast) dims stay views.

A product is one launch of the GEMM kernel (``clnp._kernels.gemm``; with split-K, plus the sum
of the partial products): free and contracted dim groups are merged into single M/N/K strides
when the operands' strides allow it (views such as ``x.T``, ``x.mT``, slices and negative steps
always do for matrices), up to two batch dims are kernel arguments, and a shared right operand
folds the batch into M (one big GEMM instead of a batch of small ones). Only layouts that no
stride can describe are copied first. On CPU devices a product whose B has no unit stride
along N but whose A has one along M is computed as ``C^T = B^T A^T``.

Kernel shapes come from :func:`gemm_config`: the autotuner's cached or built-in result for the
device (``clnp._routines.autotune``), else :func:`default_config`; GPU products too small to give every
compute unit a 128x128 tile take a shape of their own (smaller tiles or split K, key suffix
``":small"``). A product's launch is planned once per operand geometry (a kernel object with
its arguments set, per thread), so repeated products cost little Python. On NVIDIA devices of compute
capability >= 8.0 (:func:`tensor_cores`) float16 products and, at
``set_matmul_precision("tf32")``, float32 products run on tensor cores
(``clnp._kernels.mma``) with float32 sums.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import threading
from typing import Any, Iterator, Sequence

import numpy as np

from .._runtime.deferred import deferred_import
from .._runtime import capture_hooks as _hooks
from . import autotune as _autotune
from . import host_blas
from .._core import dtypes as dt
from .._core.array import Array, c_strides
from .._runtime import launch as _launch
from .._runtime.launch import Launch
from .._core.eager import (_I32, _span_ok, collapse, contiguous_copy, convert_element_type,
                           copy_into, reduce, vector_bytes)
from .._core.prims import def_impl
from .._runtime.device import Device
from .._runtime.opencl import cl

# run at first use, not at import clnp (clnp._runtime.deferred)
_gemm_kernels = deferred_import("clnp._kernels.gemm")
_mma_kernels = deferred_import("clnp._kernels.mma")

# Tests set this to "gpu" to run the local-memory kernel on a CPU device (None: by device);
# a forced kind ignores tuned configurations.
_FORCE_KIND: str | None = None
# CPU blocking: up to 16 sub-tiles of 6 rows share each B panel of 64 K steps (a 4-8 KiB
# private copy), which measured best on AVX2 PoCL (1024^2 and 2048^2 float32) among 1-16 x
# 32-128
_CPU_RM, _CPU_KB = 16, 64
# CPU products whose B spans at least _CPU_LARGE_B bytes (more than an L2) and whose A at
# most _CPU_SMALL_A run as C^T = B^T A^T (see _run)
_CPU_SMALL_A, _CPU_LARGE_B = 1 << 19, 1 << 21

_PRECISIONS = {"highest": "highest", "float32": "highest", "tf32": "tf32",
               "tensorfloat32": "tf32"}
_local = threading.local()       # per thread: planned launches (their kernels hold arguments)
_MAX_PLANS = 1024
_precision: contextvars.ContextVar[str] = contextvars.ContextVar("clnp_matmul_precision",
                                                                 default="highest")


def _check_precision(precision: str) -> str:
    p = _PRECISIONS.get(precision) if isinstance(precision, str) else None
    if p is None:
        raise ValueError(f"matmul precision must be one of {sorted(_PRECISIONS)}, "
                         f"got {precision!r}")
    return p


def set_matmul_precision(precision: str) -> None:
    """Set the precision of float32 matrix products for the current thread/context.

    Parameters
    ----------
    precision : str
        ``"highest"`` (alias ``"float32"``, the default): products and sums in float32,
        as NumPy. ``"tf32"`` (alias ``"tensorfloat32"``): the operands may be rounded to
        TF32 (10 mantissa bits) and multiplied on tensor cores with float32 sums, where
        the device has them (NVIDIA, compute capability >= 8.0); elsewhere float32
        products stay exact.

    Returns
    -------
    None
        Affects ``matmul``, ``tensordot``, ``vecdot``, ``dot_general``...; other dtypes
        are not affected (float16 products always use float32 sums).

    Raises
    ------
    ValueError
        An unknown precision name.

    Examples
    --------
    >>> import clnp
    >>> clnp.set_matmul_precision("tf32")
    >>> clnp.get_matmul_precision()
    'tf32'
    >>> clnp.set_matmul_precision("highest")
    """
    _precision.set(_check_precision(precision))


def get_matmul_precision() -> str:
    """The current float32 matrix-product precision.

    Returns
    -------
    str
        ``"highest"`` or ``"tf32"``.

    Examples
    --------
    >>> import clnp
    >>> clnp.get_matmul_precision()
    'highest'
    """
    return _precision.get()


@contextlib.contextmanager
def matmul_precision(precision: str) -> Iterator[None]:
    """Context manager: float32 matrix products inside the block use ``precision``.

    Parameters
    ----------
    precision : str
        As for :func:`set_matmul_precision`.

    Returns
    -------
    context manager
        The previous setting is restored on exit.

    Raises
    ------
    ValueError
        An unknown precision name.

    Examples
    --------
    >>> import clnp
    >>> with clnp.matmul_precision("tf32"):
    ...     print(clnp.get_matmul_precision())
    tf32
    >>> clnp.get_matmul_precision()
    'highest'
    """
    token = _precision.set(_check_precision(precision))
    try:
        yield
    finally:
        _precision.reset(token)


_MMA_CAPABLE: dict[int, bool] = {}


def tensor_cores(device: Device) -> bool:
    """Whether ``device`` runs the inline-PTX ``mma.sync`` kernels: NVIDIA's OpenCL with
    compute capability >= 8.0 (queried through cl_nv_device_attribute_query)."""
    r = _MMA_CAPABLE.get(id(device))
    if r is None:
        r = False
        if device.vendor_key == "nvidia" and \
                "cl_nv_device_attribute_query" in device.extensions:
            try:
                r = int(device.cl_device.compute_capability_major_nv) >= 8
            except (AttributeError, cl.Error):
                r = False
        _MMA_CAPABLE[id(device)] = r
    return r


# GPU products with fewer _REF_TILE-square output tiles than compute units are "small": they
# take the configuration of key suffix SMALL (see gemm_config)
SMALL, _REF_TILE = ":small", 128


# the shortest K chunk a GPU split-K part takes: a part's fixed cost (its tile's first loads,
# the partials' store and sum) against the units a longer chunk would leave idle
_GPU_KMIN = 256
_GPU_KMIN_FEW = 32
# split K while a GPU product has fewer tiles than this many per compute unit
_GPU_SPLIT_TILES = 1
# tensor-core products copy an A that is not K-contiguous from this many elements on
_MMA_COPY_A = 1 << 20
# GPU local-memory products with little work per tile (a K chunk shorter than _THIN_K, or a
# side shorter than _THIN_MN: 256x10 logits, their 10x1024 weight gradient, a K=10 data
# gradient) take their configuration's tile with four times the items, each a quarter of
# the outputs: more loads in flight where each item had few to do. H200, the MLP step's
# three such products: 24.2 -> 13.2, 17.3 -> 10.9, 23.4 -> 11.9 us (64x64 tiles, 64 -> 256
# items)
_THIN_K, _THIN_MN = 64, 32


def _thin(cfg: dict[str, Any], device: Device) -> dict[str, Any]:
    """``cfg`` (a "gpu" configuration) with the same tile over twice the items along each
    side, up to 256 items (measured: 64 -> 256) where the device's work-groups and the
    kernel's tile loads allow it; else ``cfg``."""
    tm, tn, lx, ly, v = cfg["tm"], cfg["tn"], cfg["lx"], cfg["ly"], cfg["vec"]
    if tm % 2 or tn % 2 or 4 * lx * ly > min(256, device.max_work_group_size):
        return cfg
    t = dict(cfg, tm=tm // 2, tn=tn // 2, lx=2 * lx, ly=2 * ly, vec=min(v, tm // 2, tn // 2))
    # the kernel's tile loads: every item the same number of elements of each operand
    nt, bk = 4 * lx * ly, cfg["bk"]
    if (ly * tm * bk) % nt or (lx * tn * bk) % nt:
        return cfg
    return t


def config_key(acc: np.dtype, tf32: bool = False) -> str:
    """The name a kernel configuration is tuned and cached under: the computing dtype, or
    ``"tf32"`` for float32 products on tensor cores (float16 runs on tensor cores only).
    bfloat16 products take float16's shapes: the same 16-bit tiles and copies, only the MMA
    instruction's type differs (and Hopper issues both at one rate). GPU configurations for
    small products add the suffix ``":small"``."""
    return "tf32" if tf32 else "float16" if acc == dt.bfloat16 else acc.name


def default_config(device: Device, key: str, kind: str | None = None) -> dict[str, Any]:
    """Untuned kernel shape for ``device`` and configuration key ``key`` (per device kind,
    never per shape, so each dtype compiles once; ``key:small``: GPU tiles of a quarter the
    outputs, for products whose 128-square tiles would be fewer than the compute units)."""
    base, _, small = key.partition(":")
    if base in ("tf32", "float16"):
        f16 = base == "float16"
        if small:
            return dict(kind="mma", bm=64, bn=64, bk=32 if f16 else 16, wm=32, wn=32,
                        stages=4)
        return dict(kind="mma", bm=128, bn=128, bk=32 if f16 else 16, wm=64,
                    wn=64 if f16 else 32, stages=2)
    acc = np.dtype(base)
    kind = kind or ("cpu" if device.is_cpu else "gpu")
    if kind == "cpu":
        vbytes = vector_bytes(device)
        if acc.kind == "c":
            # vectors of (re, im) lanes: 4 rows x 2 vectors = 8 accumulators, 4 B vectors
            # (values and their (-im, re) swaps) and 2 broadcast A parts
            v = max(2, vbytes // (acc.itemsize // 2))
            return dict(kind="cpu", tm=4, tn=v, vec=v, rm=_CPU_RM, bk=_CPU_KB)
        # one native vector per accumulator row part: 6 rows x 2 vectors = 12 accumulators,
        # which with 2 B vectors and a broadcast A value fills the 16 AVX registers. A
        # device preferring 64-byte vectors has AVX-512's 32 registers: 8 rows x 2 vectors
        # (16 accumulators, 32 when the compiler splits them into 32-byte halves), which
        # measured 1.2-1.9x the 6-row tile on M=256 products (the MLP of bench_jit) on the
        # PoCL AVX-512 device
        v = max(1, vbytes // acc.itemsize)
        tm = 8 if vbytes >= 64 else 6
        return dict(kind="cpu", tm=tm, tn=2 * v, vec=v, rm=_CPU_RM, bk=_CPU_KB)
    # 16x16 items, each 8x8 (4-byte reals), 4x4 (8 bytes) or 2x2 (complex128) outputs read
    # from local memory as 16-byte vectors; shrunk until two K steps fit in local memory
    l = 16 if device.max_work_group_size >= 256 else 8
    t = {4: 8, 8: 4, 16: 2}[acc.itemsize]
    v = 1 if acc.kind == "c" else 16 // acc.itemsize
    bk = 8 if t == 8 else 16
    while t > 1 and 2 * bk * (l * t + v) * 2 * acc.itemsize > device.local_mem:
        t //= 2
    if small:
        # a quarter of the items per group, each with at most 4x4 outputs: 32x32 tiles of 64
        # items for float32 (on the H100, the jitted MLP step of bench_jit.py ran in 500 us
        # with them against 587 us with 64x64 tiles; its 256x1024x1024 products 3x faster)
        l, bk, t = max(1, l // 2), 16, min(t, 4)
    return dict(kind="gpu", tm=t, tn=t, vec=min(v, t), lx=l, ly=l, bk=bk)


def gemm_config(device: Device, acc: np.dtype, tf32: bool = False,
                small: bool = False) -> dict[str, Any] | None:
    """Kernel shape for ``device`` and computing dtype ``acc``: the autotuner's result when
    one is cached (or built in) for this device, else :func:`default_config`. ``small``: the
    shape for products whose tiles would be fewer than the compute units (None while a test
    or the tuner imposes a shape for ``acc`` but none for small products)."""
    key = config_key(acc, tf32)
    if small:
        if _autotune.imposed(device, key) and not _autotune.imposed(device, key + SMALL):
            return None
        key += SMALL
    if _FORCE_KIND is None or key.startswith(("tf32", "float16")):
        tuned = _autotune.lookup(device, key)
        if tuned is not None:
            return tuned
    return default_config(device, key, _FORCE_KIND)


def _merge(sizes: Sequence[int], strides: Sequence[Sequence[int]]) -> tuple[int, list[int]] | None:
    """One (size, per-operand strides) for a group of dims, or None when they do not merge.
    An empty group is a single unit dim."""
    cshape, cstr = collapse(list(sizes), [list(s) for s in strides])
    if not cshape:
        return 1, [0] * len(strides)
    if len(cshape) == 1:
        return cshape[0], [s[0] for s in cstr]
    return None


def _canonical(x: Array, first: Sequence[int], second: Sequence[int],
               third: Sequence[int], copy: bool = True
               ) -> tuple[Array, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """A dense copy of ``x`` with dims ordered (first, second, third); returns the copy and
    the new positions of the three groups. ``copy=False``: an array of the copy's layout on
    ``x``'s buffer, for planning only (its elements are not the copy's)."""
    perm = tuple(first) + tuple(second) + tuple(third)
    shape = tuple(x._shape[p] for p in perm)
    v = Array(x._buf, x._offset, shape, tuple(x._strides[p] for p in perm), x._dtype,
              x._device)
    c = contiguous_copy(v) if copy else Array(x._buf, 0, shape, c_strides(shape), x._dtype,
                                               x._device)
    a, b = len(first), len(first) + len(second)
    return c, tuple(range(a)), tuple(range(a, b)), tuple(range(b, len(perm)))


def _convert(x: Array, dtype: np.dtype) -> Array:
    """``x`` converted to ``dtype``; broadcast (stride-0) dims stay broadcast views."""
    if x.dtype == dtype:
        return x
    if 0 not in x._strides:
        return convert_element_type(x, dtype=dtype)
    small = Array(x._buf, x._offset, tuple(1 if s == 0 else n for n, s in
                                           zip(x._shape, x._strides)), x._strides, x.dtype,
                  x.device)
    c = convert_element_type(small, dtype=dtype)
    return Array(c._buf, c._offset, x._shape, tuple(0 if s == 0 else cs for s, cs in
                                                    zip(x._strides, c._strides)), dtype,
                 x.device)


@def_impl("dot_general")
def dot_general(lhs: Array, rhs: Array, *, dimension_numbers: Any,
                preferred_element_type: np.dtype | None = None) -> Array:
    """Batched tensor contraction (see the module docstring)."""
    # the launch of a product depends only on the operands' geometry: repeated products of
    # one geometry skip the planning (tens of microseconds of Python, as long as a small
    # GPU product takes) and launch a prepared kernel object
    key = None
    if _FORCE_KIND is None:
        key = (lhs._shape, lhs._strides, lhs._offset, lhs._dtype, rhs._shape, rhs._strides,
               rhs._offset, rhs._dtype, dimension_numbers, preferred_element_type,
               _precision.get(), _autotune.epoch, host_blas.FORCE, host_blas.MIN_WORK,
               lhs._device)
        try:
            plans = _local.plans
        except AttributeError:
            plans = _local.plans = {}
        try:
            plan = plans.get(key)
        except TypeError:            # unhashable dimension numbers (lists): plan each time
            plan = key = None
        if plan is not None:
            return plan(lhs, rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = tuple(lc), tuple(rc), tuple(lb), tuple(rb)
    device = lhs.device
    out_dtype = preferred_element_type or dt.promote(lhs.dtype, rhs.dtype)
    # operands are converted to the kernel's dtype first: one GEMM program per computing
    # dtype instead of one per dtype pair (see clnp._kernels.gemm.GEMM_DTYPES)
    promoted = dt.promote(lhs.dtype, rhs.dtype)
    g = _gemm_kernels.gemm_dtype(promoted)
    if promoted in dt.HALF and tensor_cores(device):
        g = promoted                 # tensor cores multiply 16-bit floats, with float32 sums
    tf32 = g == dt.float32 and _precision.get() == "tf32" and tensor_cores(device)
    if lhs.dtype != g or rhs.dtype != g:
        key = None                   # the plan would start from the converted copies
    lhs, rhs = _convert(lhs, g), _convert(rhs, g)
    lf = tuple(i for i in range(lhs.ndim) if i not in lc and i not in lb)
    rf = tuple(i for i in range(rhs.ndim) if i not in rc and i not in rb)
    if (tf32 or g in dt.HALF and tensor_cores(device)) and lc and \
            lhs._strides[lc[-1]] != 1 and lhs.size >= _MMA_COPY_A:
        # the tensor-core kernel stages A as [m][k] rows, copied 16 bytes at a time only
        # from a K-contiguous A; any other A is loaded element by element (H200, float16
        # 4096^3: a.T @ b 6.5 ms, a @ b 0.79 ms), so a large A is copied K-contiguous first
        key = None
        lhs, lb, lf, lc = _canonical(lhs, lb, lf, lc)
    out_shape = tuple(lhs.shape[i] for i in lb + lf) + tuple(rhs.shape[i] for i in rf)
    if math.prod(out_shape) == 0 or math.prod(lhs.shape[i] for i in lc) == 0:
        out = Array.empty(out_shape, out_dtype, device)
        if out.size:
            copy_into(out, 0, out_dtype)
        return out
    ostr = c_strides(out_shape)
    plan = _plan(lhs, rhs, ostr, lc, rc, lb, rb, lf, rf)
    if plan is None:
        # no stride describes some merged group: copy an operand to (batch, free,
        # contracted) or (batch, contracted, free) order, materialising broadcast batch
        # dims; the left one alone, the right one alone, then both (the attention output's
        # transposed view in a weight gradient needs only its own copy)
        key = None
        for copy_l, copy_r in ((True, False), (False, True), (True, True)):
            # planned on the copies' layouts first (nothing is copied until one plans)
            a = _canonical(lhs, lb, lf, lc, copy=False) if copy_l else (lhs, lb, lf, lc)
            b = _canonical(rhs, rb, rc, rf, copy=False) if copy_r else (rhs, rb, rc, rf)
            if _plan(a[0], b[0], ostr, a[3], b[2], a[1], b[1], a[2], b[3]) is not None:
                break
        if copy_l:
            lhs, lb, lf, lc = _canonical(lhs, lb, lf, lc)
        if copy_r:
            rhs, rb, rc, rf = _canonical(rhs, rb, rc, rf)
        plan = _plan(lhs, rhs, ostr, lc, rc, lb, rb, lf, rf)
        assert plan is not None
    launch_plan = _run(lhs, rhs, out_shape, out_dtype, tf32, *plan)
    if key is not None:
        if len(plans) >= _MAX_PLANS:
            plans.clear()
        plans[key] = launch_plan
    return launch_plan(lhs, rhs)


def _plan(lhs: Array, rhs: Array, ostr: Sequence[int], lc, rc, lb, rb, lf, rf):
    """((M, [sam, scm]), (N, [sbn, scn]), (K, [sak, sbk]), batch sizes, batch strides of
    lhs/rhs/out) of one GEMM launch, or None when some group of dims does not merge."""
    nb, nm = len(lb), len(lf)
    ob, om, on = list(ostr[:nb]), list(ostr[nb:nb + nm]), list(ostr[nb + nm:])
    ls, rs = lhs._strides, rhs._strides
    k = _merge([lhs.shape[i] for i in lc], [[ls[i] for i in lc], [rs[i] for i in rc]])
    n = _merge([rhs.shape[i] for i in rf], [[rs[i] for i in rf], on])
    if k is None or n is None:
        return None
    bsizes = [lhs.shape[i] for i in lb]
    msizes = [lhs.shape[i] for i in lf]
    # a right operand shared by the whole batch: the batch folds into M (one tall GEMM)
    if nb and all(rs[i] == 0 or rhs.shape[i] == 1 for i in rb):
        m = _merge(bsizes + msizes, [[ls[i] for i in lb + lf], ob + om])
        if m is not None:
            return m, n, k, [], [[], [], []]
    m = _merge(msizes, [[ls[i] for i in lf], om])
    if m is None:
        return None
    cb, cstr = collapse(bsizes, [[ls[i] for i in lb], [rs[i] for i in rb], ob])
    if len(cb) > 2:
        return None
    return m, n, k, cb, cstr


class _Launch:
    """One product's launch for a given operand geometry: a kernel object of its own with
    every scalar argument set (only the three buffers change between calls), the launch
    sizes and the epilogue (the sum of split-K partials, a final conversion)."""
    __slots__ = ("kern", "gsize", "lsize", "dst_shape", "dst_dtype", "swap", "parts",
                 "out_shape", "out_dtype", "sacc", "rdt", "spec", "args", "launch")

    def __call__(self, lhs: Array, rhs: Array) -> Array:
        device = lhs._device
        r = self.partials(lhs, rhs)
        if self.parts > 1:
            # the sum shares the program ``clnp.sum`` uses for this dtype
            r = reduce(r, op="sum", axes=(0,), acc_dtype=self.sacc, out_dtype=self.rdt)
            r = Array(r._buf, r._offset, self.out_shape, c_strides(self.out_shape), self.rdt,
                      device)
        return r if r.dtype == self.out_dtype else convert_element_type(r,
                                                                        dtype=self.out_dtype)

    def partials(self, lhs: Array, rhs: Array) -> Array:
        """The kernel's launch alone: the product, or with split K its partial products
        ``[parts, batch, M, N]`` (before their sum and any conversion)."""
        device = lhs._device
        dst = Array.empty(self.dst_shape, self.dst_dtype, device)
        a, b = (rhs, lhs) if self.swap else (lhs, rhs)
        k = self.kern
        with k.lock:            # arguments and launch as one (launch.Kernel)
            k.set_arg(7, a._buf)
            k.set_arg(13, b._buf)
            k.set_arg(19, dst._buf)
            if _hooks.current() is not None:
                _hooks.note_preset_launch(k, self.gsize, self.lsize,
                                          {7: a._buf, 13: b._buf, 19: dst._buf})
            self.launch(device.queue)
        return dst


def _tiles(cfg: dict[str, Any], gm: int, gn: int) -> tuple[int, int]:
    """Work-group tiles along M and N of a "gpu" or "mma" configuration."""
    if cfg["kind"] == "mma":
        return -(-gm // cfg["bm"]), -(-gn // cfg["bn"])
    return -(-gm // (cfg["ly"] * cfg["tm"])), -(-gn // (cfg["lx"] * cfg["tn"]))


def _run(lhs: Array, rhs: Array, out_shape: tuple[int, ...], out_dtype: np.dtype, tf32: bool,
         m, n, k, bsizes, bstr) -> _Launch | host_blas.HostProduct:
    """Plan the launch of one product (see :class:`_Launch`), or its run in the host's BLAS
    on a device whose memory the host shares (``host_blas``)."""
    device = lhs.device
    (M, (sam, scm)), (N, (sbn, scn)), (K, (sak, sbk)) = m, n, k
    pad = 2 - len(bsizes)
    bsizes = [1] * pad + list(bsizes)
    (sab0, sab1), (sbb0, sbb1), (scb0, scb1) = [[0] * pad + list(s) for s in bstr]
    nb = bsizes[0] * bsizes[1]
    if max(M, N, K, nb) > _I32:
        raise ValueError(f"dot_general: dimension too large for the GEMM kernel "
                         f"(M={M}, N={N}, K={K}, batch={nb})")
    if _FORCE_KIND is None and not tf32:
        host = host_blas.plan(device, lhs.dtype, out_dtype, out_shape, m, n, k, bsizes,
                              ((sab0, sab1), (sbb0, sbb1), (scb0, scb1)),
                              (lhs._offset, rhs._offset))
        if host is not None:
            return host
    acc = lhs.dtype
    cfg = gemm_config(device, acc, tf32)
    cpu, mma = cfg["kind"] == "cpu", cfg["kind"] == "mma"
    # C^T = B^T A^T: on CPUs the unit stride belongs along N, where the kernel reads vectors.
    # Also where B is large and A small (a convolution's weights times its columns): the
    # kernel copies B in panels of tn columns, which over a B larger than the caches costs a
    # miss per row of each panel, while it reads A's rows in place; swapped, the large
    # operand is read along its unit stride and the small one becomes the panels
    isz = lhs.dtype.itemsize
    swap = cpu and sbn != 1 and sam == 1 and not (sak == 1 and sbk == 1)
    swap = swap or (cpu and sbn == 1 and sbk != 1 and M < N and
                    M * K * isz <= _CPU_SMALL_A and K * N * isz >= _CPU_LARGE_B)
    gm, gn = (N, M) if swap else (M, N)          # the GEMM the kernel computes
    cu = device.compute_units
    rm = 1
    if cpu:
        # fewer rows per item when the rows would otherwise leave cores idle
        rm, tiles_n = cfg["rm"], -(-gn // cfg["tn"])
        while rm > 1 and nb * -(-gm // (rm * cfg["tm"])) * tiles_n < 8 * device.compute_units:
            rm //= 2
        tiles_m = -(-gm // (rm * cfg["tm"]))
        kmin = 1024
    else:
        if nb * -(-gm // _REF_TILE) * -(-gn // _REF_TILE) < cu:
            # a small product, where big tiles would leave compute units idle: its own
            # configuration (smaller tiles, tuned separately), before splitting K
            small = gemm_config(device, acc, tf32, small=True)
            if small is not None and small["kind"] == cfg["kind"]:
                cfg = small
        tiles_m, tiles_n = _tiles(cfg, gm, gn)
        # a handful of tiles (a product with a short side: 256x10) leaves most units idle
        # and every load's latency exposed: shorter K chunks, more work-groups in flight
        kmin = _GPU_KMIN if 4 * nb * tiles_m * tiles_n >= cu else _GPU_KMIN_FEW
    # split-K: too few output tiles to occupy the device and a long K. GPU work-groups are
    # big (one or two fill a compute unit): below one per unit the partials' extra pass is
    # cheaper than idle units, above it is not. A configuration may cap the parts ("split")
    target, want = (4 * cu, 4 * cu) if cpu else (_GPU_SPLIT_TILES * cu, 2 * _GPU_SPLIT_TILES * cu)
    tiles = nb * tiles_m * tiles_n
    parts, kchunk = 1, K
    if tiles < target and K >= 2 * kmin:
        parts = max(1, min(-(-want // tiles), K // kmin, cfg.get("split", K)))
        step = cfg.get("bk", 1)
        kchunk = -(-(-(-K // parts)) // step) * step
        parts = -(-K // kchunk)
    if cfg["kind"] == "gpu" and (kchunk < _THIN_K or min(gm, gn) < _THIN_MN):
        cfg = _thin(cfg, device)
    # tensor cores sum in float32: partial sums stay float32, a whole product is stored as
    # float16 or float32 directly (so is the sum of the partials)
    pacc = dt.float32 if mma else acc
    direct = mma and out_dtype in (dt.float16, dt.bfloat16, dt.float32)
    if parts > 1:
        # partials [parts, batch, M, N]
        dst_shape, cdt = (parts, nb, M, N), pacc
        scb0, scb1, scm, scn = bsizes[1] * M * N, M * N, N, 1
    else:
        dst_shape, cdt = out_shape, (out_dtype if direct else pacc)
    dst = Array(None, 0, dst_shape, c_strides(dst_shape), cdt, device)
    index = "int" if _span_ok([lhs, rhs, dst], dst.size) else "long"
    geo = {q: v for q, v in cfg.items() if q not in ("kind", "split")}
    if mma:
        spec = _mma_kernels.MmaSpec(acc, cdt, index=index, **geo)
        kern = device.kernel(spec, lambda: _mma_kernels.render_mma(spec))
    else:
        spec = _gemm_kernels.GemmSpec(acc, cfg["kind"], index=index, **geo)
        kern = device.kernel(spec, lambda: _gemm_kernels.render_gemm(spec))
    A = [None, lhs._offset, sam, sak, sab0, sab1]
    B = [None, rhs._offset, sbk, sbn, sbb0, sbb1]
    Cs = [None, 0, scm, scn, scb0, scb1, nb * M * N]
    if swap:
        A, B = ([None, rhs._offset, sbn, sbk, sbb0, sbb1],
                [None, lhs._offset, sak, sam, sab0, sab1])
        Cs[2:4] = [scn, scm]
    args = [gm, gn, K, kchunk, bsizes[1], parts, rm] + A + B + Cs
    plan = _Launch()
    # a kernel object of the plan's own: its arguments stay set between calls
    plan.kern = _launch.Kernel(kern.program, kern.function_name)
    it = np.int32 if index == "int" else np.int64
    for i, v in enumerate(args):
        if v is not None:
            plan.kern.set_fixed_arg(i, (np.int32 if i < 7 else it)(v))
    if cpu:
        plan.gsize, plan.lsize = (tiles_n, tiles_m, nb * parts), (1, 1, 1)
    elif mma:
        plan.gsize = (tiles_n * spec.threads, tiles_m, nb * parts)
        plan.lsize = (spec.threads, 1, 1)
    else:
        plan.gsize = (tiles_n * spec.lx, tiles_m * spec.ly, nb * parts)
        plan.lsize = (spec.lx, spec.ly, 1)
    plan.dst_shape, plan.dst_dtype, plan.swap, plan.parts = dst_shape, cdt, swap, parts
    plan.spec, plan.args = spec, args
    plan.launch = Launch(plan.kern, plan.gsize, plan.lsize)
    plan.out_shape, plan.out_dtype = out_shape, out_dtype
    # the sum of the partials: 64-bit for integers, else in the partials' dtype, stored
    # straight as the result's dtype when tensor cores computed them
    plan.sacc = dt.int64 if acc.kind == "i" else pacc
    plan.rdt = out_dtype if direct else plan.sacc
    return plan


def epilogue_plan(lhs: Array, rhs: Array, dimension_numbers: Any,
                  operand_strides: Sequence[Sequence[int]]
                  ) -> tuple[_Launch, list | None] | None:
    """For ``clnp_grad.jit``'s GEMM epilogues: the launch ``dot_general(lhs, rhs,
    dimension_numbers)`` makes (same kernel configuration, tiles and split as the eager
    product), and the strides over (m, n, b0, b1) of the epilogue's array operands, given
    their strides over the product's (C-ordered) output. With split K (``launch.parts > 1``)
    the strides are None: the caller applies the epilogue where it sums the partials
    (``_Launch.partials``, laid out as the C-ordered output per part). None where the
    product does not take an epilogue: operands not already of one real float computing
    dtype, tensor cores, a product in the host's BLAS (``host_blas``), an empty product,
    operands that need copies, or an operand whose strides do not follow the kernel's
    merged dims."""
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = tuple(lc), tuple(rc), tuple(lb), tuple(rb)
    g = lhs.dtype
    if g != rhs.dtype or g not in (dt.float32, dt.float64) or _gemm_kernels.gemm_dtype(g) != g:
        return None
    if g == dt.float32 and _precision.get() == "tf32" and tensor_cores(lhs.device):
        return None
    lf = tuple(i for i in range(lhs.ndim) if i not in lc and i not in lb)
    rf = tuple(i for i in range(rhs.ndim) if i not in rc and i not in rb)
    out_shape = tuple(lhs.shape[i] for i in lb + lf) + tuple(rhs.shape[i] for i in rf)
    if math.prod(out_shape) == 0 or math.prod(lhs.shape[i] for i in lc) == 0:
        return None
    ostr = c_strides(out_shape)
    plan = _plan(lhs, rhs, ostr, lc, rc, lb, rb, lf, rf)
    if plan is None:
        return None
    launch = _run(lhs, rhs, out_shape, g, False, *plan)
    if isinstance(launch, host_blas.HostProduct) or \
            not isinstance(launch.spec, _gemm_kernels.GemmSpec):
        return None
    if launch.parts > 1:
        return launch, None
    m, n, k, bsizes, _ = plan
    ep = []
    for st in operand_strides:
        q = _plan(lhs, rhs, tuple(st), lc, rc, lb, rb, lf, rf)
        if q is None or q[0][0] != m[0] or q[1][0] != n[0] or q[2][0] != k[0] or \
                list(q[3]) != list(bsizes):
            return None
        sm, sn = q[0][1][1], q[1][1][1]
        cb = [0] * (2 - len(q[3])) + list(q[4][2])
        ep.append([sn, sm] + cb if launch.swap else [sm, sn] + cb)
    return launch, ep
