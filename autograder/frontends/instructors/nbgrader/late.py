"""nbgrader's late-submission rule for this course, taken from the score without the bonus."""

from __future__ import annotations

import math

from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties
from traitlets import Float


class LatePenalty(LateSubmissionPlugin):
    """``per_day`` of the score for each day late or part of one, at most ``cap`` (36 hours: 20%)."""

    per_day = Float(0.1, help="share of the score taken per day (or part of a day) late").tag(config=True)
    cap = Float(0.5, help="the largest share of the score taken, however late").tag(config=True)

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        if not total_seconds_late or total_seconds_late <= 0:
            return None
        days = math.ceil(total_seconds_late / 86400)
        share = min(self.cap, self.per_day * days)
        penalty = round(score * share, 2)
        self.log.warning("%s: %.1f hours late, %d day(s): penalty %g%% of %g = %g", student_id,
                         total_seconds_late / 3600, days, round(share * 100, 2), score, penalty)
        return penalty


def score_without_bonus(notebook) -> float:
    """The score less its extra credit: what the late penalty is a share of."""
    return max(0.0, (notebook.score or 0.0) - sum(g.extra_credit or 0.0 for g in notebook.grades))


class PenaltyOnScore(AssignLatePenalties):
    """nbgrader's ``AssignLatePenalties`` with the score without the bonus: nbgrader's own took
    20% of 110, not of 100, from a late full-marks submission with the bonus."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        self.init_plugin()
        with Gradebook(info["db_url"]) as gb:
            submission = gb.find_submission(info["assignment"], info["student"])
            notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            notebook.late_submission_penalty = None
            if submission.total_seconds_late > 0:
                penalty = self.plugin_inst.late_submission_penalty(info["student"], score_without_bonus(notebook),
                                                                   submission.total_seconds_late)
                if penalty is not None:
                    notebook.late_submission_penalty = self._check_late_penalty(notebook, penalty)
            gb.db.commit()
        return nb, resources
