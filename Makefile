# The course repository's commands: one-line aliases of `python -m autograder COMMAND` (its
# --help lists them all) and of the tests. Run every command from the repository root, where
# nbgrader reads nbgrader_config.py; the first one sets up .venv. The students' commands (test,
# lab, ci-grade, venv, clean) are students.mk's, which is the students' repository's Makefile.
STAMP = $(VENV)/.installed
VENV_STAMP = $(STAMP)
include students.mk

ASSIGNMENT := $(CHAPTER)
SOURCE := solutions/$(ASSIGNMENT)/$(ASSIGNMENT).ipynb
GRADEBOOK := grading/gradebook.db
# nbgrader runs alembic from PATH, so the venv's bin goes first (an absolute path that survives spaces).
ABS_BIN = $(call quote,$(if $(filter /%,$(BIN)),$(BIN),$(CURDIR)/$(BIN)))
GRADER = PATH=$(ABS_BIN):"$$PATH" $(BIN)/python -m autograder
NBGRADER = PATH=$(ABS_BIN):"$$PATH" $(BIN)/nbgrader
# $(call opt,VAR,--option): --option 'value' when VAR is set; $(call flag,VAR,--option): --option.
opt = $(if $($(1)),$(2) $(call quote,$($(1))))
flag = $(if $($(1)),$(2))

.PHONY: check check-slow check-course check-fast check-torch check-gpu lint release autograde feedback export \
	gradescope classroom50 student-repo grade-repos collect-repos class-report demo duedate students formgrader \
	bench bench-grader mutants
help::
	@echo "make check            the repository's tests but the slow ones, ruff and the import contracts (CI)"
	@echo "make check-fast       the unit layer alone (tests/unit): no worker, no notebook, seconds"
	@echo "make check-slow       the slow tests: whole classes through nbgrader, installs from scratch (CI)"
	@echo "make check-course     what an instructor's edit can break: a course repository's CI"
	@echo "make check-torch TORCH=2.15.0  grade under another PyTorch release, in build/torch-2.15.0/venv"
	@echo "make check-gpu [DEVICE=cpu]  every catalogued case on the GPU and the CPU, with TF32 on too (DEVICE=cpu: the dry run)"
	@echo "make lint             ruff and the import contracts"
	@echo "make release          regenerate the course file and assignments/ from solutions/"
	@echo "make students ROSTER=class.csv  import the class list (id,first_name,last_name,email)"
	@echo "make duedate DUE=\"2026-11-20 23:59:00 -0500\"  the due date (late penalties), then make autograde"
	@echo "make autograde [JOBS=n] [STUDENT=id] [V=1]  nbgrader autograde of grading/submitted/*/$(ASSIGNMENT), sandboxed"
	@echo "make formgrader       JupyterLab with nbgrader's formgrader (manual grading), localhost"
	@echo "make feedback         nbgrader feedback (HTML, hidden tests removed) in grading/feedback/"
	@echo "make export [LMS_ROSTER=canvas-export.csv|class.csv] [BONUS=separate|inside|capped]  grading/grades.csv and the LMS's file"
	@echo "make gradescope [HIDDEN_EXAMPLES=1]  the Gradescope autograder zip (build/gradescope/)"
	@echo "make classroom50 DEST=dir  Classroom 50's autograder folder for one assignment"
	@echo "make student-repo DEST=dir [URL=git-url] [GRADER_URL=url] [GRADE_ON=push|tags|none]  the students' repository"
	@echo "make grade-repos REPOS=dir [DEADLINE=...|COLLECTED=file] [TRUST_COMMIT_DATES=1]  regrade the class's repositories"
	@echo "make collect-repos REPOS=dir [COLLECTED=file]  at the deadline: record each repository's tip"
	@echo "make class-report [FROM=nbgrader|repos|gradescope] [GRADESCOPE_ZIP=zip] [ANONYMOUS=1]  the class's mistakes, ranked"
	@echo "make demo [DEMO_DIR=build/demo] [JOBS=2]  try it: a simulated class through nbgrader and the regrade"
	@echo "make bench [THREADS=1]  time wrapper, weight split, fused QKV and SDPA (table + build/bench.png)"
	@echo "make bench-grader [REPEAT=n] [NO_VALIDATE=1]  time make test against import torch and nbgrader validate"
	@echo "make mutants [MUTANTS_ARGS=--styles 0]  the mutation benchmark: kill rate, hint precision (minutes)"

