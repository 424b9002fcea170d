"""The Makefile's own help: every target a person can type is listed by `make help`."""

from __future__ import annotations

import re

from support import makefile_text


def test_make_help_names_every_target():
    text = makefile_text().replace("\\\n", " ")  # a line continued with a backslash is one line
    targets = {t for line in text.splitlines() if line.startswith(".PHONY:") for t in line.split(":", 1)[1].split()}
    listed = set(re.findall(r'@echo "make ([\w-]+)', text))
    assert targets - {"help"} <= listed, f"make help omits {sorted(targets - {'help'} - listed)}"
