# Every command runs from the repository root (nbgrader reads nbgrader_config.py only there)
# and bootstraps .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Students' install (make test, make lab, make ci-grade): torch, the grader, JupyterLab,
# matplotlib, hypothesis. The instructor's ($(STAMP): make check, release, autograde, ...)
# adds nbgrader, pytest and the linters on top, and marks both as installed.
STUDENT_STAMP := $(VENV)/.student
# The chapter (autograder/chapters/__init__.py's REGISTRY): its id is nbgrader's assignment id
# and the notebooks' name. make test CHAPTER=<id> grades another registered chapter.
CHAPTER ?= ch03_attention
ASSIGNMENT := $(CHAPTER)
NOTEBOOK ?= assignments/$(ASSIGNMENT)/$(ASSIGNMENT).ipynb
SOURCE := solutions/$(ASSIGNMENT)/$(ASSIGNMENT).ipynb
STAGE ?=
DEVICE ?= auto
# make ci-grade writes its reports here; PASS_MARK=N makes it fail below N points.
CI_REPORTS ?= build/ci
PASS_MARK ?=
# make autograde JOBS=n: submissions graded at a time (default: the number of CPU cores).
JOBS ?=
# Every install takes its PyTorch from here (pyproject.toml declares only the supported range).
CONSTRAINTS := constraints.txt
# Where torch comes from (docs/maintainers-torch.md). PyPI's Linux x86_64 wheel brings some
# twenty nvidia-* CUDA packages (several GB) whatever the machine has, so on Linux without an
# NVIDIA GPU (no working nvidia-smi, no /proc/driver/nvidia) torch comes from PyTorch's CPU
# index; with a GPU, and on macOS and Windows (whose wheels are CPU builds already), from pip's
# default. make venv TORCH_INDEX_URL=URL takes it from URL; TORCH_INDEX_URL= (empty) leaves it
# to pip's own configuration (a local mirror or wheel folder, as on this project's CI machines).
# TORCH_HOST_OS and TORCH_HOST_GPU (non-empty: a GPU) are asked only when an install runs.
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
TORCH_HOST_OS ?= $(shell uname -s 2>/dev/null)
TORCH_HOST_GPU ?= $(shell { nvidia-smi -L || test -e /proc/driver/nvidia/version; } >/dev/null 2>&1 && echo nvidia)
TORCH_INDEX_URL ?= $(if $(filter Linux,$(TORCH_HOST_OS)),$(if $(TORCH_HOST_GPU),,$(TORCH_CPU_INDEX)))
# torch alone first, at the pin, from that index (its own dependencies too: the CPU index
# mirrors them); the grader's install after it keeps that torch, which meets the same pin.
TORCH_INSTALL = $(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(CONSTRAINTS) torch \
	$(if $(TORCH_INDEX_URL),--index-url $(call quote,$(TORCH_INDEX_URL)))
# $(call quote,TEXT): TEXT as one shell word, whatever it holds (spaces, parentheses, quotes,
# non-ASCII), for paths such as "Copy of ch03_attention (1).ipynb" or "My Courses/Übung 3".
quote = '$(subst ','\'',$(1))'
# The venv's bin as an absolute path that survives spaces (make's abspath splits on them).
ABS_BIN = $(call quote,$(if $(filter /%,$(BIN)),$(BIN),$(CURDIR)/$(BIN)))

.PHONY: help test check check-slow check-course check-fast check-torch check-gpu lint release venv lab clean ci-grade gradescope autograde feedback export bench bench-grader demo mutants

