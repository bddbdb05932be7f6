"""clnp: NumPy-compatible arrays on any OpenCL device, implementing the Python Array API
standard (2025.12).

    import clnp as np
    x = np.linspace(0, 1, 1_000_000, dtype=np.float32)
    y = np.sum(np.sin(x) ** 2)
"""
from __future__ import annotations

import math as _math
import sys as _sys

# Submodules imported on first use: clnp.random brings numpy.random (10-15 ms of the import;
# issue #27: ``import clnp`` within 2x ``import numpy``)
_LAZY_SUBMODULES = ("random",)

# First: the layers below reach the namespace through this handle, never by importing it
# (clnp/_core/namespace.py); its names fill in as this module runs, as an import's would.
from ._core import namespace as _namespace
_namespace.bind(_sys.modules[__name__])

from ._core import dtypes as _dtypes
from ._core.array import Array
from ._runtime.device import (Device, DeviceMemoryError, KernelBuildError, UnsupportedDtypeError,
                              default_device, devices, set_default_device, synchronize)
from ._runtime.memory import MemoryInfo, memory_info, release_memory
from ._core import eager as _eager  # noqa: F401  (registers the eager primitive implementations)
from ._routines import search as _eager_search  # noqa: F401  (argmax/argmin, scans, nonzero, searchsorted)
from ._routines import sort as _eager_sort  # noqa: F401  (sort/argsort/unique/isin)
from ._routines import scatter as _scatter  # noqa: F401  (scatter_add)
from ._routines import dot_general as _eager_linalg  # noqa: F401  (dot_general)
from ._routines.dot_general import get_matmul_precision, matmul_precision, set_matmul_precision
from ._routines.autotune import autotune
from ._routines import linalg as _eager_linalg_ext  # noqa: F401  (linalg: cholesky, lu, qr, eigh, svd, eig)
from ._routines import fft as _eager_fft  # noqa: F401  (fft)
from ._routines import random_bits as _eager_random  # noqa: F401  (rng_bits)
from ._array_api.creation import *  # noqa: F401,F403
from ._array_api.creation import __all__ as _c_all
from ._array_api.data_types import *  # noqa: F401,F403
from ._array_api.data_types import __all__ as _d_all
from ._array_api.elementwise import *  # noqa: F401,F403
from ._array_api.elementwise import __all__ as _e_all
from ._array_api.indexing import *  # noqa: F401,F403
from ._array_api.indexing import __all__ as _i_all
from ._array_api.info import __array_namespace_info__
from ._array_api.manipulation import *  # noqa: F401,F403
from ._array_api.manipulation import __all__ as _m_all
from ._array_api.manipulation import matrix_transpose
from ._array_api.statistical import *  # noqa: F401,F403
from ._array_api.statistical import __all__ as _s_all
from ._array_api.searching import *  # noqa: F401,F403
from ._array_api.searching import __all__ as _search_all
from ._array_api.cumulative import *  # noqa: F401,F403
from ._array_api.cumulative import __all__ as _cum_all
from ._array_api.utility import *  # noqa: F401,F403
from ._array_api.utility import __all__ as _util_all
from ._array_api.sorting import *  # noqa: F401,F403
from ._array_api.sorting import __all__ as _sort_all
from ._array_api.sets import *  # noqa: F401,F403
from ._array_api.sets import __all__ as _set_all
from ._array_api.linear_algebra import *  # noqa: F401,F403
from ._array_api.linear_algebra import __all__ as _la_all
from ._array_api import elementwise as _elementwise_functions
from ._array_api import indexing as _indexing, inplace as _inplace  # noqa: F401  (used by the operator mixin)
from ._numpy import ndarray_methods as _ndarray_methods  # noqa: F401  (flat, put, choose, resize: used by the mixin)
from ._numpy.ndarray_methods import flatiter
from ._numpy import protocols as _protocols  # noqa: F401  (attaches __array_ufunc__/__array_function__ to Array)
from . import fft  # noqa: F401  (clnp.fft: the Array API fft extension)
from . import linalg  # noqa: F401  (clnp.linalg: the Array API linalg extension)
from . import emath  # noqa: F401  (clnp.emath: NumPy's numpy.emath, complex results for real input)
# dir() of clnp and of its public submodules lists __all__, not their imports (clnp/_namespace.py)
from ._namespace import hide_imports as _hide_imports
_dir_of_imported = _hide_imports(__name__)


