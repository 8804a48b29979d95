"""`python -m workbench.cli`: the same entry point as `agenthop-tui`."""

import sys

from workbench.cli import main

sys.exit(main())
