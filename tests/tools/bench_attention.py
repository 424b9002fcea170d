"""``make bench``: the wrapper of independent heads, the weight-split MultiHeadAttention, fused
QKV and PyTorch's fused SDPA kernel, as a notebook defines them, timed on the CPU (and CUDA when
present): Markdown tables, the ratios and a plot.

    .venv/bin/python tests/tools/bench_attention.py [--notebook NB] [--device auto|cpu|cuda] [--threads N]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

# Each implementation as the notebook defines it, built for (d, num_heads, context_length).
IMPLEMENTATIONS = {
    "wrapper": ("MultiHeadAttentionWrapper", "stage 5: num_heads CausalAttention heads, concatenated",
                lambda cls, d, h, n: cls(d, d // h, n, 0.0, h)),
    "weight split": ("MultiHeadAttention", "stage 6: one W_query/W_key/W_value split into heads",
                     lambda cls, d, h, n: cls(d, d, n, 0.0, h)),
    "fused QKV": ("FusedQKVAttention", "stage 8: one qkv matmul for all three",
                  lambda cls, d, h, n: cls(d, d, n, 0.0, h)),
    "SDPA": ("SDPAMultiHeadAttention", "stage 8: torch's fused scaled_dot_product_attention",
             lambda cls, d, h, n: cls(d, d, n, 0.0, h)),
}
MODES = ("forward", "forward+backward")


@dataclass(frozen=True)
class Setting:
    batch: int
    tokens: int
    d: int
    heads: int

    def __str__(self) -> str:
        return f"batch {self.batch}, {self.tokens} tokens, d_in = d_out = {self.d}, {self.heads} heads"


GPT2 = Setting(batch=8, tokens=1024, d=768, heads=12)  # GPT-2 small at its full context


@dataclass(frozen=True)
class Plan:
    """What to time on one device (a CPU less, so that make bench takes minutes on a laptop)."""
    repeats: int                  # timed runs per measurement; the best is reported
    head_counts: tuple[int, ...]  # swept at (sweep_batch, sweep_tokens)
    contexts: tuple[int, ...]     # swept at (sweep_batch, 12 heads)
    sweep_batch: int
    sweep_tokens: int
    min_seconds: float = 0.5      # a fast setting is run until this much time is spent (25 runs at most)


PLANS = {
    "cpu": Plan(repeats=2, head_counts=(1, 2, 4, 8, 12, 24), contexts=(128, 256, 512, 1024),
                sweep_batch=1, sweep_tokens=512),
    "cuda": Plan(repeats=10, head_counts=(1, 2, 4, 8, 12, 24, 48), contexts=(128, 256, 512, 1024, 2048),
                 sweep_batch=8, sweep_tokens=1024),
}


def load_implementations(notebook: Path) -> tuple[dict, list[str]]:
    """The notebook's code cells run (test cells left out), its classes taken; missing ones noted."""
    import torch

    from autograder.sandbox.loader import read_cells, strip_magics

    os.environ.setdefault("MPLBACKEND", "Agg")
    namespace = {"__name__": "__main__", "display": lambda *a, **k: None}
    failed = 0
    with contextlib.redirect_stdout(io.StringIO()):  # the notebook's own prints are not the report
        for cell in read_cells(notebook):
            if "grade_stage(" in cell.source:
                continue  # a test cell: it would grade, which is not timed here
            try:
                exec(compile(strip_magics(cell.source), f"<cell {cell.index}>", "exec"), namespace)
            except Exception:
                failed += 1
    found, notes = {}, []
    for label, (name, _, build) in IMPLEMENTATIONS.items():
        try:
            build(namespace[name], 8, 2, 4)(torch.zeros(1, 3, 8))  # tiny, to find stubs before timing
        except KeyError:
            notes.append(f"{label}: `{name}` is not defined in {notebook.name}; skipped")
            continue
        except Exception as exc:
            notes.append(f"{label}: `{name}` does not run ({type(exc).__name__}: {str(exc)[:80]}); skipped")
            continue
        found[label] = namespace[name]
    if failed:
        notes.append(f"{failed} cell(s) of {notebook.name} raised errors while loading")
    return found, notes