def __dir__() -> list[str]:
    return sorted({*_dir_of_imported(), *_LAZY_SUBMODULES})   # clnp.random before its import


for _public in (fft, linalg):
    _public.__dir__ = _hide_imports(_public.__name__)  # type: ignore[method-assign]
del _public
from ._numpy import (comparisons as _np_comparisons, counting as _np_counting,
                     creation as _np_creation, diagonals as _np_diagonals, einsum as _np_einsum,
                     elementwise as _np_elementwise, errstate as _np_errstate,
                     interpolation as _np_interpolation, manipulation as _np_manipulation,
                     queries as _np_queries, reductions as _np_reductions,
                     rounding as _np_rounding, statistics as _np_statistics)
from ._routines.custom_kernels import ElementwiseKernel, RawKernel
from ._array_api.ufunc import ufunc
# NumPy names beyond the standard, one module per topic; a name defined above keeps that
# definition
_np_topics = (_np_creation, _np_queries, _np_manipulation, _np_reductions, _np_counting,
              _np_diagonals, _np_comparisons, _np_rounding, _np_elementwise, _np_interpolation,
              _np_statistics, _np_einsum, _np_errstate)
_np_all = [_n for _m in _np_topics for _n in _m.__all__ if _n not in globals()]
globals().update({_n: getattr(_m, _n) for _m in _np_topics for _n in _m.__all__
                  if _n in _np_all})
from ._numpy import (grids as _np_grids, index_helpers as _np_indexing, math as _np_math,
                     misc as _np_misc, polynomial as _np_poly, selection as _np_select,
                     sets as _np_sets, shape as _np_shape, windows as _np_windows)
# more NumPy names (issue #12 item 3), one module per area
_np_more = (_np_grids, _np_indexing, _np_math, _np_misc, _np_poly, _np_select, _np_sets,
            _np_shape, _np_windows)
_np_more_all = [_n for _m in _np_more for _n in _m.__all__ if _n not in globals()]
globals().update({_n: getattr(_m, _n) for _m in _np_more for _n in _m.__all__
                  if _n in _np_more_all})
from . import lib  # noqa: F401  (clnp.lib.stride_tricks)
from ._numpy.signatures import install as _install_numpy_signatures
from ._array_api.ufunc import install_composites as _install_composites
_install_composites(globals())           # NumPy-layer elementwise functions as ufuncs
# NumPy's positional parameters and extra keywords; array-likes for the standard's functions
_install_numpy_signatures(globals(), tuple(_m_all + _s_all + _search_all + _cum_all +
                                           _util_all + _sort_all + _set_all + _la_all +
                                           _i_all + ["astype"]))

# Pickles made before the package layout name the array's unpickler by its old module
# (clnp._array._unpickle): that name stays importable.
from ._core import array as _core_array  # noqa: E402
_sys.modules.setdefault(__name__ + "._array", _core_array)

__version__ = "0.1.0"
__array_api_version__ = "2025.12"

from ._core.array import ndarray  # noqa: E402  (NumPy's name; its constructor is NumPy's)
# The dtype names are NumPy's scalar types, as in CuPy (``clnp.float32 is numpy.float32``):
# ``clnp.float32(3)`` makes a NumPy scalar and ``x.dtype == clnp.float32`` holds; arrays'
# ``.dtype`` is a ``numpy.dtype`` object (clnp._scalar_types).
from ._core.scalar_types import *  # noqa: F401,F403,E402
from ._core.scalar_types import __all__ as _scalar_all  # noqa: E402
bool = bool_  # noqa: A001,F405 - the standard's name
from ._numpy.host_io import *  # noqa: F401,F403,E402  (printing, files, host iteration)
from ._numpy.host_io import __all__ as _host_all  # noqa: E402
from ._numpy.host_functions import *  # noqa: F401,F403,E402  (frompyfunc, vectorize: Python on the host)
from ._numpy.host_functions import __all__ as _host_funcs_all  # noqa: E402

