"""The student's code as the checks see it: functions and modules behind proxies, over a transport
to the sandboxed worker or, for the notebook's test cells, to the kernel (the same encoding both ways)."""

from __future__ import annotations

import _thread
import contextlib
import threading
from dataclasses import replace

import torch

from autograder.core.chapter import ErrorHints
from autograder.core.failures import CheckFailure, Hint, NotImplementedYet, StudentCodeError
from autograder.core.hints import error_hint
from autograder.sandbox import wire
from autograder.sandbox.errors import over_the_stage_time_limit


@contextlib.contextmanager
def torch_threads(n: int):
    """PyTorch on ``n`` threads inside (``as`` gives the count before): the grader's tensors are small,
    and a second OpenMP thread spins on the core the worker or the student's code needs."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield before
    finally:
        torch.set_num_threads(before)


class LocalTransport:
    """The student's objects in this process (the test cells). An interrupt goes on up, unless
    ``time_limit`` ran out, which ends the stage as the worker's time limit does."""

    def __init__(self, namespace: dict, device: str = "cpu", time_limit: StageClock | None = None,
                 threads: int | None = None):
        from autograder.sandbox.workspace import Workspace

        self.workspace = Workspace(namespace, device, interrupts_stop=True)
        self.time_limit = time_limit
        self.threads = threads  # the kernel's own thread count (the checks run on one)

    def full_size(self):
        """The kernel's own thread count inside (see :meth:`Submission.full_size`)."""
        return torch_threads(self.threads) if self.threads and self.threads > 1 else contextlib.nullcontext()

    def request(self, req: dict) -> dict:
        try:
            answer = self.workspace.dispatch(_copied(req))
        except KeyboardInterrupt:
            if self.time_limit is not None and self.time_limit.expired:
                raise over_the_stage_time_limit(self.time_limit.seconds) from None
            raise
        return _copied(answer)


class StageClock:
    """A stage's time limit in this process: the main thread is interrupted as Jupyter's Interrupt does."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> StageClock:
        self._timer.start()
        return self

    def _expire(self) -> None:
        self.expired = True
        _thread.interrupt_main()

    def __exit__(self, *exc) -> None:
        self._timer.cancel()


def _copied(obj):
    """``obj`` through the wire format, as the worker's answers travel: a check sees the same either way."""
    return wire.loads(wire.encode(obj))


