"""Operations on the student's namespace (build, call, forward, weights) where the student's code
runs, in the worker or the notebook's kernel; they never judge what they produce."""

from __future__ import annotations

import contextlib
import os
import random
import sys
import traceback

import torch
from torch import nn
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils._pytree import tree_flatten

# Code that is not the student's: the interpreter, installed packages, this package.
_NOT_STUDENT = tuple(sorted({sys.prefix, sys.base_prefix, sys.exec_prefix,
                             os.path.dirname(os.path.dirname(torch.__file__)),
                             os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}))


BOOK_FILE = "<the book's "  # the chapter's classes built in place of the student's (op_build)


def _student_frame(filename: str) -> bool:
    """Cells compiled by the worker (``<cell 4>``) or by IPython (a temporary file)."""
    if filename.startswith("<"):
        return not filename.startswith(("<frozen", "<string>", BOOK_FILE))
    return not filename.startswith(_NOT_STUDENT)


def _cell_of(filename: str) -> str:
    """The cell as the student finds it: its name (loader.cell_label), or IPython's ``In [12]``."""
    if filename.startswith("<"):
        return filename.strip("<>")
    try:
        count = sys.modules["IPython"].get_ipython().compile._filename_map.get(filename)
    except (KeyError, AttributeError):
        count = None
    return f"cell [{count}]" if type(count) is int else filename


def describe_error(exc: BaseException) -> dict:
    """Turn an exception raised by the student's code into plain data."""
    kind = "not_implemented" if isinstance(exc, NotImplementedError) else "exit" if isinstance(exc, SystemExit) else "exception"
    where = code = ""
    try:
        frames = traceback.extract_tb(exc.__traceback__)
    except BaseException:
        frames = []
    for frame in frames:  # the innermost frame in the student's code
        if _student_frame(frame.filename):
            where = f"{_cell_of(frame.filename)}, line {frame.lineno}, in {frame.name}"
            code = (frame.line or "").strip()[:120]  # the worker and IPython register each cell's text
    try:
        message = str(exc)
    except BaseException:
        message = "<unprintable>"
    return {"kind": kind, "type": type(exc).__name__, "message": message[:600], "where": where, "code": code}


def on_device(value, device: torch.device):
    """``value``'s tensors (it may be a list) moved to ``device``; float64 becomes float32 for Apple's MPS, which has none."""
    if isinstance(value, list):
        return [on_device(v, device) for v in value]
    if not isinstance(value, torch.Tensor):
        return value
    if device.type == "mps" and value.dtype == torch.float64:
        value = value.float()
    return value.to(device)


def seed_generators(seed: int | None, device: torch.device) -> None:
    """``torch.manual_seed(seed)`` unless ``seed`` is None; on the CPU alone only the CPU's generator, which
    saves 0.3 to 1 ms per build (docs/maintainers.md)."""
    if seed is None:
        return
    if device.type == "cpu" and not torch.cuda.is_initialized():
        torch.default_generator.manual_seed(int(seed))
    else:
        torch.manual_seed(int(seed))


# Float32 pinned to IEEE while a check runs: TF32 rounds products to about 1e-3 (docs/grading.md).
# PyTorch 2.9+ has per-key fp32_precision, where reading a legacy flag after a key was written raises.
_PRECISION_KEYS = []
if hasattr(torch._C, "_get_fp32_precision_getter"):
    for _key in [("generic", "all"), *((b, o) for b in ("cuda", "mkldnn") for o in ("all", "matmul", "conv", "rnn"))]:
        with contextlib.suppress(RuntimeError, TypeError):  # a key this release does not have
            torch._C._get_fp32_precision_getter(*_key)
            _PRECISION_KEYS.append(_key)


def _read_precision() -> tuple:
    if _PRECISION_KEYS:
        return tuple(torch._C._get_fp32_precision_getter(*key) for key in _PRECISION_KEYS)
    return torch._C._get_cublas_allow_tf32(), torch.get_float32_matmul_precision(), torch._C._get_cudnn_allow_tf32()