e = _math.e
inf = _math.inf
nan = _math.nan
pi = _math.pi
newaxis = None


def asnumpy(x: object) -> object:
    """Copy a clnp array to a NumPy array (CuPy's spelling).

    Parameters
    ----------
    x : object
        A clnp array; anything else goes through ``numpy.asarray``.

    Returns
    -------
    numpy.ndarray
        The host copy (the host waits for pending work on the array).

    Examples
    --------
    >>> import clnp
    >>> clnp.asnumpy(clnp.arange(3))
    array([0, 1, 2])
    """
    import numpy
    if isinstance(x, Array):
        return x.to_numpy()
    return numpy.asarray(x)


def free_pooled_memory(device: Device | None = None) -> None:
    """Return the pooled memory of ``device`` to the driver (older name of :func:`release_memory`).

    Parameters
    ----------
    device : Device, optional
        The device (every device when None).

    Returns
    -------
    None
        Arrays in use are untouched.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.zeros(4096)
    >>> del x                                  # its block goes back to the pool
    >>> before = clnp.memory_info().pooled
    >>> clnp.free_pooled_memory()
    >>> clnp.memory_info().pooled <= before
    True
    """
    release_memory(device)


__all__ = sorted(set(_c_all + _d_all + _e_all + _i_all + _m_all + _s_all + _search_all +
                     _cum_all + _util_all + _sort_all + _set_all + _la_all + _np_all +
                     _np_more_all + [
    "Array", "ndarray", "Device", "devices", "default_device", "set_default_device",
    "synchronize", "asnumpy", "memory_info", "MemoryInfo", "release_memory",
    "free_pooled_memory", "matrix_transpose", "bool_",
    "__array_namespace_info__", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "float32", "float64", "complex64", "complex128", "e", "inf",
    "nan", "pi", "newaxis", "DeviceMemoryError", "KernelBuildError", "UnsupportedDtypeError",
    "set_matmul_precision", "get_matmul_precision", "matmul_precision", "autotune",
    "ElementwiseKernel", "RawKernel", "ufunc", "flatiter"] + _scalar_all + _host_all +
    _host_funcs_all))

# An error raised inside a public function names the function the user called, whichever
# inner function raised it (issue #13): "zeros: shape must be ..." rather than "full: ...".
from ._core.checks import name_errors_in as _name_errors_in  # noqa: E402
_name_errors_in((_sys.modules[__name__], ""), (linalg, "linalg."), (fft, "fft."),
                (emath, "emath."))

# NumPy types no OpenCL device can hold: a clear error instead of a bare AttributeError
_NO_DEVICE_TYPES = {
    "datetime64": "datetime", "timedelta64": "datetime", "busdaycalendar": "datetime",
    "str_": "string", "bytes_": "string", "character": "string", "flexible": "string",
    "void": "structured", "record": "structured", "recarray": "structured",
    "object_": "object", "longdouble": "long double", "clongdouble": "long double",
    "float128": "long double", "complex256": "long double",
}


def __getattr__(name: str) -> object:
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")   # and binds clnp.<name>
    kind = _NO_DEVICE_TYPES.get(name)
    if kind is None:
        raise AttributeError(f"module 'clnp' has no attribute {name!r}")
    import numpy
    from ._core.scalar_types import unsupported_dtype_message
    probe = {"datetime": "datetime64[s]", "string": "U1", "structured": "V4",
             "object": "O", "long double": "float128"}[kind]
    try:
        msg = unsupported_dtype_message(numpy.dtype(probe), f"clnp.{name}")
    except TypeError:  # no float128 on this platform
        msg = None
    raise AttributeError(f"module 'clnp' has no attribute {name!r}: "
                         f"{msg or 'OpenCL devices have no ' + kind + ' type'}")
