"""autograder.sandbox.wire, the framing between the grader and the worker, fuzzed with hypothesis.

A frame is ``<Q header length> header(JSON) <I tensor count> (<Q length> raw bytes)*``. The grader
decodes frames an untrusted process wrote, so: what the worker encodes comes back equal, and a
truncated, corrupted or oversize frame raises WireError (or a subclass), never anything else.
Frames are read by the real ``Reader`` from a temporary file, the way it reads the worker's pipe.
"""

from __future__ import annotations

import json
import math
import os
import struct
import tempfile
import time

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.sandbox import wire

FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int64, torch.int32,
          torch.int16, torch.int8, torch.uint8, torch.bool]


def read_frame(data: bytes, clean: bool = True):
    """What ``wire.Reader`` makes of ``data`` followed by the end of the channel."""
    with tempfile.TemporaryFile() as handle:
        os.write(handle.fileno(), data)
        os.lseek(handle.fileno(), 0, os.SEEK_SET)
        return wire.Reader(handle.fileno(), clean=clean).read()


def frame(header: bytes, blobs: list[bytes] = ()) -> bytes:
    """A frame built by hand around any header."""
    parts = [struct.pack("<Q", len(header)), header, struct.pack("<I", len(blobs))]
    for blob in blobs:
        parts += [struct.pack("<Q", len(blob)), blob]
    return b"".join(parts)


# -- what can travel ------------------------------------------------------------------------

