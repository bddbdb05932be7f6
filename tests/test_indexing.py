"""``__getitem__``/``__setitem__``, ``take`` and ``take_along_axis`` against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import clnp

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

A = np.arange(24, dtype=np.int64).reshape(2, 3, 4)


def base(device, a=A):
    return clnp.asarray(a, device=device)


def check_get(x, a, key):
    """x[key] matches a[key] in shape, dtype and values, or both raise IndexError."""
    try:
        expected = a[key]
    except IndexError:
        with pytest.raises(IndexError):
            x[key]
        return None
    got = x[key]
    assert isinstance(got, clnp.Array)
    assert got.shape == np.shape(expected), (key, got.shape, np.shape(expected))
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(got), expected)
    return got


# ----------------------------------------------------------------------------- getitem: basic
BASIC_KEYS = [
    0, -1, 1, (1, 2), (1, -2, -4), (0, 0, 0), (), Ellipsis, (Ellipsis, 1), (1, Ellipsis),
    (0, Ellipsis, 0), (Ellipsis, None), (None,), (None, 0, None), (0, None, Ellipsis, None),
    slice(None), slice(None, None, -1), slice(5, -10, -2), slice(-100, 100), slice(1, 1),
    slice(2, 0), (slice(None), slice(None, None, 2)), (slice(None), slice(None, None, -2)),
    (Ellipsis, slice(3, None, -3)), (slice(None), slice(10, 20)), (0, slice(2, 0, -1), -1),
    (slice(None, None, 5),), (None, None, None, 1), (slice(1, None), None, slice(None, 1)),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_getitem_basic(device, key):
    check_get(base(device), A, key)


@SETTINGS
@given(data=st.data())
def test_getitem_basic_hypothesis(device, data):
    shape = data.draw(st.sampled_from([(5,), (2, 3, 4), (3, 0, 2), (4, 1, 3)]))
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if len(shape) == 1:
        key = data.draw(st.one_of(st.slices(shape[0]), st.integers(-shape[0], shape[0] - 1)))
    else:
        key = data.draw(hnp.basic_indices(shape, allow_newaxis=True))
    check_get(base(device, a), a, key)


def test_basic_index_is_a_view(device):
    a = A.copy()
    x = base(device, a)
    v = x[1, ::-2, None, 1:]
    v[...] = -7
    a[1, ::-2, None, 1:] = -7
    np.testing.assert_array_equal(np.asarray(x), a)
    w = x[:, 1]
    w[0, 0] = 100
    a[:, 1][0, 0] = 100
    np.testing.assert_array_equal(np.asarray(x), a)
    # a view of a view of a view still writes to the base
    x[::-1][0][::2][1] = 55
    a[::-1][0][::2][1] = 55
    np.testing.assert_array_equal(np.asarray(x), a)


def test_scalar_index_forms(device):
    x = base(device)
    for k in (np.int64(1), np.uint8(1), np.array(1), clnp.asarray(1, device=device),
              clnp.asarray(-1, dtype=clnp.int32, device=device)):
        check_get(x, A, (k, 0))
    # a 0-d integer array indexes like an int: the result is a view
    y = clnp.asarray(np.zeros(3), device=device)
    y[clnp.asarray(2, device=device)] = 5.0
    assert np.asarray(y).tolist() == [0.0, 0.0, 5.0]


# -------------------------------------------------------------------------- getitem: advanced
ADV_KEYS = [
    [0, 1], [-1], [[1], [0]], ([0, 1], [1, 2]), ([0, 1], slice(None), [1, 2]),
    (slice(None), [0, 2], [1, 3]), (0, slice(None), [1, 2]), (slice(None), 0, [1, 2]),
    ([[0], [1]], [0, 1, 2]), (None, [0, 1], None, [1, 2]), ([0], None, [1]), (Ellipsis, [0, -1]),
    (1, [0, 1], slice(1, 3)), ([0, 1], 1, [1, 2]), ([0], Ellipsis, [1]), ((0, 1),),
    (slice(None), [[0, 2], [1, 1]]), (slice(None, None, -1), [2, 0], slice(None, None, 2)),
    ([0, 1], Ellipsis), ([], ), (slice(None), []), ([[0, 1]], slice(None), [[1], [2]]),
    (np.array([[1, 0], [0, 1]]),), (np.array([0, -1], dtype=np.int8), 1),
    (np.array([1], dtype=np.uint16), slice(None), np.array([3], dtype=np.uint64)),
]


@pytest.mark.parametrize("key", ADV_KEYS, ids=repr)
def test_getitem_integer_arrays(device, key):
    check_get(base(device), A, key)


@pytest.mark.parametrize("key", [
    ([0, 1],), (slice(None), [[0, 2], [-1, 1]]), (0, slice(None), [1, 2]),
    ([0, 1], slice(None), [3, 2])], ids=repr)
def test_getitem_clnp_index_arrays(device, key):
    ck = tuple(clnp.asarray(k, device=device) if isinstance(k, list) else k for k in key)
    check_get(base(device), A, ck)
    i32 = tuple(clnp.asarray(k, dtype=clnp.int32, device=device) if isinstance(k, list)
                else k for k in key)
    check_get(base(device), A, i32)


MASK = A % 3 == 0
BOOL_KEYS = [
    MASK, MASK[0], (slice(None), MASK[0]), (1, MASK[:, 0]), MASK[:, :, 0], (Ellipsis, MASK[0, 0]),
    np.zeros_like(MASK), (MASK[:, 0, 0], slice(None), [1, 2]), [True, False],
    (slice(None), [False, True, True], slice(1, None)), np.array(True), np.array(False),
    True, False, (Ellipsis, True), (0, slice(None), True), (True, [0, 1]),
    (slice(None), [0, 1], True), (slice(None), True, [0, 1]), (None, False, 0), (True, True),
    ([True, False], [1]), (np.array([False, True]), np.array([[2], [0]])),
    # an ellipsis standing for no dims still separates advanced indices
    (None, np.array([False, True]), Ellipsis, 0, 0), ([1], Ellipsis, 0, 0), (0, 1, Ellipsis, [2]),
    (0, Ellipsis, True), (True, Ellipsis, [1]),
    # nothing selected: out-of-range indices do not raise (NumPy)
    ([2], np.zeros(3, bool), 0), (np.zeros(2, bool), [7]),
    # an empty mask dim stands against any axis size (NumPy, and the Array API suite)
    np.zeros((0,), bool), np.zeros((2, 0), bool), (slice(None), np.zeros((0, 4), bool)),
    np.zeros((0, 5), bool),
]


@pytest.mark.parametrize("key", BOOL_KEYS, ids=lambda k: repr(k).replace("\n", ""))
def test_getitem_boolean(device, key):
    check_get(base(device), A, key)


def test_getitem_clnp_masks(device):
    x = base(device)
    check_get(x, A, x % 3 == 0)
    check_get(x, A, (slice(None), x[0] > 5))
    check_get(x, A, clnp.asarray(True, device=device))
    check_get(x, A, (Ellipsis, clnp.asarray(False, device=device)))
    check_get(x, A, x > 100)


def test_advanced_indexing_copies(device):
    x = base(device)
    y = x[[0, 1]]
    y[...] = 0
    np.testing.assert_array_equal(np.asarray(x), A)


def test_integer_array_indexing_float16(device):
    """Gather and scatter of float16 move the bits (no half lvalue: PoCL refuses one
    without cl_khr_fp16), so every value, NaN and the largest ones included, survives."""
    if not device.supports(np.float16):
        pytest.skip("no float16 storage on this device")
    h = np.array([[1.5, -0.0, np.nan], [65504.0, 6e-8, -np.inf]], np.float16)
    x = clnp.asarray(h, device=device)
    got = np.asarray(x[clnp.asarray([1, 0, 1], device=device)])
    np.testing.assert_array_equal(got.view(np.uint16), h[[1, 0, 1]].view(np.uint16))
    want = h.copy()
    want[[1, 0], [2, 0]] = np.array([3.25, -7.0], np.float16)
    x[np.array([1, 0]), np.array([2, 0])] = clnp.asarray(np.array([3.25, -7.0], np.float16),
                                                         device=device)
    np.testing.assert_array_equal(np.asarray(x).view(np.uint16), want.view(np.uint16))


def test_zero_size(device):
    a = np.zeros((0, 3), dtype=np.int64)
    x = base(device, a)
    for key in ([], (slice(None), [0, 2]), (slice(None), 1), (Ellipsis, [1]), x > 0,
                np.zeros((0, 3), bool), (slice(None), slice(2, 1))):
        k = key if not isinstance(key, clnp.Array) else key
        expected = a[np.asarray(k) if isinstance(k, clnp.Array) else k]
        got = x[k]
        assert got.shape == expected.shape
    check_get(base(device), A, (slice(None), slice(0, 0), [0, 1]))
    check_get(base(device), A, ([], slice(None), []))


@st.composite
def advanced_keys(draw, shape):
    """Keys mixing ints, slices, None, Ellipsis, integer arrays (list / NumPy / clnp) and a
    boolean mask; indices may be out of range so errors are compared too."""
    bshape = draw(st.sampled_from([(), (2,), (1,), (2, 1), (3,), (1, 2)]))
    key: list = []
    dim, n_mask = 0, 0
    while dim < len(shape):
        n = shape[dim]
        kind = draw(st.sampled_from(["int", "slice", "arr", "arr", "mask", "none", "stop"]))
        if kind == "stop":
            break
        if kind == "none":
            key.append(None)
            continue
        if kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            key.append(draw(st.slices(n)))
        elif kind == "mask" and n_mask == 0:
            kd = draw(st.integers(1, len(shape) - dim))
            m = draw(hnp.arrays(np.bool_, shape[dim:dim + kd]))
            key.append(m if draw(st.booleans()) else ("clnp", m))
            n_mask += 1
            dim += kd
            continue
        else:
            ishape = bshape[draw(st.integers(0, len(bshape))):]
            hi = n + (1 if draw(st.integers(0, 9)) == 0 else 0)
            vals = draw(hnp.arrays(np.int64, ishape, elements=st.integers(-n, max(hi - 1, -n))))
            form = draw(st.sampled_from(["list", "numpy", "clnp"]))
            key.append(vals.tolist() if form == "list" and vals.ndim else
                       vals if form != "clnp" else ("clnp", vals))
        dim += 1
    if key and draw(st.booleans()):
        key.insert(draw(st.integers(0, len(key))), Ellipsis)
    return tuple(key)


def _to_clnp_key(key, device):
    return tuple(clnp.asarray(k[1], device=device) if isinstance(k, tuple) else k for k in key)


def _to_np_key(key):
    return tuple(k[1] if isinstance(k, tuple) else k for k in key)


@SETTINGS
@given(data=st.data())
def test_getitem_advanced_hypothesis(device, data):
    shape = data.draw(st.sampled_from([(2, 3, 4), (3, 2), (4,)]))
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    key = data.draw(advanced_keys(shape))
    x = base(device, a)
    nk, ck = _to_np_key(key), _to_clnp_key(key, device)
    try:
        expected = a[nk]
    except IndexError:
        with pytest.raises(IndexError):
            x[ck]
        return
    got = x[ck]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(got), expected)


@SETTINGS
@given(data=st.data())
def test_setitem_advanced_hypothesis(device, data):
    shape = data.draw(st.sampled_from([(2, 3, 4), (3, 2)]))
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    key = data.draw(advanced_keys(shape))
    nk, ck = _to_np_key(key), _to_clnp_key(key, device)
    x = base(device, a)
    try:
        target = a[nk]
    except IndexError:
        with pytest.raises(IndexError):
            x[ck] = 1
        np.testing.assert_array_equal(np.asarray(x), a)
        return
    # distinct targets only: which of several writes to one element wins is unspecified
    if np.unique(target).size != target.size:
        return
    if data.draw(st.booleans()):
        value = -5
        vnp = value
    else:
        vshape = target.shape[data.draw(st.integers(0, target.ndim)):]
        vnp = -np.arange(int(np.prod(vshape)), dtype=np.int64).reshape(vshape) - 1
        value = clnp.asarray(vnp, device=device)
    x[ck] = value
    b = a.copy()
    b[nk] = vnp
    np.testing.assert_array_equal(np.asarray(x), b)


# ----------------------------------------------------------------------------- setitem
@pytest.mark.parametrize("key", [
    0, (1, 2), (Ellipsis, -1), slice(None, None, -1), (slice(None), slice(None, None, 2)),
    (None, 1), [1, 0], ([0, 1], slice(None), [1, 2]), (0, slice(None), [1, 2]),
    np.zeros((0, 3), bool), (0, np.zeros(0, bool)),
    (slice(None), [0, 2], [1, 3]), MASK, (slice(None), MASK[0]), True, (Ellipsis, False),
    np.array(True), ([1, 1], 0, 0)], ids=lambda k: repr(k).replace("\n", ""))
def test_setitem_scalar(device, key):
    a = A.copy()
    x = base(device, a)
    x[key] = -3
    a[key] = -3
    np.testing.assert_array_equal(np.asarray(x), a)


@pytest.mark.parametrize("key, vshape", [
    ((slice(None), 1), (4,)), ((slice(None), 1), (2, 1)), (Ellipsis, (3, 4)), (0, ()),
    ([1, 0], (3, 1)), ((slice(None), [0, 2]), (2, 1)), ((0, slice(None), [1, 2]), (2, 3)),
    ((slice(None), [[0], [2]], [1, 3]), (2, 2)), ((slice(None), [[0], [2]], [1, 3]), (2, 2, 2)),
    (MASK, (8,)), (MASK, (1,)), ((slice(None), MASK[0]), (1, 4)),
    ((slice(None), MASK[0]), (2, 4)), (([0, 1], 1), (4,))], ids=repr)
def test_setitem_array_value(device, key, vshape):
    a = A.copy()
    x = base(device, a)
    v = -np.arange(int(np.prod(vshape)), dtype=np.int64).reshape(vshape) - 1
    x[key] = clnp.asarray(v, device=device)
    a[key] = v
    np.testing.assert_array_equal(np.asarray(x), a)


def test_setitem_value_forms_and_casting(device):
    a = np.zeros((2, 3), dtype=np.float32)
    x = base(device, a)
    x[0] = [1, 2, 3]
    a[0] = [1, 2, 3]
    x[1] = np.array([4.5, 5.5, 6.5])
    a[1] = np.array([4.5, 5.5, 6.5])
    x[0, 0] = np.float64(7.25)
    a[0, 0] = np.float64(7.25)
    x[:, 2] = clnp.asarray([8, 9], dtype=clnp.int8, device=device)
    a[:, 2] = np.array([8, 9], dtype=np.int8)
    np.testing.assert_array_equal(np.asarray(x), a)
    assert x.dtype == clnp.float32
    i = base(device, np.zeros(4, dtype=np.int32))
    i[0] = 2.9
    i[1] = -2.9
    i[2] = True
    i[3:] = clnp.asarray([7.8], device=device)
    np.testing.assert_array_equal(np.asarray(i), np.array([2, -2, 1, 7], dtype=np.int32))
    b = base(device, np.zeros(3, dtype=bool))
    b[0] = 5
    b[1] = 0.5
    np.testing.assert_array_equal(np.asarray(b), [True, True, False])
    c = base(device, np.zeros(2, dtype=np.complex64))
    c[0] = 1 + 2j
    c[1] = 3
    np.testing.assert_array_equal(np.asarray(c), np.array([1 + 2j, 3], np.complex64))


def test_setitem_overlapping_self(device):
    a = np.arange(10, dtype=np.int64)
    x = base(device, a)
    x[1:] = x[:-1]
    a[1:] = a[:-1].copy()
    np.testing.assert_array_equal(np.asarray(x), a)
    x[::-1] = x
    a[::-1] = a.copy()
    np.testing.assert_array_equal(np.asarray(x), a)
    x[[0, 1, 2]] = x[[2, 1, 0]]
    a[[0, 1, 2]] = a[[2, 1, 0]]
    np.testing.assert_array_equal(np.asarray(x), a)


def test_setitem_mask_with_clnp_mask(device):
    a = np.linspace(-1, 1, 12).reshape(3, 4)
    x = base(device, a)
    x[x < 0] = 0.0
    a[a < 0] = 0.0
    np.testing.assert_array_equal(np.asarray(x), a)
    x[x > 0.5] = clnp.asarray(2.0, device=device)
    a[a > 0.5] = 2.0
    np.testing.assert_array_equal(np.asarray(x), a)
    m = x == 0
    n = int(np.sum(a == 0))
    x[m] = clnp.asarray(np.arange(n, dtype=np.float64) + 10, device=device)
    a[a == 0] = np.arange(n) + 10
    np.testing.assert_array_equal(np.asarray(x), a)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("key, words", [
    (2, ["index 2", "axis 0", "size 2"]), ((0, -4), ["index -4", "axis 1", "size 3"]),
    ((0, 0, 4), ["index 4", "axis 2", "size 4"]), ([0, 2], ["index 2", "axis 0", "size 2"]),
    ((slice(None), [0, -5]), ["index -5", "axis 1", "size 3"]),
    ((0, 0, 0, 0), ["too many indices"]), ((Ellipsis, Ellipsis), ["ellipsis"]),
    (1.0, ["valid indices"]), ((0, np.float64(1)), ["valid indices"]), ("a", ["valid indices"]),
    ([0.5], ["integer or boolean"]), ([True, False, True], ["axis 0", "size of axis is 2"]),
    (MASK[0, :2], ["boolean index"]), (([0, 1], [0, 1, 2]), ["broadcast", "(2,)", "(3,)"]),
    ((MASK, 0), ["too many indices"]),
], ids=repr)
def test_getitem_errors(device, key, words):
    x = base(device)
    with pytest.raises(IndexError) as e:
        x[key]
    for w in words:
        assert w in str(e.value)
    with pytest.raises(IndexError):
        A[key]


def test_getitem_ragged_index(device):
    with pytest.raises(IndexError, match="ragged"):
        base(device)[[[0, 1], [0]]]


def test_getitem_clnp_index_errors(device):
    x = base(device)
    with pytest.raises(IndexError, match=r"index 7 is out of bounds for axis 2 with size 4"):
        x[:, :, clnp.asarray([0, 7, 1], device=device)]
    with pytest.raises(IndexError, match=r"index -3 is out of bounds for axis 0 with size 2"):
        x[clnp.asarray([[-3]], device=device)]
    with pytest.raises(IndexError, match="integer or boolean"):
        x[clnp.asarray([0.0], device=device)]
    with pytest.raises(IndexError, match="out of bounds"):
        x[clnp.asarray(5, device=device)]
    # the failed checks leave no state behind: in-range device indices work again
    check_get(x, A, (clnp.asarray([1, -2], device=device),))
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 1 with size 3"):
        x[clnp.asarray([[0], [1]], device=device), clnp.asarray([3, 0], device=device)]
    check_get(x, A, (slice(None), clnp.asarray([2, -3], device=device)))


def test_setitem_errors_leave_array_unchanged(device):
    a = A.copy()
    x = base(device, a)
    cases = [
        ((5,), 1, IndexError, ["index 5", "axis 0", "size 2"]),
        (([0, 9],), 1, IndexError, ["index 9"]),
        ((slice(None), clnp.asarray([1, -4], device=device)), 1, IndexError,
         ["index -4", "axis 1", "size 3"]),
        ((0,), clnp.zeros((2, 2), dtype=clnp.int64, device=device), ValueError,
         ["(2, 2)", "(3, 4)"]),
        (([0, 1],), clnp.zeros((3,), dtype=clnp.int64, device=device), ValueError,
         ["(3,)", "(2, 3, 4)"]),
        ((MASK,), clnp.zeros((3,), dtype=clnp.int64, device=device), ValueError,
         ["(3,)", "(8,)"]),
        ((slice(None), 0), [1, 2, 3], ValueError, ["(3,)", "(2, 4)"]),
        ((0, 0, 0, 0), 1, IndexError, ["too many"]),
        ((0,), 1.5j, TypeError, ["complex"]),
        ((0,), 2 ** 70, OverflowError, ["int64"]),
        ((0,), "x", TypeError, ["str"]),
        ((0,), float("nan"), ValueError, ["NaN"]),
    ]
    for key, value, exc, words in cases:
        with pytest.raises(exc) as e:
            x[key] = value
        for w in words:
            assert w in str(e.value), (key, str(e.value))
        np.testing.assert_array_equal(np.asarray(x), a)
    f = base(device, np.zeros(3))
    with pytest.raises(TypeError, match="complex"):
        f[0] = clnp.asarray([1j], device=device)
    u = base(device, np.zeros(3, dtype=np.uint8))
    with pytest.raises(OverflowError):
        u[0] = -1
    with pytest.raises(OverflowError):
        u[1:] = 256
    np.testing.assert_array_equal(np.asarray(u), np.zeros(3))


# ----------------------------------------------------------------------------- take
@pytest.mark.parametrize("indices, axis", [
    ([0, 2, -1], 1), ([[1, 0], [0, 1]], 0), ([3, -4, 0], -1), ([5, 0, 23], None),
    ([], 2), (np.array([1, 1, 2], dtype=np.int32), 2), (np.array(2), 1), (1, 0)], ids=repr)
def test_take(device, indices, axis):
    x = base(device)
    expected = np.take(A, indices, axis=axis)
    for ind in (indices, clnp.asarray(np.asarray(indices, dtype=np.int64), device=device)):
        got = clnp.take(x, ind, axis=axis)
        assert got.shape == expected.shape
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_take_1d_and_copy(device):
    a = np.arange(5.0)
    x = base(device, a)
    y = clnp.take(x, clnp.asarray([4, 0], device=device))
    np.testing.assert_array_equal(np.asarray(y), [4.0, 0.0])
    y[0] = 100
    np.testing.assert_array_equal(np.asarray(x), a)


def test_take_errors(device):
    x = base(device)
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 1 with size 3"):
        clnp.take(x, clnp.asarray([0, 3], device=device), axis=1)
    with pytest.raises(IndexError, match=r"index -5"):
        clnp.take(x, [-5], axis=-1)
    with pytest.raises(IndexError, match=r"axis 3"):
        clnp.take(x, [0], axis=3)
    with pytest.raises(TypeError, match="integer"):
        clnp.take(x, clnp.asarray([0.0], device=device), axis=0)
    with pytest.raises(TypeError, match="integer"):
        clnp.take(x, [0.5], axis=0)
    with pytest.raises(TypeError, match="clnp array"):
        clnp.take(object(), [0])


@pytest.mark.parametrize("ishape, axis", [
    ((2, 3, 2), -1), ((1, 3, 4), 0), ((2, 2, 4), 1), ((2, 3, 1), 2), ((2, 1, 5), 2),
    ((1, 1, 3), 2), ((2, 3, 0), 2)], ids=repr)
def test_take_along_axis(device, ishape, axis, rng):
    n = A.shape[axis]
    ind = rng.integers(-n, n, size=ishape)
    expected = np.take_along_axis(A, ind, axis=axis)
    got = clnp.take_along_axis(base(device), clnp.asarray(ind, device=device), axis=axis)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_take_along_axis_argsort_pattern(device, rng):
    a = rng.standard_normal((3, 5))
    idx = np.argsort(a, axis=1)
    got = clnp.take_along_axis(base(device, a), clnp.asarray(idx, device=device), axis=1)
    np.testing.assert_array_equal(np.asarray(got), np.sort(a, axis=1))


def test_take_along_axis_errors(device):
    x = base(device)
    with pytest.raises(ValueError, match="same number of dimensions"):
        clnp.take_along_axis(x, clnp.asarray([0, 1], device=device), axis=0)
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for axis 2 with size 4"):
        clnp.take_along_axis(x, clnp.asarray(np.full((2, 3, 1), 4), device=device), axis=2)
    with pytest.raises(ValueError, match=r"\(2, 3, 4\)"):
        clnp.take_along_axis(x, clnp.asarray(np.zeros((3, 3, 1), int), device=device), axis=2)
    with pytest.raises(IndexError, match="integer"):     # NumPy's class for float indices
        clnp.take_along_axis(x, clnp.asarray(np.zeros((2, 3, 1)), device=device), axis=2)
    with pytest.raises(IndexError, match="axis"):
        clnp.take_along_axis(x, clnp.asarray(np.zeros((2, 3, 1), int), device=device), axis=3)


def test_scatter_reads_contiguous_values_in_place(device):
    """Values of the indexing result's shape and dtype are read where they are (an offset
    into a larger buffer included); values that are a view of the target are copied first,
    so NumPy's answer comes out when they overlap."""
    rng = np.random.default_rng(3)
    h = rng.standard_normal((9, 4)).astype(np.float32)
    big = rng.standard_normal(40).astype(np.float32)
    idx = np.array([7, 2, 5], np.int64)
    x = clnp.asarray(h, device=device)
    v = clnp.reshape(clnp.asarray(big, device=device)[5:17], (3, 4))    # offset 5
    x[clnp.asarray(idx, device=device)] = v
    want = h.copy()
    want[idx] = big[5:17].reshape(3, 4)
    np.testing.assert_array_equal(clnp.asnumpy(x), want)
    # the values are rows of the target itself, two of them written by this assignment
    x[clnp.asarray(np.array([0, 7, 2]), device=device)] = x[clnp.asarray(idx, device=device)]
    want[[0, 7, 2]] = want[idx].copy()
    np.testing.assert_array_equal(clnp.asnumpy(x), want)
    # with accumulation (clnp.add.at), in place and from an offset view
    acc = clnp.zeros((9, 4), dtype=clnp.float32, device=device)
    clnp.add.at(acc, clnp.asarray(np.array([1, 1, 8]), device=device), v)
    w2 = np.zeros((9, 4), np.float32)
    np.add.at(w2, [1, 1, 8], big[5:17].reshape(3, 4))
    np.testing.assert_allclose(clnp.asnumpy(acc), w2, rtol=1e-6)