def time_module(module, x, mode: str, repeats: int, device: str, min_seconds: float = 0.5,
                max_runs: int = 25) -> float:
    """Best seconds after a warm-up: at least ``repeats`` runs, more of a fast one (until
    ``min_seconds``), so that a busy machine's hiccup is not a 20 ms measurement's figure."""
    import torch

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    def run():
        if mode == "forward":
            module.eval()
            with torch.no_grad():
                module(x)
        else:
            module.train()
            module.zero_grad(set_to_none=True)
            out = module(x)
            out.backward(torch.ones_like(out))

    run()
    sync()
    best, spent, runs = float("inf"), 0.0, 0
    while runs < repeats or (spent < min_seconds and runs < max_runs):
        started = time.perf_counter()
        run()
        sync()
        seconds = time.perf_counter() - started
        best, spent, runs = min(best, seconds), spent + seconds, runs + 1
    return best


def measure(classes: dict, setting: Setting, device: str, plan: Plan, modes=MODES) -> dict:
    """{(implementation, mode): seconds} (and peak memory on CUDA) for one setting."""
    import torch

    torch.manual_seed(0)
    x = torch.randn(setting.batch, setting.tokens, setting.d, device=device)
    found = {}
    for label, cls in classes.items():
        module = IMPLEMENTATIONS[label][2](cls, setting.d, setting.heads, setting.tokens).to(device)
        for mode in modes:
            if device == "cuda":
                torch.cuda.reset_peak_memory_stats()
            found[label, mode] = time_module(module, x, mode, plan.repeats, device, plan.min_seconds)
            if device == "cuda":
                found[label, mode, "peak MiB"] = torch.cuda.max_memory_allocated() / 2**20
        del module
    return found


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f}" if seconds >= 0.1 else f"{seconds * 1000:,.1f}"


def gpt2_table(result: dict, labels: list[str], device: str) -> list[str]:
    reference = result.get(("weight split", "forward+backward"))
    head = "| implementation | forward (ms) | forward+backward (ms) | fwd+bwd vs weight split |"
    rule = "|---|---:|---:|---:|"
    if device == "cuda":
        head, rule = head + " peak memory fwd+bwd (MiB) |", rule + "---:|"
    rows = [head, rule]
    for label in labels:
        both = result[label, "forward+backward"]
        ratio = f"{both / reference:.2f}x" if reference else "n/a"
        row = f"| {label} (`{IMPLEMENTATIONS[label][0]}`) | {_ms(result[label, 'forward'])} | {_ms(both)} | {ratio} |"
        if device == "cuda":
            row += f" {result[label, 'forward+backward', 'peak MiB']:,.0f} |"
        rows.append(row)
    return rows


def sweep_table(sweep: dict, labels: list[str], what: str) -> list[str]:
    rows = [f"| {what} | " + " | ".join(f"{label} fwd / fwd+bwd (ms)" for label in labels) + " |",
            "|---:|" + "---:|" * len(labels)]
    for value, result in sweep.items():
        rows.append(f"| {value} | " + " | ".join(
            f"{_ms(result[label, 'forward'])} / {_ms(result[label, 'forward+backward'])}" for label in labels) + " |")
    return rows


