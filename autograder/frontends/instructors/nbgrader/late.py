"""``LatePenalty``: nbgrader's late-submission plugin with this course's rule, and
``PenaltyOnScore``: nbgrader's ``AssignLatePenalties`` with the penalty taken from the score
without the bonus."""

from __future__ import annotations

import math

from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties
from traitlets import Float


class LatePenalty(LateSubmissionPlugin):
    """nbgrader's late-submission plugin with a rule: ``per_day`` of the score for each day
    late or part of one, at most ``cap`` of it (0.1 and 0.5: 36 hours late costs 20%).
    The due date is the assignment's in the gradebook (``make duedate``); the submission time
    is ``timestamp.txt`` in the student's folder. ``score`` is the score without the bonus
    (:class:`PenaltyOnScore`)."""

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
    """A submitted notebook's score less its extra credit (the bonus stages, and any an
    instructor gave in formgrader): what the late penalty is a share of."""
    return max(0.0, (notebook.score or 0.0) - sum(g.extra_credit or 0.0 for g in notebook.grades))


class PenaltyOnScore(AssignLatePenalties):
    """nbgrader's ``AssignLatePenalties`` (in its place in nbgrader_config.py), except that the
    rule gets the score without the bonus: nbgrader passes the score with extra credit, so a
    late full-marks submission with the bonus lost 20% of 110 (22 points), not of its 100. The
    bonus itself is never reduced (docs/instructors/nbgrader.md, "Due dates and late work")."""

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
