"""The report's outputs: the plots (embedded PNG), the self-contained HTML page, the CSV."""

from __future__ import annotations

import base64
import csv
import html
import io

GENERATOR = '<meta name="generator" content="autograder class-report">'
CSV_HEADER = ["stage", "mistake", "rank", "hint", "checks", "count", "students"]


def _png(figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plots(report: dict) -> dict[str, str]:
    """Base64 PNGs: each stage's score histogram, and the top mistakes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images = {}
    stages = report["stages"]
    if stages:
        columns = min(4, len(stages))
        rows = (len(stages) + columns - 1) // columns
        figure, axes = plt.subplots(rows, columns, figsize=(3.1 * columns, 2.3 * rows), squeeze=False)
        for ax in axes.flat[len(stages):]:
            ax.set_visible(False)
        for ax, stage in zip(axes.flat, stages):
            top = stage["max_score"] or 1.0
            ax.hist(stage["scores"], bins=[top * i / 10 for i in range(11)], color="#0969da", edgecolor="white")
            ax.set_title(f"{stage['label']}{' (bonus)' if stage['bonus'] else ''}", fontsize=9)
            ax.set_xlim(0, top)
            ax.set_xlabel("points", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.yaxis.get_major_locator().set_params(integer=True)
        figure.tight_layout()
        images["stages"] = _png(figure)
        plt.close(figure)
    if report["mistakes"]:
        shown = report["mistakes"][:10][::-1]
        figure, ax = plt.subplots(figsize=(7.5, 0.35 * len(shown) + 0.8))
        ax.barh([f"{m['stage_label'].split(' (')[0]}: {m['mistake'][:40]}" for m in shown],
                [m["count"] for m in shown], color="#cf222e")
        ax.set_xlabel("students", fontsize=8)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(labelsize=8)
        figure.tight_layout()
        images["mistakes"] = _png(figure)
        plt.close(figure)
    return images


CSS = """body{font:15px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:72em;color:#1f2328;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #d0d7de;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;width:100%}
th,td{border:1px solid #d0d7de;padding:.3em .55em;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right;white-space:nowrap}.muted{color:#656d76}
code{background:#f6f8fa;padding:0 .25em;border-radius:3px}
img{max-width:100%}.lead{font-size:1.05em}"""


def _cell(value) -> str:
    return html.escape(str(value))


def _names(students: list[str]) -> str:
    return _cell(", ".join(students)) if students else '<span class="muted">(names left out)</span>'


def render_html(report: dict, images: dict[str, str]) -> str:
    anonymous = report["anonymous"]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', GENERATOR,
           "<title>Class report: what to re-teach</title>", f"<style>{CSS}</style></head><body>",
           "<h1>Class report: what to re-teach</h1>",
           f'<p class="lead">{report["graded"]} of {report["students"]} submissions graded'
           + (f" (from {_cell(report['source'])})" if report["source"] else "") + ". "
           + ("Anonymous: no student names. " if anonymous else "")
           + "Mistakes are counted once per student, from the diagnosis each check made.</p>"]
    out.append("<h2>The diagnosed mistakes, most common first</h2>")
    if report["mistakes"]:
        if "mistakes" in images:
            out.append(f'<img alt="the most common mistakes" src="data:image/png;base64,{images["mistakes"]}">')
        out.append("<table><tr><th>students</th><th>stage</th><th>mistake (the hint students read)</th>"
                   "<th>checks</th>" + ("" if anonymous else "<th>who</th>") + "</tr>")
        for m in report["mistakes"]:
            out.append(f'<tr><td class="n">{m["count"]}</td><td>{_cell(m["stage_label"])}</td>'
                       f'<td>{_cell(m["hint"])}<br><span class="muted"><code>{_cell(m["mistake"])}</code>'
                       f'{" (one of these)" if m["rank"] == "ambiguous" else ""}</span></td>'
                       f'<td>{_cell(", ".join(m["checks"]))}</td>' + ("" if anonymous else f"<td>{_names(m['students'])}</td>")
                       + "</tr>")
        out.append("</table>")
    else:
        out.append('<p class="muted">No named mistake in this class.</p>')
    out.append("<h2>Per stage</h2>")
    if "stages" in images:
        out.append(f'<img alt="score distribution per stage" src="data:image/png;base64,{images["stages"]}">')
    out.append("<table><tr><th>stage</th><th>full marks</th><th>attempted</th><th>not attempted</th>"
               "<th>stopped by a time limit</th><th>failed, no named mistake</th><th>mean points</th></tr>")
    for s in report["stages"]:
        mean = sum(s["scores"]) / len(s["scores"]) if s["scores"] else 0.0
        out.append(f'<tr><td>{_cell(s["label"])}{" (bonus)" if s["bonus"] else ""}</td><td class="n">{s["full_marks"]}</td>'
                   f'<td class="n">{s["attempted"]}</td><td class="n">{s["not_attempted"]}</td>'
                   f'<td class="n">{s["stopped"]}</td><td class="n">{s["undiagnosed"]}</td>'
                   f'<td class="n">{mean:.1f} / {s["max_score"]:g}</td></tr>')
    out.append("</table>")
    sections = [
        ("Errors raised", report["errors"], ["students", "error", "stage", "where"],
         lambda e: [e["count"], e["type"], e["stage_label"], e["where"]]),
        ("Call-policy refusals (a stage that calls what it teaches earns 0)", report["policy_refusals"],
         ["students", "stage", "message"], lambda p: [p["count"], p["stage_label"], p["hint"]]),
        ("Lost on the hidden examples (passed the visible ones)", report["hidden_losses"],
         ["students", "check", "stage"], lambda h: [h["count"], h["check"], h["stage_label"]]),
    ]
    for title, rows, heads, cells in sections:
        out.append(f"<h2>{_cell(title)}</h2>")
        if not rows:
            out.append('<p class="muted">None.</p>')
            continue
        out.append("<table><tr>" + "".join(f"<th>{h}</th>" for h in heads) + ("" if anonymous else "<th>who</th>") + "</tr>")
        for row in rows:
            values = cells(row)
            out.append(f'<tr><td class="n">{values[0]}</td>' + "".join(f"<td>{_cell(v)}</td>" for v in values[1:])
                       + ("" if anonymous else f"<td>{_names(row['students'])}</td>") + "</tr>")
        out.append("</table>")
    out.append("<h2>Not graded</h2>")
    if report["not_graded"]:
        out.append("<table><tr>" + ("" if anonymous else "<th>student</th>") + "<th>reason</th></tr>")
        for n in report["not_graded"]:
            out.append("<tr>" + ("" if anonymous else f"<td>{_cell(n['student'])}</td>") + f"<td>{_cell(n['reason'])}</td></tr>")
        out.append("</table>")
    else:
        out.append('<p class="muted">Every submission was graded.</p>')
    out.append("</body></html>")
    return "\n".join(out)


def mistakes_csv(report: dict) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for m in report["mistakes"]:
        writer.writerow([m["stage"], m["mistake"], m["rank"], m["hint"], " ".join(m["checks"]), m["count"],
                         "; ".join(m["students"])])
    return buffer.getvalue()