help:
	@echo "make test [STAGE=4] [V=1]  grade your notebook ($(NOTEBOOK)); V=1 lists every failed check"
	@echo "make lab              JupyterLab at the repository root with the notebook open"
	@echo "make check            the repository's own tests, tests/unit and tests/e2e, but the slow ones (maintainers, CI)"
	@echo "make check-slow       the slow tests: whole classes through nbgrader, environments installed from scratch (CI)"
	@echo "make check-course     what an instructor's edit can break (the CI of a course repository made from this one)"
	@echo "make check-fast       the unit layer alone (tests/unit/<package>/test_<module>.py): no worker, no notebook, seconds"
	@echo "make check-torch TORCH=2.15.0  grade under another PyTorch release, in build/torch-2.15.0/venv"
	@echo "make check-gpu [DEVICE=cpu]  every catalogued case graded on the GPU and the CPU, as written and with TF32 on (DEVICE=cpu: the dry run)"
	@echo "make demo [DEMO_DIR=build/demo] [JOBS=2]  try it: a simulated class through nbgrader and the repositories' regrade"
	@echo "make release          regenerate assignments/ from solutions/ with nbgrader"
	@echo "make autograde [JOBS=n] [STUDENT=id] [V=1]  nbgrader autograde grading/submitted/*/$(ASSIGNMENT), n at a time"
	@echo "make duedate DUE=\"2026-11-20 23:59:00 -0500\"  the due date (an offset, a zone name or UTC) (late penalties), then make autograde"
	@echo "make students ROSTER=class.csv  import the class list (id,first_name,last_name,email)"
	@echo "make formgrader       JupyterLab with nbgrader's formgrader (manual grading, overrides), localhost"
	@echo "make feedback         nbgrader feedback (HTML, hidden tests removed) in grading/feedback/"
	@echo "make export [LMS_ROSTER=canvas-export.csv|class.csv] [BONUS=separate|inside|capped]  grades to grading/grades.csv (a column per stage, the total), and the LMS's import file"
	@echo "make ci-grade         grade for CI: the table, a Grade annotation, $(CI_REPORTS)/results.json and junit.xml"
	@echo "make gradescope [HIDDEN_EXAMPLES=1]  build the Gradescope autograder zip (build/gradescope/)"
	@echo "make classroom50 DEST=dir  Classroom 50's per-assignment autograder folder (autograder.py and the grader)"
	@echo "make student-repo DEST=dir [URL=git-url] [GRADER_URL=public-url] [GRADE_ON=push|tags|none]  the students' repository (one commit, no answers)"
	@echo "make grade-repos REPOS=dir [DEADLINE=...]  regrade a class folder of student repositories with this grader: build/grade-repos/grades.csv"
	@echo "make collect-repos REPOS=dir  at the deadline: each repository's pushed tip by your clock (build/collected.json, then COLLECTED=)"
	@echo "make class-report [FROM=nbgrader|repos|gradescope] [GRADESCOPE_ZIP=export.zip] [ANONYMOUS=1] [OUT=build/class-report]  the class's mistakes, ranked"
	@echo "make bench            time wrapper vs weight split vs fused QKV vs SDPA (table + build/bench.png)"
	@echo "make bench-grader [REPEAT=n] [NO_VALIDATE=1]  time make test against import torch and nbgrader validate, and where its time goes"
	@echo "make mutants [MUTANTS_ARGS=--styles 0]  the mutation benchmark: one-operation mutants graded, kill rate, hint precision (minutes)"
	@echo "make venv             set up .venv (the instructor's install; make test and make lab set up the students' on first use)"
	@echo "make lint             ruff and the import contracts (make check runs them first)"
	@echo "make clean            remove .venv, build/ and the caches (grading/ and your notebooks stay)"

venv: $(STAMP)

# torch is pinned in constraints.txt and installed first, from TORCH_INDEX_URL (above): the
# CPU build on Linux without a GPU instead of a multi-GB CUDA download.
$(STAMP): pyproject.toml $(CONSTRAINTS)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(TORCH_INSTALL)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(CONSTRAINTS) -e ".[instructor]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ch03 attention)" >/dev/null
	@touch $@ $(STUDENT_STAMP)

$(STUDENT_STAMP): pyproject.toml $(CONSTRAINTS)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(TORCH_INSTALL)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c $(CONSTRAINTS) -e ".[student]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ch03 attention)" >/dev/null
	@touch $@

# A grade is not a failure: make test exits 0 whenever it printed one, so make never adds its
# "make: *** [test] Error 1" line under a partial grade. Scripts that need the grader's exit
# status (0 full marks, 1 some check failed, 2 could not grade) run make test STRICT=1, or the
# grader itself: .venv/bin/python -m autograder NOTEBOOK.
test: $(STUDENT_STAMP)
	@$(BIN)/python -m autograder $(call quote,$(NOTEBOOK)) --chapter $(CHAPTER) --device $(DEVICE) $(if $(STAGE),--stage $(STAGE)) \
		$(if $(V),--verbose) $(if $(STRICT),,|| true)

