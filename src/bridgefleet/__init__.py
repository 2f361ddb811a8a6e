"""bridgefleet: fast deep reinforcement-learning maintenance policies for bridge fleets."""

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
