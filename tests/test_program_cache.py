"""Disk cache of compiled programs (clnp._runtime.program_cache): store, load, repair, keys, off
switches, eviction. Every test has its own CLNP_CACHE_DIR (tmp_path) and unique sources."""
from __future__ import annotations

import hashlib
import os
import time
import uuid
from types import SimpleNamespace

import pytest

import clnp
from clnp._runtime import program_cache as pc
from clnp._runtime import device as _runtime
from conftest import env_importing_this_checkout


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CLNP_CACHE_DIR", str(tmp_path))
    # every device stores (auto leaves PoCL to its own cache: test_auto_leaves_pocl_...)
    monkeypatch.setenv("CLNP_DISK_CACHE", "1")
    pc.reset_stats()
    yield tmp_path / "programs"
    pc.reset_stats()


def _source(value: int = 7):
    tag = uuid.uuid4().hex
    name = f"fill_{tag}"
    return (f"// {tag}\n__kernel void {name}(__global int *y) "
            f"{{ y[get_global_id(0)] = {value}; }}\n"), name


def _forget(device, source, options=()):
    """Drop ``source`` from the in-process cache so that the next build goes to disk."""
    del device._programs[source + "\0" + " ".join(options)]


def _run(device, prg, name):
    import pyopencl as cl
    y = clnp.zeros(4, dtype=clnp.int32, device=device)
    _runtime.launch(device, cl.Kernel(prg, name), (4,), None, y._buf)
    return y.tolist()


def _entries(d):
    return sorted(p.name for p in d.glob("*.bin")) if d.exists() else []


def test_store_then_load_from_disk(device, cache):
    src, name = _source()
    p1 = device.build(src)
    assert pc.stats["stores"] == 1 and pc.stats["hits"] == 0
    opts = list(device.default_build_options)
    path = pc.path_for(device, src, opts)
    assert path.parent == cache and _entries(cache) == [path.name]
    assert path.read_bytes().startswith(pc.MAGIC)
    _forget(device, src)
    p2 = device.build(src)
    assert p2 is not p1
    assert pc.stats["hits"] == 1 and pc.stats["stores"] == 1 and pc.stats["bad"] == 0
    assert _run(device, p2, name) == [7] * 4
    assert device.build(src) is p2          # and it is in the in-process cache again


def test_debug_says_loaded_from_disk(device, cache, monkeypatch, capfd):
    src, _ = _source()
    device.build(src)
    _forget(device, src)
    monkeypatch.setenv("CLNP_DEBUG", "1")
    capfd.readouterr()
    device.build(src)
    err = capfd.readouterr().err
    assert "loaded from disk cache" in err and src.strip() in err