# ruff and the import contract (pyproject.toml) first: they take seconds, the tests minutes.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

# The tests run on TEST_WORKERS pytest-xdist workers (default: one per core), a test module's
# tests on one worker (--dist loadscope), so a fixture they share (a graded class, a built
# repository) is built once. TEST_WORKERS=0 runs them in this process, one after another.
# make check runs every test but those marked slow (a whole class through nbgrader, an
# environment installed from scratch: a minute or more each), which make check-slow runs;
# the project's CI runs both (docs/maintainers.md, "Tests").
# --durations: the slowest tests, listed at the end of every run (make check's time is watched).
# make check hands out the modules in tests/conftest.py's order (--no-loadscope-reorder): the
# longest first, the unit layer's short ones last, so the workers end together.
TEST_WORKERS ?= auto
PYTEST_PARALLEL = -n $(TEST_WORKERS) --dist loadscope
check: lint
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) --no-loadscope-reorder -m "not slow" --durations=15

check-slow: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) -m slow --durations=15

# A course repository's CI (check.yml unless the repository variable AUTOGRADER_CI is full):
# what an instructor's edit of the source notebook, nbgrader_config.py or the docs can break.
# ruff and the import contract; the unit layer (the course file, the points tables and the
# docs current with the notebook); the release current with the source, graded 0, the
# solutions full marks and run in a kernel; nbgrader end to end once (release, autograde,
# feedback, export); the students' repository without an answer; the workflows lint clean.
# Not the mistake catalog (tests/e2e/test_catalog.py) nor the nbgrader-equals-CLI test: they
# test the grader's checks and its one engine, which no such edit touches, and took over half
# of the run. make check and make check-slow run these and the rest. COURSE_TESTS is the one
# list: make check's tests/e2e/test_ci.py checks that each entry still selects a test
# (docs/maintainers.md, "CI").
COURSE_TESTS := tests/unit \
	tests/e2e/test_foundation.py \
	tests/e2e/test_nbgrader.py::test_every_stage_has_hidden_tests_that_the_release_lacks \
	tests/e2e/test_nbgrader.py::test_hidden_tests_catch_a_submission_fitted_to_the_visible_examples \
	tests/e2e/test_nbgrader.py::test_export_has_each_students_stage_scores_and_total \
	tests/e2e/test_nbgrader.py::test_test_cells_show_the_sandboxed_grade_with_hidden_examples \
	tests/e2e/test_nbgrader.py::test_feedback_shows_no_hidden_tests \
	tests/e2e/test_student_repo.py::test_contents \
	tests/e2e/test_student_repo.py::test_no_answer_reaches_the_student_tree \
	tests/e2e/test_student_repo.py::test_release_record_matches_the_instructors_view \
	tests/e2e/test_ci.py::test_workflows_pass_actionlint

check-course: lint
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) --durations=15 $(COURSE_TESTS)

# tests/unit mirrors autograder/ (pure functions); whatever starts a worker, a kernel, nbgrader
# or make is in tests/e2e, which make check and make check-slow run.
# One process by default (FAST_WORKERS=N for N xdist workers): most of the unit layer's time is
# collection (importing torch, nbgrader, hypothesis), which every xdist worker does again, so
# two workers on 2 cores take as long as one process and twice the CPU (docs/maintainers.md).
FAST_WORKERS ?= 0
check-fast: $(STAMP)
	$(BIN)/python -m pytest tests/unit -q -n $(FAST_WORKERS) --dist loadscope

# A maintainer's check of another PyTorch release, never part of make check (off this
# machine's pin, a release may be a CUDA build of several GB): builds build/torch-$(TORCH)/venv
# (never .venv), grades the blank notebook, the solutions, the mistake catalog and the correct
# variants there and runs tests/unit; one line per result, the install's size and seconds
# (tests/check_torch.py, docs/maintainers-torch.md). FRESH=1 rebuilds a venv already made.
TORCH ?=
check-torch:
	@test -n "$(TORCH)" || { echo "usage: make check-torch TORCH=2.15.0 [FRESH=1]"; exit 2; }
	@$(PYTHON) tests/check_torch.py $(call quote,$(TORCH)) --index-url $(call quote,$(TORCH_INDEX_URL)) $(if $(FRESH),--fresh)

