"""clnp_nn.save / clnp_nn.load: round trips in both formats, the safetensors package reads
our files, structure and devices come back, and a resumed training run is bit-identical."""
from __future__ import annotations

import dataclasses
import json
from typing import NamedTuple

import numpy as np
import pytest

import clnp as xp
import clnp_grad as cg
import clnp_grad.random as jr
import clnp_nn
from clnp_nn import optim

from mlp_helpers import cross_entropy, init_mlp, mlp, onehot

FORMATS = [".npz", ".safetensors"]


@dataclasses.dataclass(frozen=True)
class Layer:
    """A registered dataclass node as clnp_nn's modules are: non-static fields are children."""
    weight: object
    bias: object
    features: int = dataclasses.field(default=0, metadata={"static": True})


cg.register_pytree_node(Layer, lambda m: ((m.weight, m.bias), m.features),
                        lambda aux, ch: Layer(ch[0], ch[1], aux))


class State(NamedTuple):
    count: object
    mu: object


@dataclasses.dataclass
class Box:
    value: object
    tag: str = dataclasses.field(default="box", metadata={"static": True})


def _tree(device, rng, complex_ok):
    t = {
        "layers": [{"weight": xp.asarray(rng.standard_normal((3, 2)).astype(np.float32),
                                         device=device),
                    "bias": xp.asarray(rng.standard_normal(3).astype(np.float16),
                                       device=device)},
                   {"weight": xp.asarray(rng.integers(-5, 5, (2, 2)), device=device)}],
        "opt": (State(xp.asarray(3, dtype=xp.int32, device=device),
                      {"w": xp.zeros((0, 4), device=device)}), None),
        "step": 17, "lr": 0.125, "done": False, "name": "run-1",
        "key": jr.key(42).to_device(device),
        "mask": xp.asarray([True, False], device=device),
        "host": np.arange(4, dtype=np.uint8), "np_scalar": np.float32(2.5),
        "box": Box(xp.asarray([1.0, 2.0], device=device)),
        "ints": {7: xp.asarray(np.array([2 ** 40], np.int64), device=device), 2: 1.5},
    }
    if complex_ok:
        t["z"] = xp.asarray(np.array([1 + 2j], np.complex64), device=device)
        t["cz"] = 1 - 1j
    return t


def _assert_same(a, b):
    la, da = cg.tree_flatten(a)
    lb, db = cg.tree_flatten(b)
    assert da == db
    for x, y in zip(la, lb):
        assert type(x) is type(y), (type(x), type(y))
        if hasattr(x, "shape"):
            assert x.dtype == y.dtype and x.shape == y.shape
            if hasattr(x, "device") and not isinstance(x, np.ndarray):
                assert x.device == y.device
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
        else:
            assert x == y


@pytest.mark.parametrize("suffix", FORMATS)
def test_round_trip_with_like(device, rng, tmp_path, suffix):
    tree = _tree(device, rng, suffix == ".npz")
    path = tmp_path / f"ckpt{suffix}"
    clnp_nn.save(path, tree)
    _assert_same(clnp_nn.load(path, like=tree), tree)
    # a template on another dtype converts; the template's structure and classes come back
    like = cg.tree_map(lambda v: v, tree)
    like["layers"][0]["weight"] = xp.zeros((3, 2), dtype=xp.float16, device=device)
    got = clnp_nn.load(str(path), like=like)
    assert got["layers"][0]["weight"].dtype == xp.float16 and isinstance(got["opt"][0], State)
    assert isinstance(got["box"], Box) and got["box"].tag == "box"


