"""The framing between the grader and the worker: JSON plus raw tensor bytes, never pickle (the
grader decodes what an untrusted process wrote); every header field is validated."""

from __future__ import annotations

import json
import math
import os
import re
import select
import struct
import time

import torch

from autograder.sandbox import oslayer

MAX_FRAME = 512 * 1024 * 1024   # tensor bytes in one frame (the worker refuses to send half that)
MAX_HEADER = 64 * 1024 * 1024   # JSON part of one frame
_DTYPES = {
    "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64, "int64": torch.int64, "int32": torch.int32,
    "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool,
}
_NAMES = {v: k for k, v in _DTYPES.items()}
# Text from the worker loses control characters (an ANSI or C1 sequence that clears the screen or
# recolours the grade) and bidirectional overrides, each a '?', and is cut to TEXT_LIMIT characters
# (printed output, the longest, keeps 20,000): here, as the worker could skip any escaping or cut of its own.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
TEXT_LIMIT = 32_000


class WireError(Exception):
    """The other side sent something that is not a valid frame, or went away."""


class WireTimeout(WireError):
    pass


class BadFrame(WireError):
    """A frame the grader will not take: too large, or not a valid frame (the channel is still open)."""


def encode(obj) -> bytes:
    blobs: list = []  # views of each tensor's bytes (the frame is joined at once)

    def walk(o):
        if isinstance(o, torch.Tensor):
            t = o.detach().to("cpu").contiguous()
            if t.dtype not in _NAMES:  # complex and exotic dtypes travel as float64
                t = t.real.double() if t.is_complex() else t.double()
            blobs.append(memoryview(t.reshape(-1).view(torch.uint8).numpy()) if t.numel() else b"")
            return {"dtype": _NAMES[t.dtype], "shape": list(t.shape), "__tensor__": len(blobs) - 1}
        if isinstance(o, dict):
            return {str(k): walk(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [walk(v) for v in o]
        return o

    header = json.dumps(walk(obj)).encode()
    parts = [struct.pack("<Q", len(header)), header, struct.pack("<I", len(blobs))]
    for raw in blobs:
        parts += [struct.pack("<Q", len(raw)), raw]
    return b"".join(parts)


def _decode_tensor(meta: dict, blobs: list[bytes]) -> torch.Tensor:
    try:
        dtype = _DTYPES[meta["dtype"]]
        shape = [int(s) for s in meta["shape"]]
        raw = blobs[int(meta["__tensor__"])]
    except (KeyError, IndexError, TypeError, ValueError, OverflowError) as exc:  # Infinity is valid JSON
        raise BadFrame(f"malformed tensor header {meta!r}") from exc
    # Each size below 2**62: a zero elsewhere in the shape makes any product match 0 bytes,
    # and torch cannot allocate a size that large even when it holds nothing.
    if any(s < 0 or s >= 2**62 for s in shape) or len(shape) > 16:
        raise BadFrame(f"bad tensor shape {shape}")
    if math.prod(shape) * dtype.itemsize != len(raw):
        raise BadFrame(f"tensor of shape {shape} does not match its {len(raw)} bytes")
    if not raw:
        try:
            return torch.empty(shape, dtype=dtype)
        except RuntimeError as exc:  # "Storage size calculation overflowed" for sizes like [2**40, 2**40, 0]
            raise BadFrame(f"bad tensor shape {shape}") from exc
    return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape)  # its own writable memory


def _decode(header: bytes, blobs: list[bytes], clean: bool = True):
    def text(o):
        return _CONTROL.sub("?", o[:TEXT_LIMIT]) if clean and isinstance(o, str) else o

    def walk(o):
        if isinstance(o, dict):
            if "__tensor__" in o:
                return _decode_tensor(o, blobs)
            return {text(k): walk(v) for k, v in o.items()}
        if isinstance(o, list):
            return [walk(v) for v in o]
        return text(o)

    try:  # a hostile worker may nest lists a million deep: that is a bad frame, not a crash
        return walk(json.loads(header))
    except (ValueError, RecursionError) as exc:
        raise BadFrame(f"frame header is not valid JSON ({type(exc).__name__})") from None


class Reader:
    """Reads frames from a file descriptor, with an optional deadline; ``clean``: text without control characters
    (the worker reads the cells' source as it is)."""

    def __init__(self, fd: int, deadlines: bool = True, clean: bool = True):
        self.fd, self.clean = fd, clean
        # Without select on pipes (oslayer), a thread reads for the deadlines (the worker's reader has none).
        self._pump = oslayer.Pump(fd) if deadlines and not oslayer.is_posix() else None
        self._buffer = bytearray()

    def read_some(self, deadline: float | None, most: int = 1 << 20) -> bytes:
        """Up to ``most`` bytes (``b""``: the channel closed); :class:`WireTimeout` past ``deadline``."""
        if not self._buffer and self._pump is not None:
            chunk = self._pump.get(deadline)
            if chunk is None:
                raise WireTimeout("no answer before the time limit")
            if not chunk:
                return b""
            self._buffer += chunk
        if self._buffer:
            taken = bytes(self._buffer[:most])
            del self._buffer[:most]
            return taken
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                raise WireTimeout("no answer before the time limit")
        return os.read(self.fd, most)

    def skip_to(self, marker: bytes, deadline: float) -> bool:
        """Read up to and including ``marker``; False when it does not come in time or more follows
        it (the channel is then out of step)."""
        seen = b""
        while time.monotonic() < deadline:
            try:
                chunk = self.read_some(deadline, 1 << 16)
            except WireTimeout:
                return False
            if not chunk:
                return False
            seen = (seen + chunk)[-(len(marker) + (1 << 16)):]
            at = seen.find(marker)
            if at >= 0:
                return at + len(marker) == len(seen) and not self._buffer
        return False

    def _exact(self, n: int, deadline: float | None) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = self.read_some(deadline, min(n - got, 1 << 20))
            if not chunk:
                raise WireError("the other side closed the channel")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def read(self, deadline: float | None = None):
        (hlen,) = struct.unpack("<Q", self._exact(8, deadline))
        if hlen > MAX_HEADER:
            raise BadFrame(f"a header of {hlen} bytes")
        header = self._exact(hlen, deadline)
        (count,) = struct.unpack("<I", self._exact(4, deadline))
        if count > 4096:
            raise BadFrame("too many tensors in one frame")
        blobs, total = [], 0
        for _ in range(count):
            (blen,) = struct.unpack("<Q", self._exact(8, deadline))
            total += blen
            if total > MAX_FRAME:
                raise BadFrame(f"more than {MAX_FRAME // 2**20} MiB of tensors")
            blobs.append(self._exact(blen, deadline))
        return _decode(header, blobs, self.clean)


def loads(frame: bytes):
    """One whole frame already in memory, read as from a pipe (the notebook's local transport)."""
    reader = Reader(-1, deadlines=False)
    reader._buffer += frame
    return reader.read()


def write(fd: int, obj, deadline: float | None = None) -> None:
    """Write one frame; with a ``deadline`` the fd must be non-blocking, so that a reader stuck in
    student code raises :class:`WireTimeout`, not a hang."""
    data = memoryview(encode(obj))
    if deadline is not None and not oslayer.is_posix():
        if not oslayer.write_with_deadline(fd, data, deadline):
            raise WireTimeout("the other side stopped reading before the time limit")
        return
    while data:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise WireTimeout("the other side stopped reading before the time limit")
        try:
            data = data[os.write(fd, data):]
        except BlockingIOError:
            continue


# Written by the loaded worker once a stage's process ended: the answer when it died between frames,
# else a mark the grader skips to, past what a process killed mid-answer left half-written.
STAGE_OVER_EVENT = {"event": "stage_over"}
STAGE_OVER = encode(STAGE_OVER_EVENT)
