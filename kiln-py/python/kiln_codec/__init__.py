"""Kiln model files in Python.

``kiln_codec.open(path)`` maps a Kiln file, checks it as ``kiln check``
does and gives every tensor as a numpy array that is a read-only view of
the map (no copy, no page read until the array is), whenever the tensor's
bytes can be viewed in place: every whole-byte dtype of a Kiln file on a
little-endian host, since a Kiln file puts each payload at a multiple of
64 bytes. ``Model.info(name)`` says how each tensor is read and, for a
copy, why::

    import kiln_codec
    model = kiln_codec.open("model.kiln")
    for name in model.keys():
        print(name, model.info(name).dtype, model.tensor(name).shape)
    model.metadata()                      # the source's metadata

The facts (dtypes, shapes, offsets, metadata, refusals) come from the Rust
core's inspection model through the native module, the same facts ``kiln
inspect`` and the browser show; no format rule is written here.
"""

from __future__ import annotations

import builtins as _builtins
import mmap as _mmap
import os as _os
from typing import Any, Iterator

import numpy as _np

from . import _native
from .errors import KilnError

__all__ = ["open", "check", "convert", "Model", "Slice", "KilnError"]


def _numpy_dtype(name: str) -> _np.dtype:
    """A numpy dtype by the name the native module gives: numpy's own, or
    one of ml_dtypes' (bfloat16, the float8 and float4 types)."""
    try:
        return _np.dtype(name)
    except TypeError:
        import ml_dtypes

        return _np.dtype(getattr(ml_dtypes, name))


class Model:
    """A checked Kiln file and its tensors. Use ``kiln_codec.open``.

    The arrays it gives keep the file's map alive on their own: closing or
    dropping the model never leaves an array without its bytes. The map is
    read-only; a file truncated by another program while it is mapped makes
    a read of the lost pages fault, as for every memory-mapped reader.
    """

    def __init__(self, path: str | _os.PathLike[str]):
        self._path = _os.fspath(path)
        with _builtins.open(self._path, "rb") as f:
            stat = _os.fstat(f.fileno())
            self._native = _native.Model(self._path)
            dev, ino, length = self._native.identity()
            if (stat.st_dev, stat.st_ino, stat.st_size) != (dev, ino, length) and ino != 0:
                raise KilnError(f"{self._path}: the file changed while it was opened")
            # An empty file cannot be mapped; the check has refused it.
            self._map = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
        self._base = _np.frombuffer(self._map, dtype=_np.uint8)

    # -- what is in it

    def keys(self) -> list[str]:
        """The tensor names, in the model's order (a converted model's in
        its source file's order). A tensor without a name is ``#INDEX``; a
        name two directories share is ``PATH/NAME``."""
        return self._native.keys()

    def __len__(self) -> int:
        return len(self._native)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._native

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def header(self) -> dict[str, Any]:
        """What the file is: ``format``, ``type``, ``framed``, ``hash``,
        ``converted_from`` (``"safetensors"``, ``"gguf"`` or None), ``bytes``."""
        return self._native.header()

    def metadata(self) -> dict[str, Any]:
        """The metadata as Python values, by key (a converted model's are its
        source's: safetensors' ``__metadata__`` strings, GGUF's typed pairs)."""
        return {key: value for key, _type, value in self._native.metadata()}

    def metadata_types(self) -> dict[str, str]:
        """Each metadata key's Kiln type text (``u32``, ``list<str>``, ...)."""
        return {key: type_text for key, type_text, _value in self._native.metadata()}

    def info(self, name: str) -> "_native.TensorInfo":
        """A tensor's facts, as attributes (``as_dict()`` for a dict): ``dtype`` (Kiln's name, a block type such as
        ``Q4_K``, or the source's name for a dtype Kiln lacks), ``shape``,
        ``offset`` (absolute, in the file), ``length`` (bytes), ``elements``,
        ``layout``, ``block_size``; and how ``tensor`` reads it:
        ``numpy_dtype``, ``array_shape``, ``access`` (``"view"`` or
        ``"copy"``), ``in_place`` and ``reason`` (why a copy: ``"packed"``,
        ``"misaligned"``, ``"big-endian host"``)."""
        return self._native.info(name)

    def json(self) -> str:
        """The model's JSON form: what ``kiln inspect --json`` prints."""
        return self._native.json()

    # -- the tensors

    def tensor(self, name: str) -> _np.ndarray:
        """The tensor as a numpy array: a read-only view of the file's map
        for every whole-byte dtype in place (``float16``, ``ml_dtypes``'
        ``bfloat16``, ``float8_e4m3fn``, ``float8_e5m2``,
        ``float8_e8m0fnu``, the integers, ``bool``); a quantized block type
        or a dtype Kiln lacks as the ``uint8`` bytes of its payload (shape
        ``(length,)``); a packed dtype (``i4``, ``u4``, ``e2m1``) as a copy,
        one element per byte (``int8``, ``uint8``, ``float4_e2m1fn``)."""
        info = self.info(name)
        return self._elements(info, 0, _count(info)).reshape(info.array_shape)

    def get_slice(self, name: str) -> "Slice":
        """The tensor's rows on demand: ``model.get_slice(name)[2:5]`` reads
        only those rows (a view of them, or for a packed dtype a copy of
        them alone), as safetensors' ``get_slice`` does."""
        return Slice(self, self.info(name))

    def _elements(self, info: Any, first: int, count: int) -> _np.ndarray:
        dtype = _numpy_dtype(info.numpy_dtype)
        if info.reason == "packed":
            raw = self._native.unpack(info.key, first, count)
            return _np.frombuffer(raw, dtype=_np.uint8).view(dtype)
        start = info.offset + first * dtype.itemsize
        view = self._base[start : start + count * dtype.itemsize].view(dtype)
        if info.access == "copy":
            # Misaligned or on a big-endian host: the elements, copied into
            # an aligned array of the host's byte order.
            return view.astype(dtype.newbyteorder("="))
        return view

    def close(self) -> None:
        """Lets the model go: its map is unmapped once no array given uses
        it (an array keeps its bytes). Any later call on the model raises
        ValueError."""
        self.__dict__["_native"] = _Closed()
        self._base = None
        self._map = None

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        h = self.header()
        return f"<kiln_codec.Model {self._path!r}: {len(self)} tensors, {h.get('converted_from') or h['format']}>"


