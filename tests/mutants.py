"""The mutation benchmark: every one-operation change of correct code, graded, and the hint read.

    .venv/bin/python tests/mutants.py [--jobs 2] [--styles N] [--stage S] [--origin O] [--list] [--json out.json]

(``make mutants``; a benchmark, not part of ``make check``.)

What is mutated: the graded code of stages 1-7 of the solutions notebook (the lines between
``### BEGIN SOLUTION`` and ``### END SOLUTION``, each stage's cell appended to the catalog's
book_style.py base, as the catalog's mistakes are) and the definitions of each stage's names
in the catalog's correct styles (tests/catalog/correct/*.py). The operators are written here
over Python's ``ast``: the mutation libraries on PyPI (mutmut, cosmic-ray, mutatest) mutate
files of an installed package and judge a mutant by running a test command their way; none
takes a source string, a region of it (a notebook's solution lines) or says what it changed
in terms a hint can be matched against.

Each mutant is graded on the stage the change is in, in this process's pool (the engine's
``run_stage`` over a LocalTransport, with the chapter's error hints: what a notebook's test
cell does) and classified:

- killed: it lost points in its stage; the stage row's hint then
  - names the change: the hint's mistake id (or, for a hint without one, its words) belongs to
    the family of what was changed (:data:`FAMILIES`: a change inside the mask's code must get
    a mask hint, a change of the scale a scale hint, ...);
  - points at the changed line: the code raised, and the hint (what the error and its sizes
    mean in the chapter's terms) ends with the very line that was changed ("raised at
    submission.py, line N"); counted apart from the named ones;
  - is generic: an observation (``observed_*`` ids: NaN, rows not summing to 1, the future
    leaking, a shape, values no known mistake gives) or the reading of an exception raised
    elsewhere;
  - names another mistake: any other hint. The issue's target is none of these.
- survived: full marks. Equivalent when the mutant's outputs equal the unchanged code's on
  several random inputs and weights (training and eval mode, :func:`probe`): decided here,
  listed with that reason; otherwise a non-equivalent survivor, a gap in the grader.

Sampling: the solutions' mutants are all graded; of each correct style's, ``--styles N`` (default
25) drawn with a fixed seed, so a run stays under ten minutes on two cores.
"""

from __future__ import annotations

import argparse
import ast
import json
import multiprocessing
import random
import re
import signal
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from support import REPO, SOLUTION  # tests/ is sys.path[0] when this file runs as a script

from autograder.chapters import load as load_chapter
from autograder.chapters.ch03_attention.programs import VOCABULARY
from autograder.core.mutation import call_name, mutable, one_operation_changes, parents_of, replaced

CATALOG = REPO / "tests" / "catalog"
BASE = CATALOG / "correct" / "book_style.py"
# the stages the course grades (the bonus lab mutates code of its own: not part of this benchmark)
GRADED_STAGES = {s.number for s in load_chapter().graded_stages}


# -- what a change touches, and the hints that name it ----------------------------------------
# family -> (regex over the changed code and its context, regex over the ids of the mistakes
# that name it, regex over the words of a hint without an id that names it). The first family
# whose code regex matches the changed node, else its enclosing call, else its statement, wins.
FAMILIES: dict[str, tuple[str, str, str]] = {
    "dropout": (r"dropout", r"dropout", r"dropout"),
    "mask": (r"mask|triu|tril|inf\b|masked_fill", r"mask|nan_fully_masked|future",
             r"mask|future|triu|diagonal|-inf"),
    "softmax": (r"^(softmax|exp|sum)$|softmax\(|\bexp\b|exp_|\.sum\(|keepdim", r"softmax|columns|whole_tensor|"
                r"sum_dim|keepdim|exp|divide_by_sum|plain_sum", r"softmax|sum to 1|exp|keepdim|dim=-1"),
    "scale": (r"sqrt|\*\* ?\(?-?0\.5|scal(e|ing)|d_k", r"scale|unscaled", r"scale|sqrt|d_k"),
    # the keys' transpose in the scores, before the heads' transposes
    "keys": (r"keys\.(T|mT|t\(\)|transpose|permute)|\bk\.(T|mT|t\(\)|transpose|permute)", r"keys|queries|transpose|scores|head",
             r"keys|queries|transpose|scores|@|product|head"),
    # scale_by_d_out: head_dim computed as d_out shows as a scale by 1/sqrt(d_out), the mistake's own hint
    "heads": (r"view|transpose\(1, ?2\)|contiguous|split|num_heads|head_dim|permute|reshape|unflatten|flatten|"
              r"cat\(|heads", r"split|merge|head|concat|cat_|heads|view|contiguous|divisib|scale_by_d_out",
              r"head|transpose|view|split|merge|contiguous|concat|cat"),
    "projection": (r"W_query|W_key|W_value|out_proj|Linear|Parameter|qkv_bias|bias|rand", r"bias|proj|weights|"
                   r"order|linear|param|init|created|v1|v2|query|key|value",
                   r"bias|out_proj|nn\.Linear|nn\.Parameter|created|order|W_query|W_key|W_value|weights"),
    "scores": (r"\.T\b|\.mT|transpose|@|matmul|einsum|bmm|\bmm\b", r"keys|queries|features|elementwise|row_dots|one_query|"
               r"transpose|weights|context|scores|head|mean", r"keys|queries|transpose|scores|@|product"),
    # the token count: it slices the mask and sizes the heads' views
    "tokens": (r"\bnum_tokens\b|\bn\b|\bt\b|shape\[1\]|size\(1\)", r"mask|split|merge|head|view|future",
               r"mask|num_tokens|view|transpose|future"),
    "sizes": (r"768|1024|12|gpt2|d_in|d_out|context_length", r"size|gpt|context|heads|d_in|d_out|768|dropout",
              r"768|1024|12|num_heads|context_length|GPT-2|d_in|d_out|dropout"),
}
GENERIC_WORDS = ("read the error and the line it points to", "compare each step with the book",
                 "compare the output's type and shape")


