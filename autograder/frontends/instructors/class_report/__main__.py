"""``python -m autograder class-report``."""

import sys

from autograder.frontends.instructors.class_report import main

sys.exit(main())
