"""Layer 5, the Python Array API standard, chapter by chapter (as array-api-strict lays it
out): creation, data types, elementwise functions (ufunc objects, as NumPy's), indexing and
in-place operators, manipulation, searching, sorting, statistics, sets, utility, linear
algebra, cumulative functions and ``__array_namespace_info__``.

Written against primitives and the core; a function later in this layer is reached through
the handed-in namespace where a direct import would close a cycle (docs/architecture.md).
"""