@pytest.mark.parametrize("suffix", FORMATS)
def test_round_trip_plain(device, rng, tmp_path, suffix):
    tree = _tree(device, rng, suffix == ".npz")
    path = tmp_path / f"ckpt{suffix}"
    clnp_nn.save(path, tree)
    plain = clnp_nn.load(path, device=device)
    assert isinstance(plain["layers"], list) and isinstance(plain["opt"], tuple)
    assert plain["opt"][1] is None and set(plain["opt"][0]) == {"count", "mu"}
    assert plain["box"] == {"value": plain["box"]["value"]}
    assert plain["step"] == 17 and type(plain["step"]) is int and plain["lr"] == 0.125
    assert plain["done"] is False and plain["name"] == "run-1"
    assert set(plain["ints"]) == {2, 7} and plain["ints"][2] == 1.5
    assert isinstance(plain["host"], np.ndarray) and plain["host"].dtype == np.uint8
    assert type(plain["np_scalar"]) is np.float32 and plain["np_scalar"] == 2.5
    w = plain["layers"][0]["bias"]
    assert w.device == device and w.dtype == xp.float16
    np.testing.assert_array_equal(xp.asnumpy(w), xp.asnumpy(tree["layers"][0]["bias"]))
    np.testing.assert_array_equal(xp.asnumpy(plain["key"]), xp.asnumpy(tree["key"]))
    assert plain["opt"][0]["mu"]["w"].shape == (0, 4)


@pytest.mark.parametrize("suffix", FORMATS)
def test_bfloat16_round_trip(device, tmp_path, suffix):
    """bfloat16 leaves keep their bits (NaN, -0) in both formats; safetensors names them BF16,
    which the safetensors package reads as ml_dtypes' bfloat16."""
    h = np.array([1.5, np.nan, -0.0, 3e38, 1e-40], np.float32).astype(xp.bfloat16)
    tree = {"w": xp.asarray(h, device=device), "host": h[:2].copy()}
    path = tmp_path / f"bf{suffix}"
    clnp_nn.save(path, tree)
    for got in (clnp_nn.load(path, device=device), clnp_nn.load(path, like=tree)):
        assert got["w"].dtype == xp.bfloat16 and got["w"].device == device
        assert got["host"].dtype == xp.bfloat16 and isinstance(got["host"], np.ndarray)
        np.testing.assert_array_equal(xp.asnumpy(got["w"]).view(np.uint16), h.view(np.uint16))
    if suffix == ".safetensors":
        st = pytest.importorskip("safetensors.numpy")
        assert st.load_file(str(path))["w"].dtype == xp.bfloat16


