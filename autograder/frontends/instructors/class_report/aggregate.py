"""The class picture from the records (pure): per stage the scores and counts, the mistakes
ranked by how many students made them, the errors raised, the call-policy refusals and the
hidden-example losses.
"""

from __future__ import annotations

from collections import Counter

from autograder.frontends.instructors.class_report.sources import REPORT_FORMAT, Submission


def aggregate(submissions: list[Submission], stages: list[dict] | None = None, *, anonymous: bool = False,
              source: str = "") -> dict:
    """The report's data. ``stages``: the chapter's, for stages no record has; ``anonymous``: no names."""
    graded = [s for s in submissions if s.record is not None]
    known: dict[int, dict] = {}
    for stage in stages or []:
        known[stage["number"]] = {k: stage[k] for k in ("number", "id", "label", "bonus", "max_score")}
    for sub in graded:
        for stage in sub.record["stages"]:
            known.setdefault(stage["number"], {"number": stage["number"], "id": stage.get("id", ""),
                                               "label": stage.get("label", f"Stage {stage['number']}"),
                                               "bonus": bool(stage.get("bonus")),
                                               "max_score": float(stage.get("max_score", 0))})
    who = (lambda names: sorted(names)) if not anonymous else (lambda names: [])
    per_stage: dict[int, dict] = {n: {**info, "scores": [], "full_marks": 0, "attempted": 0, "not_attempted": 0,
                                      "stopped": 0, "undiagnosed": 0, "stopped_students": set()}
                                  for n, info in sorted(known.items())}
    mistakes: dict[tuple, dict] = {}
    errors: dict[tuple, dict] = {}
    policy: dict[int, dict] = {}
    hidden: dict[str, dict] = {}
    totals = []

    def count(table: dict, key, student: str, **entry) -> dict:
        table.setdefault(key, {**entry, "students": set()})["students"].add(student)
        return table[key]

    for sub in graded:
        totals.append(float(sub.record.get("score", 0)))
        for stage in sub.record["stages"]:
            number, row = stage["number"], per_stage[stage["number"]]
            status = stage.get("status", "")
            row["scores"].append(float(stage["score"]))
            if status == "not_implemented":
                row["not_attempted"] += 1
                continue
            row["attempted"] += 1
            if float(stage["score"]) >= float(stage.get("max_score", 0)) and status == "passed":
                row["full_marks"] += 1
            if status == "stopped":
                row["stopped"] += 1
                row["stopped_students"].add(sub.student)
            named_here = False
            for chk in stage.get("checks", []):
                if not isinstance(chk, dict):
                    continue
                rank, mistake, check = chk.get("rank", ""), chk.get("mistake", ""), chk.get("check", "?")
                if chk.get("hidden_failure"):
                    count(hidden, check, sub.student, check=check, stage=number)
                if rank == "policy":
                    count(policy, number, sub.student, stage=number, hint=chk.get("hint", ""))
                    named_here = True
                elif mistake and rank in ("named", "ambiguous"):
                    named_here = True
                    entry = count(mistakes, (number, mistake), sub.student, stage=number, mistake=mistake, rank=rank,
                                  hints=Counter(), checks=set())
                    entry["hints"][chk.get("hint", "")] += 1
                    entry["checks"].add(check)
                if chk.get("exception"):
                    count(errors, (chk["exception"], number, "check"), sub.student, type=chk["exception"], stage=number,
                          where="while a check ran it")
            if status in ("failed", "stopped") and not named_here:
                row["undiagnosed"] += 1
        # the first error of each attempted stage's cells is the cause (NameErrors follow from it)
        attempted = {st["number"] for st in sub.record["stages"] if st.get("status") != "not_implemented"}
        first: dict = {}
        for cell in sub.record.get("cell_errors", []):
            if (isinstance(cell, dict) and cell.get("type") != "NotImplementedError"
                    and (cell.get("stage") is None or cell.get("stage") in attempted)):
                first.setdefault(cell.get("stage"), cell)
        for cell in first.values():
            kind = str(cell.get("type", "Error"))
            count(errors, (kind, cell.get("stage"), "cell"), sub.student, type=kind, stage=cell.get("stage"),
                  where="when the notebook ran")

    def label(number) -> str:
        return known[number]["label"] if number in known else ("before the stages" if number is None else f"Stage {number}")

    def listed(table: dict, order, **fields) -> list[dict]:
        return [{**{k: v for k, v in e.items() if k not in ("students", "hints")}, "stage_label": label(e["stage"]),
                 **{k: f(e) for k, f in fields.items()}, "count": len(e["students"]), "students": who(e["students"])}
                for e in sorted(table.values(), key=lambda e: (-len(e["students"]), *order(e)))]

    return {
        "format": REPORT_FORMAT, "source": source, "anonymous": anonymous,
        "students": len(submissions), "graded": len(graded),
        "not_graded": [{"student": "" if anonymous else s.student, "reason": s.reason}
                       for s in submissions if s.record is None],
        "totals": totals,
        "stages": [{**{k: v for k, v in row.items() if k != "stopped_students"},
                    "stopped_students": who(row["stopped_students"])} for row in per_stage.values()],
        "mistakes": listed(mistakes, lambda m: (m["stage"], m["mistake"]),
                           hint=lambda m: m["hints"].most_common(1)[0][0], checks=lambda m: sorted(m["checks"])),
        "errors": listed(errors, lambda e: (e["type"], str(e["stage"]))),
        "policy_refusals": listed(policy, lambda p: (p["stage"],)),
        "hidden_losses": listed(hidden, lambda h: (h["check"],)),
    }


def top_mistakes(report: dict, n: int = 3) -> list[str]:
    return [f"{m['count']} student{'s' if m['count'] != 1 else ''}: {m['stage_label']}: {m['hint']} [{m['mistake']}]"
            for m in report["mistakes"][:n]]
