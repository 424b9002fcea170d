"""``ReadableFeedback`` (``make feedback``): stage headings, wrapped lines and formulas drawn offline
(MathML) in the HTML feedback."""

from __future__ import annotations

import re

import nbformat
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor
from traitlets import List

from autograder.frontends.instructors.nbgrader.stages import chapter_of, stage_cells

FEEDBACK_CSS = """
/* make feedback: long report lines and hints wrap instead of running off the page */
pre, .output_text pre, .jp-OutputArea-output pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.stage-heading { margin-top: 1.5em; border-bottom: 1px solid #ccc; }
math { font-size: 1.1em; }
"""

MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$\w])\$([^$\n]+?)\$(?![\w$])", re.DOTALL)
CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)


def math_as_mathml(markdown: str) -> str:
    """The formulas of a markdown cell as MathML, which browsers draw offline; code stays as it is."""
    from latex2mathml.converter import convert  # the instructors' install has it (pyproject.toml)

    def one(match: re.Match) -> str:
        display = match.group(1) is not None
        try:
            return convert((match.group(1) if display else match.group(2)).strip(),
                           display="block" if display else "inline")
        except Exception:
            return match.group(0)

    return "".join(part if CODE.fullmatch(part) else MATH.sub(one, part) for part in CODE.split(markdown))


def _exporters_priority() -> List:
    """nbgrader's preprocessors redeclare this trait without ``config=True``, and nbconvert's
    setting of it printed "Config option ... not recognized" every run."""
    return List(NbGraderPreprocessor.display_data_priority.default_value).tag(config=True)


class FeedbackClearHiddenTests(ClearHiddenTests):
    """nbgrader's ClearHiddenTests, without the config warning (:func:`_exporters_priority`)."""

    display_data_priority = _exporters_priority()


class ReadableFeedback(NbGraderPreprocessor):
    """``make feedback``: a heading per stage, no bare ``Out[..]`` score, formulas as MathML."""

    display_data_priority = _exporters_priority()

    def preprocess(self, nb, resources):
        chapter = chapter_of(resources.get("nbgrader", {}).get("assignment"))
        stages = stage_cells(nb, chapter) if chapter else {}
        cells = []
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                cell.source = math_as_mathml(cell.source)
            elif index in stages:
                stage = stages[index]
                # the report says the points; each hint is in it once already (reports.text.hints_once)
                cell.outputs = [o for o in cell.outputs if o.get("output_type") != "execute_result"]
                points = chapter.points(stage)
                cells.append(nbformat.v4.new_markdown_cell(
                    f'<h3 class="stage-heading">{stage.label}' + (" (bonus)" if stage.bonus else f" ({points:g} points)")
                    + "</h3>"))
            cells.append(cell)
        nb.cells = cells
        inlining = resources.setdefault("inlining", {})
        inlining["css"] = [*inlining.get("css", []), FEEDBACK_CSS]
        return nb, resources
