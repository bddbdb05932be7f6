"""Layer 4, the routines: the device implementations behind the heavier primitives: products
(``dot_general``, with the GEMM autotuner), dense linear algebra, FFTs, sorting, searching
and scans, scatter, random bits, the ufunc methods without a primitive of their own, and
user-written kernels (``ElementwiseKernel``, ``RawKernel``).

They register eager implementations of primitives and import the core, the kernel generators
and the runtime only (docs/architecture.md).
"""
