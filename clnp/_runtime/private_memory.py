"""How much stack a user kernel's work-group takes on PoCL's CPU devices, and how much there is.

PoCL runs a work-group as one function on a worker thread. Every private array that survives
its optimiser becomes a context array with one copy per work-item of the group (PoCL 3.1,
``WorkitemLoops``: "allocas (private arrays) should be privatized always"), allocated in that
function's stack frame, so a work-group of ``L`` items needs about ``L * private_bytes`` of
the worker's stack. The workers are created with the process's default thread stack (glibc:
the ``ulimit -s`` of the process's start, 2 MiB when unlimited); a frame larger than it kills
the process with a segmentation fault. PoCL reports no private size of its own
(``CL_KERNEL_PRIVATE_MEM_SIZE`` is a constant 1024 in 3.1), so the bytes are measured here on
the kernel's LLVM IR, compiled at -O3 (PoCL's level before it builds the work-item loops) by
the clang of the LLVM that PoCL itself loaded.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import resource
import shutil
from typing import Sequence

from .opencl import cl

__all__ = ["is_pocl_cpu", "worker_stack_bytes", "private_bytes", "STACK_RESERVE"]

# Stack a PoCL worker uses besides the private arrays' context arrays: the scheduler's
# frames, the spills of the work-group function and the values that live across barriers.
# Measured on PoCL 3.1 (8 MiB stack, 2 KiB of arrays per work-item): the largest group that
# ran left 4-6 KiB unused without a barrier (4093 items), 53-55 KiB with one (4069 items,
# about 13 more bytes per work-item). Refusing above ``stack - STACK_RESERVE`` covers both.
STACK_RESERVE = 64 * 1024

_GLIBC_UNLIMITED_DEFAULT = 2 * 1024 * 1024   # glibc's thread stack when ulimit -s is unlimited


def is_pocl_cpu(device) -> bool:
    """Whether ``device`` (a clnp Device) is a CPU device of PoCL (asked of its platform)."""
    return device.is_cpu and "portable computing language" in device.platform_name.lower()


@functools.cache
def worker_stack_bytes() -> int:
    """The stack size a thread created with default attributes gets in this process (what
    PoCL's pthread workers get): glibc's ``pthread_getattr_default_np``, else ``ulimit -s``."""
    try:
        libc = ctypes.CDLL(None)
        attr = ctypes.create_string_buffer(256)      # larger than any pthread_attr_t
        if libc.pthread_getattr_default_np(attr) == 0:
            size = ctypes.c_size_t()
            ok = libc.pthread_attr_getstacksize(attr, ctypes.byref(size)) == 0
            libc.pthread_attr_destroy(attr)
            if ok and size.value:
                return int(size.value)
    except (OSError, AttributeError):
        pass
    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    return _GLIBC_UNLIMITED_DEFAULT if soft == resource.RLIM_INFINITY else int(soft)


_CLANG: list[str | None] = []


def _clang() -> str | None:
    """The clang of the LLVM PoCL loaded (libLLVM-N / libclang-cpp.so.N in this process), or
    None: another LLVM's optimiser could keep a different set of private arrays. The answer
    is kept once PoCL's library is loaded (before, there is nothing to find yet)."""
    if _CLANG:
        return _CLANG[0]
    majors, pocl = set(), False
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                pocl = pocl or "libpocl" in line
                m = re.search(r"lib(?:LLVM-|clang-cpp\.so\.)(\d+)", line)
                if m:
                    majors.add(m.group(1))
    except OSError:
        _CLANG.append(None)
        return None
    found = None
    for major in sorted(majors, reverse=True):
        for cand in (f"/usr/lib/llvm-{major}/bin/clang", shutil.which(f"clang-{major}")):
            if found is None and cand and os.access(cand, os.X_OK):
                found = cand
    if found or pocl:
        _CLANG.append(found)
    return found


_SCALAR = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "i128": 16, "half": 2,
           "bfloat": 2, "float": 4, "double": 8, "ptr": 8, "fp128": 16}


