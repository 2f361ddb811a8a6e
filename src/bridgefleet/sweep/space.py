"""A sweep's search space: SPACE.yaml read, checked against :class:`TrainConfig`, and given to Ray Tune.

Format (docs/sweep.md)::

    preset: sarsa              # the preset every trial starts from (default: sarsa)
    fixed:                     # TrainConfig fields the same in every trial
      episodes: 800
    space:                     # TrainConfig fields searched
      n_step: {grid: [2, 3]}             # every value, in every combination with the other grids
      per: {grid: [false, true]}
      bridge_hidden: {choice: [[64, 64], [128, 128]]}   # one drawn at random per sample
      lr: {uniform: [0.0005, 0.002]}                     # a float drawn uniformly per sample
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bridgefleet.config import ConfigError, read_yaml
from bridgefleet.config.names import unknown_names
from bridgefleet.config.presets import PRESETS, resolve_config
from bridgefleet.config.training import TrainConfig

KINDS = ("grid", "choice", "uniform")
TOP_KEYS = ("preset", "fixed", "space")
NOT_SEARCHED = ("fleet", "preset", "threads", "device")  # one fleet per sweep; one torch thread per trial
SWEEP_PRESET = "sarsa"
"""A sweep's preset unless its space names one: the per-bridge agent learned episode by episode, whose evaluations
ASHA stops trials on (the ``default`` preset, fitted to the planner, evaluates twice a run)."""


@dataclass
class SweepSpace:
    """preset, fixed overrides and searched fields {name: (kind, values)} of a sweep."""

    preset: str = SWEEP_PRESET
    fixed: dict[str, Any] = field(default_factory=dict)
    dims: dict[str, tuple[str, list[Any]]] = field(default_factory=dict)
    source: str = ""

    def trials(self, samples: int, seeds: int) -> int:
        """Trials Tune will run: samples × every grid combination × seeds."""
        n = samples * seeds
        for kind, values in self.dims.values():
            if kind == "grid":
                n *= len(values)
        return n

    def to_tune(self, seeds: int) -> dict[str, Any]:
        """Tune's param_space (grid_search / choice / uniform), seeds as one more grid."""
        from ray import tune

        make = {"grid": tune.grid_search, "choice": tune.choice, "uniform": lambda v: tune.uniform(*v)}
        space: dict[str, Any] = {name: make[kind](values) for name, (kind, values) in self.dims.items()}
        if "seed" not in self.dims:
            base = int(self.fixed.get("seed", 0))
            space["seed"] = tune.grid_search(list(range(base, base + seeds)))
        return space


def load_space(path: str | Path) -> SweepSpace:
    """Read and check SPACE.yaml: every field names a TrainConfig field and every value makes a valid one.

    Raises:
        ConfigError: naming the file and the field (unknown field, empty choice, bad value, bad kind).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such sweep space file")
    data = read_yaml(path)
    where = str(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping with {', '.join(TOP_KEYS)}")
    unknown = [k for k in data if k not in TOP_KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown_names(unknown, TOP_KEYS)}; a space has "
                          f"{', '.join(TOP_KEYS)}")
    preset = str(data.get("preset") or SWEEP_PRESET)
    if preset not in PRESETS:
        raise ConfigError(f"{where}: preset {unknown_names([preset], PRESETS)} unknown; known: {', '.join(PRESETS)}")
    fixed = data.get("fixed") or {}
    if not isinstance(fixed, dict):
        raise ConfigError(f"{where}: 'fixed' must map TrainConfig fields to values, not {type(fixed).__name__}")
    fixed = dict(fixed)
    raw = data.get("space") or {}
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(f"{where}: 'space' must map at least one TrainConfig field to grid/choice/uniform")
    names = {f.name for f in dataclasses.fields(TrainConfig)}
    dims: dict[str, tuple[str, list[Any]]] = {}
    for name in [*fixed, *raw]:
        if name not in names or (name in NOT_SEARCHED and name in raw):
            hint = "not a TrainConfig field" if name not in names else "set per sweep (under fixed:), not searched"
            raise ConfigError(f"{where}: field {name!r}: {hint} (fields: docs/sweep.md)")
    try:  # the fixed fields first, so an error of theirs is not laid at a searched field's door
        resolve_config(preset, None, fixed)
    except (ConfigError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: fixed: {exc}") from None
    for name, spec in raw.items():
        if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in KINDS:
            raise ConfigError(f"{where}: field {name!r}: give one of {', '.join(KINDS)}, e.g. {{grid: [1, 3]}}")
        kind, values = next(iter(spec.items()))
        if not isinstance(values, list) or not values:
            raise ConfigError(f"{where}: field {name!r}: {kind} needs a non-empty list of values")
        if kind == "uniform" and (len(values) != 2 or not all(isinstance(v, int | float) for v in values)
                                  or values[0] >= values[1]):
            raise ConfigError(f"{where}: field {name!r}: uniform needs [low, high] with low < high")
        # Every value a kind can give is checked against the field's type and range: a grid's and a choice's
        # values, a uniform's two ends and a fractional number between them (it draws any number in between).
        tried = values if kind != "uniform" else [float(values[0]), float(values[1]),
                                                  values[0] + 0.37 * (values[1] - values[0])]
        for v in tried:
            try:
                resolve_config(preset, None, {**fixed, name: tuple(v) if isinstance(v, list) else v})
            except (ConfigError, TypeError, ValueError) as exc:
                drawn = f" (uniform draws any number in {values})" if kind == "uniform" else ""
                raise ConfigError(f"{where}: field {name!r} = {v!r}{drawn}: {exc}") from None
        dims[name] = (kind, [tuple(v) if isinstance(v, list) else v for v in values])
    return SweepSpace(preset, fixed, dims, where)
