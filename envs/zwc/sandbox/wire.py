"""The channel between a candidate's process and its library process: frames and tags.

A frame is 4 bytes of big-endian length and that many bytes of UTF-8 JSON. Values that JSON
cannot hold travel as one-key objects (a plain dict itself travels as ``{"$d": pairs}``, so
every JSON object on the wire is a tag):

``$t`` tuple · ``$d`` dict (key/value pairs) · ``$c`` complex · ``$f`` a non-finite float ·
``$s`` slice · ``$r`` range · ``$e`` Ellipsis · ``$b`` bytes (hex) · ``$y`` a built-in type used
as a dtype (``float``) · ``$h`` an array held by the library (with its shape ``s`` and dtype
``d``) · ``$fn`` a function object made by the library at run time (a ``vectorize`` result) ·
``$cb`` a callable of the candidate's, which the library calls back.

Both ends use this module; it imports nothing heavy and is imported by the fork servers
before they fork. Neither end trusts what the other sends: the library refuses any frame
it cannot read, and the candidate can at worst corrupt its own answers.
"""

from __future__ import annotations

import json
import math
import os

MAX_FRAME = 64 * 1024 * 1024  # bytes of one message; a larger one ends the conversation
BUILTIN_TYPES = {"int": int, "float": float, "complex": complex, "bool": bool, "str": str, "object": object}

_encode_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode
_decode_json = json.JSONDecoder().decode
_read, _write, _isfinite, _type, _len = os.read, os.write, math.isfinite, type, len
_from_bytes, _to_bytes = int.from_bytes, int.to_bytes


class ChannelClosed(Exception):
    """The other end closed the channel (it exited or was stopped)."""


class FrameError(Exception):
    """A frame that is too large or not JSON."""


def send(fd: int, message) -> None:
    """Write one frame holding ``message`` (JSON-able, already tagged)."""
    data = _encode_json(message).encode()
    if _len(data) > MAX_FRAME:
        raise FrameError(f"message of {_len(data)} bytes is over the channel's limit of {MAX_FRAME}")
    view = memoryview(_to_bytes(_len(data), 4, "big") + data)
    while view:
        written = _write(fd, view)
        view = view[written:]


_PENDING: dict[int, bytes] = {}  # bytes read past the last frame, per descriptor


def _exactly(fd: int, count: int) -> bytes:
    """``count`` bytes from ``fd``: what was read ahead first, then reads of 64 KiB or more (one
    read usually brings a whole small frame, header and body)."""
    have = _PENDING.pop(fd, b"")
    parts, got = [have], _len(have)
    while got < count:
        chunk = _read(fd, max(count - got, 1 << 16))
        if not chunk:
            raise ChannelClosed("the other end closed the channel")
        parts.append(chunk)
        got += _len(chunk)
    data = b"".join(parts) if _len(parts) > 1 else have
    if got > count:
        _PENDING[fd] = data[count:]
        data = data[:count]
    return data


def pending(fd: int) -> bool:
    """Whether bytes of a next frame were already read from ``fd`` (``select`` cannot see them)."""
    return bool(_PENDING.get(fd))


def forget(fd: int) -> None:
    """Drop what was read ahead from ``fd`` (it is being closed; the number will be reused)."""
    _PENDING.pop(fd, None)


def receive(fd: int):
    """Read one frame; the decoded JSON (tags still in place)."""
    size = _from_bytes(_exactly(fd, 4), "big")
    if size > MAX_FRAME:
        raise FrameError(f"a frame of {size} bytes is over the channel's limit of {MAX_FRAME}")
    try:
        return _decode_json(_exactly(fd, size).decode())
    except ValueError as exc:
        raise FrameError(f"a frame that is not JSON: {exc}") from None


def float_tag(value: float):
    """A float as it travels: itself when finite, else ``{"$f": "nan"}``."""
    if _isfinite(value):
        return value
    return {"$f": "nan" if value != value else ("inf" if value > 0 else "-inf")}


def plain_tag(value, depth: int, encode):
    """The tag of a built-in value (``encode`` for what it contains), or None for other objects."""
    kind = _type(value)
    if kind is bool or kind is int or kind is str or value is None:
        return value
    if kind is float:
        return float_tag(value)
    if kind is list:
        return [encode(v, depth + 1) for v in value]
    if kind is tuple:
        return {"$t": [encode(v, depth + 1) for v in value]}
    if kind is dict:
        return {"$d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in dict.items(value)]}
    if kind is complex:
        return {"$c": [float_tag(value.real), float_tag(value.imag)]}
    if kind is slice:
        return {"$s": [encode(value.start, depth + 1), encode(value.stop, depth + 1), encode(value.step, depth + 1)]}
    if kind is range:
        return {"$r": [value.start, value.stop, value.step]}
    if value is Ellipsis:
        return {"$e": 0}
    if kind is bytes:
        return {"$b": value.hex()}
    for name, builtin in BUILTIN_TYPES.items():
        if value is builtin:
            return {"$y": name}
    return None


def plain_value(tag: dict, decode):
    """The built-in value of a tag (``decode`` for what it contains); KeyError for other tags."""
    if "$t" in tag:
        return tuple(decode(v) for v in tag["$t"])
    if "$d" in tag:
        return {decode(k): decode(v) for k, v in tag["$d"]}
    if "$f" in tag:
        return float(tag["$f"])
    if "$c" in tag:
        real, imag = tag["$c"]
        return complex(decode(real), decode(imag))
    if "$s" in tag:
        return slice(*(decode(v) for v in tag["$s"]))
    if "$r" in tag:
        return range(*tag["$r"])
    if "$e" in tag:
        return Ellipsis
    if "$b" in tag:
        return bytes.fromhex(tag["$b"])
    if "$y" in tag:
        return BUILTIN_TYPES[tag["$y"]]
    raise KeyError("not a plain tag")
