# Every command runs from the repository root (nbgrader reads nbgrader_config.py only there)
# and bootstraps .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ASSIGNMENT := ch03_attention
NOTEBOOK ?= assignments/$(ASSIGNMENT)/$(ASSIGNMENT).ipynb
SOURCE := solutions/$(ASSIGNMENT)/$(ASSIGNMENT).ipynb
STAGE ?=
DEVICE ?= auto

.PHONY: help test check release venv lab clean

help:
	@echo "make test [STAGE=4]   grade your notebook ($(NOTEBOOK))"
	@echo "make lab              open the notebook in JupyterLab with this project's kernel"
	@echo "make check            the repository's own tests (maintainers, CI)"
	@echo "make release          regenerate assignments/ from solutions/ with nbgrader"

venv: $(STAMP)

# torch is pinned in pyproject.toml: the exact version resolves to the CPU wheel where
# there is no GPU, instead of a multi-GB CUDA download.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[notebook,dev]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ch03 attention)" >/dev/null
	@touch $@

test: $(STAMP)
	@$(BIN)/python -m autograder $(NOTEBOOK) --device $(DEVICE) $(if $(STAGE),--stage $(STAGE))

check: $(STAMP)
	$(BIN)/python -m pytest

# nbgrader runs alembic from PATH, so the venv's bin goes first.
NBGRADER := PATH="$(abspath $(BIN)):$$PATH" $(BIN)/nbgrader

release: $(STAMP)
	@mkdir -p grading
	$(NBGRADER) generate_assignment $(ASSIGNMENT) --force --log-level=WARN

lab: $(STAMP)
	$(BIN)/jupyter lab $(NOTEBOOK)

clean:
	rm -rf $(VENV) grading .pytest_cache .hypothesis