@st.composite
def tensors(draw) -> torch.Tensor:
    """Any supported dtype, 0 to 4 dimensions (0-d and empty included), any bit pattern
    (NaN and infinities too), sometimes not contiguous."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.lists(st.integers(0, 4), max_size=4))
    numel = math.prod(shape)
    if dtype is torch.bool:
        t = torch.tensor(draw(st.lists(st.booleans(), min_size=numel, max_size=numel)), dtype=torch.bool)
    else:
        size = torch.empty((), dtype=dtype).element_size()
        raw = draw(st.binary(min_size=numel * size, max_size=numel * size))
        t = torch.frombuffer(bytearray(raw), dtype=dtype) if raw else torch.empty(0, dtype=dtype)
    t = t.reshape(shape)
    if t.dim() >= 2 and draw(st.booleans()):
        t = t.transpose(0, 1)  # a view: not contiguous
    return t


scalars = (st.none() | st.booleans() | st.integers(-2**80, 2**80)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20))
keys = st.text(max_size=10).filter(lambda k: k != "__tensor__")  # the one key the format reserves
values = st.recursive(scalars | tensors(),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
                      max_leaves=12)


def same(a, b) -> bool:
    """Equal as the wire promises: tensors bit for bit (NaN included), with dtype and shape;
    NaN equals NaN; tuples arrive as lists."""
    if isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
                and a.contiguous().reshape(-1).view(torch.uint8).tolist()
                == b.reshape(-1).view(torch.uint8).tolist())
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, list) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return type(a) is type(b) and a == b


@FUZZ
@given(values)
def test_every_value_round_trips(value):
    assert same(value, read_frame(wire.encode(value), clean=False))  # as the worker reads the cells' source


def test_the_graders_reader_drops_control_characters_from_text():
    """Whatever the worker sends (it may skip any escaping or cut of its own): no ANSI or C1 sequence, no
    bidirectional override reaches a report, in keys or values, and no text longer than TEXT_LIMIT;
    newlines, tabs and other text stay."""
    sent = {"message": "\x1b[2J\x9b31m\u202eTotal\r\x07", "\x1bkey": ["a\tb\nc \u00e9\u4e2d"]}
    assert read_frame(wire.encode(sent)) == {"message": "?[2J?31m?Total??", "?key": ["a\tb\nc \u00e9\u4e2d"]}
    assert read_frame(wire.encode("x" * 10**6)) == "x" * wire.TEXT_LIMIT  # a cut the worker skipped


@FUZZ
@given(tensors())
def test_a_tensor_keeps_dtype_shape_and_bits(t):
    back = read_frame(wire.encode({"x": t}))["x"]
    assert same(t, back)
    assert back.is_contiguous()


def test_write_then_read_through_a_pipe():
    message = {"op": "forward", "x": torch.arange(6.0).reshape(2, 3), "train": False, "seed": None}
    read_end, write_end = os.pipe()
    try:
        wire.write(write_end, message)
        os.close(write_end)
        write_end = None
        assert same(message, wire.Reader(read_end).read())
    finally:
        os.close(read_end)
        if write_end is not None:
            os.close(write_end)


def test_a_large_load_crosses_a_pipe_and_each_tensor_gets_memory_of_its_own():
    """A GPT-2-size load (four 768x768 weights, 9 MB) through a pipe: each tensor arrives in a
    writable buffer of its own (not shared with the others)."""
    import threading

    weights = {f"w{i}": torch.randn(768, 768) for i in range(4)} | {"b": torch.randn(768), "n": torch.arange(3)}
    message = {"op": "load_weights", "handle": 1, "tensors": weights}
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=wire.write, args=(write_end, message))
    try:
        writer.start()
        back = wire.Reader(read_end).read(time.monotonic() + 60)
        writer.join()
        assert same(message, back)
        first, second = back["tensors"]["w0"], back["tensors"]["w1"]
        first.add_(1.0)  # its own writable memory: the other tensors are unchanged
        assert same(second, weights["w1"]) and same(first, weights["w0"] + 1.0)
    finally:
        os.close(read_end)  # a writer still blocked on a full pipe then fails instead of hanging
        writer.join()
        os.close(write_end)


def test_tuples_and_non_string_keys_arrive_as_lists_and_strings():
    assert read_frame(wire.encode({1: (1, 2), "a": [(3,)]})) == {"1": [1, 2], "a": [[3]]}


@pytest.mark.parametrize("t", [torch.tensor([1 + 2j, -3.5 - 1j]), torch.tensor([7, 8], dtype=torch.uint16)],
                         ids=["complex64", "uint16"])
def test_other_dtypes_travel_as_float64(t):
    back = read_frame(wire.encode(t))
    assert back.dtype == torch.float64
    assert back.tolist() == t.real.double().tolist()


def test_a_tensor_that_requires_grad_travels_detached():
    t = torch.ones(2, requires_grad=True) * 3
    back = read_frame(wire.encode(t))
    assert not back.requires_grad and back.tolist() == [3.0, 3.0]


# -- what must be refused -------------------------------------------------------------------

@FUZZ
@given(values, st.data())
def test_a_truncated_frame_raises_wire_error(value, data):
    encoded = wire.encode(value)
    cut = data.draw(st.integers(0, len(encoded) - 1), label="bytes kept")
    with pytest.raises(wire.WireError):
        read_frame(encoded[:cut])


@FUZZ
@given(values, st.data())
def test_a_corrupted_frame_decodes_or_raises_wire_error(value, data):
    encoded = bytearray(wire.encode(value))
    for _ in range(data.draw(st.integers(1, 4), label="bytes changed")):
        at = data.draw(st.integers(0, len(encoded) - 1), label="at")
        encoded[at] = data.draw(st.integers(0, 255).filter(lambda b, old=encoded[at]: b != old), label="to")
    try:
        read_frame(bytes(encoded))
    except wire.WireError:
        pass  # anything else propagates and fails the test


@FUZZ
@given(st.binary(max_size=64))
def test_random_bytes_decode_or_raise_wire_error(noise):
    try:
        read_frame(noise)
    except wire.WireError:
        pass


# JSON a hostile worker may put in a tensor header. No Infinity, and sizes of at most 1024
# (floats and digit strings included, as int() reads them): infinities, and sizes whose product
# torch cannot hold, are tested below.
def json_values(number, text):
    return st.recursive(
        st.none() | st.booleans() | number | text,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=6)


any_json = json_values(st.integers(-2**70, 2**70) | st.floats(allow_infinity=False), st.text(max_size=8))
size_json = json_values(st.integers(-2, 1024) | st.floats(-2, 1024) | st.just(math.nan), st.text(max_size=3))
DTYPE_NAMES = ["float16", "bfloat16", "float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool",
               "complex64", "float8", "Float32", ""]


@FUZZ
@given(dtype=st.sampled_from(DTYPE_NAMES) | any_json,
       shape=st.lists(st.integers(-2, 1024) | size_json, max_size=5) | size_json,
       index=st.integers(-3, 3) | any_json,
       blobs=st.lists(st.binary(max_size=24), max_size=3))
def test_a_hostile_tensor_header_decodes_consistently_or_raises_wire_error(dtype, shape, index, blobs):
    header = json.dumps({"out": {"__tensor__": index, "dtype": dtype, "shape": shape}}).encode()
    try:
        t = read_frame(frame(header, blobs))["out"]
    except wire.WireError:
        return
    assert isinstance(t, torch.Tensor)
    assert t.numel() * t.element_size() in [len(b) for b in blobs]  # the bytes it came with, no more


@pytest.mark.parametrize("shape", [[0, 2**63], [2**40, 2**40, 0]], ids=["size_past_int64", "storage_overflow"])
def test_an_empty_tensor_with_impossible_sizes_raises_wire_error(shape):
    header = json.dumps({"__tensor__": 0, "dtype": "float32", "shape": shape}).encode()
    with pytest.raises(wire.WireError):
        read_frame(frame(header, [b""]))


@pytest.mark.parametrize("header", [b'{"__tensor__": 0, "dtype": "float32", "shape": [Infinity]}',
                                    b'{"__tensor__": Infinity, "dtype": "float32", "shape": [0]}'],
                         ids=["size", "index"])
def test_an_infinite_number_in_a_tensor_header_raises_wire_error(header):
    with pytest.raises(wire.WireError):
        read_frame(frame(header, [b""]))


@pytest.mark.parametrize("header, blobs, why", [
    (b'{"__tensor__": 0, "dtype": "float32", "shape": [2]}', [b"\0" * 4], "does not match"),
    (b'{"__tensor__": 1, "dtype": "float32", "shape": [1]}', [b"\0" * 4], "malformed"),
    (b'{"__tensor__": 0, "dtype": "complex64", "shape": [1]}', [b"\0" * 8], "malformed"),
    (b'{"__tensor__": 0, "dtype": "float32", "shape": [-1]}', [b""], "bad tensor shape"),
    (b'{"__tensor__": 0, "dtype": "float32", "shape": [1]}', [], "malformed"),
    (b'{"__tensor__": 0, "dtype": "uint8", "shape": ' + json.dumps([1] * 17).encode() + b"}", [b"\0"],
     "bad tensor shape"),
    (b'{"x": ' * 100_000 + b"1" + b"}" * 100_000, [], "not valid JSON"),
    (b'{"op": "forward"', [], "not valid JSON"),
    (b'"\xff"', [], "not valid JSON"),
], ids=["bytes_short", "no_such_blob", "unknown_dtype", "negative_size", "no_blobs", "17_dims", "nested_deep",
        "unterminated", "not_utf8"])
def test_a_malformed_frame_says_why(header, blobs, why):
    with pytest.raises(wire.WireError, match=why):
        read_frame(frame(header, blobs))


def test_an_oversize_header_is_refused_before_it_is_read():
    too_long = struct.pack("<Q", wire.MAX_HEADER + 1)
    with pytest.raises(wire.BadFrame, match="a header of"):
        read_frame(too_long)  # nothing follows: the length alone must be refused


def test_an_oversize_tensor_is_refused_before_it_is_read():
    data = struct.pack("<Q", 4) + b"null" + struct.pack("<I", 1) + struct.pack("<Q", wire.MAX_FRAME + 1)
    with pytest.raises(wire.BadFrame, match="MiB of tensors"):
        read_frame(data)  # the 512 MiB never follow: the length alone must be refused


def test_tensors_that_together_pass_the_limit_are_refused():
    data = (struct.pack("<Q", 4) + b"null" + struct.pack("<I", 2)
            + struct.pack("<Q", 4) + b"abcd"  # a small tensor, then one that fills the limit exactly
            + struct.pack("<Q", wire.MAX_FRAME))
    with pytest.raises(wire.BadFrame, match="MiB of tensors"):
        read_frame(data)


def test_too_many_tensors_are_refused():
    data = struct.pack("<Q", 4) + b"null" + struct.pack("<I", 4097)
    with pytest.raises(wire.WireError, match="too many tensors"):
        read_frame(data)


def test_bad_frames_and_timeouts_are_wire_errors():
    assert issubclass(wire.BadFrame, wire.WireError)
    assert issubclass(wire.WireTimeout, wire.WireError)


def test_a_silent_writer_times_out():
    read_end, write_end = os.pipe()
    try:
        with pytest.raises(wire.WireTimeout):
            wire.Reader(read_end).read(deadline=0.0)
    finally:
        os.close(read_end)
        os.close(write_end)
