"""Reading and writing the safetensors format without the ``safetensors`` package.

Layout (https://github.com/huggingface/safetensors): an 8-byte little-endian header length,
a UTF-8 JSON header ``{name: {"dtype", "shape", "data_offsets": [begin, end]},
"__metadata__": {str: str}}`` padded with spaces to a multiple of 8 bytes, then the raw
little-endian C-order bytes of every tensor, back to back.
"""
from __future__ import annotations

import json
import struct
from typing import BinaryIO

import ml_dtypes
import numpy as np

__all__ = ["write", "read", "DTYPES"]

DTYPES = {np.dtype(k): v for k, v in (
    ("bool", "BOOL"), ("uint8", "U8"), ("int8", "I8"), ("uint16", "U16"), ("int16", "I16"),
    ("uint32", "U32"), ("int32", "I32"), ("uint64", "U64"), ("int64", "I64"),
    ("float16", "F16"), (ml_dtypes.bfloat16, "BF16"), ("float32", "F32"), ("float64", "F64"))}
_BACK = {v: k for k, v in DTYPES.items()}
_MAX_HEADER = 100_000_000  # the reference implementation's limit


def write(f: BinaryIO, tensors: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    """Write ``tensors`` (name -> array of a supported dtype) and string ``metadata``."""
    header: dict = {"__metadata__": metadata} if metadata else {}
    offset = 0
    blobs = []
    for name, a in tensors.items():
        a = np.asarray(a, order="C")   # (ascontiguousarray would make 0-d arrays 1-d)
        le = a.dtype.newbyteorder("<") if a.dtype.byteorder not in "|=" else a.dtype
        data = a.astype(le, copy=False).tobytes()
        header[name] = {"dtype": DTYPES[np.dtype(a.dtype.name)], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    f.write(struct.pack("<Q", len(text)))
    f.write(text)
    for b in blobs:
        f.write(b)


def read(data: bytes, where: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Tensors and metadata of a safetensors file's bytes; ``where`` names it in errors."""
    if len(data) < 8:
        raise ValueError(f"{where}: not a safetensors file (shorter than its 8-byte header "
                         f"length)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > _MAX_HEADER or 8 + n > len(data):
        raise ValueError(f"{where}: not a safetensors file (header length {n} does not fit "
                         f"the file's {len(data)} bytes)")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{where}: corrupt safetensors header ({e})") from None
    meta = header.pop("__metadata__", None) or {}
    body = memoryview(data)[8 + n:]
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        dtype = _BACK.get(info.get("dtype"))
        if dtype is None:
            raise ValueError(f"{where}: tensor '{name}' has dtype {info.get('dtype')!r}, "
                             f"which clnp cannot hold (supported: {', '.join(_BACK)})")
        b, e = info["data_offsets"]
        shape = tuple(int(s) for s in info["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        if not 0 <= b <= e <= len(body) or e - b != count * dtype.itemsize:
            raise ValueError(f"{where}: tensor '{name}' has data offsets [{b}, {e}] that do "
                             f"not match its shape {shape} and dtype {dtype} (or lie outside "
                             f"the file)")
        out[name] = np.frombuffer(body[b:e], dtype=dtype.newbyteorder("<"),
                                  count=count).astype(dtype).reshape(shape)
    return out, meta
