"""Layer 3, the core: the array (``array``) and its operator surface (``operators``), the
Array API's dtype rules and promotion, NumPy's scalar types, the primitives and their eager
implementations (elementwise, reductions, views, gathers), the one-op fast path, launch
capture, donation, transfers between devices, and the hand-in points through which the
layers above attach what the core calls (``namespace``, ``attached``).

It imports the runtime and the kernel generators only (docs/architecture.md).
"""
