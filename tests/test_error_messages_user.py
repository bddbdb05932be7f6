"""Issue #27, item 6: errors name what the user wrote.

An error met deep inside a helper is raised (before any kernel is built) naming the call the
user made, the argument and what it received: a bad ``CLNP_DEVICE`` names the variable, not
the first function that needed a device; an optimizer names itself (``adam.init``), not the
``zeros_like`` or ``scale_by_adam`` inside it; ``cross_entropy`` names both target forms;
layers, the data loader and the transformations of clnp_grad name themselves and the
argument as the user spelled it.
"""
from __future__ import annotations

import collections
import os
import subprocess
import sys

import numpy as np
import pytest

import clnp
import clnp_grad as cg
import clnp_nn as nn
import clnp_nn.functional as F
from clnp._runtime import device as _runtime
from clnp_nn import optim
from clnp_nn.data import DataLoader
from conftest import env_importing_this_checkout

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTIMIZERS = ["sgd", "adam", "adamw", "rmsprop", "adagrad", "lamb"]


@pytest.fixture
def no_build(monkeypatch):
    """``no_build()`` makes every later program build fail the test (called once a test's
    inputs exist: making them may build kernels)."""
    def refuse(self, source, options=()):
        raise AssertionError("a kernel was built before the error was raised:\n" + source)

    def arm() -> None:
        monkeypatch.setattr(_runtime.Device, "build", refuse)
    return arm


