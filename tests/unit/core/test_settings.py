"""autograder.core.settings: the course's hint level, from the environment, pyproject.toml or the default."""

from __future__ import annotations

import pytest

from autograder.core import settings


def test_the_repository_sets_level_one(monkeypatch):
    monkeypatch.delenv(settings.HINT_LEVEL, raising=False)
    assert settings._course_settings().get("hint-level") == 1
    assert settings.hint_level() == 1


@pytest.mark.parametrize(("value", "level"), [("2", 2), ("1", 1), (" 2 ", 2), ("3", 1), ("many", 1), ("", 1)])
def test_the_environment_wins_when_it_names_a_level(monkeypatch, value, level):
    monkeypatch.setenv(settings.HINT_LEVEL, value)
    assert settings.hint_level() == level


def test_the_course_setting_is_read_from_pyproject(monkeypatch):
    monkeypatch.delenv(settings.HINT_LEVEL, raising=False)
    monkeypatch.setattr(settings, "_course_settings", lambda: {"hint-level": 2})
    assert settings.hint_level() == 2


def test_a_check_result_shows_its_hint_at_the_level_in_force(monkeypatch):
    from autograder.chapters.ch03_attention import CHAPTER
    from autograder.core.checks import CheckStatus
    from autograder.core.hints import fix
    from autograder.core.results import CheckResult

    result = CheckResult(CHAPTER.checks[0], CheckStatus.FAILED, "wrong", "the sums lost their axis" + fix(": x.sum()"))
    monkeypatch.setenv(settings.HINT_LEVEL, "1")
    assert result.hint == "the sums lost their axis"
    monkeypatch.setenv(settings.HINT_LEVEL, "2")
    assert result.hint == "the sums lost their axis: x.sum()"