def _write_precision(values: tuple) -> None:
    if not _PRECISION_KEYS:
        torch._C._set_cublas_allow_tf32(values[0])
        torch.set_float32_matmul_precision(values[1])
        torch._C._set_cudnn_allow_tf32(values[2])
        return
    for key, value in zip(_PRECISION_KEYS, values):  # a key left unset follows its parent: set only what differs
        if torch._C._get_fp32_precision_getter(*key) != value:
            torch._C._set_fp32_precision_setter(*key, value)


_IEEE = ("ieee",) * len(_PRECISION_KEYS) if _PRECISION_KEYS else (False, "highest", False)


@contextlib.contextmanager
def ieee_precision():
    """Float32 matmuls and cuDNN in IEEE precision inside; the student's settings afterwards."""
    own = _read_precision()
    _write_precision(_IEEE)
    try:
        yield
    finally:
        _write_precision(own)


class Workspace:
    def __init__(self, namespace: dict, device: str = "cpu", *, interrupts_stop: bool = False):
        self.namespace = namespace
        self.device = torch.device(device)
        self.modules: dict[int, nn.Module] = {}
        # In a notebook's kernel an interrupt stops the checks; in the worker it is the student's error.
        self.interrupts_stop = interrupts_stop

    # -- dispatch ---------------------------------------------------------------------
    def dispatch(self, request: dict) -> dict:
        try:
            method = getattr(self, f"op_{request['op']}")  # the grader sends only the ops below
            with ieee_precision():
                return {"ok": method(**{k: v for k, v in request.items() if k != "op"})}
        except _Refused as refused:
            kind, name, message = refused.args
            return {"error": {"kind": kind, "type": name, "message": message, "where": ""}}
        except BaseException as exc:
            if self.interrupts_stop and isinstance(exc, KeyboardInterrupt):
                raise
            return {"error": describe_error(exc)}

    # -- helpers ------------------------------------------------------------------------
    def _lookup(self, name: str):
        if name not in self.namespace:
            raise _Refused("missing", "NameError", name)
        return self.namespace[name]

    def _result(self, value) -> dict:
        if isinstance(value, torch.Tensor):
            if value.device.type != self.device.type:
                return {"value_type": f"tensor on device '{value.device.type}'",
                        "repr": f"(the input was on '{self.device.type}': keep results on the input's "
                                "device, create new tensors with device=x.device)"}
            if value.layout != torch.strided or value.is_nested:
                return {"value_type": f"{value.layout} tensor", "repr": "(return a dense tensor)"}
            return {"tensor": value}
        if isinstance(value, nn.Module):
            return self._register(value)
        try:
            text = " ".join(repr(value).split())  # one line: a tuple of tensors spans many
        except BaseException:
            text = f"<{type(value).__name__}>"
        found = {"value_type": type(value).__name__, "repr": text if len(text) <= 120 else text[:117] + "..."}
        if type(value) in (int, float):  # a count such as attn_weights_bytes(...) travels as a JSON number
            found["number"] = value
        return found

    def _register(self, module: nn.Module) -> dict:
        module.to(self.device)
        handle = len(self.modules) + 1
        self.modules[handle] = module
        return {"module": handle, "info": self._info(module)}

    @staticmethod
    def _info(module: nn.Module) -> dict:
        submodules = {}
        for name, sub in module.named_modules():
            entry = {"class": type(sub).__name__}
            if isinstance(sub, nn.Dropout):
                entry["p"] = float(sub.p)
            if isinstance(sub, nn.Linear):
                entry["bias"] = sub.bias is not None
            submodules[name] = entry
        public = {name: value for name, value in vars(module).items() if not name.startswith("_")}
        return {
            "class": type(module).__name__,
            "params": {n: list(p.shape) for n, p in module.named_parameters()},
            "buffers": {n: {"shape": list(b.shape)} for n, b in module.named_buffers()},
            "modules": submodules,
            "plain_tensors": {n: list(v.shape) for n, v in public.items() if isinstance(v, torch.Tensor)},
            "module_containers": {n: type(v).__name__ for n, v in public.items() if isinstance(v, (list, tuple, dict)) and any(
                isinstance(m, nn.Module) for m in (v.values() if isinstance(v, dict) else v))},
            "scalars": {n: v for n, v in public.items() if isinstance(v, (int, float, bool))},
            "num_params": int(sum(p.numel() for p in module.parameters())),
        }

    # -- operations -------------------------------------------------------------------
    def op_reseed(self, seed: int) -> None:
        """Every random generator the submission may use starts from ``seed``."""
        torch.manual_seed(int(seed))
        random.seed(int(seed))
        if (numpy := sys.modules.get("numpy")) is not None:
            numpy.random.seed(int(seed))

    def op_describe(self, name: str) -> dict:
        if name not in self.namespace:
            return {"kind": "missing"}
        value = self.namespace[name]
        kind = "class" if isinstance(value, type) else "function" if callable(value) else "other"
        return {"kind": kind, "type": type(value).__name__}

    @contextlib.contextmanager
    def _substituted(self, substitute: dict | None):
        """The chapter's own classes (source text) in place of the student's while a module is built."""
        absent = object()
        saved = {name: self.namespace.get(name, absent) for name in substitute or {}}
        try:
            for name, source in (substitute or {}).items():
                scope: dict = {"__name__": "autograder_book"}
                exec(compile(str(source), f"{BOOK_FILE}{name}>", "exec"), scope)
                self.namespace[name] = scope[name]
            yield
        finally:
            for name, value in saved.items():
                if value is absent:
                    self.namespace.pop(name, None)
                else:
                    self.namespace[name] = value

    def _invoke(self, name: str, what: str, args: list, kwargs: dict | None, seed, substitute):
        """``name`` (a ``what``, the book's in its place where substituted) and what calling it gave."""
        with self._substituted(substitute):
            fn = self._lookup(name)
            if not callable(fn):
                raise _Refused("bad_type", "TypeError", f"`{name}` is a {type(fn).__name__}, not a {what}")
            seed_generators(seed, self.device)
            return fn, fn(*args, **(kwargs or {}))

    def op_call(self, name: str, args: list, kwargs: dict | None = None, seed=None, substitute=None, echo=False):
        """``echo``: the arguments come back too, as the call left them."""
        args = on_device(args, self.device)
        fn, value = self._invoke(name, "function", args, kwargs, seed, substitute)
        if isinstance(fn, type) and isinstance(value, fn):
            raise _Refused("bad_type", "TypeError", f"`{name}` is a class, not a function: calling it built a "
                           f"{type(value).__name__} object instead of returning a result; define it with `def {name}(...)`")
        return {**self._result(value), "args": args} if echo else self._result(value)

    def op_build(self, name: str, args: list, kwargs: dict | None = None, seed=None, substitute=None):
        module = self._invoke(name, "class", args, kwargs, seed, substitute)[1]
        if not isinstance(module, nn.Module):
            raise _Refused("bad_type", "TypeError", f"`{name}(...)` gave a {type(module).__name__}, not an nn.Module")
        return self._register(module)

    def op_forward(self, handle: int, x, train: bool = False, seed=None, repeat: int = 0, echo=False):
        module = self.modules[handle]
        module.train(bool(train))
        x = on_device(x, self.device)
        seed_generators(seed, self.device)
        with torch.no_grad():
            if not repeat:
                return {**self._result(module(x)), "args": [x]} if echo else self._result(module(x))
            outs = []
            for _ in range(int(repeat)):
                out = module(x)
                if not isinstance(out, torch.Tensor):
                    return self._result(out)
                outs.append(out)
            return {"tensor": torch.stack(outs)}

    def op_state(self, handle: int):
        module = self.modules[handle]
        return {
            "params": {n: p.detach() for n, p in module.named_parameters()},
            "buffers": {n: b.detach() for n, b in module.named_buffers()},
        }

    def op_load_weights(self, handle: int, tensors: dict) -> None:
        module = self.modules[handle]
        named = {**dict(module.named_parameters()), **dict(module.named_buffers())}
        if unknown := sorted(set(tensors) - set(named)):
            raise _Refused("missing", "NameError", ", ".join(unknown))
        with torch.no_grad():
            for name, value in tensors.items():
                named[name].copy_(on_device(value.to(named[name].dtype), named[name].device))

    def op_grads(self, handle: int, x, upstream):
        module = self.modules[handle]
        module.train(False)
        module.zero_grad(set_to_none=True)
        out = module(on_device(x, self.device))
        if not isinstance(out, torch.Tensor):
            return self._result(out)
        if not out.requires_grad:
            return {"out": out.detach(), "grads": {}}
        (out * on_device(upstream, self.device)).sum().backward()
        grads = {n: p.grad.detach() for n, p in module.named_parameters() if p.grad is not None}
        return {"out": out.detach(), "grads": grads}

    def op_device_forward(self, handle: int, shape: list):
        """One forward pass (eval mode) as if the module sat on a GPU (:class:`_OnDevice`)."""
        module = self.modules[handle]
        module.train(False)
        x = on_device(torch.rand(shape, generator=torch.Generator().manual_seed(0)), self.device)
        device = _OnDevice([x, *module.parameters(), *module.buffers()])
        with torch.no_grad(), device:
            out = module(x)
        if not isinstance(out, torch.Tensor):
            return self._result(out)
        if id(out) not in device.on:
            raise RuntimeError("the output is not on the input's device: keep every step on x.device")
        return {"shape": list(out.shape)}

    def op_calls(self, handle: int | None = None, x=None, name: str = "", args: list = ()):
        """The PyTorch functions one forward pass (eval mode) or one call of function ``name`` makes."""
        fn = self._lookup(name) if name else self.modules[handle]
        if not name:
            fn.train(False)
        args = on_device(list(args) if name else [x], self.device)  # moved before the count starts
        with torch.no_grad(), _Calls() as calls:
            out = fn(*args)
        if not isinstance(out, torch.Tensor):
            return self._result(out)
        return {"calls": sorted(calls.names)[:1000]}


