"""Checkpoints of any pytree: ``clnp_nn.save(path, tree)`` and ``clnp_nn.load(path, like)``.

The path's suffix picks the format, ``.npz`` (NumPy's zip of arrays) or ``.safetensors``.
Every leaf is stored under its dotted pytree path (``layers.0.weight``, ``1.0.mu.w``), so a
``.safetensors`` checkpoint opens with the ``safetensors`` package, PyTorch and friends. Next
to the arrays goes a JSON description of the tree (containers, dict keys, field names, which
leaves were Python scalars, strings or NumPy arrays), in the file's ``__metadata__`` (in an
entry ``__clnp_tree__`` of a ``.npz``):

* ``load(path)`` rebuilds the tree from plain containers: dicts, lists and tuples as they were,
  other nodes (NamedTuples such as optimizer states, dataclasses, registered classes) as
  dicts of their children by name; arrays on ``device`` (the default device unless given).
* ``load(path, like=tree)`` pours the stored leaves into ``like``'s exact structure, matched
  by path: each array leaf gets the template leaf's dtype and device, each Python scalar
  leaf the template's type. Missing or extra paths and shape mismatches raise.

Arrays are read back to the host to be written; the bytes are exact, so a training run
resumed from a checkpoint continues bit-identically. Classes are never imported from a file
and nothing is unpickled, so loading an untrusted checkpoint runs no code.
"""
from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

import clnp as xp
import clnp_grad as cg
from clnp._runtime.device import select_device

from . import _safetensors
from ._tree_paths import leaf_paths, structure_from_json, structure_to_json
from clnp._core.dtypes import kind as dkind

__all__ = ["save", "load"]

_META_KEY = "__clnp_tree__"
_FORMAT = "clnp_nn.checkpoint/1"
_SUFFIXES = (".npz", ".safetensors")


def _format(fname: str, path: Any) -> tuple[Path, str]:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{fname}: path must be a str or os.PathLike; got "
                        f"{type(path).__name__}")
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in _SUFFIXES:
        raise ValueError(f"{fname}: the suffix of '{p}' picks the format and must be .npz or "
                         f".safetensors; got '{p.suffix or '(none)'}'")
    return p, suffix


def _is_array(x: Any) -> bool:
    return hasattr(x, "__array_namespace__") and hasattr(x, "device") and \
        not isinstance(x, np.ndarray)


def _encode_leaf(path: str, leaf: Any) -> tuple[dict, np.ndarray | None]:
    """(leaf description, host array or None for leaves kept in the metadata)."""
    if isinstance(leaf, bool):
        return {"k": "bool"}, np.asarray(leaf, dtype=np.bool_)
    if isinstance(leaf, int):
        if not -2 ** 63 <= leaf < 2 ** 63:
            raise ValueError(f"save: leaf '{path or '(root)'}' is the int {leaf}, outside the "
                             f"int64 range checkpoints store Python ints in")
        return {"k": "int"}, np.asarray(leaf, dtype=np.int64)
    if isinstance(leaf, float):
        return {"k": "float"}, np.asarray(leaf, dtype=np.float64)
    if isinstance(leaf, complex):
        return {"k": "complex"}, np.asarray(leaf, dtype=np.complex128)
    if isinstance(leaf, str):
        return {"k": "str", "v": leaf}, None
    if isinstance(leaf, np.generic):
        if dkind(leaf.dtype) not in "biufc":
            raise TypeError(f"save: leaf '{path}' is a NumPy scalar of dtype {leaf.dtype}; "
                            f"only numeric and bool values can be saved")
        return {"k": "numpy_scalar"}, np.asarray(leaf)
    if isinstance(leaf, np.ndarray):
        if dkind(leaf.dtype) not in "biufc":
            raise TypeError(f"save: leaf '{path}' is a NumPy array of dtype {leaf.dtype}; "
                            f"only numeric and bool arrays can be saved")
        return {"k": "numpy"}, leaf
    if _is_array(leaf):
        return {"k": "array"}, xp.asnumpy(leaf)
    raise TypeError(f"save: leaf '{path or '(root)'}' is a {type(leaf).__name__}; checkpoints "
                    f"hold clnp/NumPy arrays, Python bool/int/float/complex/str and None "
                    f"(register a container type with clnp_grad.register_pytree_node)")


def _key(path: str) -> str:
    return path if path else "value"


