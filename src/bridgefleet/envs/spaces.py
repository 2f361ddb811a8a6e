"""Observation and action spaces shared by every environment."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from bridgefleet.config import FleetConfig
from bridgefleet.sim.model import N_ACTIONS
from bridgefleet.sim.simulator import RURAL_OBS_DIM, urban_obs_dim
from bridgefleet.sim.strategies import N_STRATEGIES

OBS_HIGH = 1000.0
"""Upper bound of every scaled observation (ages and carried-over budgets can exceed 1, never this)."""


def urban_observation_space(config: FleetConfig) -> spaces.Box:
    """Box (n_urban*4 + 1,), float32, scaled features ≥ 0 (see docs/fleet-model.md)."""
    return spaces.Box(0.0, OBS_HIGH, shape=(urban_obs_dim(config.n_urban),), dtype=np.float32)


def rural_observation_space() -> spaces.Box:
    """Box (10,), float32: 9 rural fleet statistics and the remaining budget fraction."""
    return spaces.Box(0.0, OBS_HIGH, shape=(RURAL_OBS_DIM,), dtype=np.float32)


def urban_action_space(config: FleetConfig) -> spaces.MultiDiscrete:
    return spaces.MultiDiscrete([N_ACTIONS] * config.n_urban)


def rural_action_space() -> spaces.Discrete:
    return spaces.Discrete(N_STRATEGIES)


def observation_space(config: FleetConfig) -> spaces.Dict:
    return spaces.Dict({"urban": urban_observation_space(config), "rural": rural_observation_space()})


def action_space(config: FleetConfig) -> spaces.Dict:
    return spaces.Dict({"urban": urban_action_space(config), "rural": rural_action_space()})