def test_safetensors_package_reads_our_file(device, rng, tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    tree = _tree(device, rng, False)
    path = tmp_path / "m.safetensors"
    clnp_nn.save(path, tree)
    got = st.load_file(str(path))
    assert "layers.0.weight" in got and "opt.0.count" in got and "box.value" in got
    np.testing.assert_array_equal(got["layers.0.weight"],
                                  xp.asnumpy(tree["layers"][0]["weight"]))
    assert got["layers.0.bias"].dtype == np.float16 and got["ints.7"].dtype == np.int64
    assert got["step"] == 17 and "name" not in got    # strings live in the metadata
    from safetensors import safe_open
    with safe_open(str(path), framework="numpy") as f:
        meta = json.loads(f.metadata()["__clnp_tree__"])
    assert meta["format"] == "clnp_nn.checkpoint/1"


def test_registered_dataclass_nodes_use_field_names(device, tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    model = {"layers": [Layer(xp.ones((2, 3), device=device), None, 3),
                        Layer(xp.zeros((1, 2), device=device), xp.ones(1, device=device), 2)]}
    path = tmp_path / "model.safetensors"
    clnp_nn.save(path, model)
    assert sorted(st.load_file(str(path))) == ["layers.0.weight", "layers.1.bias",
                                               "layers.1.weight"]
    back = clnp_nn.load(path, like=model)
    assert isinstance(back["layers"][1], Layer) and back["layers"][1].features == 2
    assert back["layers"][0].bias is None
    assert clnp_nn.load(path)["layers"][1].keys() == {"weight", "bias"}


def test_load_file_written_by_safetensors(tmp_path):
    st = pytest.importorskip("safetensors.numpy")
    path = tmp_path / "ext.safetensors"
    st.save_file({"a.b": np.arange(6, dtype=np.float32).reshape(2, 3),
                  "c": np.array([1, 2], np.int32)}, str(path))
    plain = clnp_nn.load(path)
    np.testing.assert_array_equal(xp.asnumpy(plain["a.b"]), np.arange(6).reshape(2, 3))
    like = {"a": {"b": xp.zeros((2, 3))}, "c": xp.zeros(2, dtype=xp.int32)}
    got = clnp_nn.load(path, like=like)
    assert got["a"]["b"].dtype == like["a"]["b"].dtype and int(got["c"][1]) == 2


def test_load_onto_other_devices(tmp_path, rng):
    devs = xp.devices()
    tree = {"w": xp.asarray(rng.standard_normal(4).astype(np.float32), device=devs[0])}
    path = tmp_path / "d.npz"
    clnp_nn.save(path, tree)
    for d in devs:
        like = {"w": xp.zeros(4, dtype=xp.float32, device=d)}
        got = clnp_nn.load(path, like=like)
        assert got["w"].device == d
        np.testing.assert_array_equal(xp.asnumpy(got["w"]), xp.asnumpy(tree["w"]))
        assert clnp_nn.load(path, device=d)["w"].device == d


def test_errors(tmp_path):
    t = {"w": xp.ones(3)}
    with pytest.raises(ValueError, match="must be .npz or .safetensors"):
        clnp_nn.save(tmp_path / "x.pt", t)
    with pytest.raises(ValueError, match="same dotted path 'a.b'"):
        clnp_nn.save(tmp_path / "x.npz", {"a.b": xp.ones(1), "a": {"b": xp.ones(1)}})
    with pytest.raises(TypeError, match="leaf 'f' is a builtin_function_or_method"):
        clnp_nn.save(tmp_path / "x.npz", {"f": len})
    with pytest.raises(ValueError, match="leaf 'n' is the int 36893488147419103232"):
        clnp_nn.save(tmp_path / "x.npz", {"n": 2 ** 65})
    with pytest.raises(TypeError, match="no complex dtypes"):
        clnp_nn.save(tmp_path / "x.safetensors", {"z": xp.asarray([1j], dtype=xp.complex64)})
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        clnp_nn.load(tmp_path / "none.npz")
    clnp_nn.save(tmp_path / "x.npz", t)
    assert not list(tmp_path.glob(".*tmp"))
    with pytest.raises(ValueError, match=r"missing \['v'\], unexpected \['w'\]"):
        clnp_nn.load(tmp_path / "x.npz", like={"v": xp.ones(3)})
    with pytest.raises(ValueError, match=r"shape \(3,\); the template \(like\) has shape"):
        clnp_nn.load(tmp_path / "x.npz", like={"w": xp.ones(4)})
    (tmp_path / "bad.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{")
    with pytest.raises(ValueError, match="not a safetensors file"):
        clnp_nn.load(tmp_path / "bad.safetensors")


def _train_state(device):
    params = init_mlp(jr.key(1), [8, 16, 3], device=device)
    opt = optim.chain(optim.clip_by_global_norm(1.0),
                      optim.adamw(optim.cosine_decay_schedule(0.05, 20)))
    return opt, {"params": params, "opt": opt.init(params), "step": 0,
                 "key": jr.key(7).to_device(device)}


def _run(opt, state, x, y, n):
    def loss_fn(p, xb, yb, noise):
        return cross_entropy(mlp(p, xb + noise), yb)
    for _ in range(n):
        key, sub = jr.split(state["key"])
        noise = 0.1 * jr.normal(sub, x.shape, dtype=xp.float32)     # uses the saved key
        g = cg.grad(loss_fn)(state["params"], x, y, noise)
        updates, opt_state = opt.update(g, state["opt"], state["params"])
        state = {"params": optim.apply_updates(state["params"], updates), "opt": opt_state,
                 "step": state["step"] + 1, "key": key}
    return state


@pytest.mark.parametrize("suffix", FORMATS)
def test_resumed_run_is_bit_identical(device, tmp_path, suffix):
    rng = np.random.default_rng(0)
    x = xp.asarray(rng.standard_normal((32, 8)).astype(np.float32), device=device)
    y = xp.asarray(onehot(rng.integers(0, 3, 32), 3), device=device)
    opt, start = _train_state(device)
    unbroken = _run(opt, start, x, y, 6)

    half = _run(opt, start, x, y, 3)
    path = tmp_path / f"mid{suffix}"
    clnp_nn.save(path, half)
    _, template = _train_state(device)       # a fresh run's state as the template
    resumed = _run(opt, clnp_nn.load(path, like=template), x, y, 3)
    assert resumed["step"] == 6
    _assert_same(resumed, unbroken)
