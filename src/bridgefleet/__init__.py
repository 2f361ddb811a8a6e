"""bridgefleet: fast deep reinforcement-learning maintenance policies for bridge fleets."""

import os
import sys

# Numba's parallel kernels (the DPs, the knapsacks) on its own thread pool, not on OpenMP: torch's CPU wheel
# ships libgomp.so.1, which Numba's OpenMP layer loads as its own, and each kernel's launch then sets the
# OpenMP thread count that torch reads, so a learner told to use 1 thread ran on Numba's (every core) after the
# first knapsack; on a 2-core machine with one core busy, the default fleet's training took 146-208 s instead
# of 77 s (docs/benchmarks.md, "Precision and threads"). A user's NUMBA_THREADING_LAYER is kept.
os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")
if "numba" in sys.modules and sys.modules["numba"].config.THREADING_LAYER == "default":  # imported before us
    sys.modules["numba"].config.THREADING_LAYER = os.environ["NUMBA_THREADING_LAYER"]

from gymnasium.envs.registration import register, registry

from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.envs.fleet_env import FleetEnv
from bridgefleet.envs.parallel import FleetParallelEnv
from bridgefleet.envs.single_agent import RuralEnv, UrbanEnv
from bridgefleet.envs.vector import FleetVectorEnv

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "FleetConfig",
    "FleetEnv",
    "FleetParallelEnv",
    "FleetVectorEnv",
    "RuralEnv",
    "UrbanEnv",
]

if "bridgefleet/Fleet-v0" not in registry:
    register(id="bridgefleet/Fleet-v0", entry_point="bridgefleet.envs.fleet_env:FleetEnv")