def save(path: str | os.PathLike, tree: Any) -> None:
    """Write ``tree`` (any pytree) to ``path``; the suffix picks the format.

    Parameters
    ----------
    path : str or os.PathLike
        Ending in ``.npz`` or ``.safetensors``. The file is written to a temporary name in
        the same directory and renamed over ``path``, so a crash never leaves half a
        checkpoint behind.
    tree : pytree
        Nested dicts/lists/tuples/NamedTuples/dataclasses/registered nodes whose leaves are
        clnp or NumPy arrays, Python scalars, strings or None (random keys are uint32 arrays).

    Returns
    -------
    None
        The checkpoint is on disk at ``path`` when the call returns.

    Raises
    ------
    ValueError
        If the suffix is neither, or two leaves have the same dotted path (a dict key
        containing a dot can collide with a nested path).
    TypeError
        If a leaf cannot be stored (naming its path), a dict key is not str/int, or a
        ``.safetensors`` file is asked to hold complex numbers (use ``.npz``).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy, clnp, clnp_grad as cg, clnp_nn
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.asarray([0.5, 1.5], dtype=clnp.float32)}
    >>> opt_state = optim.adam(0.1).init(params)
    >>> state = {"params": params, "opt": opt_state, "step": 100,
    ...          "key": cg.random.PRNGKey(0)}
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
    >>> clnp_nn.save(path, state)
    >>> restored = clnp_nn.load(path, like=state)   # the template: same structure and dtypes
    >>> print(numpy.asarray(restored["params"]["w"]), restored["step"])
    [0.5 1.5] 100
    >>> type(restored["opt"][0]).__name__
    'ScaleByAdamState'
    """
    p, suffix = _format("save", path)
    leaves, treedef = cg.tree_flatten(tree)
    paths = leaf_paths(treedef)
    seen: dict[str, int] = {}
    for i, q in enumerate(paths):
        if _key(q) in seen:
            raise ValueError(f"save: two leaves have the same dotted path '{_key(q)}' (leaves "
                             f"{seen[_key(q)]} and {i}); rename a dict key that contains '.'")
        seen[_key(q)] = i
    structure = structure_to_json(treedef)
    descs, arrays = [], {}
    for q, leaf in zip(paths, leaves):
        desc, host = _encode_leaf(q, leaf)
        if host is not None:
            if suffix == ".safetensors" and dkind(host.dtype) == "c":
                raise TypeError(f"save: leaf '{q}' is complex ({host.dtype}); the safetensors "
                                f"format has no complex dtypes: save to a .npz file")
            desc["dtype"] = host.dtype.name
            arrays[_key(q)] = host
        desc["path"] = _key(q)
        descs.append(desc)
    meta = json.dumps({"format": _FORMAT, "structure": structure, "leaves": descs},
                      separators=(",", ":"))
    buf = io.BytesIO()
    if suffix == ".npz":
        if _META_KEY in arrays:
            raise ValueError(f"save: a leaf's path is the reserved name '{_META_KEY}'")
        np.savez(buf, **arrays, **{_META_KEY: np.frombuffer(meta.encode("utf-8"),
                                                             dtype=np.uint8)})
    else:
        _safetensors.write(buf, arrays, {_META_KEY: meta})
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(buf.getbuffer())
        os.replace(tmp, p)
    finally:
        if tmp.exists():
            tmp.unlink()


def _read(p: Path, suffix: str) -> tuple[dict[str, np.ndarray], dict | None]:
    if not p.exists():
        raise FileNotFoundError(f"load: no checkpoint at '{p}'")
    data = p.read_bytes()
    if suffix == ".npz":
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except (ValueError, OSError, EOFError) as e:
            raise ValueError(f"load: '{p}' is not a readable .npz file ({e})") from None
        raw = arrays.pop(_META_KEY, None)
        meta = None if raw is None else raw.tobytes().decode("utf-8")
    else:
        arrays, md = _safetensors.read(data, f"load: '{p}'")
        meta = md.get(_META_KEY)
    if meta is None:
        return arrays, None   # written by another program: arrays only
    info = json.loads(meta)
    if info.get("format") != _FORMAT:
        raise ValueError(f"load: '{p}' has checkpoint format {info.get('format')!r}; this "
                         f"clnp_nn reads {_FORMAT!r}")
    for desc in info.get("leaves", ()):
        a = arrays.get(desc.get("path"))
        if a is not None and a.dtype.kind == "V" and desc.get("dtype") == "bfloat16":
            # NumPy's .npy header cannot name ml_dtypes' bfloat16: it stores raw 2-byte records
            arrays[desc["path"]] = a.view(xp.bfloat16)
    return arrays, info


def _decode_plain(desc: dict, arrays: dict[str, np.ndarray], device: Any) -> Any:
    k = desc["k"]
    if k == "str":
        return desc["v"]
    a = arrays[desc["path"]]
    if k == "bool":
        return bool(a)
    if k == "int":
        return int(a)
    if k == "float":
        return float(a)
    if k == "complex":
        return complex(a)
    if k == "numpy":
        return a.copy()
    if k == "numpy_scalar":
        return a[()]
    return xp.asarray(a, device=device)


