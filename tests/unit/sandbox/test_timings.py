"""autograder.sandbox.timings (make bench-grader's notes) and the breakdown the benchmark prints
from them (tests/tools/bench_grader.py, breakdown_lines)."""

from __future__ import annotations

import json

from tools.bench_grader import breakdown_lines

from autograder.sandbox import timings


def test_until_started_nothing_is_noted(monkeypatch, tmp_path):
    monkeypatch.setattr(timings, "_file", "")
    monkeypatch.setattr(timings, "_totals", {})
    timings.add("round_trips")
    timings.mark("graded")
    timings.write()
    assert timings.totals() == {} and not timings.enabled()


def test_marks_keep_the_first_moment_totals_add_up_and_write_makes_json(monkeypatch, tmp_path):
    target = tmp_path / "t.json"
    monkeypatch.setattr(timings, "_file", "")
    timings.start(str(target))
    monkeypatch.setattr(timings, "_marks", {})
    monkeypatch.setattr(timings, "_totals", {})
    monkeypatch.setattr(timings, "_stages", [])
    timings.mark("worker_ready", 5.0)
    timings.mark("worker_ready", 7.0)
    timings.add("round_trips")
    timings.add("round_trips")
    timings.add("round_trip_seconds", 0.25)
    timings.stage({"id": "softmax", "seconds": 0.5})
    timings.write()
    notes = json.loads(target.read_text())
    assert notes["marks"]["worker_ready"] == 5.0 and "end" in notes["marks"]
    assert notes["totals"] == {"round_trips": 2.0, "round_trip_seconds": 0.25}
    assert notes["stages"] == [{"id": "softmax", "seconds": 0.5}]


def test_the_breakdown_prints_medians_of_what_was_measured():
    def run(scale):
        return {"marks": {"grader_started": 0.1 * scale, "fork_server": 0.2 * scale, "graded": 3.0 * scale,
                          "notebook_loaded": 1.5 * scale, "end": 3.1 * scale},
                "totals": {"round_trips": 100.0 * scale, "round_trip_seconds": 0.5 * scale},
                "stages": [{"id": "softmax", "seconds": 1.0 * scale, "round_trips": 10, "round_trip_seconds": 0.1,
                            "properties": 2, "examples": 30}],
                "wall": 3.5 * scale, "cpu": 5.0 * scale}

    text = "\n".join(breakdown_lines([run(1), run(2), run(3)]))
    assert "median of 3 run(s)" in text
    assert "every stage graded" in text and "  6.00  (3.00 s)" in text  # graded at 6.0, 3.0 after the load
    assert "softmax" in text and "30 examples" in text
    assert "200 round trips, 1.00 s waiting on the worker (5.0 ms each)" in text
    assert "7.00  (CPU of all its processes 10.00 s)" in text
    assert "   ?  " in text  # a phase a run did not reach (here: the worker's ready) says so


def test_the_breakdown_finds_each_stage_by_its_id_whatever_order_a_run_graded_them_in():
    def run(first_seconds, order):
        stages = {"gpt2": {"id": "gpt2", "seconds": first_seconds, "round_trips": 41},
                  "causal": {"id": "causal", "seconds": 9.0, "round_trips": 191}}
        return {"marks": {}, "totals": {}, "stages": [stages[i] for i in order], "wall": 1.0, "cpu": 1.0}

    text = "\n".join(breakdown_lines([run(1.0, ["gpt2", "causal"]), run(3.0, ["causal", "gpt2"]),
                                      run(2.0, ["gpt2", "causal"])]))
    gpt2 = next(line for line in text.splitlines() if line.strip().startswith("gpt2"))
    causal = next(line for line in text.splitlines() if line.strip().startswith("causal"))
    assert "2.00 s" in gpt2 and "41 round trips" in gpt2
    assert "9.00 s" in causal and "191 round trips" in causal
