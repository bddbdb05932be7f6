"""Replays as CUDA graphs (``clnp._runtime.cuda_graph``).

The PTX rewriting, parameter reading and launch geometry are checked on every machine,
against PTX of the form NVIDIA's OpenCL driver 580 emits (measured on an H200). The graphs
themselves need an NVIDIA device whose arrays CUDA sees: there, a jitted training loop, an
interleaving of eager ops and a bounds-checked gather run as graphs and match the same calls
replayed through OpenCL launches.
"""
from __future__ import annotations

import numpy as np
import pyopencl
import pyopencl.tools
import pytest

import clnp
import clnp_grad as cg
from clnp._core import capture
from clnp._runtime import cuda_graph, cuda_memory
from test_jit_replay import _embed_loss, _problem, _sgd, check_gather_raises_after_recording

# get_global_size(0) as NVIDIA's OpenCL compiler emits it (driver 580, sm_90)
PTX_GSIZE = """
.entry k_gsize0(
\t.param .u64 .ptr .global .align 8 k_gsize0_param_0
)
{
\tmov.b32 \t%r1, %envreg3;
\tmov.u32 \t%r2, %ntid.x;
\tmov.b32 \t%r9, %envreg6;
\tmul.lo.s32 \t%r10, %r9, %r2;
\tmov.b32 \t%r11, %envreg0;
\tret;
}
"""


def test_rewrite_replaces_every_environment_register():
    out = cuda_graph.rewrite_ptx(PTX_GSIZE)
    assert "%envreg" not in out
    assert "mov.u32 \t%r1, 0;" in out and "mov.u32 \t%r11, 0;" in out
    assert "mov.u32 \t%r9, %nctaid.x;" in out
    assert "mul.lo.s32 \t%r10, %r9, %r2;" in out        # the rest is left as it was


@pytest.mark.parametrize("ptx, why", [
    ("mov.b32 %r1, %envreg9;", "envreg9"),                          # get_work_dim
    ("add.s32 %r1, %envreg2, %r3;", "not rewritten"),
    (".entry k(.param .u64 .ptr .global .align 4 k_param_0, "
     ".param .u64 .ptr .shared .align 4 k_param_1)", "__local"),   # CUDA does not load it
])
def test_rewrite_refuses_what_has_no_cuda_form(ptx, why):
    with pytest.raises(cuda_graph.Refused, match=why):
        cuda_graph.rewrite_ptx(ptx)


def test_entry_parameters():
    ptx = (".entry clnp_gemm(\n\t.param .u32 clnp_gemm_param_0,\n"
           "\t.param .u64 clnp_gemm_param_1,\n\t.param .u64 .ptr .global .align 4 "
           "clnp_gemm_param_2,\n\t.param .f64 clnp_gemm_param_3,\n"
           "\t.param .align 8 .b8 clnp_gemm_param_4[16],\n\t.param .u16 clnp_gemm_param_5\n)"
           "\n.entry other(\n)")
    assert cuda_graph.entry_params(ptx) == {"clnp_gemm": [4, 8, 8, 8, 16, 2], "other": []}
    with pytest.raises(cuda_graph.Refused, match="pred"):
        cuda_graph.entry_params(".entry k(.param .pred k_param_0)")


def test_launch_dims():
    assert cuda_graph.launch_dims((256, 64, 9), (256, 1, 1)) == ((1, 64, 9), (256, 1, 1))
    assert cuda_graph.launch_dims((4096,), (256,)) == ((16, 1, 1), (256, 1, 1))
    for g, l, why in [((256,), None, "driver"), ((100,), (64,), "multiple"),
                      ((64, 1 << 17), (64, 1), "limits")]:
        with pytest.raises(cuda_graph.Refused, match=why):
            cuda_graph.launch_dims(g, l)


def test_scalar_bytes():
    assert cuda_graph.scalar_bytes(np.float32(1.5), 4) == np.float32(1.5).tobytes()
    assert cuda_graph.scalar_bytes(np.array(3, np.int64), 8) == np.int64(3).tobytes()
    with pytest.raises(cuda_graph.Refused, match="4-byte"):
        cuda_graph.scalar_bytes(np.int64(3), 4)
    with pytest.raises(cuda_graph.Refused, match="int"):
        cuda_graph.scalar_bytes(3, 4)


