"""The chapter's hint tables (hints.ERROR_HINTS, the reference's known mistakes): at the default
hint level none holds code of the solution notebook's answers; the next level names the fix."""

from __future__ import annotations

import torch
from support import pasted_solution, solution_fragments

from autograder.chapters.ch03_attention import reference as R
from autograder.chapters.ch03_attention.hints import ERROR_HINTS
from autograder.core.hints import _ERROR_HINTS, at_level

FRAGMENTS = solution_fragments()


def _tables() -> dict[str, str]:
    hints = {f"error {stage} {pattern}": hint for stage, table in ERROR_HINTS.items() for pattern, hint in table}
    hints |= {f"general {pattern}": hint for pattern, hint in _ERROR_HINTS}
    for table in (R.softmax_mistakes(torch.zeros(2, 3, 4)), R.scores_mistakes(torch.zeros(3, 2)),
                  R.WEIGHTS_MISTAKES, R.CONTEXT_MISTAKES):
        hints |= {f"function {name}": hint for name, (_, hint) in table.items()}
    for table in (R.ATTENTION_MISTAKES, R.WRAPPER_MISTAKES, R.MHA_MISTAKES):
        hints |= {f"module {name}": hint for name, hint in table.items()}
    return hints


def test_the_solution_gives_fragments_to_compare_with():
    assert "exp_x.sum(dim=-1,keepdim=True)" in FRAGMENTS
    assert "torch.cat([head(x)forheadinself.heads],dim=-1)" in FRAGMENTS


def test_no_hint_of_the_tables_pastes_the_solution_at_the_default_level():
    pasted = {name: found for name, hint in _tables().items() if (found := pasted_solution(at_level(hint, 1), FRAGMENTS))}
    assert not pasted, pasted


def test_the_next_level_names_the_fix_where_the_default_leaves_it_out():
    tables = _tables()
    withheld = {name for name, hint in tables.items() if at_level(hint, 2) != at_level(hint, 1)}
    assert len(withheld) >= 20
    assert all(pasted_solution(at_level(tables[name], 2), FRAGMENTS) or "`" in tables[name] or name
               for name in withheld)
    assert pasted_solution(at_level(R.WRAPPER_MISTAKES["concat_batch"], 2), FRAGMENTS)