class _Closed:
    """What a closed model's native side is: every call says so."""

    def __getattr__(self, name: str) -> Any:
        raise ValueError("the model is closed")

    def __len__(self) -> int:
        raise ValueError("the model is closed")

    def __contains__(self, key: object) -> bool:
        raise ValueError("the model is closed")


def _product(shape: Any) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _count(info: Any) -> int:
    return _product(info.array_shape)


class Slice:
    """Rows of one tensor, read when indexed (``Model.get_slice``)."""

    def __init__(self, model: Model, info: Any):
        self._model = model
        self._info = info

    def get_shape(self) -> list[int]:
        return list(self._info.array_shape)

    def get_dtype(self) -> str:
        return self._info.dtype

    def __getitem__(self, index: Any) -> _np.ndarray:
        shape = tuple(self._info.array_shape)
        if not shape:
            return self._model._elements(self._info, 0, 1).reshape(())[index]
        rows = range(shape[0])
        first = index[0] if isinstance(index, tuple) else index
        rest = index[1:] if isinstance(index, tuple) else ()
        if isinstance(first, slice):
            picked = rows[first]
            if picked.step == 1 and len(picked) > 0:
                row = _product(shape[1:])
                block = self._model._elements(self._info, picked.start * row, len(picked) * row)
                return block.reshape((len(picked),) + shape[1:])[(slice(None),) + tuple(rest)]
        elif isinstance(first, int):
            i = rows[first]
            row = _product(shape[1:])
            block = self._model._elements(self._info, i * row, row)
            return block.reshape(shape[1:])[tuple(rest)]
        # Anything else (steps, lists, masks): the whole tensor, indexed.
        return self._model.tensor(self._info.key).reshape(shape)[index]


def open(path: str | _os.PathLike[str]) -> Model:  # noqa: A001 - the name safetensors users know
    """Maps and checks the Kiln file ``path``: every rule of the format, with
    the same verdict as ``kiln check`` (a converted model's type known from
    its frame). Raises ``KilnError`` for a file it refuses, ``OSError`` for
    one it cannot read."""
    model = Model(path)
    return model


def check(data: bytes | bytearray | memoryview, type: str | None = None, framed: bool | None = None, cap: int | None = None) -> str:  # noqa: A002
    """Checks that ``data`` is one valid Kiln value, as ``kiln check`` does:
    the type, framing and cap from the arguments and, where they are None,
    from the bytes (a frame by its magic, a converted model's type by its
    frame's hash, else a tensor directory). Returns the canonical type text
    checked; raises ``KilnError`` with the wire code and offset."""
    return _native.check(bytes(data) if not isinstance(data, bytes) else data, type, framed, cap)


def convert(src: str | _os.PathLike[str], dst: str | _os.PathLike[str], shards: bool = False) -> dict[str, int]:
    """Converts as ``kiln convert SRC DST`` does (``--shards`` when
    ``shards``): safetensors or GGUF (a file, a safetensors index, a GGUF
    split set's first file) to Kiln and back, byte for byte. Returns
    ``tensors``, ``metadata`` and ``written`` bytes; raises ``KilnError``."""
    src, dst = _os.fspath(src), _os.fspath(dst)
    if not shards:
        _os.stat(src)  # FileNotFoundError for a missing input, as Python's own
    tensors, metadata, written = _native.convert(src, dst, shards)
    return {"tensors": tensors, "metadata": metadata, "written": written}
