"""``make student-repo``: the repository students get, one commit: the released notebook, the grader
and its release fingerprint, never the solutions, tests or gradebook."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from autograder import CHECKOUT
from autograder.frontends import fingerprint
from autograder.frontends.commands import Refused, load_chapter
from autograder.frontends.reports.safe_write import write_files

TEMPLATES = Path(__file__).resolve().parent / "templates"
STUDENT_MAKEFILE = "students.mk"  # the students' repository's Makefile
AUTHOR = {"GIT_AUTHOR_NAME": "Course staff", "GIT_AUTHOR_EMAIL": "course-staff@users.noreply.github.com"}


# The notebook's setup cell installs the grader on Colab and Kaggle from this address.
SOURCE_LINE = re.compile(r'^GRADER_SOURCE = ".*?"', re.M)


def install_source(url: str) -> str:
    """What pip installs the grader from: ``git+URL`` for a git URL, an archive or a path as given."""
    as_given = "+" in url.split("://")[0] or not url.startswith(("https://", "http://")) \
        or url.split("?")[0].endswith((".whl", ".tar.gz", ".zip"))
    return url if as_given else f"git+{url}"


def with_install_source(notebook: bytes, url: str) -> bytes:
    """The release notebook whose setup cell installs the grader from ``url``, a public address."""
    if "@" in url.split("://", 1)[-1].split("/", 1)[0]:
        raise Refused(f"{url} carries credentials; the grader's install address must be public, with no token")
    source = install_source(url)
    data = json.loads(notebook)
    for cell in data["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "code" and SOURCE_LINE.search(text):
            text = SOURCE_LINE.sub(lambda _: f"GRADER_SOURCE = {json.dumps(source)}", text, count=1)
            cell["source"] = text.splitlines(keepends=True)
            return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode()
    raise Refused("the release notebook has no setup cell with GRADER_SOURCE (run `make release`)")


def colab_link(url: str | None, notebook: str) -> str:
    """The template's notebook on Colab for a repository on GitHub; a how-to otherwise."""
    match = re.match(r"^(?:git\+)?https://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?$", url or "")
    if not match:
        return ("Open the notebook in Colab (File > Open notebook > GitHub) or upload it to Kaggle; "
                "its first code cell installs the grader.")
    owner, name = match.groups()
    return (f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
            f"(https://colab.research.google.com/github/{owner}/{name}/blob/main/{notebook}) "
            "(the notebook's first code cell installs the grader there, keeping Colab's PyTorch).")


# How a GitHub hand-in is graded, by GRADE_ON.
HAND_IN = {
    "push": ("commit and push the notebook (`git add {notebook}`, `git commit`, `git push`). Every push is "
             "graded by `.github/workflows/grade.yml` (`make ci-grade`, with this repository's copy of the "
             "grader): the run's page in the *Actions* tab shows the table and the points. A low score is a "
             "grade, not a failed run."),
    "tags": ("commit and push the notebook, then hand it in with a tag: `git tag submit-1 && git push origin "
             "submit-1` (`submit-2` for the next hand-in). Each pushed `submit*` tag is graded by "
             "`.github/workflows/grade.yml` (`make ci-grade`, with this repository's copy of the grader): the "
             "run's page in the *Actions* tab shows the table and the points. Plain pushes are not graded; "
             "`make test` gives you the same table on your machine."),
    "none": ("commit and push the notebook; hand it in as your course says (with Classroom 50: "
             "`gh student submit`). Your course's grader, not this repository's copy, grades it and "
             "publishes the table as a release of this repository."),
}


def with_hand_in(notebook: bytes, notebook_path: str, grade_on: str) -> bytes:
    """The release notebook whose "How to hand in" says how this repository is graded."""
    paragraph = (f"**How to hand in**: {HAND_IN[grade_on].format(notebook=notebook_path)} From Colab: *File > Save a "
                 f"copy in GitHub* into this repository at `{notebook_path}`, then hand it in as above.")
    data = json.loads(notebook)
    for cell in data["cells"]:
        text = "".join(cell["source"])
        start = text.find("**How to hand in**")
        if cell["cell_type"] == "markdown" and start >= 0:
            end = text.find("\n\n", start)
            cell["source"] = (text[:start] + paragraph + (text[end:] if end >= 0 else "\n")).splitlines(keepends=True)
            return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode()
    return notebook  # an instructor's notebook without the paragraph: nothing to say there


def student_readme(chapter, torch_version: str, url: str | None = None, grade_on: str = "push") -> str:
    rows = []
    for stage in chapter.stages:
        points = f"{chapter.points(stage):g}" + (" bonus" if stage.bonus else "")
        names = ", ".join(f"`{n}`" for n in stage.names)
        rows.append(f"| {stage.number} | `{stage.id}` | {stage.title} | {names} | {points} |")
    bonus = next((s for s in chapter.stages if s.bonus), None)
    template = (TEMPLATES / "student_README.md").read_text(encoding="utf-8")
    return template.format(title=chapter.title, notebook=chapter.release_notebook(Path()).as_posix(),
                           bonus_rule=f" Stage {bonus.number} is about `scaled_dot_product_attention`." if bonus else "",
                           bonus_total="; the bonus is shown beside it (`+x/y bonus`) and never lowers it" if bonus else "",
                           n_stages=len(chapter.graded_stages), stage_rows="\n".join(rows),
                           max_score=f"{chapter.max_score:g}", torch=torch_version,
                           colab=colab_link(url, chapter.release_notebook(Path()).as_posix()),
                           github=HAND_IN[grade_on].format(notebook=chapter.release_notebook(Path()).as_posix()))


