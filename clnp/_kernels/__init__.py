"""Kernel generators: pure functions from frozen specs to OpenCL C source. Nothing here launches."""
