"""`python -m app COMMAND …`: Lookout's command line (app/cli.py)."""

import sys

from app.cli import run

sys.exit(run(sys.argv[1:]))