def grade_workflow(text: str, grade_on: str) -> str:
    if grade_on == "push":
        return text
    trigger = "on:\n  push:\n"
    if trigger not in text:
        raise Refused(f"{fingerprint.WORKFLOW} has no `{trigger.strip()}` trigger to narrow to tags")
    return text.replace(trigger, 'on:\n  push:\n    tags: ["submit*"]  # a submission: git tag submit-1 && '
                                 "git push origin submit-1\n", 1)


def release_files(chapter, root: Path = CHECKOUT, url: str | None = None,
                  grader_url: str | None = None, grade_on: str = "push") -> dict[str, bytes]:
    """Every file of the student repository but the release fingerprint, by relative path."""
    from autograder.frontends.hosted.gradescope import torch_pin

    notebook = chapter.release_notebook(Path()).as_posix()
    if not (root / notebook).is_file():
        raise Refused(f"no released notebook {notebook}: run `make release` first")
    files = fingerprint.grader_bundle(root)
    for path in (notebook, ".gitignore"):
        files[path] = (root / path).read_bytes()
    beside = (Path(notebook).parent / "Makefile").as_posix()  # make test from the notebook's folder
    if (root / beside).is_file():
        files[beside] = (root / beside).read_bytes()
    if grade_on != "none":
        files[fingerprint.WORKFLOW] = grade_workflow((root / fingerprint.WORKFLOW).read_text(encoding="utf-8"),
                                                     grade_on).encode()
    if grader_url or url:
        files[notebook] = with_install_source(files[notebook], grader_url or url)
    files[notebook] = with_hand_in(files[notebook], notebook, grade_on)
    files["Makefile"] = (root / STUDENT_MAKEFILE).read_bytes()  # the students' commands, as the course's Makefile includes them
    files["README.md"] = student_readme(chapter, torch_pin(root / "constraints.txt"), url, grade_on).encode()
    return files


def release_parts(chapter, root: Path = CHECKOUT) -> dict[str, str]:
    notebook = chapter.release_notebook(Path()).as_posix()
    return fingerprint.parts_of(release_files(chapter, root), notebook)


def _refuse_dest(dest: Path) -> None:
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise Refused(f"{dest} exists and is not a folder; give a new path")
    if dest.is_dir() and any(dest.iterdir()):
        raise Refused(f"{dest} is not empty; give a new path (nothing there was changed)")
    if dest.resolve() == CHECKOUT or CHECKOUT in dest.resolve().parents:
        raise Refused(f"{dest} is inside the course repository; the student repository goes elsewhere")


def _git(dest: Path, *args: str) -> None:
    env = {**os.environ, **AUTHOR, "GIT_COMMITTER_NAME": AUTHOR["GIT_AUTHOR_NAME"],
           "GIT_COMMITTER_EMAIL": AUTHOR["GIT_AUTHOR_EMAIL"]}
    subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null",
                    *args], cwd=dest, env=env, check=True, capture_output=True, text=True)


def build(dest: Path, chapter, url: str | None = None, grader_url: str | None = None, *,
          grade_on: str = "push") -> list[str]:
    """The student repository in ``dest``, committed once."""
    _refuse_dest(dest)
    files = release_files(chapter, url=url, grader_url=grader_url, grade_on=grade_on)
    notebook = chapter.release_notebook(Path()).as_posix()
    record = fingerprint.release_record(fingerprint.parts_of(files, notebook))
    files[fingerprint.RELEASE_FILE] = (json.dumps(record, indent=2) + "\n").encode()
    created = not dest.exists()
    try:
        write_files(dest, files)
        _git(dest, "init", "-q")
        _git(dest, "add", "--all")
        _git(dest, "commit", "-q", "-m", f"{chapter.title}: the exercises")
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or exc
        if created:
            shutil.rmtree(dest, ignore_errors=True)  # only what this run created
        raise Refused(f"could not build the student repository in {dest}: {detail}") from None
    return sorted(files)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dest", help="a new (or empty) folder")
    parser.add_argument("--chapter", default=None, metavar="ID", help="the chapter (default: the registry's)")
    parser.add_argument("--url", default=None, metavar="URL",
                        help="where students' copies come from (the template's git URL): the README links the "
                             "notebook on Colab, and without --grader-url the notebook installs the grader from it")
    parser.add_argument("--grader-url", default=None, metavar="URL",
                        help="a public, answer-free install source of the grader (a git URL, or a wheel or sdist URL) "
                             "that the notebook's setup cell installs from on Colab and Kaggle, with no token "
                             "(default: --url)")
    parser.add_argument("--grade-on", choices=HAND_IN, default="push",
                        help="when the students' grade workflow runs: every push (default), pushed submit* tags only "
                             "(fewer Actions minutes), or none (no workflow: Classroom 50 grades each submission)")


def run(args: argparse.Namespace) -> int:
    files = build(Path(args.dest), load_chapter(args.chapter), args.url, args.grader_url, grade_on=args.grade_on)
    if skipped := sorted(set(fingerprint.grader_files(CHECKOUT)) - set(files)):
        print(f"note: not copied, git does not track them: {', '.join(skipped)}")
    size = sum((Path(args.dest) / f).stat().st_size for f in files)
    record = json.loads((Path(args.dest) / fingerprint.RELEASE_FILE).read_text())
    print(f"wrote {args.dest}: {len(files)} files, {size / 1024:.0f} KiB, one commit; "
          f"grader fingerprint {record['fingerprint'][:16]}")
    print("Publish it as the assignment's template repository: docs/instructors/github-organizations.md "
          "(a plain GitHub organization) or docs/instructors/classroom50.md.")
    if source := args.grader_url or args.url:
        print(f"On Colab and Kaggle the notebook installs the grader from {install_source(source)}: it must be "
              "public (no token is sent). docs/instructors/colab-kaggle.md")
    return 0