def family_of(texts: list[str]) -> str:
    for text in texts:
        for name, (code, _, _) in FAMILIES.items():
            if re.search(code, text):
                return name
    return "scores"


@dataclass
class Mutant:
    origin: str  # "solutions" or a correct style's file name
    stage: int
    line: int
    operator: str
    before: str
    after: str
    family: str
    source: str = field(repr=False, default="")
    changed_line: int = 0  # the line of the change in ``source``


# -- the operators: autograder.core.mutation's, which the diagnosis varies its reference with -----

# a call dropped or changed is judged by its own name first (softmax(scores / sqrt(d)) -> the softmax)
_OWN_FAMILY = {"softmax", "exp", "sum", "sqrt", "dropout", "masked_fill", "masked_fill_", "triu", "tril", "out_proj"}
# a product call is judged as what it multiplies: the input by a weight (a projection), else the scores or
# the context; a division by its divisor (torch.div(scores, scaling_factor) is the scale)
_PRODUCTS = {"matmul", "bmm", "mm"}


def mutants_of(source: str, origin: str, regions: list[tuple[int, int, int]]) -> list[Mutant]:
    """Every one-operation mutant of ``source`` whose change lies in a region (stage, first
    line, last line), deduplicated by the code it gives."""
    tree = ast.parse(source)
    parents = parents_of(tree)
    original = ast.unparse(tree)
    seen, found = {original}, []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", None)
        stage = next((s for s, a, b in regions if line is not None and a <= line <= b), None)
        if stage is None or not mutable(node, parents, VOCABULARY):
            continue
        for operator, replacement in one_operation_changes(node, VOCABULARY):
            text = replaced(tree, parents, node, replacement)
            if text is None or text in seen:
                continue
            seen.add(text)
            texts = _contexts(parents, node)
            # the line of the change in the unparsed program (the one the mutant runs)
            changed = next((i for i, (a, b) in enumerate(zip(original.split("\n"), text.split("\n")), 1) if a != b), 0)
            # stage 1 is the softmax alone, stage 7 the sizes alone; stage 2's functions each do one step
            function = next((p.name for p in _ancestors(parents, node) if isinstance(p, ast.FunctionDef)
                             and p.name.startswith("compute_attn_")), "")
            family = {1: "softmax", 7: "sizes"}.get(stage) or \
                {"compute_attn_weights": "softmax", "compute_attn_scores": "scores"}.get(function) or family_of(texts)
            found.append(Mutant(origin, stage, line, operator, ast.unparse(node)[:80],
                                ast.unparse(replacement)[:80], family, text, changed))
    return found


