"""``python -m bridgefleet.bench``: the benchmark's command line (also ``bridgefleet bench``)."""

import sys

from bridgefleet.bench.measure import main

sys.exit(main())
