"""Layer 6, NumPy beyond the standard: NumPy's functions by topic (creation, manipulation,
reductions, counting, statistics, einsum, ...), NumPy's dispatch protocols and signatures,
ndarray methods, host functions and I/O, histogram bins.

Composed from the Array API layer and the namespace; no kernels of its own
(docs/architecture.md).
"""
