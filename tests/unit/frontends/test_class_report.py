"""class_report: the aggregation from hand-made records, the Gradescope export reader, the
writing (self-contained page, never over a foreign file), and the diagnosis records themselves."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile

import pytest
from support import REPO

from autograder.chapters import load
from autograder.core.checks import CheckStatus
from autograder.core.engine import HIDDEN_FAILURE, with_hidden
from autograder.core.failures import NAMED, POLICY, Hint
from autograder.core.results import CheckResult, GradeReport, StageResult
from autograder.frontends import commands
from autograder.frontends.instructors import class_report
from autograder.frontends.instructors.class_report import Submission, aggregate, load_gradescope_zip
from autograder.frontends.reports.diagnoses import FORMAT, cell_stages, submission_record
from autograder.frontends.reports.results_json import gradescope_json
from autograder.frontends.reports.safe_write import OutputRefused

CHAPTER = load("ch03_attention")


def check(check_id, status="failed", mistake="", rank="named", hint="a hint", exception="", hidden=False):
    return {"check": check_id, "status": status, "points": 2.0, "mistake": mistake, "rank": rank, "hint": hint,
            "exception": exception, "hidden_failure": hidden}


def stage(number, score, max_score=10.0, status=None, checks=()):
    status = status or ("passed" if score == max_score else "failed")
    return {"number": number, "id": f"s{number}", "label": f"Stage {number} (s{number})", "bonus": number == 8,
            "score": float(score), "max_score": float(max_score), "status": status, "mistake": "", "rank": "",
            "hint": "", "checks": list(checks)}


def record(*stages, cell_errors=()):
    return {"format": FORMAT, "chapter": "ch03_attention", "error": "",
            "score": sum(s["score"] for s in stages if not s["bonus"]),
            "max_score": sum(s["max_score"] for s in stages if not s["bonus"]), "hidden_examples": False,
            "stages": list(stages), "cell_errors": list(cell_errors)}


CLASS = [
    Submission("ada", record(stage(1, 10), stage(2, 10))),
    Submission("bob", record(stage(1, 4, checks=[check("1.2", mistake="sum_dim_0", hint="sum over dim=-1"),
                                                 check("1.3", mistake="sum_dim_0", hint="sum over dim=-1")]),
                             stage(2, 0, status="not_implemented", checks=[check("2.1", "not_implemented", rank="")]))),
    Submission("cy", record(stage(1, 6, checks=[check("1.3", mistake="sum_dim_0", hint="sum over dim=-1")]),
                            stage(2, 3, checks=[check("2.4", mistake="", rank="generic", exception="RuntimeError")]),
                            cell_errors=[{"cell": 17, "stage": 2, "type": "SyntaxError", "message": "x"},
                                         {"cell": 18, "stage": 2, "type": "NameError", "message": "y"},
                                         {"cell": 40, "stage": 7, "type": "NotImplementedError", "message": "z"}])),
    Submission("dee", record(stage(1, 0, checks=[check("1.1", mistake="", rank="policy", hint="no torch.softmax")]),
                             stage(2, 7, status="stopped", checks=[check("2.2", "stopped", rank="generic"),
                                                                   check("2.5", mistake="no_scale|transposed",
                                                                         rank="ambiguous", hidden=True)]))),
    Submission("eve", reason="no results.json"),
]


def test_aggregate_counts_each_mistake_once_per_student_ranked():
    report = aggregate(CLASS, source="test")
    assert (report["students"], report["graded"]) == (5, 4)
    assert [(m["stage"], m["mistake"], m["count"], m["students"], m["checks"]) for m in report["mistakes"]] == [
        (1, "sum_dim_0", 2, ["bob", "cy"], ["1.2", "1.3"]),
        (2, "no_scale|transposed", 1, ["dee"], ["2.5"]),
    ]
    assert report["mistakes"][0]["hint"] == "sum over dim=-1"
    assert report["not_graded"] == [{"student": "eve", "reason": "no results.json"}]


def test_aggregate_stage_counts():
    stages = {s["number"]: s for s in aggregate(CLASS)["stages"]}
    one, two = stages[1], stages[2]
    assert (one["full_marks"], one["attempted"], one["not_attempted"], one["stopped"]) == (1, 4, 0, 0)
    assert sorted(one["scores"]) == [0.0, 4.0, 6.0, 10.0]
    assert (two["full_marks"], two["attempted"], two["not_attempted"], two["stopped"]) == (1, 3, 1, 1)
    assert two["stopped_students"] == ["dee"]
    assert two["undiagnosed"] == 1  # cy: failed with a generic hint; dee's was named (ambiguous)


def test_aggregate_errors_policy_hidden():
    report = aggregate(CLASS)
    # the first error of an attempted stage (not the NameErrors after it, not a stub's NotImplementedError)
    assert [(e["type"], e["stage"], e["where"], e["count"]) for e in report["errors"]] == [
        ("RuntimeError", 2, "while a check ran it", 1), ("SyntaxError", 2, "when the notebook ran", 1)]
    assert [(p["stage"], p["count"], p["students"], p["hint"]) for p in report["policy_refusals"]] == [
        (1, 1, ["dee"], "no torch.softmax")]
    assert [(h["check"], h["count"], h["students"]) for h in report["hidden_losses"]] == [("2.5", 1, ["dee"])]


def test_anonymous_report_names_nobody():
    text = json.dumps(aggregate(CLASS, anonymous=True))
    for name in ("ada", "bob", "cy", "dee", "eve"):
        assert f'"{name}"' not in text


def test_a_record_with_an_error_is_not_graded_with_its_reason():
    data = {"tests": [], "output": "Could not grade: x.pdf is a .pdf file", "extra_data": {
        "diagnosis": {**record(stage(1, 0)), "error": "x.pdf is a .pdf file"}}}
    rec, why = class_report.record_from_results(data, "s/results.json")
    assert rec is None and why == "not graded: x.pdf is a .pdf file"
    assert class_report.record_from_results({"tests": []}, "r")[1].endswith("grade again)")
    assert class_report.record_from_results([1, 2], "r")[1] == "r is not a results.json"
    assert class_report.checked_record({"stages": [{"number": "one"}]}, "r")[0] is None


def results_json(rec: dict) -> bytes:
    return json.dumps({"score": rec["score"], "tests": [], "extra_data": {"diagnosis": rec}}).encode()


def export_zip(path, folders: dict[str, bytes | None], metadata: str | None = None, nested: str = "") -> None:
    """A zip in the layout of Gradescope's Export Submissions: assignment_<id>_export/ holding
    submission_metadata.yml and a submission_<id>/ folder per submission."""
    root = "assignment_77_export/"
    with zipfile.ZipFile(path, "w") as archive:
        if metadata is not None:
            archive.writestr(root + "submission_metadata.yml", metadata)
        for folder, data in folders.items():
            archive.writestr(f"{root}{folder}/{'ch03_attention.ipynb'}", "{}")
            if data is not None:
                archive.writestr(f"{root}{folder}/{nested}results.json", data)


METADATA = """---
submission_1:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1'
    :email: ada@example.org
  :created_at: 2026-11-20 14:05:00.000000000 -08:00