# The GPU against the CPU (tests/check_gpu.py; docs/maintainers-torch.md, "GPU"): the table goes to
# build/check-gpu/. Where python3 already has a CUDA torch and no network reaches pip (the borrowed
# GPU machine), GPU_PYTHON=python3 runs it with that Python instead of building .venv.
GPU_PYTHON ?=
check-gpu: $(if $(GPU_PYTHON),,$(STAMP))
	@$(or $(GPU_PYTHON),$(BIN)/python) tests/check_gpu.py $(if $(filter cpu,$(DEVICE)),--cpu-only)

# Benchmarks print Markdown tables (docs/maintainers.md: Benchmarks). They time the solutions
# notebook unless NOTEBOOK=... is given on the command line; bench-grader's must earn full marks.
# make bench THREADS=1 times on one CPU thread (steadier on a machine busy with other work).
BENCH_NOTEBOOK = $(if $(filter command line,$(origin NOTEBOOK)),--notebook $(call quote,$(NOTEBOOK)))

bench: $(STAMP)
	@$(BIN)/python -m autograder.chapters.ch03_attention.bench attention --device $(DEVICE) $(BENCH_NOTEBOOK) $(if $(THREADS),--threads $(THREADS))

bench-grader: $(STAMP)
	@$(BIN)/python -m autograder.chapters.ch03_attention.bench grader $(BENCH_NOTEBOOK) $(if $(REPEAT),--repeat $(REPEAT)) $(if $(NO_VALIDATE),--no-validate) $(if $(NO_TEST_CELLS),--no-test-cells)

# The mutation benchmark (tests/mutants.py), not part of make check: every one-operation change
# of the solutions' graded code (and a sample of each correct style's), graded on its stage.
MUTANTS_ARGS ?=
mutants: $(STAMP)
	$(BIN)/python tests/mutants.py --jobs 2 $(MUTANTS_ARGS)

# One grading, every CI output: the table, a `Grade` annotation on the run's page,
# results.json (Gradescope), junit.xml, and a Markdown summary when $GITHUB_STEP_SUMMARY is set.
# The grader exits 0 whatever the score (a low score is a grade, not a broken build), 1 below
# PASS_MARK when one is given, 2 when the notebook could not be graded at all; make shows
# either failure as "Error 1"/"Error 2" and itself exits 2.
ci-grade: $(STUDENT_STAMP)
	@$(BIN)/python -m autograder.frontends.ci $(call quote,$(NOTEBOOK)) --chapter $(CHAPTER) --device $(DEVICE) \
		--results $(call quote,$(CI_REPORTS)/results.json) --junit $(call quote,$(CI_REPORTS)/junit.xml) $(if $(PASS_MARK),--pass-mark $(PASS_MARK))

gradescope: $(STAMP)
	@$(BIN)/python -m autograder.frontends.gradescope build $(if $(HIDDEN_EXAMPLES),--hidden-examples)

# Classroom 50: DEST is CLASSROOM/autograders/ASSIGNMENT in the classroom50 configuration
# repository (autograder/frontends/classroom50.py, docs/instructors/classroom50.md).
.PHONY: classroom50
classroom50: $(STAMP)
	@test -n $(call quote,$(DEST)) || { echo "usage: make classroom50 DEST=classroom50/CLASSROOM/autograders/ASSIGNMENT"; exit 2; }
	@$(BIN)/python -m autograder.frontends.classroom50 build $(call quote,$(DEST))

# nbgrader runs alembic from PATH, so the venv's bin goes first.
NBGRADER := PATH=$(ABS_BIN):"$$PATH" $(BIN)/nbgrader

# The source notebook's test cells decide the stages, their points and the bonus: written to the
# grader's course file (and the notebook's points table) first, then released.
release: $(STAMP)
	@mkdir -p grading
	@PATH=$(ABS_BIN):"$$PATH" $(BIN)/python -m autograder.frontends.course --chapter $(CHAPTER) --nbgrader