@pytest.mark.parametrize("damage", ["garbage", "truncated", "bad-binary", "empty"])
def test_damaged_entry_is_rebuilt_and_repaired(device, cache, damage):
    src, name = _source(5)
    device.build(src)
    path = pc.path_for(device, src, list(device.default_build_options))
    good = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a program" * 10)
    elif damage == "truncated":         # PoCL would abort on this binary: the digest stops it
        path.write_bytes(good[:len(good) // 2])
    elif damage == "bad-binary":        # intact file, but a binary the driver refuses
        payload = b"\x00junk" * 64
        path.write_bytes(pc.MAGIC + hashlib.sha256(payload).digest() + payload)
    else:
        path.write_bytes(b"")
    _forget(device, src)
    prg = device.build(src)             # no error: a source build
    assert _run(device, prg, name) == [5] * 4
    assert pc.stats["hits"] == 0 and pc.stats["stores"] == 2
    assert pc.stats["bad"] == 1
    assert path.read_bytes().startswith(pc.MAGIC) and pc.read(path) is not None
    _forget(device, src)
    device.build(src)                   # repaired: now a hit
    assert pc.stats["hits"] == 1


def test_key_covers_options_source_and_device(device, cache):
    src, _ = _source()
    base = list(device.default_build_options)
    k0 = pc.key(device, src, base)
    assert k0 == pc.key(device, src, base)
    assert pc.key(device, src, base + ["-cl-mad-enable"]) != k0
    assert pc.key(device, src + " ", base) != k0
    device.build(src)
    device.build(src, ("-cl-mad-enable",))
    assert pc.stats["stores"] == 2 and len(_entries(cache)) == 2
    # another driver version (or device) of the same name: another key
    cld = device.cl_device
    fake = SimpleNamespace(cl_device=SimpleNamespace(
        platform=cld.platform, name=cld.name, version=cld.version,
        driver_version=str(cld.driver_version) + ".1"))
    assert pc.key(fake, src, base) != k0


@pytest.mark.parametrize("how", ["CLNP_DISK_CACHE=0", "CLNP_CACHE_DIR="])
def test_disabled_writes_nothing(device, cache, tmp_path, monkeypatch, how):
    var, _, value = how.partition("=")
    monkeypatch.setenv(var, value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))   # the fallbacks, if used
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert not pc.enabled()
    src, name = _source(3)
    prg = device.build(src)
    assert _run(device, prg, name) == [3] * 4
    assert pc.stats == {"hits": 0, "misses": 0, "stores": 0, "bad": 0, "evicted": 0,
                        "completed": 0, "prebuilt": 0}
    assert pc.complete_at_exit() == 0
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_default_dir_follows_autotune(monkeypatch, tmp_path):
    monkeypatch.delenv("CLNP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert pc.programs_dir() == tmp_path / "clnp" / "programs"
    monkeypatch.setenv("CLNP_CACHE_DIR", str(tmp_path / "c"))
    assert pc.programs_dir() == tmp_path / "c" / "programs"


def test_eviction_removes_oldest(cache):
    cache.mkdir(parents=True)
    for i in range(10):
        p = cache / f"{i:064x}.bin"
        p.write_bytes(b"x" * 100)
        os.utime(p, (1_000_000 + i, 1_000_000 + i))       # entry 0 is the oldest
    old_tmp = cache / ".orphan.1.2.tmp"
    old_tmp.write_bytes(b"half")
    os.utime(old_tmp, (1_000, 1_000))
    assert pc.evict(cache, max_entries=20, max_bytes=10_000) == 0   # under both limits
    assert len(_entries(cache)) == 10 and not old_tmp.exists()
    # over the count limit (8): down to 3/4 of it, oldest first
    assert pc.evict(cache, max_entries=8, max_bytes=10_000) == 4
    assert _entries(cache) == [f"{i:064x}.bin" for i in range(4, 10)]
    # over the size limit (500 bytes): down to 375
    assert pc.evict(cache, max_entries=100, max_bytes=500) == 3
    assert _entries(cache) == [f"{i:064x}.bin" for i in range(7, 10)]
    assert pc.stats["evicted"] == 7


def test_hit_refreshes_age_so_used_entries_survive(device, cache):
    srcs = [_source()[0] for _ in range(5)]
    opts = list(device.default_build_options)
    paths = []
    for i, src in enumerate(srcs):
        device.build(src)
        paths.append(pc.path_for(device, src, opts))
        os.utime(paths[-1], (1_000 * (i + 1), 1_000 * (i + 1)))    # srcs[0] the oldest
    _forget(device, srcs[0])
    device.build(srcs[0])               # a hit: now the most recently used
    assert pc.stats["hits"] == 1
    assert pc.evict(cache, max_entries=4) == 2                      # down to 3
    assert [p.exists() for p in paths] == [True, False, False, True, True]


def test_eviction_runs_rarely(device, cache, monkeypatch):
    calls = []
    monkeypatch.setattr(pc, "evict", lambda d=None, *a, **k: calls.append(d) or 0)
    monkeypatch.setattr(pc, "EVICT_EVERY", 3)
    for _ in range(5):
        device.build(_source()[0])
    assert calls == [cache, cache]      # the first store of the process, then every 3rd after


def test_build_errors_unchanged(device, cache):
    bad = f"// {uuid.uuid4().hex}\n__kernel void f(__global int *y) {{ y[0] = undefined; }}\n"
    with pytest.raises(clnp.KernelBuildError) as e:
        device.build(bad)
    assert "undefined" in str(e.value) and e.value.source == bad
    assert _entries(cache) == []


# ------------------------------------------------------------- fresh processes (issue #14)
_CHILD = r"""
import json, sys
import numpy as np
import clnp
from clnp._runtime import program_cache as _program_cache, device as _runtime
x = clnp.asarray(np.linspace(-2.0, 3.0, 1000, dtype=np.float32))
y = clnp.sqrt(clnp.abs(x)) * 2.0 + x
out = [float(clnp.sum(y)), float(clnp.max(y - x)), clnp.cumulative_sum(x[:5]).tolist(),
       clnp.argsort(-x[:7]).tolist()]
print(json.dumps({"out": out, "build": _runtime.build_stats, "disk": _program_cache.stats}))
"""


def _child(device, cache_dir, pocl_dir=None):
    """Run _CHILD in a new interpreter on ``device`` with clnp's cache at ``cache_dir`` (and
    PoCL's at ``pocl_dir``; None: its usual one, so that its compiles are shared)."""
    import json
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, CLNP_CACHE_DIR=str(cache_dir), CLNP_DEVICE=str(device.index),
               # the checkout first, then whatever the parent found its packages through
               PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    if pocl_dir is not None:
        env["POCL_CACHE_DIR"] = str(pocl_dir)
    env["CLNP_DISK_CACHE"] = "1"      # store on every device, PoCL included
    r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                       text=True, cwd=root, timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_fresh_process_builds_nothing_from_source(device, tmp_path):
    cache, pocl = tmp_path / "clnp", None
    first = _child(device, cache, pocl)
    n = first["build"]["built"]
    assert n > 0 and first["build"]["loaded"] == 0 and first["disk"]["stores"] == n
    assert len(_entries(cache / "programs")) == n
    second = _child(device, cache, pocl)
    assert second["build"]["built"] == 0, "a warm process compiled from source"
    assert second["build"]["loaded"] == n and second["disk"]["hits"] == n
    assert second["disk"]["stores"] == 0 and second["out"] == first["out"]
    # clnp's cache alone (PoCL's own emptied) still builds nothing from source
    third = _child(device, cache, tmp_path / "pocl-empty")
    assert third["build"]["built"] == 0 and third["out"] == first["out"]


def test_fresh_process_rebuilds_damaged_entries(device, tmp_path):
    cache, pocl = tmp_path / "clnp", None
    first = _child(device, cache, pocl)
    n = first["build"]["built"]
    truncated, flipped = sorted((cache / "programs").glob("*.bin"))[:2]
    data = truncated.read_bytes()   # what a writer killed mid-write would leave without the
    truncated.write_bytes(data[:len(data) // 3])        # atomic rename that prevents it
    data = flipped.read_bytes()     # one bit of the binary changed on disk
    i = len(data) - 5
    flipped.write_bytes(data[:i] + bytes([data[i] ^ 0x10]) + data[i + 1:])
    second = _child(device, cache, pocl)
    assert second["build"]["built"] == 2 and second["build"]["loaded"] == n - 2
    assert second["disk"]["bad"] == 2 and second["disk"]["stores"] == 2
    assert second["out"] == first["out"]
    assert pc.read(truncated) is not None and pc.read(flipped) is not None   # repaired
    third = _child(device, cache, pocl)
    assert third["build"]["built"] == 0 and third["out"] == first["out"]


def test_concurrent_processes_share_one_cache(device, tmp_path):
    """Two processes filling an empty cache at once (same programs, same entries): both
    succeed, no temporary file is left, and a third process builds nothing."""
    from concurrent.futures import ThreadPoolExecutor
    cache, pocl = tmp_path / "clnp", None
    with ThreadPoolExecutor(2) as ex:
        a, b = ex.map(lambda i: _child(device, cache, pocl), range(2))
    assert a["out"] == b["out"]
    assert list((cache / "programs").glob("*.tmp")) == []
    assert len(_entries(cache / "programs")) == a["build"]["built"] + a["build"]["loaded"]
    c = _child(device, cache, pocl)
    assert c["build"]["built"] == 0 and c["out"] == a["out"]


def test_key_covers_environment_build_options(device, cache, monkeypatch):
    src, _ = _source()
    opts = list(device.default_build_options)
    k0 = pc.key(device, src, opts)
    monkeypatch.setenv("PYOPENCL_BUILD_OPTIONS", "-cl-mad-enable")
    assert pc.key(device, src, opts) != k0
    monkeypatch.delenv("PYOPENCL_BUILD_OPTIONS")
    assert pc.key(device, src, opts) == k0


def test_build_stats_count_sources_and_loads(device, cache):
    _runtime.reset_build_stats()
    src, _ = _source()
    device.build(src)
    assert _runtime.build_stats["built"] == 1 and _runtime.build_stats["loaded"] == 0
    assert _runtime.build_stats["build_s"] > 0
    _forget(device, src)
    device.build(src)
    assert _runtime.build_stats["built"] == 1 and _runtime.build_stats["loaded"] == 1
    device.build(src)                   # the in-process cache: not a program creation
    assert _runtime.build_stats["built"] == 1 and _runtime.build_stats["loaded"] == 1


# ------------------------------------------------------------------ completion at exit
def _pocl(device):
    return "portable computing language" in device.platform_name.lower()


def test_complete_at_exit_rewrites_launched_programs(device, cache):
    while pc.complete_at_exit():        # forget what earlier tests stored (a loaded machine
        pass                            # may need more than one call's time budget)
    pc.reset_stats()                    # and what completing them counted
    src, name = _source(9)
    prg = device.build(src)
    path = pc.path_for(device, src, list(device.default_build_options))
    before = pc.read(path)
    assert _run(device, prg, name) == [9] * 4    # first launch: the driver may add code
    n = pc.complete_at_exit()
    after = pc.read(path)
    assert after is not None and pc.stats["completed"] == n
    if _pocl(device):                   # PoCL packs the generated work-group function
        assert n == 1 and len(after) > len(before)
    _forget(device, src)
    prg2 = device.build(src)            # the rewritten entry loads and computes
    assert pc.stats["hits"] == 1 and _run(device, prg2, name) == [9] * 4
    assert pc.complete_at_exit() == 0   # nothing stored since: nothing to do


def test_complete_at_exit_leaves_cleared_entries_and_respects_limits(device, cache,
                                                                     monkeypatch):
    pc.complete_at_exit()
    src, name = _source(4)
    _run(device, device.build(src), name)
    path = pc.path_for(device, src, list(device.default_build_options))
    path.unlink()                       # the user cleared the cache meanwhile
    assert pc.complete_at_exit() == 0 and not path.exists()
    monkeypatch.setattr(pc, "COMPLETE_MAX", 1)
    srcs = [_source(i) for i in range(3)]
    for s, n in srcs:
        _run(device, device.build(s), n)
    assert len(pc._stored) == 1         # only the first is remembered
    monkeypatch.setattr(pc, "COMPLETE_BUDGET_S", -1.0)
    assert pc.complete_at_exit() == 0   # out of time before the first
    assert pc._stored == []
    monkeypatch.setattr(pc, "COMPLETE_BUDGET_S", 60.0)
    s, n = _source(5)
    _run(device, device.build(s), n)
    monkeypatch.setattr(pc, "_owner_pid", -1)   # as in a forked child: OpenCL is not ours
    assert pc.complete_at_exit() == 0 and pc._stored == []


@pytest.mark.parametrize("setting, pocl_cache, stored_on_pocl",
                         [("auto", None, False), (None, None, False), ("auto", "0", True),
                          ("1", None, True), ("0", None, False)])
def test_auto_leaves_pocl_to_its_own_cache(device, cache, monkeypatch, setting, pocl_cache,
                                           stored_on_pocl):
    """``CLNP_DISK_CACHE`` unset or ``auto``: PoCL with its own kernel cache gets no entries
    (handing out its binary compiles every kernel of the program); other devices, and PoCL
    without its cache, do. Entries are loaded either way."""
    for name, value in (("CLNP_DISK_CACHE", setting), ("POCL_KERNEL_CACHE", pocl_cache)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    src, name = _source(5)
    prg = device.build(src)
    stored = setting != "0" and (stored_on_pocl or not _pocl(device))
    assert pc.stores_binaries(device) is stored
    assert (pc.stats["stores"] == 1) is stored and (len(_entries(cache)) == 1) is stored
    assert _run(device, prg, name) == [5] * 4
    if stored:                          # and what was stored loads in auto mode too
        monkeypatch.setenv("CLNP_DISK_CACHE", "auto")
        _forget(device, src)
        assert _run(device, device.build(src), name) == [5] * 4 and pc.stats["hits"] == 1


def test_pocl_entries_are_written_after_exit_by_a_background_filler(device, tmp_path):
    """On PoCL (auto mode) a first run stores nothing while it runs; at exit it hands its
    programs to a detached filler, whose entries make the next run load every program
    (``clnp._runtime.program_fill``)."""
    import json
    import subprocess
    import sys
    import time
    if not _pocl(device):
        pytest.skip(f"{device}: programs are stored while the process runs")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = env_importing_this_checkout(CLNP_CACHE_DIR=str(tmp_path),
                                      CLNP_DEVICE=str(device.index), CLNP_CACHE_FILL="1",
                                      POCL_CACHE_DIR=str(tmp_path / "pocl"))
    env.pop("CLNP_DISK_CACHE", None)
    env.pop("POCL_KERNEL_CACHE", None)

    def run():
        r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                           text=True, cwd=root, timeout=600)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])
    first = run()
    n = first["build"]["built"]
    assert n > 0 and first["disk"]["stores"] == 0
    programs = tmp_path / "programs"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and (len(list(programs.glob("*.bin"))) < n
                                           or (programs / ".fill.lock").exists()):
        time.sleep(0.5)
    assert len(list(programs.glob("*.bin"))) == n
    assert not list(programs.glob(".fill-*.json"))          # the job file is gone
    second = run()
    assert second["build"]["loaded"] == n and second["build"]["built"] == 0
    assert second["out"] == first["out"]


def test_filler_takes_a_stale_lock_and_leaves_a_live_one(tmp_path):
    from clnp._runtime import program_fill
    lock = tmp_path / ".fill.lock"
    lock.write_text("123")
    assert program_fill._take_lock(tmp_path) is None           # another filler works here
    old = time.time() - program_fill.LOCK_STALE_S - 1
    os.utime(lock, (old, old))
    assert program_fill._take_lock(tmp_path) == lock            # its filler died