def test_plan_refuses_host_steps():
    d = clnp.default_device()
    assert cuda_graph.plan(d, [("u", None, None, None)], []) == "an upload of host data"
    assert cuda_graph.plan(d, [("h", None, (), ())], []) == "a product in the host's BLAS"


def test_queue_waits_for_yielded_work(device):
    """After ``yield_to_cuda`` the next use of the queue waits for the CUDA work first, and
    the queue was drained before it: eager work on both sides stays in order."""
    x = clnp.arange(1000, dtype=clnp.float32, device=device) * 2
    order = []
    device.yield_to_cuda(lambda: order.append("cuda done"))
    assert "queue" not in device.__dict__
    y = x + 1                                  # takes the queue: waits first
    order.append("queued")
    assert order == ["cuda done", "queued"]
    assert float(y[999]) == 1999.0
    device.yield_to_cuda(lambda: order.append("again"))
    device.synchronize()
    assert order[-1] == "again"
    with pytest.raises(TypeError, match=r"Device.yield_to_cuda: wait must be callable .*"
                                        r"got NoneType"):
        device.yield_to_cuda(None)
    assert "queue" in device.__dict__ and device._after_cuda is None   # left as it was


def _recorded(f, *args):
    """The recording of ``f``'s calls (its executable's replay), after three calls."""
    for _ in range(3):
        out = f(*args)
    clnp.asnumpy(cg._tree.tree_flatten(out)[0][0])
    (exe, _), = f._fast.values()
    return exe.replay.replay


def _conv_step(device):
    import clnp_nn as nn
    from clnp_nn import optim
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, key=cg.random.key(1, device=device)),
                          nn.BatchNorm2d(8, device=device), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(),
                          nn.Linear(8 * 4 * 4, 10, key=cg.random.key(2, device=device)))
    opt = optim.adamw(1e-3, weight_decay=1e-4)

    def loss(m, x, y):
        logits, m2 = m(x, training=True)
        return nn.functional.cross_entropy(logits, y), m2

    def step(m, s, x, y):
        (value, m2), g = cg.value_and_grad(loss, has_aux=True)(m, x, y)
        u, s = opt.update(g, s, m2)
        return value, optim.apply_updates(m2, u), s
    return cg.jit(step), model, opt.init(model)


def _from_allocator(device, buf) -> bool:
    if device.cuda_memory:
        return cuda_memory.address_of(device, buf) is not None
    return isinstance(buf, pyopencl.tools.PooledBuffer)


def test_recorded_launches_know_every_argument(device):
    """What a CUDA graph needs from a recording, checked wherever it runs: every argument of
    every recorded launch of a convolutional training step (products, convolutions, batch
    norm, pooling, AdamW; fused and whole-step kernels) and of a bounds-checked gather is
    known by position, from the call, the recording or ``set_fixed_arg``, and every buffer
    comes from the device's allocator (the gather's bounds flag did not). On the H200 the
    digits CNN's step was refused for an argument set when its kernel was bound."""
    rng = np.random.default_rng(0)
    step, model, state = _conv_step(device)
    x = clnp.asarray(rng.standard_normal((16, 1, 8, 8)).astype(np.float32), device=device)
    y = clnp.asarray(rng.integers(0, 10, 16).astype(np.int32), device=device)
    gather = cg.jit(_embed_loss)
    w = clnp.asarray(np.arange(12.0, dtype=np.float32).reshape(6, 2), device=device)
    ids = clnp.asarray(np.array([0, 5, -1, 3], np.int32), device=device)
    for rep in (_recorded(step, model, state, x, y), _recorded(gather, ids, w)):
        launches = [s for s in rep.steps if s[0] in ("b", "p", "k")]
        assert launches
        for s in launches:
            kernel, _, _, values, slots = cuda_graph.step_arguments(s)
            assert len(values) == kernel.num_args
            for pos, v in enumerate(values):
                if pos in slots:
                    assert v is None
                else:
                    assert v is not None, (kernel.function_name, pos)
                if isinstance(v, pyopencl.MemoryObjectHolder):
                    # the device's allocator: in memory CUDA sees where the arrays are
                    assert _from_allocator(device, v), (kernel.function_name, pos)