class _Calls(TorchFunctionMode):
    """Names every PyTorch function called inside."""

    def __init__(self):
        super().__init__()
        self.names: set[str] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.add(resolve_name(func) or getattr(func, "__name__", "?"))
        return func(*args, **(kwargs or {}))


class _OnDevice(TorchFunctionMode):
    """The CPU standing in for a GPU: the tensors given and what is made from them or with a
    device are "on the device"; a call mixing one with another tensor (not 0-d) fails, as on a GPU."""

    def __init__(self, tensors):
        super().__init__()
        self.on = {id(t): t for t in tensors}  # held, so that no id is reused

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
        on = any(id(t) in self.on for t in tensors)
        if on and func not in _MOVES:
            stray = next((t for t in tensors if id(t) not in self.on and t.dim() > 0), None)
            if stray is not None:
                raise RuntimeError(
                    f"Expected all tensors to be on the same device, but {resolve_name(func) or func} got a tensor "
                    f"of shape {list(stray.shape)} that stays on the CPU when the module moves")
        out = func(*args, **kwargs)
        if func is torch.Tensor.cpu:
            return out.view_as(out)  # another tensor than the one "on the device", even on the CPU
        moved = kwargs.get("device") is not None or func is torch.Tensor.cuda or (
            func is torch.Tensor.to and any(isinstance(a, (torch.device, str)) or type(a) is int for a in args[1:]))
        if on or moved:
            self.on.update((id(t), t) for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor))
        return out


_MOVES = (torch.Tensor.to, torch.Tensor.type_as)  # they take a CPU tensor to the device


class _Refused(Exception):
    """Not the student's error: a name that is missing, or is not what the stage asks for (kind, type, message)."""