def _into_like(q: str, a: np.ndarray, like: Any, where: str) -> Any:
    if isinstance(like, bool):
        return bool(a)
    if isinstance(like, int):
        return int(a)
    if isinstance(like, float):
        return float(a)
    if isinstance(like, complex):
        return complex(a)
    if isinstance(like, (np.ndarray, np.generic)) or _is_array(like):
        if tuple(a.shape) != tuple(like.shape):
            raise ValueError(f"load: '{where}' stores '{q}' with shape {tuple(a.shape)}; the "
                             f"template (like) has shape {tuple(like.shape)}")
        if isinstance(like, np.generic):
            return like.dtype.type(a)
        if isinstance(like, np.ndarray):
            return a.astype(like.dtype)
        host = a.astype(like.dtype, copy=False)
        return xp.asarray(host, device=like.device)
    raise TypeError(f"load: template (like) leaf '{q}' is a {type(like).__name__}; it must "
                    f"be an array or a Python scalar")


def load(path: str | os.PathLike, like: Any = None, *, device: Any = None) -> Any:
    """Read a checkpoint written by :func:`save` (or any ``.npz``/``.safetensors`` file).

    Parameters
    ----------
    path : str or os.PathLike
        Ending in ``.npz`` or ``.safetensors``.
    like : pytree, optional
        A template: the result has its exact structure (classes included), and each leaf
        the template leaf's kind, dtype and device (an array leaf's device, whatever device
        wrote the file). Leaves are matched by dotted path. Template leaves that are strings
        or None are taken as stored.
    device : clnp Device or device spec, optional
        Without ``like``: where arrays are placed (``"pocl:1"``, an index, a Device; default:
        the default device).

    Returns
    -------
    pytree
        Without ``like``: plain containers (dicts, lists, tuples; NamedTuples, dataclasses
        and registered nodes become dicts by field name), clnp arrays, Python scalars. A file
        without clnp's metadata gives a dict of path -> array.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the suffix is wrong, the file is corrupt, or (with ``like``) a path is missing
        from the file, the file has paths the template lacks, or a shape differs.
    TypeError
        If a template leaf is neither an array nor a scalar.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy, clnp, clnp_nn
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.asarray([0.5, 1.5], dtype=clnp.float32)}
    >>> state = {"params": params, "opt": optim.sgd(0.1, momentum=0.9).init(params),
    ...          "step": 0}
    >>> path = os.path.join(tempfile.mkdtemp(), "run.npz")
    >>> clnp_nn.save(path, state)
    >>> state = clnp_nn.load(path, like=state)       # same classes, dtypes, devices
    >>> type(state["opt"][0]).__name__, state["params"]["w"].dtype
    ('TraceState', dtype('float32'))
    >>> plain = clnp_nn.load(path)                   # dicts/lists/tuples
    >>> plain["opt"][0]["trace"]["w"].shape, plain["step"]
    ((2,), 0)
    >>> print(numpy.asarray(plain["params"]["w"]))
    [0.5 1.5]
    """
    p, suffix = _format("load", path)
    if device is not None:
        device = select_device(device, arg="load: device")
    arrays, info = _read(p, suffix)
    if like is None:
        if info is None:
            return {k: xp.asarray(v, device=device) for k, v in arrays.items()}
        leaves = [_decode_plain(d, arrays, device) for d in info["leaves"]]
        return structure_from_json(info["structure"], leaves)
    t_leaves, t_def = cg.tree_flatten(like)
    t_paths = [_key(q) for q in leaf_paths(t_def)]
    stored = {d["path"]: d for d in info["leaves"]} if info is not None else \
        {k: {"k": "array", "path": k} for k in arrays}
    missing = [q for q in t_paths if q not in stored]
    extra = [q for q in stored if q not in set(t_paths)]
    if missing or extra:
        raise ValueError(f"load: '{p}' does not match the template (like): missing "
                         f"{missing[:8]}{' ...' if len(missing) > 8 else ''}, unexpected "
                         f"{extra[:8]}{' ...' if len(extra) > 8 else ''}")
    out = []
    for q, leaf in zip(t_paths, t_leaves):
        d = stored[q]
        if d["k"] == "str" or isinstance(leaf, str):
            if d["k"] != "str" or not isinstance(leaf, str):
                raise ValueError(f"load: '{p}' stores '{q}' as {d['k']}; the template (like) "
                                 f"has a {type(leaf).__name__}")
            out.append(d["v"])
            continue
        out.append(_into_like(q, arrays[q], leaf, str(p)))
    return cg.tree_unflatten(t_def, out)