$(STAMP): pyproject.toml $(CONSTRAINTS)
	$(call install,instructor)
	@touch $@ $(STUDENT_STAMP)

# ruff and the import contracts first: seconds, where the tests take minutes.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

# One xdist worker per core; a module's tests stay on one worker (a shared fixture is built once),
# handed out in tests/conftest.py's order, longest first. The slow tests (a class through
# nbgrader, an install from scratch) are check-slow's. docs/maintainers.md, "Tests".
TEST_WORKERS ?= auto
PYTEST_PARALLEL = -n $(TEST_WORKERS) --dist loadscope
check: lint
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) --no-loadscope-reorder -m "not slow" --durations=15
check-slow: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) -m slow --durations=15
# One xdist worker per core: each repeats the 4 s of collection, but the tests take 25 s in one.
# Work stealing, not one module per worker: test_wire.py alone takes 12 s (17.5 s against 20.7 s).
FAST_WORKERS ?= auto
check-fast: $(STAMP)
	$(BIN)/python -m pytest tests/unit -q -n $(FAST_WORKERS) --dist worksteal

# A course repository's CI: what an instructor's edit of the source notebook, nbgrader_config.py
# or the docs can break; not the mistake catalog nor the nbgrader-equals-CLI test (the grader's
# own checks, which no such edit touches). The one list: tests/e2e/test_ci.py checks each entry.
COURSE_TESTS := tests/unit tests/with_nbgrader tests/e2e/test_foundation.py \
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

# Maintainers' checks, never part of make check: another PyTorch release in build/torch-$(TORCH)/venv
# (tests/check_torch.py), and the GPU against the CPU (tests/check_gpu.py; GPU_PYTHON=python3
# where python3 already has a CUDA torch and no network reaches pip). docs/maintainers-torch.md.
check-torch:
	@test -n "$(TORCH)" || { echo "usage: make check-torch TORCH=2.15.0 [FRESH=1]"; exit 2; }
	@$(PYTHON) tests/check_torch.py $(call quote,$(TORCH)) --index-url $(call quote,$(TORCH_INDEX_URL)) $(call flag,FRESH,--fresh)
check-gpu: $(if $(GPU_PYTHON),,$(STAMP))
	@$(or $(GPU_PYTHON),$(BIN)/python) tests/check_gpu.py $(if $(filter cpu,$(DEVICE)),--cpu-only)
mutants: $(STAMP)
	$(BIN)/python tests/mutants.py --jobs 2 $(MUTANTS_ARGS)
# The benchmarks (tests/tools/) time the solutions unless NOTEBOOK=... is given on the command line.
BENCH_NOTEBOOK = $(if $(filter command line,$(origin NOTEBOOK)),--notebook $(call quote,$(NOTEBOOK)))
bench: $(STAMP)
	@$(BIN)/python tests/tools/bench_attention.py --device $(DEVICE) $(BENCH_NOTEBOOK) $(call opt,THREADS,--threads)
bench-grader: $(STAMP)
	@PATH=$(ABS_BIN):"$$PATH" $(BIN)/python tests/tools/bench_grader.py $(BENCH_NOTEBOOK) $(call opt,REPEAT,--repeat) $(call flag,NO_VALIDATE,--no-validate) $(call flag,NO_TEST_CELLS,--no-test-cells)

# Instructors. The source notebook's test cells decide the stages, their points and the bonus.
release: $(STAMP)
	@mkdir -p grading && $(GRADER) release --chapter $(CHAPTER)
$(GRADEBOOK): $(SOURCE) | $(STAMP)
	@mkdir -p grading && $(GRADER) release --chapter $(CHAPTER)
