"""``python -m bridgefleet.cli``: the ``bridgefleet`` command."""

import sys

from bridgefleet.cli import main

sys.exit(main())
