"""The chapters, one package each defining ``CHAPTER``, and the registry of them: ``load("ch03_attention")``,
or ``load("package.module")`` for a chapter defined anywhere else on the path."""

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

