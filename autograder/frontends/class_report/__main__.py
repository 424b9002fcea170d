"""``python -m autograder.frontends.class_report``."""

import sys

from autograder.frontends.class_report.command import main

sys.exit(main())