class Submission:
    """Entry point for checks: ``sub.function(name)``, ``sub.build(name, ...)``."""

    def __init__(self, transport, stage_label: str = "", error_hints: ErrorHints = (), cell_errors: list[dict] = ()):
        self.transport = transport
        self.stage_label = stage_label
        self.error_hints = error_hints  # the chapter's table for this stage (core.hints.error_hint)
        # a missing name is often a cell that failed to run when the notebook ran: said beside it
        self.cell_error = _first_cell_error(cell_errors)
        # class name -> source of the chapter's class built in place of the student's (see
        # Workspace.op_build), and the note the stage's row then shows
        self.substitute: dict[str, str] = {}
        self.notes: list[str] = []
        self.timed_out: dict[str, int] = {}  # the student's names whose stage ran past its time limit -> that stage
        self.memo: dict = {}  # what one check worked out that another of the stage asks again (memoised)

    def full_size(self):
        """A block that runs the student's code on full-size tensors: in a kernel, on the kernel's own
        threads (the rest of a test cell keeps to one); the worker keeps its one thread."""
        full_size = getattr(self.transport, "full_size", None)
        return full_size() if full_size is not None else contextlib.nullcontext()

    def _ask(self, req: dict, what: str):
        answer = self.transport.request(req)
        if "error" in answer:
            raise self._failure(answer["error"], what)
        return answer.get("ok")

    def not_defined(self, name: str, hint: str) -> CheckFailure:
        return CheckFailure(f"`{name}` is not defined", self._beside_cell_error(Hint(hint)))

    def _beside_cell_error(self, hint: Hint) -> Hint:
        return replace(hint, what=f"{hint.what}; {self.cell_error}") if self.cell_error else hint

    def _failure(self, error: dict, what: str) -> CheckFailure:
        kind = error.get("kind")
        if kind == "not_implemented":
            return NotImplementedYet(what)
        if kind == "missing":
            return self.not_defined(error.get("message", ""), f"define it (the exact name, case matters) in the "
                                    f"{self.stage_label} cell and run that cell" if self.stage_label
                                    else "define it and run its cell")
        if kind == "bad_type":
            return CheckFailure(error.get("message", "wrong kind of object"),
                                "check the stage's instructions: a class where a class is asked for, "
                                "a function where a function is asked for")
        if kind == "exit":
            return StudentCodeError(f"{what} called sys.exit()/exit()",
                                    "never exit the process from a function or a method")
        code = f": {error['code']}" if error.get("where") and error.get("code") else ""
        where = f" ({error['where']}{code})" if error.get("where") else ""
        hint = error_hint(error.get("type", ""), error.get("message", ""), self.error_hints)
        if error.get("type") == "NameError":
            hint = self._beside_cell_error(hint)
        return StudentCodeError(f"{what} raised {error.get('type')}: {error.get('message')}{where}",
                                at_line(hint, error.get("where", "")), exc_type=str(error.get("type", "")),
                                exc_message=str(error.get("message", "")))

    def substituting(self, name: str, source: str, note: str) -> None:
        """From now on the chapter's class is built as ``name``; the stage's row says so (``note``)."""
        self.substitute = {**self.substitute, name: source}
        self.memo.clear()  # what was built depends on the substitutes
        if note not in self.notes:
            self.notes.append(note)

    def memoised(self, key, compute):
        """``compute()``, once a stage per ``key``."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    def kind(self, name: str) -> str:
        """"missing", "class", "function" or "other"."""
        return self._ask({"op": "describe", "name": name}, name)["kind"]

    def function(self, name: str) -> StudentFunction:
        return StudentFunction(self, name)

    def build(self, name: str, *args, seed: int | None = None, **kwargs) -> StudentModule:
        what = f"{name}({', '.join([repr(a) for a in args] + [f'{k}={v!r}' for k, v in kwargs.items()])})"
        result = self._ask({"op": "build", "name": name, "args": list(args), "kwargs": kwargs,
                            "seed": seed, "substitute": self.substitute}, what)
        return StudentModule(self, result["module"], result["info"], what)

    def call_for_module(self, name: str) -> StudentModule:
        """Call a zero-argument builder such as ``build_gpt2_small_mha()``."""
        what = f"{name}()"
        result = self._ask({"op": "call", "name": name, "args": [], "substitute": self.substitute}, what)
        if "module" not in result:
            raise CheckFailure(f"{what} returned {result.get('value_type')} ({result.get('repr')}), "
                               "expected an nn.Module", "return the module you built")
        return StudentModule(self, result["module"], result["info"], what)


def expect_tensor(result: dict, what: str) -> torch.Tensor:
    if isinstance(result, dict) and isinstance(result.get("tensor"), torch.Tensor):
        return result["tensor"]
    kind = result.get("value_type", "a module") if isinstance(result, dict) else type(result).__name__
    shown = result.get("repr", "") if isinstance(result, dict) else ""
    hint = "return a torch.Tensor built with torch operations"
    if kind in ("list", "tuple", "ndarray"):
        hint = f"you returned a {kind}: keep the computation in torch and return the tensor itself"
    elif kind == "NoneType":
        hint = "the function has no `return` statement (or returns None)"
    raise CheckFailure(f"{what} returned {kind} {shown}".rstrip() + ", expected a torch.Tensor", hint)


class StudentFunction:
    def __init__(self, sub: Submission, name: str):
        self.sub, self.name, self.what = sub, name, f"{name}(...)"

    def __call__(self, *args: torch.Tensor) -> torch.Tensor:
        return expect_tensor(self.sub._ask({"op": "call", "name": self.name, "args": list(args)}, self.what), self.what)

    def echo(self, *args: torch.Tensor) -> tuple[torch.Tensor, list]:
        """One call, and its arguments as the call left them."""
        got = self.sub._ask({"op": "call", "name": self.name, "args": list(args), "echo": True}, self.what)
        return expect_tensor(got, self.what), got.get("args") or []

    def number(self, *args: int) -> int | float:
        """Call a function that returns a Python number (a count, a number of bytes)."""
        what = f"{self.name}({', '.join(repr(a) for a in args)})"
        got = self.sub._ask({"op": "call", "name": self.name, "args": list(args)}, what)
        if isinstance(got, dict) and type(got.get("number")) in (int, float):
            return got["number"]
        got = got if isinstance(got, dict) else {}
        kind = "a tensor" if "tensor" in got else "a module" if "module" in got else got.get("value_type", "?")
        raise CheckFailure(f"{what} returned {kind} {got.get('repr', '')}".rstrip() + ", expected a Python int",
                           f"return a Python int, not {kind}")

    def calls(self, *args: torch.Tensor) -> list[str]:
        """Names of the PyTorch functions one call makes."""
        return _names(self.sub._ask({"op": "calls", "name": self.name, "args": list(args)}, self.what), self.what)


class StudentModule:
    def __init__(self, sub: Submission, handle: int, info: dict, what: str):
        self.sub, self.handle, self.info, self.what = sub, handle, info, what

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        what = f"{self.what}.forward"
        return expect_tensor(self.sub._ask({"op": "forward", "handle": self.handle, "x": x}, what), what)

    def echo(self, x: torch.Tensor) -> tuple[torch.Tensor, list]:
        """One forward pass (eval mode), and its input as the pass left it."""
        what = f"{self.what}.forward"
        got = self.sub._ask({"op": "forward", "handle": self.handle, "x": x, "echo": True}, what)
        return expect_tensor(got, what), got.get("args") or []

    def samples(self, x: torch.Tensor, n: int, *, seed: int) -> torch.Tensor:
        """``n`` forward passes in training mode (dropout active), stacked."""
        what = f"{self.what}.forward (training mode)"
        return expect_tensor(self.sub._ask({"op": "forward", "handle": self.handle, "x": x, "train": True,
                                            "seed": seed, "repeat": n}, what), what)

    def state(self) -> dict[str, torch.Tensor]:
        """Parameters and buffers by name (float tensors as they are in the module)."""
        got = self.sub._ask({"op": "state", "handle": self.handle}, f"{self.what} weights")
        return {**got["params"], **got["buffers"]}

    def load(self, tensors: dict[str, torch.Tensor]) -> None:
        self.sub._ask({"op": "load_weights", "handle": self.handle, "tensors": tensors},
                      f"loading weights into {self.what}")

    def grads(self, x: torch.Tensor, upstream: torch.Tensor) -> tuple[torch.Tensor, dict]:
        got = self.sub._ask({"op": "grads", "handle": self.handle, "x": x, "upstream": upstream},
                            f"{self.what} backward")
        if "out" not in got:
            expect_tensor(got, f"{self.what}.forward")
        return got["out"], got["grads"]

    def device_forward(self, shape: list[int]) -> list[int]:
        """The output shape of one forward pass as if on a GPU (workspace._OnDevice)."""
        got = self.sub._ask({"op": "device_forward", "handle": self.handle, "shape": list(shape)},
                            f"{self.what} moved to another device")
        if "shape" not in got:
            expect_tensor(got, f"{self.what}.forward")
        return got["shape"]

    def calls(self, x: torch.Tensor) -> list[str]:
        """Names of the PyTorch functions one forward pass calls (eval mode)."""
        what = f"{self.what}.forward"
        return _names(self.sub._ask({"op": "calls", "handle": self.handle, "x": x}, what), what)


def _names(got: dict, what: str) -> list[str]:
    """The names an answer lists (an answer without them is the output, which must be a tensor)."""
    if "calls" not in got:
        expect_tensor(got, what)
    calls = got["calls"]
    if not isinstance(calls, list):
        raise CheckFailure(f"{what}: the list of functions it calls was malformed")
    return [str(c) for c in calls]


def _first_cell_error(cell_errors: list[dict]) -> str:
    if not cell_errors:
        return ""
    first = cell_errors[0]
    error = first.get("error", {})
    return (f"{first.get('name') or 'cell ' + str(first['index'])} raised {error.get('type') or 'an error'} when the "
            f"notebook ran ({error.get('message', '')[:120]}); fix it first")


def at_line(hint: Hint, where: str) -> Hint:
    """The hint with the line of the student's cell that raised ("cell 12, line 4, in forward")."""
    return replace(hint, raised_at=" ".join(where.splitlines())[:200]) if where else hint