def _contexts(parents, node) -> list[str]:
    """The code around ``node``, innermost first, up to its statement: a call by its name when
    the name says what it does (softmax, sqrt, ...), an argument's default by the argument."""
    texts = []
    for current in [node, *_ancestors(parents, node)]:
        if isinstance(current, ast.arguments):
            defaults = dict(zip(map(id, current.defaults), current.args[len(current.args) - len(current.defaults):]))
            defaults.update({id(d): a for a, d in zip(current.kwonlyargs, current.kw_defaults) if d is not None})
            chain = [node, *_ancestors(parents, node)]
            arg = next((defaults[id(c)] for c in chain if id(c) in defaults), None)
            return texts + ([arg.arg] if arg is not None else [])
        if isinstance(current, ast.Call) and call_name(current) in _OWN_FAMILY:
            texts.append(call_name(current))
        elif (isinstance(current, ast.Call) and call_name(current) in _PRODUCTS) or \
                (isinstance(current, ast.BinOp) and isinstance(current.op, ast.MatMult)):
            operands = " ".join(map(ast.unparse, current.args if isinstance(current, ast.Call) else
                                    (current.left, current.right)))
            texts.append("W_query" if re.search(r"W_(query|key|value)", operands) else "matmul")
        elif isinstance(current, ast.Call) and call_name(current) in ("div", "true_divide") and len(current.args) == 2:
            texts.append(ast.unparse(current.args[1]))
        if isinstance(current, ast.stmt):
            texts.append(ast.unparse(current) if not isinstance(current, (ast.FunctionDef, ast.ClassDef)) else current.name)
            break
        texts.append(ast.unparse(current))
    return texts


def _ancestors(parents, node):
    while node in parents:
        node = parents[node]
        yield node


# -- the sources ----------------------------------------------------------------------------

def solution_sources() -> list[tuple[str, str, list]]:
    """(origin, program, regions) per stage 1-7 of the solutions notebook: the stage's cell
    appended to the base, the region its solution lines."""
    notebook = json.loads(SOLUTION.read_text())
    base = BASE.read_text()
    offset = base.count("\n") + 2
    found = []
    for cell in notebook["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        match = re.match(r"stage(\d+)_\w+_solution$", grade_id)
        if not match or int(match.group(1)) not in GRADED_STAGES:
            continue
        stage = int(match.group(1))
        code = "".join(cell["source"])
        lines = code.split("\n")
        regions, start = [], None
        for i, text in enumerate(lines, 1):
            if "### BEGIN SOLUTION" in text:
                start = i
            elif "### END SOLUTION" in text and start is not None:
                regions.append((stage, offset + start, offset + i))
                start = None
        found.append(("solutions", f"{base}\n\n{code}\n", regions))
    return found


def style_sources() -> list[tuple[str, str, list]]:
    from autograder.chapters.ch03_attention import CHAPTER

    names = {name: s.number for s in CHAPTER.stages if s.number in GRADED_STAGES for name in s.names}
    found = []
    for path in sorted((CATALOG / "correct").glob("*.py")):
        source = path.read_text()
        tree = ast.parse(source)
        regions = [(names[node.name], node.lineno, node.end_lineno) for node in tree.body
                   if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names]
        found.append((path.name, source, regions))
    return found


# -- grading and probing --------------------------------------------------------------------

def _quiet_exec(source: str) -> dict:
    import contextlib
    import io

    namespace = {"__name__": "__submission__"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, "<submission.py>", "exec"), namespace)
    return namespace


def _alarm(signum, frame):
    raise TimeoutError("the mutant ran past its time")


def grade(job: tuple[int, str]) -> dict:
    """The stage's score, its row's hint (text, rank, mistake id) and the probe's outputs."""
    stage_number, source = job
    import torch

    from autograder.chapters.ch03_attention import CHAPTER
    from autograder.core.engine import run_stage
    from autograder.core.failures import hint_rank
    from autograder.core.submission import LocalTransport, Submission

    torch.set_num_threads(1)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(90)
    try:
        try:
            namespace = _quiet_exec(source)
        except Exception as exc:  # the mutant does not even load: a SyntaxError-like failure
            return {"score": 0.0, "max": 1.0, "hint": f"loading raised {type(exc).__name__}: {exc}",
                    "rank": -1, "mistake": "load_error", "probe": None}
        stage = CHAPTER.stage(stage_number)
        sub = Submission(LocalTransport(namespace), stage.label, CHAPTER.error_hints.get(stage.id, ()))
        result = run_stage(CHAPTER, stage, sub)
        hint = result.diagnosis if result.score < result.max_score else None
        out = {"score": result.score, "max": result.max_score, "hint": result.hint if hint else "",
               "rank": hint_rank(hint), "mistake": hint.mistake if hint else "", "probe": None}
        if result.score >= result.max_score:
            out["probe"] = probe(stage_number, namespace)
        return out
    except TimeoutError as exc:
        return {"score": 0.0, "max": 1.0, "hint": str(exc), "rank": -1, "mistake": "timeout", "probe": None}
    finally:
        signal.alarm(0)


