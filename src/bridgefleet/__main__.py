"""``python -m bridgefleet``: the same as the ``bridgefleet`` command."""

import sys

from bridgefleet.cli import main

sys.exit(main())