submission_2:
  :submitters:
  - :name: Bob Byte
    :sid: '2'
submission_3:
  :submitters:
  - :name: Cy Damaged
submission_4:
  :submitters:
  - :name: Dee Missing
"""


@pytest.mark.parametrize("nested", ["", "results/"])
def test_gradescope_zip_reader(tmp_path, nested):
    path = tmp_path / "export.zip"
    export_zip(path, {"submission_1": results_json(CLASS[0].record), "submission_2": results_json(CLASS[1].record),
                      "submission_3": b'{"score": 3, "tests": [', "submission_4": None}, METADATA, nested)
    found = {s.student: s for s in load_gradescope_zip(path)}
    assert sorted(found) == ["Ada Lovelace", "Bob Byte", "Cy Damaged", "Dee Missing"]
    assert found["Ada Lovelace"].record == CLASS[0].record
    assert found["Cy Damaged"].record is None and found["Cy Damaged"].reason.startswith("results.json is damaged")
    assert found["Dee Missing"].reason == "not graded: no results.json in its folder of the export"
    report = aggregate(list(found.values()))
    assert (report["graded"], len(report["not_graded"])) == (2, 2)


def test_gradescope_zip_without_metadata_names_the_folders(tmp_path):
    path = tmp_path / "export.zip"
    export_zip(path, {"submission_9": results_json(CLASS[0].record)})
    assert [s.student for s in load_gradescope_zip(path)] == ["submission_9"]


def test_submitters_are_named_from_the_metadata():
    names = class_report._submitters("submission_1:\n  :submitters:\n  - :name: Ada Lovelace\n")
    assert names == {"submission_1": "Ada Lovelace"}


def test_gradescope_zip_without_results_says_so(tmp_path):
    path = tmp_path / "export.zip"
    export_zip(path, {"submission_1": None, "submission_2": None}, METADATA)
    with pytest.raises(commands.Refused, match="holds no results.json"):
        load_gradescope_zip(path)
    (tmp_path / "not.zip").write_text("hello")
    with pytest.raises(commands.Refused, match="not a readable zip"):
        load_gradescope_zip(tmp_path / "not.zip")


def test_cli_exits_2_with_a_clear_message(tmp_path, capsys):
    path = tmp_path / "export.zip"
    export_zip(path, {"submission_1": None}, METADATA)
    assert commands.main(["class-report", "--gradescope-zip", str(path), "--out", str(tmp_path / "out")]) == 2
    assert "holds no results.json" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_write_report_self_contained_and_never_over_a_foreign_file(tmp_path):
    out = tmp_path / "report"
    report = class_report.write_report(CLASS, out, source="test")
    page = (out / "index.html").read_text()
    assert 'class="histogram"' in page and 'class="bar"' in page and "<style>" in page
    assert re.search(r'class="muted">0 </span><span class="histogram".*?</span><span class="muted"> \d+</span>', page)
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert "bob, cy" in page
    rows = list(csv.reader(io.StringIO((out / "mistakes.csv").read_text())))
    assert rows[0] == class_report.CSV_HEADER
    assert rows[1] == ["1", "sum_dim_0", "named", "sum over dim=-1", "1.2 1.3", "2", "bob; cy"]
    assert json.loads((out / "report.json").read_text())["mistakes"] == report["mistakes"]
    class_report.write_report(CLASS, out, anonymous=True)  # a report of ours is replaced
    assert "bob, cy" not in (out / "index.html").read_text()
    (out / "mistakes.csv").write_text("my own notes\n")
    with pytest.raises(OutputRefused, match="not written by this grader"):
        class_report.write_report(CLASS, out)
    assert (out / "mistakes.csv").read_text() == "my own notes\n"


def test_nbgrader_and_repos_loaders_count_missing_and_damaged(tmp_path):
    course = tmp_path / "course"
    for student in ("ann", "ben", "cat"):
        (course / "grading" / "submitted" / student / "ch03_attention").mkdir(parents=True)
    diagnoses = course / "grading" / "diagnoses"
    (diagnoses / "ann").mkdir(parents=True)
    (diagnoses / "ann" / "ch03_attention.json").write_text(json.dumps(CLASS[1].record))
    (diagnoses / "ben").mkdir()
    (diagnoses / "ben" / "ch03_attention.json").write_text("{damaged")
    found = {s.student: s for s in class_report.load_nbgrader(course, "ch03_attention")}
    assert found["ann"].record == CLASS[1].record
    assert found["ben"].reason.startswith("ch03_attention.json is damaged")
    assert found["cat"].reason.startswith("not graded: no diagnosis record")
    out = tmp_path / "grade-repos"
    (out / "ann").mkdir(parents=True)
    (out / "ann" / "results.json").write_bytes(results_json(CLASS[1].record))
    (out / "grades.csv").write_text("student,total,reason\nann,4,\nbob,0,no notebook (.ipynb) in the repository\n")
    found = {s.student: s for s in class_report.load_repos(out)}
    assert found["ann"].record == CLASS[1].record
    assert found["bob"].reason == "not graded: no notebook (.ipynb) in the repository"


def test_detect_source(tmp_path):
    with pytest.raises(commands.Refused, match="no graded class found"):
        class_report.detect_source(tmp_path, tmp_path / "repos")
    (tmp_path / "repos").mkdir()
    (tmp_path / "repos" / "grades.csv").write_text("student\n")
    assert class_report.detect_source(tmp_path, tmp_path / "repos") == "repos"


# -- the diagnosis record of a graded report --------------------------------------------------

def test_submission_record_keeps_mistake_rank_exception_and_hidden_losses(tmp_path):
    one, two = CHAPTER.stages[0], CHAPTER.stages[1]
    c1, c2 = CHAPTER.checks_for(one)[:2]
    named = Hint("sum over dim=-1", rank=NAMED, mistake="sum_dim_0")
    visible = StageResult(one, [CheckResult(c1, CheckStatus.FAILED, "wrong", named),
                                CheckResult(c2, CheckStatus.PASSED)])
    hidden = StageResult(one, [CheckResult(c2, CheckStatus.FAILED, "on 7x3", "generic words", exception="IndexError")])
    d1 = CHAPTER.checks_for(two)[0]
    policy = Hint("no torch.softmax here", rank=POLICY)
    report = GradeReport(CHAPTER, str(tmp_path / "nb.ipynb"), stages=[
        visible, StageResult(two, [CheckResult(d1, CheckStatus.FAILED, "refused", policy)])],
        cells=[{"index": 3, "status": "error", "error": {"type": "SyntaxError", "message": "bad"}}])
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["## Stage 1 (softmax): x"]}, {"cell_type": "code", "source": ""},
        {"cell_type": "code", "source": "def f(:"}]}))
    report.hidden_examples = {1: with_hidden(visible, hidden)}
    rec = submission_record(report)
    s1, s2 = rec["stages"]
    assert rec["hidden_examples"] and s1["mistake"] == "sum_dim_0" and s1["rank"] == "named"
    assert [(c["check"], c["mistake"], c["rank"], c["exception"], c["hidden_failure"]) for c in s1["checks"]] == [
        (c1.id, "sum_dim_0", "named", "", False), (c2.id, "", "generic", "IndexError", True)]
    assert s2["checks"][0]["rank"] == "policy"
    assert rec["cell_errors"] == [{"cell": 3, "stage": 1, "type": "SyntaxError", "message": "bad"}]
    data = gradescope_json(report)
    assert data["extra_data"]["diagnosis"] == json.loads(json.dumps(rec))
    failed = [t for t in data["tests"] if t["status"] == "failed" and "whole points" not in t.get("tags", [])]
    assert {t["extra_data"]["mistake"] for t in failed} >= {"sum_dim_0"}
    hidden_test = next(t for t in data["tests"] if t["number"] == f"{c2.id}h")
    assert hidden_test["extra_data"]["hidden_failure"] and HIDDEN_FAILURE in hidden_test["output"]
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(data, json.loads((REPO / "tests" / "schemas" / "gradescope_results.schema.json").read_text()))


def test_cell_stages_of_an_unreadable_notebook(tmp_path):
    assert cell_stages(tmp_path / "missing.ipynb") == {}
    (tmp_path / "bad.ipynb").write_text("{")
    assert cell_stages(tmp_path / "bad.ipynb") == {}