# ----------------------------------------------------------------------------- on CUDA
@pytest.fixture
def cuda_device(device, monkeypatch):
    if not cuda_memory.supported(device):
        pytest.skip(f"{device}: {cuda_memory.why_unsupported(device)}")
    monkeypatch.setattr(cuda_graph, "ENABLED", True)
    device.set_cuda_memory(True)
    yield device
    device.synchronize()
    device.set_cuda_memory(False)


@pytest.fixture
def graph_launches(monkeypatch):
    seen = []
    launch = cuda_graph.GraphReplay.launch

    def counted(self, bufs):
        ok = launch(self, bufs)
        seen.append(ok)
        return ok
    monkeypatch.setattr(cuda_graph.GraphReplay, "launch", counted)
    return seen


def _train(device, problem, steps, eager_between):
    step = cg.jit(_sgd)
    p, x, y = problem
    p = {k: v * 1.0 for k, v in p.items()}     # the caller's arrays stay as they were
    losses = []
    for i in range(steps):
        loss, p = step(p, x, y)
        if eager_between and i % 3 == 1:
            # OpenCL work on a graph's outputs, then a graph on OpenCL's results
            p = {k: (v * 1.0 + 0.0) for k, v in p.items()}
        if i % 4 == 0:
            losses.append(float(loss))
    return losses, {k: v.to_numpy() for k, v in p.items()}, step


@pytest.mark.parametrize("eager_between", [False, True])
def test_training_loop_as_graphs_matches_opencl_launches(cuda_device, graph_launches,
                                                         monkeypatch, eager_between):
    """Twelve SGD steps replayed as CUDA graphs (the addresses of the call's buffers cycle
    through more than ``EXECS`` instantiations) equal the same steps replayed through
    OpenCL launches, the same kernels on the same device."""
    problem = _problem(np.random.default_rng(0), cuda_device)
    monkeypatch.setattr(cuda_graph, "EXECS", 2)
    got_l, got_p, step = _train(cuda_device, problem, 12, eager_between)
    assert len(graph_launches) >= 9 and all(graph_launches)
    (exe, _), = step._fast.values()
    assert isinstance(exe.replay.replay.graph, cuda_graph.GraphReplay)
    monkeypatch.setattr(cuda_graph, "ENABLED", False)
    want_l, want_p, _ = _train(cuda_device, problem, 12, eager_between)
    assert got_l == want_l
    for k in want_p:
        assert np.array_equal(got_p[k], want_p[k]), k


def test_bounds_checked_gather_raises_with_graphs_on(cuda_device, graph_launches):
    """A device check recorded in the call still raises with graphs on: read after the graph
    has run where the call is one. (On the H200 in the seventeenth session this call was
    not planned as a graph, for a reason not yet read: its plan's refusal is in
    ``Replay.graph``.)"""
    check_gather_raises_after_recording(cuda_device)
    assert all(graph_launches)


def test_plan_falls_back_on_a_failing_cuda_call(monkeypatch):
    """A CUDA call failing while the graph is built leaves the recording to OpenCL, with
    one warning naming the call."""
    def failing(device, steps, bufs):
        raise RuntimeError("cuGraphCreate failed: CUDA_ERROR_OUT_OF_MEMORY")
    monkeypatch.setattr(cuda_graph, "GraphReplay", failing)
    with pytest.warns(RuntimeWarning, match="cuGraphCreate failed"):
        why = cuda_graph.plan(clnp.default_device(), [], [])
    assert "CUDA_ERROR_OUT_OF_MEMORY" in why


def test_bound_launches_report_their_kept_buffers_after_a_rebind(device):
    """A recorded eager launch (a ``"b"`` step) reports, by position, the buffers it keeps,
    also after the recording moved them onto other buffers (``Replay.rebind``, as packing
    does): the kernel's ``fixed_args`` follow every ``set_arg``."""
    from clnp._core import capture
    x = clnp.asarray(np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32),
                     device=device)
    _, rep = capture.capture(lambda a: clnp.exp(a) * 2 + a, [x], device)
    bound = [s for s in rep.steps if s[0] == "b"]
    assert bound
    rep.rebind({id(b): device.alloc(capture._nbytes(b)) for _, b in rep.kept_buffers()})
    kept = 0
    for s in rep.steps:
        if s[0] != "b":
            continue
        _, _, _, values, _ = cuda_graph.step_arguments(s)
        for pos, a in enumerate(s[3]):
            if isinstance(a, pyopencl.MemoryObjectHolder):
                kept += 1
                assert values[pos] is a
    assert kept