# Instructors: submissions go in nbgrader's layout, grading/submitted/<student>/$(ASSIGNMENT)/$(ASSIGNMENT).ipynb.
# The gradebook learns the assignment and its hidden tests from the source notebook.
GRADEBOOK := grading/gradebook.db

$(GRADEBOOK): $(SOURCE) | $(STAMP)
	@mkdir -p grading
	$(NBGRADER) generate_assignment $(ASSIGNMENT) --force --log-level=WARN

# make autograde STUDENT=id regrades one student (STUDENT="a b" several); V=1 shows whole errors.
autograde: $(GRADEBOOK)
	@PATH=$(ABS_BIN):"$$PATH" $(BIN)/python -m autograder.frontends.autograde $(ASSIGNMENT) $(if $(JOBS),--jobs $(JOBS)) \
		$(if $(STUDENT),--student $(STUDENT)) $(if $(V),--verbose)

feedback: $(GRADEBOOK)
	$(NBGRADER) generate_feedback $(ASSIGNMENT) --force --log-level=WARN

# make export LMS_ROSTER=file: also the file an LMS imports, matched through that roster (a Canvas
# gradebook export, or a CSV with email, username or idnumber such as make students' class.csv).
# BONUS: where the bonus goes, separate (its own column, the default), inside or capped (at 100).
# docs/instructors/nbgrader.md, "The exported CSV".
LMS_ROSTER ?=
BONUS ?=
export: $(GRADEBOOK)
	@$(NBGRADER) export --to grading/grades.csv --log-level=WARN $(if $(LMS_ROSTER),--StageCsvExport.roster=$(call quote,$(LMS_ROSTER))) \
		$(if $(BONUS),--StageCsvExport.bonus=$(call quote,$(BONUS)))

# The server's root is the repository (a terminal opened in JupyterLab runs make test there);
# --allow-root where make runs as root (Docker, cloud IDEs), where Jupyter refuses otherwise.
# LAB_ARGS=... adds options, e.g. LAB_ARGS="--no-browser --port 8899". make's own variables
# are dropped: a make run in JupyterLab's terminal is then a top-level make, not "make[1]".
LAB_ARGS ?=
lab: $(STUDENT_STAMP)
	@env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS $(BIN)/jupyter lab --ServerApp.root_dir=$(call quote,$(CURDIR)) $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root) \
		$(LAB_ARGS) $(call quote,$(NOTEBOOK))

# Only what the build makes. grading/ holds submissions, the gradebook and manual grades: an
# instructor's work, never removed by a make target.
clean:
	rm -rf $(VENV) build .pytest_cache .hypothesis .ruff_cache
	find autograder tests -name __pycache__ -type d -prune -exec rm -rf {} +

# The students' repository (the assignment's template repository): the release, the grader, a
# student README and Makefile, the grade workflow (GRADE_ON=push, tags: pushed submit* tags only,
# none: no workflow, for Classroom 50); one commit, no answers (autograder/frontends/student_repo.py).
# The trusted regrade: each student's notebook graded by this checkout's grader, REPOS untouched.
.PHONY: student-repo grade-repos collect-repos
student-repo: $(STAMP)
	@test -n $(call quote,$(DEST)) || { echo "usage: make student-repo DEST=path/to/new/folder"; exit 2; }
	@$(BIN)/python -m autograder.frontends.student_repo $(call quote,$(DEST)) --chapter $(CHAPTER) $(if $(URL),--url $(call quote,$(URL))) \
		$(if $(GRADER_URL),--grader-url $(call quote,$(GRADER_URL))) $(if $(GRADE_ON),--grade-on $(call quote,$(GRADE_ON)))

