# The students' commands. The students' repository has this file as its Makefile (make
# student-repo copies it); the course repository's Makefile includes it. Run every command from
# the repository root; the first one sets up .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STUDENT_STAMP := $(VENV)/.student
# What `make venv` installs: the students' packages here; the course repository's Makefile
# sets the instructor's before it includes this file.
VENV_STAMP ?= $(STUDENT_STAMP)
CHAPTER ?= ch03_attention
NOTEBOOK ?= assignments/$(CHAPTER)/$(CHAPTER).ipynb
DEVICE ?= auto
CI_REPORTS ?= build/ci
CONSTRAINTS := constraints.txt
# torch: the pin in constraints.txt. PyPI's Linux wheel brings several GB of CUDA packages
# whatever the machine has, so on Linux without an NVIDIA GPU it comes from PyTorch's CPU
# index; TORCH_INDEX_URL=URL picks another, TORCH_INDEX_URL= (empty) leaves it to pip.
TORCH_HOST_OS ?= $(shell uname -s 2>/dev/null)
TORCH_HOST_GPU ?= $(shell { nvidia-smi -L || test -e /proc/driver/nvidia/version; } >/dev/null 2>&1 && echo nvidia)
TORCH_INDEX_URL ?= $(if $(filter Linux,$(TORCH_HOST_OS)),$(if $(TORCH_HOST_GPU),,https://download.pytorch.org/whl/cpu))
# $(call quote,TEXT): TEXT as one shell word (spaces, quotes, "Copy of ch03_attention (1).ipynb").
quote = '$(subst ','\'',$(1))'
PIP = $(BIN)/python -m pip install --quiet --disable-pip-version-check
# $(call install,EXTRA): a venv with torch first, alone, at the pin and from its index, then the grader.
define install
@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
$(PIP) --upgrade pip
$(PIP) -c $(CONSTRAINTS) torch $(if $(TORCH_INDEX_URL),--index-url $(call quote,$(TORCH_INDEX_URL)))
$(PIP) -c $(CONSTRAINTS) -e ".[$(1)]"
$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ch03 attention)" >/dev/null
endef

.PHONY: help venv test lab ci-grade clean
help::
	@echo "make lab        open the notebook in JupyterLab (sets up .venv on first use)"
	@echo "make test [STAGE=4] [V=1] [HINTS=2]  grade your notebook (STAGE: one stage; V=1: every failed check;"
	@echo "                HINTS=2: hints that also show the code that fixes the mistake)"
	@echo "make ci-grade   what CI runs on a push: the grade, reports in build/ci/"
	@echo "make venv       set up .venv"
	@echo "make clean      remove .venv and build/ (your notebook stays)"

venv: $(VENV_STAMP)

$(STUDENT_STAMP): pyproject.toml $(CONSTRAINTS)
	$(call install,student)
	@touch $@

# A grade is not a failure: make test exits 0 whenever it printed one (STRICT=1: the grader's
# own status, 0 full marks, 1 a check failed, 2 could not grade).
test: $(STUDENT_STAMP)
	@$(BIN)/python -m autograder grade $(call quote,$(NOTEBOOK)) --chapter $(CHAPTER) --device $(DEVICE) $(if $(STAGE),--stage $(STAGE)) $(if $(V),--verbose) $(if $(HINTS),--hints $(HINTS)) $(if $(STRICT),,|| true)

# One grading, every CI output: the table, a Grade annotation, results.json, junit.xml; exit 1
# below PASS_MARK when one is given, 2 when the notebook could not be graded.
ci-grade: $(STUDENT_STAMP)
	@$(BIN)/python -m autograder ci $(call quote,$(NOTEBOOK)) --chapter $(CHAPTER) --device $(DEVICE) --results $(call quote,$(CI_REPORTS)/results.json) --junit $(call quote,$(CI_REPORTS)/junit.xml) $(if $(PASS_MARK),--pass-mark $(PASS_MARK))

# JupyterLab rooted at the repository; as root (Docker, cloud IDEs) it needs --allow-root.
# make's own variables are dropped, so a make run in its terminal is a top-level make.
lab: $(STUDENT_STAMP)
	@env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS $(BIN)/jupyter lab --ServerApp.root_dir=$(call quote,$(CURDIR)) $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root) $(LAB_ARGS) $(call quote,$(NOTEBOOK))

# Only what the setup and the grader made; the notebook is yours and stays.
clean::
	rm -rf $(VENV) build .pytest_cache .hypothesis