def probe(stage: int, ns: dict) -> list:
    """The stage's outputs on several random inputs and weights (eval and training mode), as
    nested lists of rounded numbers, to tell an equivalent mutant from a grader gap."""
    import torch

    outs = []

    def keep(value):
        if isinstance(value, torch.Tensor):
            outs.append([list(value.shape), [round(v, 5) for v in value.detach().double().flatten().tolist()[:4096]]])
        else:
            outs.append(repr(value))

    def attempt(fn):
        try:
            keep(fn())
        except Exception as exc:
            outs.append(f"raised {type(exc).__name__}")

    def one(seed):  # the outputs for one seed (a function, so the closures below bind its names)
        g = torch.Generator().manual_seed(seed)

        def x(*shape):
            return torch.randn(*shape, generator=g)

        def module(build, train=False):
            torch.manual_seed(seed)
            m = build()
            m.train(train)
            for name, p in m.state_dict().items():
                outs.append([name, list(p.shape)])
            return m

        if stage == 1:
            for shape in [(5,), (3, 4), (2, 3, 4)]:
                attempt(lambda shape=shape: ns["softmax_naive"](x(*shape) * 3))
        elif stage == 2:
            inputs = x(6, 3)
            attempt(lambda: ns["compute_attn_scores"](inputs))
            s = x(5, 5)
            attempt(lambda: ns["compute_attn_weights"](s))
            w = torch.softmax(x(6, 6), -1)
            attempt(lambda: ns["compute_context_vecs"](w, inputs))
        elif stage == 3:
            attempt(lambda: module(lambda: ns["SelfAttention_v1"](3, 4))(x(5, 3)))
            for bias in (False, True):
                attempt(lambda bias=bias: module(lambda: ns["SelfAttention_v2"](3, 4, qkv_bias=bias))(x(5, 3)))
        elif stage in (4, 5, 6):
            for train in (False, True):
                for tokens in (6, 3):
                    def run(train=train, tokens=tokens):
                        if stage == 4:
                            m = module(lambda: ns["CausalAttention"](3, 4, 6, 0.5 if train else 0.0, qkv_bias=True), train)
                        elif stage == 5:
                            m = module(lambda: ns["MultiHeadAttentionWrapper"](3, 2, 6, 0.5 if train else 0.0, 3,
                                                                               qkv_bias=True), train)
                        else:
                            m = module(lambda: ns["MultiHeadAttention"](3, 6, 6, 0.5 if train else 0.0, 3,
                                                                        qkv_bias=True), train)
                        torch.manual_seed(100 + seed)
                        return m(x(2, tokens, 3))
                    attempt(run)
            if stage == 6:
                attempt(lambda: module(lambda: ns["MultiHeadAttention"](3, 8, 6, 0.0, 2))(x(2, 5, 3)))
                attempt(lambda: ns["MultiHeadAttention"](3, 7, 6, 0.0, 2))  # must refuse
        elif stage == 7:
            def gpt2():
                torch.manual_seed(seed)
                m = ns["build_gpt2_small_mha"]()
                m.eval()
                outs.append(sorted((k, list(v.shape)) for k, v in m.state_dict().items()))
                outs.append(repr(sorted((k, v) for k, v in vars(m).items() if isinstance(v, (int, float)))))
                return m(x(1, 4, 768))
            attempt(gpt2)

    for seed in range(3):
        one(seed)
    return outs


# -- the benchmark ----------------------------------------------------------------------------

def _error_hints() -> tuple[str, ...]:
    """The hints for exceptions (the general table and the chapter's): they read the error the
    code raised, so one that does not name the change is generic, not another mistake."""
    from autograder.chapters.ch03_attention import CHAPTER
    from autograder.core.failures import as_hint
    from autograder.core.hints import _ERROR_HINTS

    return tuple(as_hint(h).text() for table in (_ERROR_HINTS, *CHAPTER.error_hints.values()) for _, h in table)