# ------------------------------------------------------------------------- CLNP_DEVICE
def test_bad_clnp_device_names_the_variable_in_a_fresh_process():
    env = env_importing_this_checkout(CLNP_DEVICE="foo")
    r = subprocess.run([sys.executable, "-c", "import clnp; clnp.ones(3)"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: the environment variable CLNP_DEVICE='foo' matches "
                           "no OpenCL device"), last
    assert "ones:" not in last                      # not blamed on the first call
    assert "gpu | cpu | <vendor>:<index> (nvidia:0, pocl:0" in last
    assert "<substring of a device or platform name>" in last
    assert "unset it" in last


@pytest.mark.parametrize("spec, reason", [
    ("foo", "matches no OpenCL device"),
    ("99", "is no device index: there is no OpenCL device with index 99"),
])
@pytest.mark.parametrize("call", ["ones", "add", "asarray"])
def test_bad_clnp_device_names_variable_value_devices_and_forms(monkeypatch, no_build, spec,
                                                               reason, call):
    monkeypatch.setattr(_runtime, "_DEFAULT", None)
    monkeypatch.setenv("CLNP_DEVICE", spec)
    no_build()
    run = {"ones": lambda: clnp.ones(3), "add": lambda: clnp.add(1.0, 2.0),
           "asarray": lambda: clnp.asarray([1.0])}[call]
    with pytest.raises(ValueError, match=rf"^the environment variable CLNP_DEVICE='{spec}' "
                                         rf"{reason}") as ei:
        run()
    msg = str(ei.value)
    for d in clnp.devices():                        # every device, by key and by name
        assert d.key in msg and d.name in msg
    assert "accepted forms: gpu | cpu" in msg and "nvidia:0, pocl:0" in msg
    assert not msg.startswith(f"{call}:")


def test_bad_device_argument_names_the_argument_and_forms(no_build):
    no_build()
    with pytest.raises(ValueError, match=r"^ones: device='foo' matches no OpenCL device; "
                                         r"available: .*; accepted forms: gpu \| cpu"):
        clnp.ones(3, device="foo")
    with pytest.raises(ValueError, match=r"^set_default_device: spec='foo' matches no OpenCL "
                                         r"device; available: .*accepted forms"):
        clnp.set_default_device("foo")
    with pytest.raises(ValueError, match=r"^DataLoader: device='foo' matches no OpenCL"):
        DataLoader(np.zeros((2, 1), np.float32), 1, device="foo")


# ------------------------------------------------------------------------- optimizers
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_init_names_itself_and_the_leaf(name, no_build):
    opt, w = getattr(optim, name)(0.1), clnp.ones(2)
    no_build()
    with pytest.raises(TypeError, match=rf"^{name}\.init: params must be a pytree "
                                        rf"\(dict/list/tuple\) of arrays; got 'weights', a str$"):
        opt.init("weights")
    with pytest.raises(TypeError, match=rf"^{name}\.init: params must be a pytree .*; the leaf "
                                        rf"at params\['layers'\]\[1\]\.w is str \('x'\)"):
        opt.init({"layers": [w, _Layer(w="x")]})


_Layer = collections.namedtuple("_Layer", ["w"])


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_update_names_both_structures_and_shapes(name, device, no_build):
    p = {"w": clnp.ones(3, device=device), "b": clnp.zeros(2, device=device)}
    opt = getattr(optim, name)(0.1)
    state, p4 = opt.init(p), clnp.ones(4, device=device)
    no_build()
    with pytest.raises(ValueError, match=rf"^{name}\.update: updates and params must have the "
                                         rf"same structure; updates is a dict with keys "
                                         rf"\['w'\], params is a dict with keys \['b', 'w'\] "
                                         rf"\(keys only in params: \['b'\]\)"):
        opt.update({"w": p["w"]}, state, p)
    with pytest.raises(ValueError, match=rf"^{name}\.update: updates\['w'\] has shape \(4,\) "
                                         rf"but params\['w'\] has shape \(3,\)"):
        opt.update({"w": p4, "b": p["b"]}, state, p)
    with pytest.raises(TypeError, match=rf"^{name}\.update: updates must be a pytree .*got "
                                        rf"'g', a str"):
        opt.update("g", state, p)
    with pytest.raises(ValueError, match=rf"^{name}\.update: state must be the tuple of \d "
                                         rf"states that {name}\.init returned; got a str"):
        opt.update(p, "junk", p)


def test_optimizer_update_without_params_names_the_state(device, no_build):
    p = {"w": clnp.ones(3, device=device), "b": clnp.zeros(2, device=device)}
    opt, sgd, p4 = optim.adam(0.1), optim.sgd(0.1, momentum=0.9), clnp.ones(4, device=device)
    state, sgd_state = opt.init(p), sgd.init(p)
    no_build()
    with pytest.raises(ValueError, match=r"^adam\.update: the updates must have the structure "
                                         r"of the state's nu; updates is a dict with keys "
                                         r"\['w'\], the state's nu is a dict with keys "
                                         r"\['b', 'w'\]"):
        opt.update({"w": p["w"]}, state)
    with pytest.raises(ValueError, match=r"^adam\.update: updates\['w'\] has shape \(4,\) but "
                                         r"the state's nu\['w'\] has shape \(3,\)"):
        opt.update({"w": p4, "b": p["b"]}, state)
    with pytest.raises(TypeError, match=r"^sgd\.update: the state holds a ScaleByAdamState "
                                        r"where sgd\.init puts a TraceState"):
        sgd.update(p, state)
    with pytest.raises(TypeError, match=r"^adam\.update: the state holds a TraceState where "
                                        r"adam\.init puts a ScaleByAdamState"):
        opt.update(p, sgd_state)


def test_optimizer_constructors_name_the_users_call():
    with pytest.raises(TypeError, match=r"^adam: b1 must be a float or a schedule"):
        optim.adam(0.1, b1="x")
    with pytest.raises(TypeError, match=r"^adagrad: initial_accumulator_value must be a "
                                        r"number; got str"):
        optim.adagrad(0.1, initial_accumulator_value="x")
    with pytest.raises(ValueError, match=r"^adagrad: initial_accumulator_value must be >= 0"):
        optim.adagrad(0.1, initial_accumulator_value=-1.0)
    with pytest.raises(TypeError, match=r"^rmsprop: decay must be a number; got str"):
        optim.rmsprop(0.1, decay="x")
    with pytest.raises(TypeError, match=r"^adam: 'nope' is not a data type"):
        optim.adam(0.1, mu_dtype="nope")
    with pytest.raises(TypeError, match=r"^linear_schedule: init_value must be a number"):
        optim.linear_schedule("a", 0.0, 10)
    with pytest.raises(TypeError, match=r"^warmup_cosine_decay_schedule: init_value must be "
                                        r"a number"):
        optim.warmup_cosine_decay_schedule("a", 1.0, 10, 100)
    with pytest.raises(TypeError, match=r"^join_schedules: schedules\[1\] must be a schedule"):
        optim.join_schedules([optim.constant_schedule(1.0), 2.0], [10])


def test_optimizer_helpers_name_themselves(device):
    p = {"w": clnp.ones(3, device=device), "b": clnp.zeros(2, device=device)}
    with pytest.raises(TypeError, match=r"^global_norm: updates must be a pytree .*got 'x'"):
        optim.global_norm("x")
    with pytest.raises(ValueError, match=r"^apply_updates: params and updates must have the "
                                         r"same structure; params is a dict with keys "
                                         r"\['b', 'w'\], updates is a dict with keys \['w'\]"):
        optim.apply_updates(p, {"w": p["w"]})
    with pytest.raises(ValueError, match=r"^apply_updates: params\['w'\] has shape \(3,\) but "
                                         r"updates\['w'\] has shape \(2,\)"):
        optim.apply_updates(p, {"w": clnp.ones(2, device=device), "b": p["b"]})
    masked = optim.masked(optim.adam(0.1), {"w": True})
    with pytest.raises(ValueError, match=r"^masked\.init: the mask must be .*; mask is a dict "
                                         r"with keys \['w'\], parameters is a dict with keys "
                                         r"\['b', 'w'\]"):
        masked.init(p)
    chained = optim.chain(optim.clip_by_global_norm(1.0), optim.adam(0.1))
    with pytest.raises(TypeError, match=r"^chain\.init: params must be a pytree"):
        chained.init("w")
    with pytest.raises(ValueError, match=r"^chain\.update: the updates must have the structure "
                                         r"of the state's nu"):
        chained.update({"w": p["w"]}, chained.init(p))


def test_optimizer_checks_allow_numbers_and_jit(device):
    """Python numbers and NumPy arrays are leaves an optimizer takes; a jitted step (whose
    leaves are tracers) passes the checks."""
    opt = optim.adam(0.1)
    opt.init({"w": 3.0, "v": [1.0, 2.0]})
    p = {"w": clnp.ones(3, device=device)}

    @cg.jit
    def step(p, s):
        u, s = opt.update(p, s, p)
        return optim.apply_updates(p, u), s
    new_p, _ = step(p, opt.init(p))
    assert new_p["w"].shape == (3,)


# ------------------------------------------------------------------------- losses
def _arrays(device, *specs):
    """Zeros of each (shape, dtype) in ``specs`` on ``device``."""
    return [clnp.zeros(shape, dtype=dtype, device=device) for shape, dtype in specs]


def test_cross_entropy_names_both_target_forms(device, no_build):
    f32, i32 = clnp.float32, clnp.int32
    logits, t42, t3, t4, t43 = _arrays(device, ((4, 3), f32), ((4, 2), f32), ((3,), i32),
                                       ((4,), f32), ((4, 3), i32))
    labels = clnp.zeros(4, dtype=i32, device=device)
    no_build()
    forms = (r"^cross_entropy: target must be integer class indices of shape \(4,\) "
             r"\(logits' shape without its class axis 1\), or class probabilities of logits' "
             r"shape \(4, 3\) and dtype float32; ")
    with pytest.raises(ValueError, match=forms + r"got target of shape \(4, 2\) and dtype "
                                                 r"float32 for logits of shape \(4, 3\) and "
                                                 r"dtype float32$"):
        F.cross_entropy(logits, t42)
    with pytest.raises(ValueError, match=forms + r"got target of shape \(3,\) and dtype int32"):
        F.cross_entropy(logits, t3)
    # float labels of the class-index shape: a dtype problem, with the cast to make
    with pytest.raises(TypeError, match=forms + r"got target of shape \(4,\) and dtype "
                                                r"float32 .*cast them with astype\(clnp.int64\)"):
        F.cross_entropy(logits, t4)
    with pytest.raises(TypeError, match=forms + r"got target of shape \(4, 3\) and dtype int32"
                                                r".*cast the probabilities with "
                                                r"astype\(float32\)"):
        F.cross_entropy(logits, t43)
    with pytest.raises(TypeError, match=r"^cross_entropy: argument 'logits' must be a clnp "
                                        r"array, got str"):
        F.cross_entropy("x", labels)
    with pytest.raises(TypeError, match=r"^cross_entropy: argument 'target' must be a clnp "
                                        r"array, got list"):
        F.cross_entropy(logits, [0, 1, 2, 0])


def test_cross_entropy_probabilities_of_another_dtype(device, no_build):
    if not device.has_fp64:
        pytest.skip("needs float64")
    logits, probs = _arrays(device, ((4, 3), clnp.float32), ((4, 3), clnp.float64))
    no_build()
    with pytest.raises(TypeError, match=r"^cross_entropy: target must be .*got target of shape "
                                        r"\(4, 3\) and dtype float64 .*astype\(float32\)"):
        F.cross_entropy(logits, probs)


def test_other_losses_name_the_users_arguments(device, no_build):
    x, t4, pw = _arrays(device, ((4, 3), clnp.float32), ((4,), clnp.float32),
                        ((2,), clnp.float32))
    no_build()
    with pytest.raises(TypeError, match=r"^nll_loss: target must be integer class indices of "
                                        r"shape \(4,\) \(log_probs' shape without its class "
                                        r"axis 1\); got target of shape \(4,\) and dtype "
                                        r"float32"):
        F.nll_loss(x, t4)
    with pytest.raises(ValueError, match=r"^mse_loss: x of shape \(4, 3\) and target of shape "
                                         r"\(4,\) differ"):
        F.mse_loss(x, t4)
    with pytest.raises(ValueError, match=r"^l1_loss: x of shape"):
        F.l1_loss(x, t4)
    with pytest.raises(ValueError, match=r"^binary_cross_entropy_with_logits: logits of shape "
                                         r"\(4, 3\) and target of shape \(4,\) differ"):
        F.binary_cross_entropy_with_logits(x, t4)
    with pytest.raises(ValueError, match=r"^binary_cross_entropy_with_logits: pos_weight of "
                                         r"shape \(2,\) does not broadcast to the shape "
                                         r"\(4, 3\) of logits"):
        F.binary_cross_entropy_with_logits(x, x, pos_weight=pw)


# ------------------------------------------------------------------------- layers, data
def test_functional_errors_name_the_parameter_as_spelled(device, no_build):
    (ints,) = _arrays(device, ((2,), clnp.int32))
    no_build()
    for fn, call in (("conv2d", lambda: F.conv2d("x", None)),
                     ("max_pool2d", lambda: F.max_pool2d("x", 2)),
                     ("layer_norm", lambda: F.layer_norm("x", 3)),
                     ("batch_norm", lambda: F.batch_norm("x", None, None)),
                     ("erf", lambda: F.erf("x"))):
        with pytest.raises(TypeError, match=rf"^{fn}: argument 'x' must be a clnp array, "
                                            rf"got str"):
            call()
    with pytest.raises(TypeError, match=r"^erf: argument 'x' must be a real floating-point "
                                        r"array, got dtype int32"):
        F.erf(ints)


def test_layers_name_themselves(device, no_build):
    bn = nn.BatchNorm2d(3, device=device)
    (x,) = _arrays(device, ((2, 5, 4, 4), bn.running_mean.dtype))
    no_build()
    with pytest.raises(TypeError, match=r"^Linear: key must be a clnp uint32 array of shape "
                                        r"\(2,\) made by clnp_grad.random.key; got str"):
        nn.Linear(3, 3, key="k")
    with pytest.raises(ValueError, match=r"^BatchNorm2d: the input of shape \(2, 5, 4, 4\) has "
                                         r"5 channels \(axis 1\) but the layer has "
                                         r"num_features=3"):
        bn(x)
    with pytest.raises(TypeError, match=r"^BatchNorm2d: argument 'x' must be a clnp array, "
                                        r"got str"):
        bn("x")
    with pytest.raises(TypeError, match=r"^Flatten: argument 'x' must be a clnp array, got str"):
        nn.Flatten()("x")


def test_embedding_out_of_range_names_embedding_only(device):
    w = clnp.zeros((10, 2), dtype=clnp.float32, device=device)
    with pytest.raises(IndexError, match=r"^embedding: an id is out of range for a table of 10 "
                                         r"rows \(weight shape \(10, 2\)\): index 20") as ei:
        F.embedding(clnp.asarray([1, 20], device=device), w)
    assert "take" not in str(ei.value)


def test_data_loader_argument_types():
    x = np.zeros((4, 2), np.float32)
    with pytest.raises(TypeError, match=r"^DataLoader: batch_size must be an int >= 1; got str "
                                        r"'8'"):
        DataLoader(x, "8")
    with pytest.raises(TypeError, match=r"^DataLoader: arrays has dtype object \(got object, "
                                        r"not an array of numbers\)"):
        DataLoader(object(), 2)


# ------------------------------------------------------------------------- clnp_grad
@pytest.mark.parametrize("name", ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian",
                                  "vmap", "checkpoint", "custom_vjp", "custom_jvp"])
