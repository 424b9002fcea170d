"""The grader's settings (:class:`Settings`) and a worker's :class:`Limits`, read once where a
program starts and handed down (docs/grading.md's table); the worker gets only its handshake."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path

HINT_LEVELS = (1, 2)


@dataclass(frozen=True)
class Limits:
    """How much time, memory and disk a worker gets (the commands' defaults); it computes on one thread."""

    cell_seconds: float = 60.0      # one notebook cell while loading
    stage_seconds: float = 60.0     # all checks of one stage
    memory_bytes: int = 8 * 2**30   # address space of the worker (CPU only: CUDA reserves far more)
    # All the files the submission writes (its scratch folder); each file has 1 GiB at most.
    scratch_bytes: int = 2 * 2**30
    # The whole grading of one submission, loading included: below Gradescope's default
    # timeout (10 min) and the CI job's (20 min), so a grade is always written.
    total_seconds: float = 480.0


@dataclass(frozen=True)
class Settings:
    # How much a hint gives away. 1: what is wrong (the step, the axis, the shape, the smallest
    # failing example), never the line that fixes it. 2: the fixing line too.
    hint_level: int = 1
    # Stages accept a library call of what they teach (F.scaled_dot_product_attention in stages 3-7).
    allow_library_attention: bool = False
    # No grade from a worker that could not fence itself in (set by the Gradescope bundle and CI).
    require_confinement: bool = False
    # Linux takes the path Windows and macOS take (oslayer), so the tests grade through it.
    portable: bool = False
    # The worker keeps its stderr (shown when it fails to start): for maintainers chasing a crash.
    debug: bool = False
    # False in the repository's tests only: a worker without fences, to show what they stop.
    fences: bool = True
    limits: Limits = Limits()

    @classmethod
    def read(cls, **limits) -> Settings:
        """The settings in force: [tool.autograder], then the environment, then ``limits`` (the
        command's options; None: not given). A value that is none of its setting's is passed over."""
        defaults = {**vars(Limits()), **{f.name: getattr(cls, f.name) for f in fields(cls)}}
        chosen = {}
        for name, (key, variable) in SOURCES.items():
            for text in (_course_section().get(key), os.environ.get(variable) if variable else None):
                value = None if text is None else _value(text, defaults[name])
                if value is not None and (name != "hint_level" or value in HINT_LEVELS):
                    chosen[name] = value
        limits = {**{n: chosen.pop(n) for n in ("scratch_bytes",) if n in chosen},
                  **{n: v for n, v in limits.items() if v is not None}}
        return cls(**chosen, limits=Limits(**limits))


# Where each setting may be given: its key under [tool.autograder] and its environment variable.
SOURCES = {
    "hint_level": ("hint-level", "AUTOGRADER_HINT_LEVEL"),
    "allow_library_attention": ("allow-library-attention", "AUTOGRADER_ALLOW_LIBRARY_ATTENTION"),
    "require_confinement": ("require-confinement", "AUTOGRADER_REQUIRE_CONFINEMENT"),
    "scratch_bytes": ("scratch-limit", "AUTOGRADER_SCRATCH_LIMIT"),
    "portable": ("portable", "AUTOGRADER_PORTABLE"),
    "debug": ("debug", None),
}


def _value(text: str, default):
    """``text`` as a value of ``default``'s type (yes or no, a positive whole number), or None."""
    text = text.strip().strip("\"'")
    if isinstance(default, bool):
        return {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}.get(text.lower())
    return int(text) if text.isdigit() and int(text) > 0 else None


@functools.lru_cache(maxsize=1)
def _course_section() -> dict[str, str]:
    """The ``key = value`` lines of ``[tool.autograder]`` in this repository's pyproject.toml ({} in a wheel)."""
    try:
        text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return {}
    section = re.search(r"^\[tool\.autograder\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if section is None or not re.search(r'^name = "ch03-attention-autograder"', text, re.M):
        return {}
    return dict(re.findall(r"^([a-z-]+)\s*=\s*([^#\n]*?)\s*(?:#.*)?$", section.group(1), re.M))