autograde: $(GRADEBOOK)
	@$(GRADER) autograde $(ASSIGNMENT) $(call opt,JOBS,--jobs) $(if $(STUDENT),--student $(STUDENT)) $(call flag,V,--verbose)
feedback: $(GRADEBOOK)
	$(NBGRADER) generate_feedback $(ASSIGNMENT) --force --log-level=WARN
export: $(GRADEBOOK)
	@$(NBGRADER) export --to grading/grades.csv --log-level=WARN $(if $(LMS_ROSTER),--StageCsvExport.roster=$(call quote,$(LMS_ROSTER))) $(if $(BONUS),--StageCsvExport.bonus=$(call quote,$(BONUS)))
duedate: $(GRADEBOOK)
	@test -n "$(DUE)" || { echo 'usage: make duedate DUE="2026-11-20 23:59:00 -0500" (or "2026-11-20 23:59 America/New_York", "2026-11-21 04:59 UTC"), then make autograde'; exit 2; }
	@$(GRADER) duedate $(ASSIGNMENT) $(call quote,$(DUE))
students: $(GRADEBOOK)
	@test -n "$(ROSTER)" || { echo "usage: make students ROSTER=class.csv  (columns: id,first_name,last_name,email)"; exit 2; }
	@$(NBGRADER) db student import $(call quote,$(ROSTER)) --log-level=WARN && $(NBGRADER) db student list --log-level=WARN
# On this machine only (127.0.0.1); the printed URL opens /formgrader.
formgrader: $(GRADEBOOK)
	@mkdir -p grading/exchange && env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS PATH=$(ABS_BIN):"$$PATH" $(BIN)/jupyter lab --ServerApp.root_dir=$(call quote,$(CURDIR)) --ServerApp.ip=127.0.0.1 --no-browser $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root) --LabApp.default_url=/formgrader $(FORMGRADER_ARGS)
gradescope: $(STAMP)
	@$(GRADER) gradescope build $(call flag,HIDDEN_EXAMPLES,--hidden-examples)
classroom50: $(STAMP)
	@$(GRADER) classroom50 build $(call quote,$(DEST))
student-repo: $(STAMP)
	@$(GRADER) student-repo $(call quote,$(DEST)) --chapter $(CHAPTER) $(call opt,URL,--url) $(call opt,GRADER_URL,--grader-url) $(call opt,GRADE_ON,--grade-on)
grade-repos: $(STAMP)
	@test -n $(call quote,$(REPOS)) || { echo "usage: make grade-repos REPOS=class-folder [DEADLINE=\"2026-11-20 23:59 America/New_York\"] [COLLECTED=file] [TRUST_COMMIT_DATES=1] [JOBS=n] [OUT=build/grade-repos]"; exit 2; }
	@$(GRADER) grade-repos $(call quote,$(REPOS)) --chapter $(CHAPTER) $(call opt,JOBS,--jobs) $(call opt,OUT,--out) $(call opt,DEADLINE,--deadline) $(call opt,COLLECTED,--collected) $(call flag,TRUST_COMMIT_DATES,--trust-commit-dates)
collect-repos: $(STAMP)
	@$(GRADER) grade-repos $(call quote,$(REPOS)) --collect $(call quote,$(or $(COLLECTED),build/collected.json))
class-report: $(STUDENT_STAMP)
	@$(GRADER) class-report --chapter $(CHAPTER) $(call opt,FROM,--from) $(call opt,GRADESCOPE_ZIP,--gradescope-zip) $(call flag,ANONYMOUS,--anonymous) $(call opt,OUT,--out)
demo: $(STAMP)
	@$(BIN)/python tests/tools/demo.py $(call opt,DEMO_DIR,--dir) --jobs $(or $(JOBS),2)

# Only what the build made: grading/ (submissions, the gradebook, manual grades) always stays.
clean::
	rm -rf .ruff_cache && find autograder tests -name __pycache__ -type d -prune -exec rm -rf {} +