def test_transformations_refuse_a_non_callable_when_applied(name):
    with pytest.raises(TypeError, match=rf"^{name}: fun must be callable; got int 3$"):
        getattr(cg, name)(3)


def test_transformation_arguments_name_the_transformation(device):
    x = clnp.ones(3, device=device)
    f = lambda a: clnp.sum(a * a)  # noqa: E731
    with pytest.raises(TypeError, match=r"^grad: argnums must be an int or a sequence of ints; "
                                        r"got 1.5"):
        cg.grad(f, argnums=1.5)
    with pytest.raises(ValueError, match=r"^value_and_grad: argnums 3 is out of range for 1 "
                                         r"positional arguments"):
        cg.value_and_grad(f, argnums=3)(x)
    with pytest.raises(TypeError, match=r"^grad\(has_aux=True\): the function must return a "
                                        r"pair \(out, aux\); got an array"):
        cg.grad(f, has_aux=True)(x)
    with pytest.raises(TypeError, match=r"^jit: static_argnums must be an int or a sequence of "
                                        r"ints; got 'a'"):
        cg.jit(f, static_argnums="a")
    with pytest.raises(TypeError, match=r"^jvp: fun must be callable; got int 3"):
        cg.jvp(3, (x,), (x,))
    with pytest.raises(TypeError, match=r"^jvp: primals must be a tuple or list with one entry "
                                        r"per argument of fun; got Array"):
        cg.jvp(f, x, x)
    with pytest.raises(ValueError, match=r"^jvp: primals and tangents have different "
                                         r"structures: primals is a list of 1, tangents is a "
                                         r"list of 2"):
        cg.jvp(f, (x,), (x, x))
    with pytest.raises(ValueError, match=r"^vjp: cotangent structure does not match output "
                                         r"structure: cotangent is a leaf, output is a tuple "
                                         r"of 2"):
        cg.vjp(lambda a: (a, a), x)[1](x)
    with pytest.raises(ValueError, match=r"^split: num must be >= 0; got -1"):
        cg.random.split(cg.random.key(0), -1)
    with pytest.raises(TypeError, match=r"^lax\.scan: f must be callable; got int 3"):
        cg.lax.scan(3, 0.0, x)
    with pytest.raises(TypeError, match=r"^lax\.fori_loop: body_fun must be callable"):
        cg.lax.fori_loop(0, 3, 3, 0.0)
    with pytest.raises(TypeError, match=r"^tree_map: f must be callable; got int"):
        cg.tree_map(3, [1])
    with pytest.raises(TypeError, match=r"^tree_unflatten: treedef must be a PyTreeDef"):
        cg.tree_unflatten("x", [1])
    with pytest.raises(ValueError, match=r"^tree_map: structures differ: tree is a dict with "
                                         r"keys \['a'\], rest\[0\] is a dict with keys \['b'\]"):
        cg.tree_map(lambda a, b: a, {"a": 1}, {"b": 1})