class _Types:
    """Sizes and ABI alignments of LLVM IR types on the 64-bit hosts PoCL's CPU device runs
    on (x86-64 and AArch64 agree on every type OpenCL C can declare)."""

    def __init__(self, ir: str):
        self.named = dict(re.findall(r"^(%[\w.$\"]+) = type (.+)$", ir, re.M))

    def size_align(self, t: str) -> tuple[int, int]:
        t = t.strip()
        if t in _SCALAR:
            s = _SCALAR[t]
            return s, min(s, 16)
        if t.endswith("*") or t.startswith("ptr"):
            return 8, 8
        if t in self.named:
            return self.size_align(self.named[t])
        m = re.fullmatch(r"\[(\d+) x (.+)\]", t)
        if m:
            s, a = self.size_align(m.group(2))
            return int(m.group(1)) * s, a
        m = re.fullmatch(r"<(\d+) x (.+)>", t)
        if m:
            s = int(m.group(1)) * self.size_align(m.group(2))[0]
            p2 = 1 << max(s - 1, 0).bit_length()
            return p2, p2
        packed = t.startswith("<{")
        m = re.fullmatch(r"<?\{(.*)\}>?", t)
        if m:
            off, align = 0, 1
            for f in _split_fields(m.group(1)):
                s, a = self.size_align(f)
                if not packed:
                    off = -(-off // a) * a
                    align = max(align, a)
                off += s
            return -(-off // align) * align, align
        raise ValueError(f"unknown LLVM type {t!r}")


def _split_fields(body: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in body:
        if ch in "[<{(":
            depth += 1
        elif ch in "]>})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [f.strip() for f in out]


def _functions(ir: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(
        r"^define [^@]*@([\w.$]+)\(.*?\{\n(.*?)^\}", ir, re.M | re.S)}


def _ir_private_bytes(ir: str, name: str) -> int:
    """Bytes per work-item of the allocas in kernel ``name`` and the functions it calls (each
    padded to its alignment, as PoCL pads the elements of a context array)."""
    funcs, types = _functions(ir), _Types(ir)
    seen, todo, total = set(), [name], 0
    while todo:
        f = todo.pop()
        if f in seen or f not in funcs:
            continue
        seen.add(f)
        body = funcs[f]
        for m in re.finditer(r"= alloca (.+?)(?:, align (\d+))?(?:, !.*)?$", body, re.M):
            t = re.split(r", (?:i\d+ \d+|addrspace)", m.group(1))[0]
            s, a = types.size_align(t)
            a = max(a, int(m.group(2) or 1))
            total += -(-s // a) * a
        todo += re.findall(r"call [^@]*@([\w.$]+)\(", body)
    return total


@functools.lru_cache(maxsize=256)
def _private_bytes_cached(clang: str, code: str, name: str, options: tuple[str, ...],
                          exts: tuple[str, ...]) -> int | None:
    # the options the compiler understands the same way as PoCL: macros, include paths,
    # the language version, the -cl- flags; others are PoCL's or the driver's
    keep = [o for o in options if o.startswith(("-D", "-I", "-cl-", "-U"))]
    std = [] if any(o.startswith("-cl-std=") for o in keep) else ["-cl-std=CL3.0"]
    # no -target: PoCL's CPU device compiles for the host, as clang does by default
    cmd = [clang, "-x", "cl", *std, "-Xclang", "-finclude-default-header",
           "-O3", "-fno-builtin", "-Dinline=",
           "-cl-ext=-all," + ",".join("+" + e for e in exts),
           *keep, "-S", "-emit-llvm", "-o", "-", "-"]
    import subprocess       # on this rare path only: 7 ms of import clnp
    try:
        r = subprocess.run(cmd, input=code, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    try:
        return _ir_private_bytes(r.stdout, name)
    except ValueError:
        return None


def private_bytes(device, code: str, name: str, options: Sequence[str]) -> int | None:
    """Private bytes per work-item that PoCL keeps in a context array for kernel ``name`` of
    ``code`` on ``device``; None where they cannot be measured (no clang of PoCL's LLVM, or
    it rejects the source PoCL built)."""
    clang = _clang()
    if clang is None:
        return None
    return _private_bytes_cached(clang, code, name, tuple(options), _features(device))


_FEATURES: dict[int, tuple[str, ...]] = {}


def _features(device) -> tuple[str, ...]:
    """The device's extensions and OpenCL C features, for clang's -cl-ext (as PoCL passes)."""
    got = _FEATURES.get(device.index)
    if got is None:
        exts = set(device.extensions)
        try:
            exts |= {f.name for f in
                     device.cl_device.get_info(cl.device_info.OPENCL_C_FEATURES)}
        except (cl.Error, AttributeError):
            pass
        got = _FEATURES[device.index] = tuple(sorted(exts))
    return got
