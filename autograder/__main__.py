import sys

from autograder.frontends.cli import main

sys.exit(main())
