"""``python -m clnp.prebuild``: programs built ahead of time into a read-only store, found by
a later process whose own caches are empty (issue #27, the compile wall)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import clnp
from clnp import prebuild as P
from clnp._runtime import program_cache

from conftest import env_importing_this_checkout

# sizes the catalog does not use, on both sides of PoCL's 2^16-work-item "small grid"
_CHILD = r"""
import json
import clnp
from clnp._runtime import device as _runtime, program_cache as _program_cache
out = []
for n in (777, 300_010):
    x = clnp.linspace(0, 1, n, dtype=clnp.float32)
    out.append(clnp.sin(x)[::97].tolist())
    out.append(clnp.arange(n, dtype=clnp.int64)[-3:].tolist())
    out.append(clnp.full(n, 2.5, dtype=clnp.float32)[:2].tolist())
print(json.dumps({"out": out, "build": _runtime.build_stats, "disk": _program_cache.stats}))
"""


def _child(device, tmp_path, store: str, tag: str) -> dict:
    """_CHILD in a fresh interpreter with empty clnp and PoCL caches and ``store`` as the
    prebuilt store ("" : off)."""
    env = env_importing_this_checkout(
        CLNP_DEVICE=device.key, CLNP_CACHE_DIR=str(tmp_path / f"clnp-{tag}"),
        POCL_CACHE_DIR=str(tmp_path / f"pocl-{tag}"), CLNP_PREBUILT_DIR=store,
        CLNP_CACHE_FILL="0")
    env.pop("CLNP_DISK_CACHE", None)
    r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def creation_store(tmp_path_factory):
    """The catalog's creation and unary-math groups prebuilt for the default device (the
    ``device`` fixture runs each test on every device; the store is built per device)."""
    stores = {}

    def get(device):
        if device.key not in stores:
            d = tmp_path_factory.mktemp("prebuilt")
            report = P.prebuild(device.key, jobs=2, groups=["creation", "unary_math"],
                                directory=d, quiet=True)
            stores[device.key] = (d, report)
        return stores[device.key]
    return get


def test_store_serves_a_fresh_process_with_empty_caches(device, tmp_path, creation_store):
    store, report = creation_store(device)
    assert report.programs > 0 and report.bytes > 0 and report.directory == store
    entries = sorted(store.glob("*.bin"))
    assert len(entries) == report.programs
    assert all(program_cache.read(p) is not None for p in entries)   # the cache's format
    cold = _child(device, tmp_path, "", "cold")
    pre = _child(device, tmp_path, str(store), "pre")
    assert cold["build"]["built"] > 0 and cold["disk"]["prebuilt"] == 0
    assert pre["build"]["built"] == 0, "a program was compiled although the store holds it"
    assert pre["build"]["loaded"] == cold["build"]["built"] == pre["disk"]["prebuilt"]
    # the same kernels: bit-for-bit the same values
    assert pre["out"] == cold["out"]
    # the store is only read: nothing written to it, and nothing copied to the user's cache
    assert sorted(store.glob("*.bin")) == entries
    assert not list((tmp_path / "clnp-pre").glob("programs/*.bin"))


def test_damaged_entry_is_built_from_source(device, tmp_path, creation_store):
    store, _ = creation_store(device)
    copy = tmp_path / "store"
    copy.mkdir()
    for p in store.glob("*.bin"):
        data = p.read_bytes()
        (copy / p.name).write_bytes(data[:len(data) // 2])     # every entry truncated
    r = _child(device, tmp_path, str(copy), "damaged")
    assert r["build"]["built"] > 0 and r["disk"]["prebuilt"] == 0 and r["disk"]["bad"] > 0


def test_store_location_and_switches(monkeypatch, tmp_path):
    monkeypatch.delenv("CLNP_PREBUILT_DIR", raising=False)
    monkeypatch.delenv("CLNP_DISK_CACHE", raising=False)
    assert program_cache.prebuilt_dir() == Path(sys.prefix, "share", "clnp", "prebuilt")
    monkeypatch.setenv("CLNP_PREBUILT_DIR", str(tmp_path))
    assert program_cache.prebuilt_dir() == tmp_path
    monkeypatch.setenv("CLNP_DISK_CACHE", "0")
    assert program_cache.prebuilt_dir() is None
    monkeypatch.setenv("CLNP_DISK_CACHE", "auto")
    monkeypatch.setenv("CLNP_PREBUILT_DIR", "")
    assert program_cache.prebuilt_dir() is None
    with pytest.raises(ValueError, match=r"clnp\.prebuild: the prebuilt store is off"):
        P.prebuild(groups=["creation"])


def test_unknown_group_is_named():
    with pytest.raises(ValueError, match=r"unknown groups \['sine'\].*'creation'"):
        P.prebuild(groups=["sine"], directory="/nonexistent/never-written")
    with pytest.raises(ValueError, match=r"clnp\.prebuild: jobs must be at least 1; got 0"):
        P.prebuild(jobs=0, directory="/nonexistent/never-written")
    assert not os.path.exists("/nonexistent/never-written")


def test_catalog_runs_on_numpy_too():
    """Every catalog group is ordinary array code: it runs unchanged on NumPy, so what it
    prebuilds is what NumPy programs call (and the catalog cannot rot into clnp-only API)."""
    class NumpyWithDevice:          # the one clnp-only name the catalog uses
        def __getattr__(self, name):
            if name == "default_device":
                return lambda: type("D", (), {"supports": lambda self, d: True})()
            return getattr(np, name)
    fns = dict(P.CATALOG)
    for group, dtype in P._tasks(None, has_fp64=True):       # the tasks prebuild runs
        fns[group](NumpyWithDevice(), np.dtype(dtype), P._SMALL)


def test_a_complete_store_is_not_built_again(tmp_path, monkeypatch):
    """A full build stamps the store (device, driver, this clnp's generators); a second call
    returns at once, --force builds again. The catalog is stubbed to one tiny group: what is
    tested is the stamp, not the catalog."""
    monkeypatch.setattr(P, "CATALOG", (("creation", P.CATALOG[0][1]),))
    monkeypatch.setattr(P, "_DTYPES", ("float32",))
    monkeypatch.setattr(P, "_build", lambda dev, tasks, jobs, d, quiet, verbose: P.PrebuildReport(
        len(tasks), 0, 0.0, d, dev.key))
    first = P.prebuild(directory=tmp_path, quiet=True)
    assert first.programs == 1 and list(tmp_path.glob(".complete-*"))
    again = P.prebuild(directory=tmp_path, quiet=True)
    assert again.programs == 0 and again.seconds == 0.0
    assert P.prebuild(directory=tmp_path, quiet=True, force=True).programs == 1
    # a partial build (some groups) neither needs nor writes the stamp
    for f in tmp_path.glob(".complete-*"):
        f.unlink()
    assert P.prebuild(directory=tmp_path, groups=["creation"], quiet=True).programs == 1
    assert not list(tmp_path.glob(".complete-*"))
    assert not (tmp_path / ".prebuild.lock").exists()      # the lock is released


def test_lock_names_the_other_prebuild(tmp_path):
    (tmp_path / ".prebuild.lock").write_text(str(os.getpid()))     # a live process holds it
    assert P.running(tmp_path) == os.getpid()
    with pytest.raises(RuntimeError, match=rf"another prebuild \(process {os.getpid()}\)"):
        P.prebuild(groups=["creation"], directory=tmp_path, quiet=True)
    (tmp_path / ".prebuild.lock").write_text("999999999")          # no such process: stale
    assert P.running(tmp_path) is None
