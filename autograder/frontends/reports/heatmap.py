"""The attention-weights picture of a failing example, for the notebook's HTML feedback."""

from __future__ import annotations


def attention_heatmap_png(exhibit) -> bytes:
    """Expected attention weights beside the student's (when known), as a small PNG."""
    import io

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
