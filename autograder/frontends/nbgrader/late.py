"""``LatePenalty``: nbgrader's late-submission plugin with this course's rule."""

from __future__ import annotations

import math

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Float


class LatePenalty(LateSubmissionPlugin):
    """nbgrader's late-submission plugin with a rule: ``per_day`` of the score for each day
    late or part of one, at most ``cap`` of it (0.1 and 0.5: 36 hours late costs 20%).
    The due date is the assignment's in the gradebook (``make duedate``); the submission time
    is ``timestamp.txt`` in the student's folder."""

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
