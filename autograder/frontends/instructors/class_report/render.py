"""The report's page (self-contained HTML: its bars are the page's own elements, nothing is fetched)
and its CSV."""

from __future__ import annotations

import csv
import html
import io

GENERATOR = '<meta name="generator" content="autograder class-report">'
CSV_HEADER = ["stage", "mistake", "rank", "hint", "checks", "count", "students"]

CSS = """body{font:15px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:72em;color:#1f2328;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;width:100%}
th,td{border:1px solid #d0d7de;padding:.3em .55em;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right;white-space:nowrap}.muted{color:#656d76}
code{background:#f6f8fa;padding:0 .25em;border-radius:3px}.lead{font-size:1.05em}
.bar{display:inline-block;height:.8em;background:#cf222e;margin-left:.4em}
.histogram{display:inline-flex;align-items:flex-end;gap:1px;height:2.5em;border-bottom:1px solid #656d76}
.histogram span{width:.6em;background:#0969da}.scores{white-space:nowrap}"""


def _cell(value) -> str:
    return html.escape(str(value))


def histogram(scores: list[float], top: float) -> str:
    """Ten bars from 0 to the stage's maximum points, the tallest the most common score."""
    bins = [0] * 10
    for score in scores:
        bins[min(9, int(10 * score / (top or 1.0)))] += 1
    title = f"{len(scores)} scores from 0 to {top:g} points, in ten bins"
    return (f'<span class="scores"><span class="muted">0 </span><span class="histogram" title="{title}">'
            + "".join(f'<span style="height:{100 * n / max(bins):.0f}%"></span>' for n in bins if max(bins))
            + f'</span><span class="muted"> {top:g}</span></span>')


def _section(title: str, heads: list[str], rows: list[list], empty: str) -> list[str]:
    """A heading and its table; numbers are right-aligned, text cells come escaped by the caller."""
    if not rows:
        return [f"<h2>{_cell(title)}</h2>", f'<p class="muted">{empty}</p>']
    return [f"<h2>{_cell(title)}</h2>", "<table><tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr>",
            *("<tr>" + "".join(f'<td class="n">{c}</td>' if isinstance(c, (int, float)) else f"<td>{c}</td>"
                               for c in row) + "</tr>" for row in rows),
            "</table>"]


def render_html(report: dict) -> str:
    anonymous = report["anonymous"]
    who = [] if anonymous else ["who"]

    def names(entry: dict) -> list[str]:
        return [] if anonymous else [_cell(", ".join(entry["students"]))]

    most = max((m["count"] for m in report["mistakes"]), default=1)
    mistakes = [[f'{m["count"]}<span class="bar" style="width:{8 * m["count"] / most:.1f}em"></span>',
                 _cell(m["stage_label"]),
                 f'{_cell(m["hint"])}<br><span class="muted"><code>{_cell(m["mistake"])}</code>'
                 f'{" (one of these)" if m["rank"] == "ambiguous" else ""}</span>',
                 _cell(", ".join(m["checks"])), *names(m)] for m in report["mistakes"]]
    stages = [[_cell(s["label"]) + (" (bonus)" if s["bonus"] else ""), histogram(s["scores"], s["max_score"]),
               s["full_marks"], s["attempted"], s["not_attempted"], s["stopped"], s["undiagnosed"],
               f'{sum(s["scores"]) / len(s["scores"]) if s["scores"] else 0.0:.1f} / {s["max_score"]:g}']
              for s in report["stages"]]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', GENERATOR,
           "<title>Class report: what to re-teach</title>", f"<style>{CSS}</style></head><body>",
           "<h1>Class report: what to re-teach</h1>",
           f'<p class="lead">{report["graded"]} of {report["students"]} submissions graded'
           + (f" (from {_cell(report['source'])})" if report["source"] else "") + ". "
           + ("Anonymous: no student names. " if anonymous else "")
           + "Mistakes are counted once per student, from the diagnosis each check made.</p>",
           *_section("The diagnosed mistakes, most common first",
                     ["students", "stage", "mistake (the hint students read)", "checks", *who], mistakes,
                     "No named mistake in this class."),
           *_section("Per stage", ["stage", "score distribution", "full marks", "attempted", "not attempted",
                                   "stopped by a time limit", "failed, no named mistake", "mean points"], stages,
                     "No stage graded."),
           *_section("Errors raised", ["students", "error", "stage", "where", *who],
                     [[e["count"], _cell(e["type"]), _cell(e["stage_label"]), _cell(e["where"]), *names(e)]
                      for e in report["errors"]], "None."),
           *_section("Call-policy refusals (a stage that calls what it teaches earns 0)",
                     ["students", "stage", "message", *who],
                     [[p["count"], _cell(p["stage_label"]), _cell(p["hint"]), *names(p)]
                      for p in report["policy_refusals"]], "None."),
           *_section("Lost on the hidden examples (passed the visible ones)", ["students", "check", "stage", *who],
                     [[h["count"], _cell(h["check"]), _cell(h["stage_label"]), *names(h)]
                      for h in report["hidden_losses"]], "None."),
           *_section("Not graded", [*(["student"] if not anonymous else []), "reason"],
                     [[*([] if anonymous else [_cell(n["student"])]), _cell(n["reason"])]
                      for n in report["not_graded"]], "Every submission was graded."),
           "</body></html>"]
    return "\n".join(out)


def mistakes_csv(report: dict) -> str:
    rows = [[m["stage"], m["mistake"], m["rank"], m["hint"], " ".join(m["checks"]), m["count"], "; ".join(m["students"])]
            for m in report["mistakes"]]
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([CSV_HEADER, *rows])
    return buffer.getvalue()