def test_vmap_axes_are_checked_and_named(device):
    x = clnp.ones(3, device=device)
    f = lambda a: a * 2.0  # noqa: E731
    with pytest.raises(TypeError, match=r"^vmap: in_axes must be an int, None, or a tuple of "
                                        r"them \(one per argument\); got 'a'"):
        cg.vmap(f, in_axes="a")
    with pytest.raises(TypeError, match=r"^vmap: in_axes must be .*got \(\{'b': 0\},\) \(an "
                                        r"axis per leaf of a pytree is not supported"):
        cg.vmap(lambda d: d["a"], in_axes=({"b": 0},))
    with pytest.raises(TypeError, match=r"^vmap: argument 0 is a str, which has no axis 0 to "
                                        r"map over"):
        cg.vmap(f)("x")
    with pytest.raises(TypeError, match=r"^vmap: argument 0\['k'\] is a str"):
        cg.vmap(lambda d: d["a"])({"a": x, "k": "s"})
    # an out-of-range out_axes used to wrap around silently
    with pytest.raises(ValueError, match=r"^vmap: out_axes 3 is out of range for an output of "
                                         r"shape \(\) \(1 dimensions with the batch axis\)"):
        cg.vmap(f, out_axes=3)(x)
    with pytest.raises(ValueError, match=r"^vmap: out_axes has 2 entries for 1 outputs"):
        cg.vmap(f, out_axes=(0, 1))(x)
    assert cg.vmap(lambda a: clnp.stack([a, a]), out_axes=-1)(x).shape == (2, 3)
