"""The worker: the only process that runs the student's code.

It loads the submission's cells, then answers requests from the grader (build this module,
run it on this input, hand over its weights). It never sees an expected answer, so nothing
the submission does here (patching torch, printing, exiting) can change how it is judged.
Started by :mod:`autograder.sandbox` as ``python -I``; talks over two private pipes.
"""

from __future__ import annotations

import io
import os
import sys
import time

OUTPUT_LIMIT = 20_000  # characters of the student's printed output kept for the report


class BoundedText(io.TextIOBase):
    """Keeps the first characters written to it and counts the rest (print floods)."""

    def __init__(self, limit: int = OUTPUT_LIMIT):
        self.limit, self.parts, self.kept, self.dropped = limit, [], 0, 0

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        text = str(text)
        room = self.limit - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def take(self) -> str:
        text = "".join(self.parts)
        if self.dropped:
            text += f"\n... ({self.dropped} more characters of output not shown)"
        self.parts, self.kept, self.dropped = [], 0, 0
        return text


def _claim_channels() -> tuple[int, int]:
    """Move the protocol pipes off fds 0/1 so that the student's prints, ``input()`` and
    subprocesses can neither read nor corrupt them."""
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    # AUTOGRADER_DEBUG=1 keeps the worker's stderr, for maintainers chasing a crash.
    for fd in (0, 1) if os.environ.get("AUTOGRADER_DEBUG") else (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    sys.stdin = open(os.devnull)
    sys.stdout = sys.stderr = BoundedText()
    return proto_in, proto_out


def _limit_memory() -> None:
    limit = int(os.environ.get("AUTOGRADER_MEMORY_LIMIT", "0") or 0)
    if limit > 0:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_cells(cells: list[dict], namespace: dict, send) -> list[dict]:
    from autograder.loader import strip_magics
    from autograder.workspace import describe_error

    statuses = []
    for cell in cells:
        index, source = int(cell["index"]), str(cell["source"])
        send({"event": "cell", "index": index})
        status = {"index": index, "status": "ok"}
        started = time.monotonic()
        try:
            try:
                code = compile(source, f"<cell {index}>", "exec")
            except SyntaxError:
                stripped = strip_magics(source)
                if stripped == source:
                    raise
                code = compile(stripped, f"<cell {index}>", "exec")
            exec(code, namespace)  # noqa: S102 - running the submission is the point
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too
            status = {"index": index, "status": "error", "error": describe_error(exc)}
            if isinstance(exc, SyntaxError):
                status["error"]["where"] = f"cell {index}, line {exc.lineno}"
        status["seconds"] = round(time.monotonic() - started, 3)
        statuses.append(status)
    return statuses


def main() -> None:
    proto_in, proto_out = _claim_channels()
    _limit_memory()
    os.environ.setdefault("MPLBACKEND", "Agg")
    import torch

    from autograder import notebook, wire
    from autograder.workspace import Workspace

    notebook.IN_WORKER = True  # test cells in the submission must not grade recursively
    torch.set_num_threads(int(os.environ.get("AUTOGRADER_THREADS", "1")))
    reader = wire.Reader(proto_in)

    def send(obj) -> None:
        wire.write(proto_out, obj)

    namespace: dict = {"__name__": "__main__", "__builtins__": __builtins__,
                       "display": lambda *a, **k: None}
    workspace: Workspace | None = None
    send({"event": "ready"})
    while True:
        try:
            request = reader.read()
        except wire.WireError:
            return
        if request.get("op") == "load_submission":
            torch.manual_seed(0)
            statuses = run_cells(request["cells"], namespace, send)
            workspace = Workspace(namespace, request.get("device", "cpu"))
            send({"event": "loaded", "cells": statuses, "output": sys.stdout.take()})
        elif workspace is None:
            send({"error": {"kind": "protocol", "type": "", "message": "load first", "where": ""}})
        else:
            send(workspace.dispatch(request))


if __name__ == "__main__":
    main()