def classify_hint(mutant: Mutant, graded: dict) -> str:
    """named (the change), generic, or other (another mistake)."""
    hint, mistake = graded["hint"], graded["mistake"] or ""
    _, ids, words = FAMILIES[mutant.family]
    if mistake and not mistake.startswith("observed_") and mistake not in ("load_error", "timeout"):
        return "named" if any(re.search(ids, m) for m in mistake.split("|")) else "other"
    if not mistake and re.search(words, hint.split(" (raised at ")[0]):
        return "named"
    at = re.search(r"\(raised at submission\.py, line (\d+)", hint)
    if at and int(at.group(1)) == mutant.changed_line:
        return "at_line"  # an exception: the hint reads it and points at the very line that was changed
    if mistake:
        return "generic"
    if not hint or any(w in hint for w in GENERIC_WORDS + _error_hints()):
        return "generic"  # the fallback, or what the exception raised means: no mistake named
    return "other"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--styles", type=int, default=25, help="mutants drawn per correct style (0: none, -1: all)")
    parser.add_argument("--stage", type=int, action="append", help="only this stage (repeatable)")
    parser.add_argument("--origin", action="append", help="only the mutants of this source: 'solutions' or a correct "
                        "style's file name (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--json", type=Path, help="write every mutant's outcome here")
    args = parser.parse_args(argv)

    mutants: list[Mutant] = []
    for origin, source, regions in solution_sources():
        mutants += mutants_of(source, origin, regions)
    for origin, source, regions in style_sources() if args.styles else []:
        found = mutants_of(source, origin, regions)
        # a draw of its own per style: a style added to the catalog leaves the others' samples as they were
        rng = random.Random(f"28:{origin}")
        mutants += found if args.styles < 0 else rng.sample(found, min(args.styles, len(found)))
    if args.stage:
        mutants = [m for m in mutants if m.stage in args.stage]
    if args.origin:
        mutants = [m for m in mutants if m.origin in args.origin]
    if args.list:
        for m in mutants:
            print(f"{m.origin}:{m.line} s{m.stage} [{m.family}] {m.operator}: {m.before} -> {m.after}")
        print(len(mutants), "mutants")
        return 0
    originals = {(o, s): src for o, src, regions in solution_sources() + style_sources()
                 for s in {r[0] for r in regions}}
    started = time.monotonic()
    print(f"grading {len(mutants)} mutants with {args.jobs} processes ...", flush=True)
    with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        baseline_keys = sorted({(m.origin, m.stage) for m in mutants})
        baselines = dict(zip(baseline_keys, pool.map(grade, [(s, originals[(o, s)]) for o, s in baseline_keys])))
        graded = list(pool.map(grade, [(m.stage, m.source) for m in mutants], chunksize=4))
    for key, b in baselines.items():
        if b["score"] < b["max"]:
            print(f"WARNING: the unchanged {key} does not get full marks: {b['hint']}")
    rows, counts = [], Counter()
    for m, g in zip(mutants, graded):
        if g["score"] < g["max"]:
            outcome = classify_hint(m, g)
            counts["killed"] += 1
            counts[outcome] += 1
        elif g["probe"] == baselines[(m.origin, m.stage)]["probe"]:
            outcome = "equivalent"
            counts["equivalent"] += 1
        else:
            outcome = "survived"
            counts["survived"] += 1
        rows.append({**asdict(m), "source": None, "outcome": outcome, "hint": g["hint"][:300],
                     "mistake": g["mistake"], "rank": g["rank"]})
    total = len(mutants)
    non_equivalent = total - counts["equivalent"]
    killed = counts["killed"]
    print(f"\n{total} mutants in {time.monotonic() - started:.0f} s; {counts['equivalent']} equivalent "
          f"(same outputs on every probe), {non_equivalent} not")
    print(f"killed {killed}/{non_equivalent} ({100 * killed / max(non_equivalent, 1):.1f}%), "
          f"non-equivalent survivors {counts['survived']}")
    def pct(n):
        return f"{n} ({100 * n / max(killed, 1):.1f}%)"
    print(f"hints of the killed: names the change {pct(counts['named'])}, points at the changed line (an exception "
          f"read: the sizes, the line) {pct(counts['at_line'])}, generic {pct(counts['generic'])}, "
          f"names another mistake {pct(counts['other'])}")
    for title, which in (("names another mistake", "other"), ("non-equivalent survivors", "survived"),
                         ("generic", "generic"), ("points at the changed line", "at_line"), ("equivalent", "equivalent")):
        listed = [r for r in rows if r["outcome"] == which]
        if listed:
            print(f"\n-- {title} ({len(listed)}):")
            for r in listed:
                print(f"  {r['origin']}:{r['line']} s{r['stage']} [{r['family']}] {r['operator']}: "
                      f"{r['before']} -> {r['after']}")
                if which in ("other", "generic", "at_line"):
                    print(f"      hint [{r['mistake'] or '-'}]: {r['hint'][:200]}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
