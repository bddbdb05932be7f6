"""One-op elementwise kernels of a family share one program (clnp._codegen.elementwise.family):
identical source whichever member asks, every member compiles, and a sibling's first use
builds no new program."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
from clnp._codegen import elementwise as E

_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32",
           "float64", "complex64", "complex128"]


def _spec(op, dtype, nin, width, contiguous):
    d = np.dtype(dtype)
    out = np.dtype(bool) if clnp._ops.OPS[op].out == "bool" else d
    ins = E.Instr(op, tuple(range(nin)), (d,) * nin, d, out)
    return E.EwSpec(tuple(E.Operand(d, scalar=(k == 1)) for k in range(nin)), (ins,),
                    ((nin, out),), 0 if contiguous else 2, contiguous, width, "int", 4)


@pytest.mark.parametrize("fam", E.FAMILIES, ids=lambda f: f[0])
@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("layout", ["vector", "strided"])
def test_every_member_renders_the_same_program(fam, dtype, layout):
    nin = clnp._ops.OPS[fam[0]].nin
    width, contiguous = (8, True) if layout == "vector" else (1, False)
    seen = set()
    for op in fam:
        try:
            E.template(op, np.dtype(dtype))
        except TypeError:
            continue
        spec = _spec(op, dtype, nin, width, contiguous)
        members = E.family(spec)
        assert spec in members
        src = E.render_elementwise(spec)[0]
        assert src.count("__kernel") == len(members)
        assert len({m.name for m in members}) == len(members)
        for m in members:           # the same program whichever member asks
            assert E.family(m) == members
            source, name, _ = E.render_elementwise(m)
            assert source == src and f"__kernel void {name}(" in src
        if len(members) > 1:
            seen.add(src)
    if layout == "strided" and dtype == ("bool" if fam[0] == "logical_and" else "float32"):
        assert seen, f"{fam} forms no family for {dtype}"


def test_fused_kernels_have_no_family():
    d = np.dtype("float32")
    body = (E.Instr("add", (0, 1), (d, d), d, d), E.Instr("multiply", (2, 0), (d, d), d, d))
    spec = E.EwSpec((E.Operand(d), E.Operand(d)), body, ((3, d),), 0, True, 8, "int", 4)
    assert E.family(spec) == (spec,)


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64"])
def test_siblings_share_a_program_and_compute_right(device, rng, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    a_np = (rng.standard_normal((37, 5)) * 10).astype(dtype) + 1
    b_np = (rng.standard_normal((37, 5)) * 10).astype(dtype) + 100   # no zero divisors
    a = clnp.asarray(a_np, device=device)
    b = clnp.asarray(b_np, device=device)
    checks = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply)]
    if dtype != "int64":          # int / int is float64: another signature, another family
        checks.append(("divide", np.divide))
    first = getattr(clnp, checks[0][0])(a, b)
    np.testing.assert_array_equal(np.asarray(first), checks[0][1](a_np, b_np))
    n = len(device._programs)
    for name, ref in checks[1:]:
        got = np.asarray(getattr(clnp, name)(a, b))
        np.testing.assert_allclose(got, ref(a_np, b_np), rtol=1e-6 if dtype == "float32" else 0)
    assert len(device._programs) == n, "a family member built a program of its own"
    # each of these groups shares one program (maximum/minimum have no vector path, so on
    # CPUs they are not in the vectorised program of add...; they share their own)
    for group in ([("maximum", np.maximum), ("minimum", np.minimum)],
                  [("less", np.less), ("greater_equal", np.greater_equal),
                   ("equal", np.equal), ("not_equal", np.not_equal)]):
        n = len(device._programs)
        for name, ref in group:
            got = np.asarray(getattr(clnp, name)(a, b))
            np.testing.assert_array_equal(got, ref(a_np, b_np))
        assert len(device._programs) <= n + 1
