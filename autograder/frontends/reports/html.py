"""The notebook's HTML feedback for one stage, with the attention-weights picture of a failing example."""

from __future__ import annotations

import base64
import io
from html import escape

from autograder.core.checks import CheckStatus
from autograder.core.results import StageResult
from autograder.frontends.reports.text import format_points, hints_once, split_example, stage_heading

_HTML_MARK = {CheckStatus.PASSED: ("✓ passed", "#1a7f37"), CheckStatus.FAILED: ("✗ failed", "#cf222e"),
              CheckStatus.STOPPED: ("⏱ stopped", "#cf222e"), CheckStatus.NOT_IMPLEMENTED: ("· not implemented", "#6e7781")}


def stage_html(result: StageResult, exhibit=None) -> str:
    """The notebook's feedback for one stage: its checks, each failure's message, example and hint, the heatmap."""
    colour = "#1a7f37" if result.status is CheckStatus.PASSED else "#cf222e"
    hints = hints_once(result)
    cell = "padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #d0d7de"
    rows = []
    for c in result.checks:
        word, tint = _HTML_MARK[c.status]
        rows.append(f'<tr><td style="{cell}"><code>{escape(c.check.id)}</code> {escape(c.check.title)}</td>'
                    f'<td style="{cell};text-align:right">{format_points(c.score)}/{format_points(c.check.points)}</td>'
                    f'<td style="{cell};color:{tint};white-space:nowrap">{word}</td></tr>')
        if c.status in (CheckStatus.PASSED, CheckStatus.NOT_IMPLEMENTED):
            continue
        message, example = split_example(c.message)
        details = [f"<div>{escape(message)}</div>"]
        if example:
            details.append(f"<div><b>smallest failing example:</b> <code>{escape(example)}</code></div>")
        if hints[c.check.id]:
            details.append(f"<div><b>hint:</b> {escape(hints[c.check.id])}</div>")
        rows.append(f'<tr><td colspan="3" style="{cell};padding-left:24px;font-size:90%">{"".join(details)}</td></tr>')
    parts = ['<div class="ag-feedback" style="font-family:sans-serif;font-size:13px">',
             f'<div style="font-weight:bold;color:{colour}">{escape(stage_heading(result))}</div>',
             f'<table style="border-collapse:collapse;margin:4px 0"><thead><tr><th style="{cell}">check</th>'
             f'<th style="{cell}">points</th><th style="{cell}">result</th></tr></thead><tbody>{"".join(rows)}</tbody></table>']
    if result.status is CheckStatus.NOT_IMPLEMENTED:
        parts.append(f"<div><b>hint:</b> {escape(result.hint)}</div>")
    if exhibit is not None:
        encoded = base64.b64encode(attention_heatmap_png(exhibit)).decode("ascii")
        caption = escape(exhibit.example) + (f"<br>{escape(exhibit.reading)}" if exhibit.reading else "")
        parts.append(f'<figure style="margin:6px 0"><img alt="attention weights: expected and yours" '
                     f'src="data:image/png;base64,{encoded}"/><figcaption style="font-size:90%">'
                     f"Head 0, first sequence of the failing example: {caption}</figcaption></figure>")
    parts.append("</div>")
    return "".join(parts)


def attention_heatmap_png(exhibit) -> bytes:
    """Expected attention weights beside the student's (when known), as a small PNG."""
    import numpy as np
    from matplotlib.figure import Figure  # not pyplot: the kernel's own plotting backend stays as it is

    panels = [("expected", exhibit.expected)] + ([("your", exhibit.student)] if exhibit.student is not None else [])
    t = exhibit.expected.shape[-1]
    size = min(2.2 + 0.18 * t, 4.0)
    fig = Figure(figsize=(size * len(panels) + 0.6, size), dpi=90, layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    image = None
    for ax, (name, weights) in zip(axes, panels):
        data = weights.detach().double().nan_to_num(nan=-1.0).clamp(-1.0, 1.5).numpy()
        image = ax.imshow(data, vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_title(f"{name} attention weights", fontsize=9)
        ax.set_xlabel("key token", fontsize=8)
        ax.set_ylabel("query token", fontsize=8)
        ax.tick_params(labelsize=7)
        ticks = range(0, t, max(1, t // 8))  # whole token positions, at most about 8 labels
        ax.set_xticks(list(ticks))
        ax.set_yticks(list(ticks))
        if t <= 8:
            for (i, j), v in np.ndenumerate(data):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6,
                        color="white" if v < 0.5 else "black")
    fig.colorbar(image, ax=list(axes), shrink=0.8)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
