"""The chapters: everything specific to one chapter of the book, and the registry of them.

Each chapter package owns its chapter-specific content: the stages, their checks, the reference
implementations and their known mistakes, the hints, and the book's printed tensors; it defines
``CHAPTER`` (an :class:`autograder.core.chapter.Chapter`), which the chapter-agnostic core grades.

The registry: one line per chapter, its id and the module that defines ``CHAPTER``.

``load("ch03_attention")`` imports a registered chapter; ``load("package.module")`` imports a
chapter defined anywhere else on the path (a course's own, or a test's).
"""

from __future__ import annotations

import importlib

from autograder.core.chapter import Chapter

REGISTRY = {
    "ch03_attention": "autograder.chapters.ch03_attention",
}
DEFAULT = "ch03_attention"


def load(key: str | None = None) -> Chapter:
    """The chapter registered as ``key`` (default :data:`DEFAULT`), or defined by the module ``key``."""
    key = key or DEFAULT
    name = REGISTRY.get(key, key)
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        raise KeyError(f"no chapter {key!r}: registered are {', '.join(REGISTRY)}, and no module {name} "
                       f"defining CHAPTER could be imported ({exc})") from None
    chapter = getattr(module, "CHAPTER", None)
    if not isinstance(chapter, Chapter):
        raise KeyError(f"chapter {key!r}: {name} defines no CHAPTER")
    return chapter