def plot(results: dict, labels: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    devices = list(results)
    fig, axes = plt.subplots(len(devices), 2, figsize=(11, 4.2 * len(devices)), squeeze=False)
    for row, device in enumerate(devices):
        plan = results[device]["plan"]
        for col, (key, xlabel) in enumerate((("heads", "number of heads (d = 768)"),
                                             ("contexts", "context length (tokens, 12 heads)"))):
            ax = axes[row][col]
            sweep = results[device][key]
            for i, label in enumerate(labels):
                for mode, style in zip(MODES, ("--", "-")):
                    ax.plot(list(sweep), [sweep[v][label, mode] * 1000 for v in sweep], style, marker="o",
                            color=f"C{i}", label=f"{label}, {mode}")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks(list(sweep), [str(v) for v in sweep])
            ax.set_xlabel(xlabel)
            ax.set_ylabel("milliseconds (best run)")
            fixed = (f"batch {plan.sweep_batch}, {plan.sweep_tokens} tokens" if key == "heads"
                     else f"batch {plan.sweep_batch}")
            ax.set_title(f"{device.upper()}: {fixed}")
            ax.grid(True, which="both", alpha=0.3)
        axes[row][0].legend(fontsize=7)
    fig.suptitle("Multi-head attention: wrapper vs weight split vs fused QKV vs SDPA")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def bench_attention(notebook: Path, devices: list[str], plot_path: Path | None, plans: dict | None = None,
                    headline: Setting = GPT2) -> int:
    import torch

    plans = plans or PLANS

    classes, notes = load_implementations(notebook)
    for note in notes:
        print(f"note: {note}")
    labels = list(classes)
    if not labels:
        print("nothing to time: the notebook defines none of " +
              ", ".join(name for name, _, _ in IMPLEMENTATIONS.values()))
        return 1
    print(f"Implementations from {notebook.relative_to(REPO) if notebook.is_relative_to(REPO) else notebook}: "
          + "; ".join(f"{label} = {IMPLEMENTATIONS[label][1]}" for label in labels))
    results = {}
    for device in devices:
        plan = plans[device]
        count = torch.get_num_threads()
        threads = f"{count} thread{'s' if count > 1 else ''}" if device == "cpu" else torch.cuda.get_device_name()
        started = time.perf_counter()
        print(f"\n### {device.upper()} ({threads}), torch {torch.__version__}, float32, best of at least "
              f"{plan.repeats} runs after a warm-up (fast settings: as many as fit in {plan.min_seconds:g} s, "
              "up to 25)\n", flush=True)
        gpt2 = measure(classes, headline, device, plan)
        print(f"GPT-2 small at full context: {headline}\n" if headline == GPT2 else f"{headline}\n")
        print("\n".join(gpt2_table(gpt2, labels, device)), flush=True)
        heads = {h: measure(classes, Setting(plan.sweep_batch, plan.sweep_tokens, 768, h), device, plan)
                 for h in plan.head_counts}
        print(f"\nHead counts (batch {plan.sweep_batch}, {plan.sweep_tokens} tokens, d = 768):\n")
        print("\n".join(sweep_table(heads, labels, "heads")), flush=True)
        contexts = {n: measure(classes, Setting(plan.sweep_batch, n, 768, 12), device, plan)
                    for n in plan.contexts}
        print(f"\nContext lengths (batch {plan.sweep_batch}, d = 768, 12 heads):\n")
        print("\n".join(sweep_table(contexts, labels, "tokens")), flush=True)
        results[device] = {"plan": plan, "gpt2": gpt2, "heads": heads, "contexts": contexts}
        print()
        for name, (a, b) in {"weight split / wrapper": ("weight split", "wrapper"),
                             "SDPA / weight split": ("SDPA", "weight split")}.items():
            if a in classes and b in classes:
                ratios = [f"{gpt2[a, mode] / gpt2[b, mode]:.2f} {mode}" for mode in MODES]
                where = "at GPT-2 size" if headline == GPT2 else f"at {headline}"
                print(f"{device.upper()} {name} {where}: {', '.join(ratios)} (time ratio; below 1 = faster)")
        print(f"({device.upper()} measured in {time.perf_counter() - started:.0f} s)", flush=True)
    if plot_path is not None:
        plot(results, labels, plot_path)
        print(f"\nplot: {plot_path.relative_to(REPO) if plot_path.is_relative_to(REPO) else plot_path}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="wrapper vs weight split vs fused QKV vs SDPA")
    solution = REPO / "solutions" / "ch03_attention" / "ch03_attention.ipynb"
    parser.add_argument("--notebook", type=Path, help="the notebook whose classes are timed (default: the solutions)",
                        default=solution if solution.exists() else REPO / "assignments" / "ch03_attention" / "ch03_attention.ipynb")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto", help="auto: the CPU, and CUDA too")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads for torch (default: one per core)")
    args = parser.parse_args(argv)
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("--device cuda: no CUDA device is available here", file=sys.stderr)
        return 2
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    devices = {"cpu": ["cpu"], "cuda": ["cuda"]}.get(args.device, ["cpu"] + (["cuda"] if torch.cuda.is_available() else []))
    return bench_attention(args.notebook.resolve(), devices, REPO / "build" / "bench.png")


if __name__ == "__main__":
    sys.exit(main())
