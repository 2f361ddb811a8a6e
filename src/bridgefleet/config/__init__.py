"""Settings, torch-free: the fleet model (:mod:`~bridgefleet.config.fleet`), a training run and its presets
(:mod:`~bridgefleet.config.training`) and the learner (:mod:`~bridgefleet.config.learner`).

The fleet settings are re-exported here, as most modules need only them."""

from bridgefleet.config.fleet import (
    FLEET_MODELS,
    RATE_RANGE,
    RURAL_RANGES,
    URBAN_RANGES,
    ConfigError,
    FleetConfig,
    fleet_mapping,
    read_yaml,
)

__all__ = ["FLEET_MODELS", "RATE_RANGE", "RURAL_RANGES", "URBAN_RANGES", "ConfigError", "FleetConfig",
           "fleet_mapping", "read_yaml"]