# DEADLINE= grades each repository at its last push before it by GitHub's record (gh api, your
# login); COLLECTED= at the tips make collect-repos recorded at the deadline (your clock);
# TRUST_COMMIT_DATES=1 by the commit dates the students set, said on every row.
grade-repos: $(STAMP)
	@test -n $(call quote,$(REPOS)) || { echo "usage: make grade-repos REPOS=class-folder [DEADLINE=\"2026-11-20 23:59 America/New_York\"] [COLLECTED=file] [TRUST_COMMIT_DATES=1] [JOBS=n] [OUT=build/grade-repos]"; exit 2; }
	@$(BIN)/python -m autograder.frontends.grade_repos $(call quote,$(REPOS)) --chapter $(CHAPTER) $(if $(JOBS),--jobs $(JOBS)) $(if $(OUT),--out $(call quote,$(OUT))) \
		$(if $(DEADLINE),--deadline $(call quote,$(DEADLINE))) $(if $(COLLECTED),--collected $(call quote,$(COLLECTED))) \
		$(if $(TRUST_COMMIT_DATES),--trust-commit-dates)

collect-repos: $(STAMP)
	@test -n $(call quote,$(REPOS)) || { echo "usage: make collect-repos REPOS=class-folder [COLLECTED=build/collected.json]  (at the deadline)"; exit 2; }
	@$(BIN)/python -m autograder.frontends.grade_repos $(call quote,$(REPOS)) --collect $(call quote,$(or $(COLLECTED),build/collected.json))

# What to re-teach: the class's diagnosed mistakes, ranked, read from what grading left (never
# regrading): make autograde's grading/diagnoses/, make grade-repos' build/grade-repos/, or
# Gradescope's Export Submissions zip (GRADESCOPE_ZIP=). ANONYMOUS=1 leaves the names out.
.PHONY: class-report
FROM ?=
GRADESCOPE_ZIP ?=
class-report: $(STUDENT_STAMP)
	@$(BIN)/python -m autograder.frontends.class_report $(if $(FROM),--from $(FROM)) \
		$(if $(GRADESCOPE_ZIP),--gradescope-zip $(call quote,$(GRADESCOPE_ZIP))) $(if $(ANONYMOUS),--anonymous) \
		$(if $(OUT),--out $(call quote,$(OUT))) --chapter $(CHAPTER)

# An instructor's first command: six simulated students through the nbgrader route (release,
# due date, autograde, feedback, export) and the regrade of their repositories, in a scratch
# folder (default build/demo; a folder the demo did not make is refused, never deleted);
# autograder/frontends/demo.py, docs/instructors/nbgrader.md. JOBS defaults to 2 here.
DEMO_DIR ?=
demo: $(STAMP)
	@$(BIN)/python -m autograder.frontends.demo $(if $(DEMO_DIR),--dir $(call quote,$(DEMO_DIR))) --jobs $(or $(JOBS),2)

# Instructors: the due date (late penalties: nbgrader_config.py's LatePenalty), the class list
# and formgrader: docs/instructors/nbgrader.md, "Due dates and late work" and "Formgrader: manual
# grading and overrides".
.PHONY: duedate students formgrader
duedate: $(GRADEBOOK)
	@test -n "$(DUE)" || { echo 'usage: make duedate DUE="2026-11-20 23:59:00 -0500" (or "2026-11-20 23:59 America/New_York", "2026-11-21 04:59 UTC"), then make autograde'; exit 2; }
	@PATH=$(ABS_BIN):"$$PATH" $(BIN)/python -m autograder.frontends.duedate $(ASSIGNMENT) $(call quote,$(DUE))

students: $(GRADEBOOK)
	@test -n "$(ROSTER)" || { echo "usage: make students ROSTER=class.csv  (columns: id,first_name,last_name,email)"; exit 2; }
	@$(NBGRADER) db student import $(call quote,$(ROSTER)) --log-level=WARN
	@$(NBGRADER) db student list --log-level=WARN

# JupyterLab with nbgrader's formgrader, at the course root, on this machine only
# (127.0.0.1); the printed URL opens /formgrader (LabApp.default_url: JupyterLab sets its own
# /lab over ServerApp.default_url). As root: --allow-root.
FORMGRADER_ARGS ?=
formgrader: $(GRADEBOOK)
	@mkdir -p grading/exchange
	@env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS PATH=$(ABS_BIN):"$$PATH" $(BIN)/jupyter lab --ServerApp.root_dir=$(call quote,$(CURDIR)) \
		--ServerApp.ip=127.0.0.1 --no-browser $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root) \
		--LabApp.default_url=/formgrader $(FORMGRADER_ARGS)
