"""`python -m flexmb` runs the command-line interface."""
import sys

from flexmb.cli import main

sys.exit(main())
