"""matplotlib's font list kept between gradings (autograder.sandbox.fontcache): only plain files
of matplotlib's name and a sensible size travel, an existing file is never replaced."""

from __future__ import annotations

import os

import pytest

from autograder.sandbox import fontcache

LIST = "fontlist-v3.11.0.json"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    return tmp_path / "user-cache" / "ch03-attention-autograder"


def test_the_cache_folder_is_in_the_users(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert fontcache.cache_folder() == tmp_path / "ch03-attention-autograder"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert fontcache.cache_folder() == tmp_path / "home" / ".cache" / "ch03-attention-autograder"


def test_a_list_is_kept_once_and_copied_into_each_new_scratch_folder(cache, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / LIST).write_text('{"fonts": 1}')
    (first / "notes.json").write_text("{}")  # not matplotlib's font list
    fontcache.keep_from(first)
    assert sorted(os.listdir(cache)) == [LIST]
    (first / LIST).write_text('{"fonts": 2}')
    fontcache.keep_from(first)  # the kept one stays
    assert (cache / LIST).read_text() == '{"fonts": 1}'
    fontcache.copy_in(second)
    assert sorted(os.listdir(second)) == [LIST] and (second / LIST).read_text() == '{"fonts": 1}'


def test_links_empty_and_huge_files_are_not_kept(cache, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("the grader's")
    os.symlink(secret, scratch / LIST)
    (scratch / "fontlist-v1.0.json").write_text("")
    (scratch / "fontlist-v2.0.json").write_bytes(b"x" * (fontcache._MOST_BYTES + 1))
    fontcache.keep_from(scratch)
    assert not cache.exists() or os.listdir(cache) == []


def test_nothing_raises_where_the_cache_cannot_be_written(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "/proc/no-such-folder")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / LIST).write_text("{}")
    fontcache.keep_from(scratch)
    fontcache.copy_in(scratch)
    assert os.listdir(scratch) == [LIST]
