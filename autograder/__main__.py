import sys

from autograder.frontends.commands import main, restart_clean

restart_clean(sys.argv[1:])
sys.exit(main())
