"""Runs the two-device tests with two PoCL devices, and the MPI checks under ``mpiexec -n 2``,
in subprocesses, so that the default test command exercises them."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

import clnp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    # Open MPI's mpiexec refuses to start as root without these (containers, CI machines);
    # MPICH ignores them
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.update(extra)
    return env


def _same_platform_count():
    d0 = clnp.default_device()
    return sum(d.platform_name == d0.platform_name for d in clnp.devices())


def _two_pocl_devices_env():
    """The environment giving a child process two PoCL devices, or a skip."""
    env = _env(POCL_DEVICES="pthread pthread")
    probe = subprocess.run([sys.executable, "-c", "import clnp; d0 = clnp.default_device(); "
                            "print(sum(d.platform_name == d0.platform_name "
                            "for d in clnp.devices()))"],
                           env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    if probe.returncode != 0 or probe.stdout.strip() != "2":
        pytest.skip(f"POCL_DEVICES='pthread pthread' does not give two devices here "
                    f"({probe.stdout.strip() or probe.stderr.strip()[-200:]})")
    return env


def test_two_device_tests_in_a_subprocess():
    if _same_platform_count() >= 2:
        pytest.skip("two devices here: test_pmap.py ran in this process")
    env = _two_pocl_devices_env()
    _pytest_passes(env, "test_pmap.py", "test_parallel_transfer.py", "test_pmap_transforms.py")


def test_two_device_tests_through_pinned_staging():
    """CLNP_PINNED=1: every host-staged transfer (reads, uploads, copies between devices, the
    collectives' chunks) goes through pinned blocks, as on GPUs, here on two PoCL devices."""
    env = _two_pocl_devices_env()
    env["CLNP_PINNED"] = "1"
    _pytest_passes(env, "test_pmap.py", "test_collectives_vmap.py")


def test_two_devices_sharing_one_context():
    """CLNP_SHARED_CONTEXT=1: the two devices' buffers move with clEnqueueCopyBuffer, and the
    reductions exchange on the devices at every size."""
    if _same_platform_count() >= 2 and os.environ.get("CLNP_SHARED_CONTEXT"):
        pytest.skip("this process already has two devices in one context")
    env = _two_pocl_devices_env()
    env["CLNP_SHARED_CONTEXT"] = "1"
    _pytest_passes(env, "test_pmap.py", "test_parallel_transfer.py", "-k",
                   "matches_numpy or value_and_grad or gradients_through or chunks or "
                   "reads_writes")


def _pytest_passes(env: dict, *args: str) -> None:
    """pytest on the test files ``args`` (names in this folder; other arguments as given) in
    a child with ``env``: it exits 0 and passed tests without skipping any."""
    files = [os.path.join(HERE, a) if a.endswith(".py") else a for a in args]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        *files], env=env, capture_output=True, text=True, timeout=1200,
                       cwd=ROOT)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert " passed" in out and "skipped" not in out, out[-2000:]


def _mpi_or_skip():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed (pip install \"clnp[mpi]\")")
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")   # the mpich wheel's
    exe = beside if os.access(beside, os.X_OK) else shutil.which("mpiexec")
    if exe is None:
        pytest.skip("mpiexec is neither beside this Python nor on PATH")
    return exe


def test_mpi_two_processes():
    exe = _mpi_or_skip()
    r = subprocess.run([exe, "-n", "2", sys.executable, os.path.join(HERE, "mpi_checks.py")],
                       env=_env(), capture_output=True, text=True, timeout=900, cwd=ROOT)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "rank 0 OK" in out and "rank 1 OK" in out, out[-3000:]


def test_mpi_two_processes_two_devices_each():
    """Two processes of two devices each, with pinned staging forced (CLNP_PINNED=1): the
    exchanged chunks are sent from and received into pinned rows (test_mpi_two_processes
    keeps the pageable path)."""
    exe = _mpi_or_skip()
    env = _two_pocl_devices_env()
    env["CLNP_PINNED"] = "1"
    r = subprocess.run([exe, "-n", "2", sys.executable, os.path.join(HERE, "mpi_checks.py"),
                        "local2"], env=env, capture_output=True, text=True, timeout=900,
                       cwd=ROOT)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "rank 0 OK" in out and "rank 1 OK" in out, out[-3000:]


def test_mpi_dead_rank_is_named_not_waited_for():
    exe = _mpi_or_skip()
    t0 = time.monotonic()
    r = subprocess.run([exe, "-n", "2", sys.executable, os.path.join(HERE, "mpi_checks.py"),
                        "dead"], env=_env(), capture_output=True, text=True, timeout=300,
                       cwd=ROOT)
    took = time.monotonic() - t0
    out = r.stdout + r.stderr
    assert r.returncode != 0, out[-3000:]
    assert "CollectiveTimeoutError: psum: rank 0 got no data from rank(s) [1]" in out, \
        out[-3000:]
    assert took < 50, f"the job took {took:.0f} s: rank 1's 60 s sleep was waited for"


def test_example_under_mpiexec():
    exe = _mpi_or_skip()
    r = subprocess.run([exe, "-n", "2", sys.executable,
                        os.path.join(ROOT, "examples", "data_parallel_mlp.py"), "--steps", "3",
                        "--batch", "32"], env=_env(), capture_output=True, text=True,
                       timeout=600, cwd=ROOT)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    # one replica per device of the job: 2 processes of 1 device each, or of 2 where the
    # environment gives every process two (POCL_DEVICES="pthread pthread")
    total = set(re.findall(r"process \d/2: \d+ local of (\d+) devices", out))
    assert len(total) == 1, out[-3000:]
    n = total.pop()
    assert out.count(f"final parameters identical on all {n} replicas: True") == 2, out[-3000:]


def test_one_process_agreement_and_broadcast():
    """Without mpiexec the world is this process: its own answer and value come back, and a
    root that is not a rank is refused naming the caller."""
    from clnp_nn.parallel import mpi
    assert mpi.all_agree(True, "t") is True and mpi.all_agree(False, "t") is False
    assert mpi.broadcast_object([1, "a"], 0, "t") == [1, "a"]
    assert mpi.all_gather_object({"gpu": "u"}, "t") == [{"gpu": "u"}]
    with pytest.raises(ValueError, match=r"setup: root 1 is not a rank of the 1 processes"):
        mpi.broadcast_object(None, 1, "setup")
