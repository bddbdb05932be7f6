"""Eager implementations of ``sort``, ``argsort``, ``unique`` and ``isin``: launch plans around
the radix-sort program of :mod:`clnp._kernels.sort`.

Every computation happens on the device. The host reads back two kinds of small results: the
per-work-group minimum and maximum of the keys (radix passes then cover only the digits of
``key - min`` that can differ: int64 data of small magnitude needs a pass or two, not eight),
and the number of unique values (a data-dependent output shape).
"""
from __future__ import annotations

from typing import Any

from .._runtime.deferred import deferred_import
from .._core import dtypes as dt
from .._core.array import Array, c_strides
from .._core.eager import concatenate, contiguous_copy, copy_into, ew_apply, local_size
from .._core.prims import def_impl
from .._runtime.device import Device, launch

# run at first use, not at import clnp (clnp._runtime.deferred)
_sort_kernels = deferred_import("clnp._kernels.sort")

_U32_MAX = 2 ** 32 - 1


def _spec(device: Device, key: str, index: str) -> _sort_kernels.SortSpec:
    if device.is_cpu or device.max_work_group_size < 128:
        return _sort_kernels.SortSpec(key, index, 1, local_size(device), 1)
    S = 1 << (min(1024, device.max_work_group_size).bit_length() - 1)
    isize = 4 if index == "uint" else 8
    chunk = max(1, min(8, device.local_mem // (2 * S * isize)))
    return _sort_kernels.SortSpec(key, index, 128, local_size(device), S, chunk)


def _kernel(spec: _sort_kernels.SortSpec, device: Device, name: str):
    def make():
        src, args = _sort_kernels.render_sort(spec)
        return src, name, args[name]
    return device.kernel((spec, name), make)


def _buf(a: Array | None, stand_in: Array) -> Any:
    """The buffer of ``a``, or of ``stand_in`` where the kernel ignores the argument."""
    return (a if a is not None else stand_in)._buf


# GPU tiles: ``group`` keys per round, this many rounds at least
_GPU_ROUNDS = 8


def _tile(spec: _sort_kernels.SortSpec, n: int) -> int:
    """Keys per tile: enough to amortise the per-tile counters, few enough tiles that their
    counters scan quickly in one work-group."""
    if spec.group == 1:
        return max(2048, -(-n // 1024))
    return spec.group * max(_GPU_ROUNDS, -(-n // (spec.group * 16384)))


def _grid(n: int, L: int) -> tuple[int]:
    return (-(-n // L) * L,)


class _Sorter:
    """A stable sort of the flat contiguous ``x`` as ``nrows`` rows of ``rowlen`` elements.

    After :meth:`run`, ``perm`` holds the input position of each sorted element (None: the
    identity, nothing needed to move) and ``keys`` the sorted keys of the last component."""

    def __init__(self, x: Array, rowlen: int, descending: bool):
        self.x, self.device = x, x.device
        self.n = n = x.size
        self.rowlen = rowlen
        name = "bool" if x.dtype == dt.bool_ else x.dtype.name
        self.kind, kbits = _sort_kernels.KINDS[name]
        rowbits = (n // rowlen - 1).bit_length() if n else 0
        complex_ = x.dtype.kind == "c"
        if not complex_ and kbits + rowbits <= 32:
            key = "uint"
            comps = [(_sort_kernels.COMP_MAIN, kbits, kbits if rowbits else -1)]
        elif not complex_ and kbits + rowbits <= 64:
            key = "ulong"
            comps = [(_sort_kernels.COMP_MAIN, kbits, kbits if rowbits else -1)]
        else:
            key = "ulong"
            comps = [(_sort_kernels.COMP_MAIN, kbits, -1)]
            if x.dtype == dt.complex128:
                comps.append((_sort_kernels.COMP_REAL, 64, -1))
            if complex_:
                comps.append((_sort_kernels.COMP_CLASS, 2, 2 if rowbits else -1))
            elif rowbits:
                comps.append((_sort_kernels.COMP_ROW, 0, 0))
        self.comps, self.kbits = comps, kbits
        self.descending = descending
        self.spec = _spec(self.device, key, "uint" if n < _U32_MAX else "ulong")
        self.kdt = dt.uint32 if key == "uint" else dt.uint64
        self.idt = dt.uint32 if self.spec.index == "uint" else dt.uint64
        self.perm: Array | None = None
        self.keys: Array | None = None

    def run(self) -> "_Sorter":
        n, spec, device = self.n, self.spec, self.device
        if n == 0:
            return self
        kbuf = [Array.empty((n,), self.kdt, device), None]
        pbuf: list[Array | None] = [None, None]
        G = spec.group
        R = 1 << spec.bits
        tile = _tile(spec, n)
        ntiles = -(-n // tile)
        hist = Array.empty((R * ntiles + 1,), self.idt, device)
        hist_k = _kernel(spec, device, "clnp_sort_hist")
        scan_k = _kernel(spec, device, "clnp_sort_scan")
        scat_k = _kernel(spec, device, "clnp_sort_scatter")
        cur = 0
        for comp, cbits, row_shift in self.comps:
            desc = (1 << cbits) - 1 if self.descending and comp != _sort_kernels.COMP_ROW else 0
            kmin, span = self._keys(kbuf[cur], comp, desc, row_shift)
            # digits of ``key - kmin`` above the span's top bit are zero for every key
            shifts = range(0, span.bit_length(), spec.bits)
            for s in shifts:
                if kbuf[1 - cur] is None:
                    kbuf[1 - cur] = Array.empty((n,), self.kdt, device)
                if pbuf[1 - cur] is None:
                    pbuf[1 - cur] = Array.empty((n,), self.idt, device)
                kin, kout = kbuf[cur], kbuf[1 - cur]
                pin, pout = self.perm, pbuf[1 - cur]
                launch(device, hist_k, (ntiles * G,), (G,), n, tile, ntiles, s, kmin, kin._buf,
                       hist._buf)
                launch(device, scan_k, (spec.scan_group,), (spec.scan_group,), R * ntiles,
                       hist._buf)
                launch(device, scat_k, (ntiles * G,), (G,), n, tile, ntiles, s, kmin, kin._buf,
                       _buf(pin, kin), int(pin is not None), hist._buf, kout._buf,
                       pout._buf)
                cur = 1 - cur
                self.perm = pout
                pbuf[1 - cur] = pin
            self.keys = kbuf[cur]
        return self

    def _keys(self, out: Array, comp: int, desc: int, row_shift: int) -> tuple[int, int]:
        """Write the keys of component ``comp``; return their minimum and their span
        (maximum - minimum)."""
        n, spec, device, x = self.n, self.spec, self.device, self.x
        L = spec.lsize
        groups = min(-(-n // L), 4 * device.compute_units * (1 if device.is_cpu else 8))
        part = Array.empty((2 * groups,), self.kdt, device)
        k = _kernel(spec, device, "clnp_sort_keys")
        perm = self.perm
        launch(device, k, (groups * L,), (L,), n, x._buf, x._offset, _buf(perm, out),
               int(perm is not None), self.kind, comp, desc, self.rowlen, row_shift,
               out._buf, part._buf)
        p = part.to_numpy()
        kmin, kmax = int(p[0::2].min()), int(p[1::2].max())
        return kmin, kmax - kmin

    # ------------------------------------------------------------------ results
    def take(self, src: Array, idx: Array | None, count: int) -> Array:
        """``src[idx[:count]]`` (``src`` flat contiguous; ``idx`` None: the identity)."""
        out = Array.empty((count,), src.dtype, self.device)
        if count == 0:
            return out
        if idx is None:
            view = Array(src._buf, src._offset, (count,), (1,), src.dtype, src.device)
            return contiguous_copy(view)
        k = _kernel(self.spec, self.device, "clnp_sort_take")
        L = self.spec.lsize
        launch(self.device, k, _grid(count, L), (L,), count, src.dtype.itemsize, src._buf,
               src._offset, idx._buf, out._buf)
        return out

    def row_positions(self) -> Array:
        out = Array.empty((self.n,), dt.int64, self.device)
        k = _kernel(self.spec, self.device, "clnp_sort_rowpos")
        L = self.spec.lsize
        perm = self.perm
        launch(self.device, k, _grid(self.n, L), (L,), self.n, _buf(perm, out),
               int(perm is not None), self.rowlen, out._buf)
        return out

    def run_flags(self, equal_nan: bool) -> Array:
        """uint8 flags: sorted element i starts a run of equal values (NaNs distinct unless
        ``equal_nan``); only for an ascending sort of one row."""
        n, device, x = self.n, self.device, self.x
        f = Array.empty((n,), dt.bool_, device)
        if x.dtype.kind == "c":
            # complex keys span components; compare the sorted values themselves
            s = self.take(x, self.perm, n)
            a = Array(s._buf, 1, (n - 1,), (1,), s.dtype, device)
            b = Array(s._buf, 0, (n - 1,), (1,), s.dtype, device)
            tail = Array(f._buf, 1, (n - 1,), (1,), dt.bool_, device)
            copy_into(Array(f._buf, 0, (1,), (1,), dt.bool_, device), True)
            if n > 1:
                ne = ew_apply("not_equal", [a, b], s.dtype, dt.bool_, [s.dtype, s.dtype])
                if equal_nan:
                    na = ew_apply("isnan", [a], s.dtype, dt.bool_, [s.dtype])
                    nb = ew_apply("isnan", [b], s.dtype, dt.bool_, [s.dtype])
                    both = ew_apply("logical_and", [na, nb], dt.bool_, dt.bool_,
                                    [dt.bool_, dt.bool_])
                    keep = ew_apply("logical_not", [both], dt.bool_, dt.bool_, [dt.bool_])
                    ne = ew_apply("logical_and", [ne, keep], dt.bool_, dt.bool_,
                                  [dt.bool_, dt.bool_])
                copy_into(tail, ne)
            return f
        nan_distinct = dt.kind(x.dtype) == "f" and not equal_nan
        k = _kernel(self.spec, device, "clnp_sort_flags")
        L = self.spec.lsize
        launch(device, k, _grid(n, L), (L,), n, self.keys._buf, (1 << self.kbits) - 1,
               int(nan_distinct), f._buf)
        return f

    def runs(self, f: Array, want_inverse: bool, known_count: bool = True
             ) -> tuple[int, Array, Array | None]:
        """Number the runs flagged by ``f``: ``(count, starts, inverse)``; ``inverse`` (int64,
        flat) maps each input position to its run. ``known_count=False`` skips reading the
        count back (``starts`` is then allocated for ``n`` runs and count is -1)."""
        n, spec, device = self.n, self.spec, self.device
        G = spec.group
        tile = _tile(spec, n)
        ntiles = -(-n // tile)
        sums = Array.empty((ntiles + 1,), self.idt, device)
        launch(device, _kernel(spec, device, "clnp_sort_count"), (ntiles * G,), (G,), n, tile,
               f._buf, sums._buf)
        launch(device, _kernel(spec, device, "clnp_sort_scan"), (spec.scan_group,),
               (spec.scan_group,), ntiles, sums._buf)
        count = -1
        if known_count:
            count = int(Array(sums._buf, ntiles, (1,), (1,), self.idt, device).to_numpy()[0])
        starts = Array.empty((count if known_count else n,), self.idt, device)
        inv = Array.empty((n,), dt.int64, device) if want_inverse else None
        perm = self.perm
        launch(device, _kernel(spec, device, "clnp_sort_compact"), (ntiles * G,), (G,), n,
               tile, f._buf, sums._buf, _buf(perm, f), int(perm is not None), starts._buf,
               _buf(inv, starts), int(inv is not None))
        return count, starts, inv


def _rows_last(x: Array, axis: int) -> tuple[Array, tuple[int, ...]]:
    """A flat contiguous copy (or view) of ``x`` with ``axis`` moved last, and its shape."""
    perm = tuple(i for i in range(x.ndim) if i != axis) + (axis,)
    shape = tuple(x.shape[i] for i in perm)
    if axis == x.ndim - 1 and x.is_contiguous:
        flat = x
    else:
        moved = Array(x._buf, x._offset, shape, tuple(x._strides[i] for i in perm), x.dtype,
                      x.device)
        flat = contiguous_copy(moved)
    return Array(flat._buf, flat._offset, (x.size,), (1,), x.dtype, x.device), shape


def _rows_back(flat: Array, moved_shape: tuple[int, ...], axis: int, ndim: int) -> Array:
    """Undo :func:`_rows_last` on a result: a C-contiguous array of the original shape."""
    if axis == ndim - 1:
        return Array(flat._buf, 0, moved_shape, c_strides(moved_shape), flat.dtype,
                     flat.device)
    shape = moved_shape[:axis] + (moved_shape[-1],) + moved_shape[axis:-1]
    out = Array.empty(shape, flat.dtype, flat.device)
    # the moved layout as a strided view of ``out``
    st = c_strides(shape)
    view = Array(out._buf, 0, moved_shape,
                 tuple(st[i] for i in range(ndim) if i != axis) + (st[axis],), out.dtype,
                 out.device)
    src = Array(flat._buf, 0, moved_shape, c_strides(moved_shape), flat.dtype, flat.device)
    ew_apply("copy", [src], out.dtype, out.dtype, [out.dtype], out=view)
    return out


def _sorted_rows(x: Array, axis: int, descending: bool) -> tuple[_Sorter, tuple[int, ...]]:
    flat, moved = _rows_last(x, axis)
    return _Sorter(flat, x.shape[axis], descending).run(), moved


@def_impl("sort")
def sort(x: Array, *, axis: int, descending: bool, stable: bool = True) -> Array:
    """Sorted copy of ``x`` along ``axis`` (always stable; NaNs last, or first when
    ``descending``)."""
    if x.size == 0:
        return Array.empty(x.shape, x.dtype, x.device)
    s, moved = _sorted_rows(x, axis, descending)
    out = s.take(s.x, s.perm, s.n)
    return _rows_back(out, moved, axis, x.ndim)


@def_impl("argsort")
def argsort(x: Array, *, axis: int, descending: bool, stable: bool = True) -> Array:
    """int64 indices that sort ``x`` along ``axis`` (stable)."""
    if x.size == 0:
        return Array.empty(x.shape, dt.int64, x.device)
    s, moved = _sorted_rows(x, axis, descending)
    return _rows_back(s.row_positions(), moved, axis, x.ndim)


@def_impl("unique", multiple_results=True)
def unique(x: Array, *, return_index: bool, return_inverse: bool, return_counts: bool,
           equal_nan: bool) -> tuple[Array, Any, Any, Any]:
    """Sorted unique values of flattened ``x`` with (when asked) the first index of each,
    the inverse indices (shaped like ``x``) and the counts, all int64; ``None`` for what was
    not asked. Reads the number of unique values back to the host."""
    device = x.device
    n = x.size
    if n == 0:
        e = Array.empty((0,), dt.int64, device)
        return (Array.empty((0,), x.dtype, device), e if return_index else None,
                Array.empty(x.shape, dt.int64, device) if return_inverse else None,
                e if return_counts else None)
    flat = _flat_view(x)
    s = _Sorter(flat, n, False).run()
    f = s.run_flags(equal_nan)
    k, starts, inv = s.runs(f, return_inverse)
    firsts = Array.empty((k,), s.idt, device)
    index = Array.empty((k,), dt.int64, device)
    counts = Array.empty((k,), dt.int64, device)
    L = s.spec.lsize
    launch(device, _kernel(s.spec, device, "clnp_sort_uniq"), _grid(k, L), (L,), k, n,
           starts._buf, _buf(s.perm, starts), int(s.perm is not None), firsts._buf,
           index._buf, counts._buf)
    values = s.take(flat, firsts, k)
    if inv is not None:
        inv = Array(inv._buf, 0, x.shape, c_strides(x.shape), dt.int64, device)
    return (values, index if return_index else None, inv,
            counts if return_counts else None)


def _flat_view(x: Array) -> Array:
    """``x`` as a 1-D array (a view when contiguous, else a C-order copy)."""
    if not x.is_contiguous:
        x = contiguous_copy(x)
    return Array(x._buf, x._offset, (x.size,), (1,), x.dtype, x.device)


@def_impl("isin")
def isin(x1: Array, x2: Array, *, invert: bool) -> Array:
    """Whether each element of ``x1`` equals some element of ``x2`` (same dtypes; NaN equals
    nothing), shaped like ``x1``."""
    device = x1.device
    n1, m = x1.size, x2.size
    out = Array.empty(x1.shape, dt.bool_, device)
    if n1 == 0:
        return out
    if m == 0:
        copy_into(out, bool(invert))
        return out
    both = concatenate(_flat_view(x2), _flat_view(x1), axis=0, dtype=x1.dtype)
    s = _Sorter(both, m + n1, False).run()
    f = s.run_flags(equal_nan=False)
    _, starts, inv = s.runs(f, True, known_count=False)
    L = s.spec.lsize
    launch(device, _kernel(s.spec, device, "clnp_sort_isin"), _grid(n1, L), (L,), n1, m,
           inv._buf, starts._buf, _buf(s.perm, starts), int(s.perm is not None),
           int(bool(invert)), out._buf)
    return out
