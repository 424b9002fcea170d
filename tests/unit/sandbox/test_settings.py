"""autograder.sandbox.settings: each setting from its default, pyproject.toml's [tool.autograder],
the environment and the command's options, in that order; and the one table that documents them."""

from __future__ import annotations

import dataclasses
import re

import pytest
from support import REPO

from autograder.sandbox import settings as module
from autograder.sandbox.child import HANDSHAKE
from autograder.sandbox.settings import SOURCES, Limits, Settings


@pytest.fixture
def clean(monkeypatch):
    """No setting in the environment; the course's section as the test says (the repository's by default)."""
    for _, variable in SOURCES.values():
        if variable:
            monkeypatch.delenv(variable, raising=False)
    return monkeypatch


def test_the_repository_sets_level_one_and_nothing_else_differs_from_the_defaults(clean):
    assert module._course_section() == {"hint-level": "1"}
    assert Settings.read() == Settings()
    assert Settings().limits == Limits() and Settings().fences


@pytest.mark.parametrize(("value", "level"), [("2", 2), ("1", 1), (" 2 ", 2), ("3", 1), ("many", 1), ("", 1)])
def test_the_environment_wins_when_it_names_a_level(clean, value, level):
    clean.setenv("AUTOGRADER_HINT_LEVEL", value)
    assert Settings.read().hint_level == level


def test_the_course_section_is_read_and_the_environment_overrides_it(clean):
    clean.setattr(module, "_course_section", lambda: {"hint-level": "2", "allow-library-attention": "true",
                                                      "scratch-limit": "4096", "debug": "yes"})
    read = Settings.read()
    assert (read.hint_level, read.allow_library_attention, read.limits.scratch_bytes, read.debug) == (2, True, 4096, True)
    clean.setenv("AUTOGRADER_HINT_LEVEL", "1")
    clean.setenv("AUTOGRADER_ALLOW_LIBRARY_ATTENTION", "0")
    assert (Settings.read().hint_level, Settings.read().allow_library_attention) == (1, False)


def test_the_environment_sets_each_documented_setting(clean):
    for name, value in {"AUTOGRADER_ALLOW_LIBRARY_ATTENTION": "yes", "AUTOGRADER_REQUIRE_CONFINEMENT": "1",
                        "AUTOGRADER_SCRATCH_LIMIT": str(48 * 2**20),
                        "AUTOGRADER_PORTABLE": "true"}.items():
        clean.setenv(name, value)
    assert Settings.read() == Settings(allow_library_attention=True, require_confinement=True, portable=True,
                                       limits=Limits(scratch_bytes=48 * 2**20))


@pytest.mark.parametrize("value", ["", "0", "-5", "lots", "1.5"])
def test_an_unusable_size_falls_back_to_the_default(clean, value):
    clean.setenv("AUTOGRADER_SCRATCH_LIMIT", value)
    assert Settings.read().limits.scratch_bytes == Limits().scratch_bytes


def test_the_commands_options_win_and_none_is_not_given(clean):
    clean.setenv("AUTOGRADER_SCRATCH_LIMIT", "4096")
    read = Settings.read(cell_seconds=5.0, stage_seconds=None, scratch_bytes=8192)
    assert read.limits == Limits(cell_seconds=5.0, scratch_bytes=8192)


def test_settings_are_read_once_and_never_change(clean):
    read = Settings.read()
    clean.setenv("AUTOGRADER_HINT_LEVEL", "2")
    assert read.hint_level == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.hint_level = 2


def test_a_check_result_shows_its_hint_at_its_level():
    from autograder.chapters.ch03_attention import CHAPTER
    from autograder.core.checks import CheckStatus
    from autograder.core.failures import Hint
    from autograder.core.results import CheckResult

    result = CheckResult(CHAPTER.checks[0], CheckStatus.FAILED, "wrong", Hint("the sums lost their axis", "x.sum()"))
    assert result.hint == "the sums lost their axis"
    result.hint_level = 2
    assert result.hint == "the sums lost their axis: x.sum()"


def _documented() -> set[str]:
    """The variables docs/grading.md's settings table names, one a row."""
    text = (REPO / "docs" / "grading.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `AUTOGRADER_")]
    return {re.match(r"\| `(AUTOGRADER_[A-Z_]+)", row).group(1) for row in rows}


def test_every_name_the_grader_reads_is_documented_in_one_table():
    read = {variable for _, variable in SOURCES.values() if variable}
    assert _documented() == read
    named = {name for path in (REPO / "autograder").rglob("*.py")
             for name in re.findall(r"AUTOGRADER_[A-Z_]+", path.read_text(encoding="utf-8"))}
    assert named == read | {HANDSHAKE}, "a name the grader holds is neither a documented setting nor the handshake"
    for page in (REPO / "docs").rglob("*.md"):  # the table is the one place that lists them
        if page.name != "grading.md":
            assert not [line for line in page.read_text(encoding="utf-8").splitlines()
                        if line.startswith("| `AUTOGRADER_") and line.split("`")[1] in read], page
