"""autograder.frontends.hosted.ci's pure parts: the exit rule and GitHub's workflow commands (the
end-to-end runs are tests/e2e/test_ci.py)."""

from __future__ import annotations

from autograder.frontends.hosted import ci


def test_exit_rule():
    assert ci.exit_status(0, "", None) == 0  # a low score is a grade
    assert ci.exit_status(49, "", 50) == 1
    assert ci.exit_status(50, "", 50) == 0
    assert ci.exit_status(0, "not valid notebook JSON", None) == 2
    assert ci.exit_status(100, "worker could not start", 50) == 2


def test_workflow_commands_are_escaped_like_actions_core():
    # A '%', newline, ':' or ',' left raw would cut the annotation short or garble it.
    assert (ci.workflow_command("notice", "50% done\nnext", title="a: b, c")
            == "::notice title=a%3A b%2C c::50%25 done%0Anext")


def test_every_run_stops_commands_with_a_fresh_token(capsys):
    tokens = []
    for _ in range(2):
        with ci.workflow_commands_stopped():
            print("::error::inside")
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith("::stop-commands::") and lines[1] == "::error::inside"
        tokens.append(lines[0].removeprefix("::stop-commands::"))
        assert lines[2] == f"::{tokens[-1]}::"
    assert tokens[0] != tokens[1] and min(map(len, tokens)) >= 32
