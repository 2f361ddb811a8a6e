"""Fleet configuration: one dataclass, loadable from YAML, validated on construction."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A configuration value is invalid; the message names the field and the value."""


def read_yaml(path: str | Path) -> Any:
    """Parse a UTF-8 YAML file.

    Raises:
        ConfigError: one line naming the file (and the line and column of a YAML syntax error) when the
            file cannot be read, is not UTF-8 text, or is not valid YAML.
    """
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); expected a YAML file") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{path}{where}: not valid YAML ({problem})") from None


@dataclass
class FleetConfig:
    """Everything that defines a fleet simulation. Units are in each field's comment.

    Defaults are documented, with their sources, in ``docs/fleet-model.md``.

    Raises:
        ConfigError: on construction, if any value is out of range (the message names the field).
    """

    n_urban: int = 20
    """Urban bridges under per-bridge control (urban agent), count."""
    n_rural: int = 80
    """Rural bridges under strategy-level control (rural agent), count."""
    horizon_years: int = 30
    """Episode length in years; the end is a time limit (``truncated=True``)."""
    annual_budget_usd: float = 282_000.0
    """Annual maintenance budget of the municipality, USD per year."""
    urban_budget_share: float = 0.34
    """Share of the annual budget given to the urban agency (the rest goes to the rural agency), 0–1."""
    carry_over_budget: bool = False
    """If true, unspent budget carries over to the next year."""
    deterioration_cv: float = 0.3
    """Coefficient of variation of the gamma-distributed yearly deterioration (0 = deterministic)."""
    ysm_acceleration: float = 0.1
    """Growth of the mean drop per year since maintenance: drop = rate × (1 + this × ysm)."""
    new_structure_rate: float = 0.035
    """Deterioration rate of a new structure after replacement, rating points per year."""
    target_condition: float = 7.0
    """Condition rating each bridge should keep (FHWA 'good' threshold), rating points."""
    critical_rating: float = 4.0
    """Below this rating the reward penalty grows quadratically (FHWA 'poor' is ≤ 4), rating points."""
    critical_penalty: float = 2.0
    """Weight of the quadratic penalty below the critical rating, utility per rating point squared."""
    aadt_reference: float = 10_000.0
    """AADT that gets weight 1 in the reward, vehicles/day."""
    aadt_exponent: float = 0.5
    """Traffic weight = (AADT / aadt_reference) ** aadt_exponent."""
    cost_lambda: float = 1.0e-5
    """Reward units lost per USD spent (10 per million USD)."""
    unit_costs_usd_per_m2: tuple[float, float, float, float, float] = (0.0, 70.0, 131.0, 1698.0, 2497.0)
    """Unit cost of actions 0–4 (nothing, preventive, repair, rehabilitation, replacement), USD per m² of deck."""
    fixed_fleet: bool = False
    """If true, every episode uses the same fleet drawn from ``fleet_seed``; otherwise from the episode seed."""
    fleet_seed: int = 0
    """Seed of the fixed fleet (used only when ``fixed_fleet`` is true)."""
    inventory: str | None = None
    """Path to a bridge inventory (or a bundled name); None = synthetic fleet."""
    max_urban: int | None = None
    """With an inventory: keep at most this many (highest-AADT) urban bridges under per-bridge control."""
    inventory_mapping: str | None = None
    """Column-mapping YAML (or bundled name) for an inventory that is not in NBI layout."""
    county: str | None = None
    """With an inventory: keep only this county (NBI item 3)."""
    owner: str | None = None
    """With an inventory: keep only this owner (NBI item 22)."""
    inventory_budget_usd_per_m2: float = 282_000.0 / 56_000.0
    """With an inventory: annual budget per m² of deck, USD/m²/year (default: the synthetic default
    budget over the synthetic fleet's expected deck area, 20 × 1,000 + 80 × 450 m²). The split between
    agencies follows the deck area each controls."""
    discount: float = 0.95
    """Discount factor per year used for returns (IMP-MARL convention)."""
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    """Reserved for forward compatibility; must be empty."""

    def __post_init__(self) -> None:
        self.unit_costs_usd_per_m2 = tuple(float(x) for x in self.unit_costs_usd_per_m2)  # type: ignore[assignment]
        self.validate()

    @property
    def n_bridges(self) -> int:
        return self.n_urban + self.n_rural

    @property
    def urban_budget_usd(self) -> float:
        return self.annual_budget_usd * self.urban_budget_share

    @property
    def rural_budget_usd(self) -> float:
        return self.annual_budget_usd * (1.0 - self.urban_budget_share)

    def validate(self) -> None:
        def bad(name: str, why: str) -> ConfigError:
            return ConfigError(f"FleetConfig.{name} = {getattr(self, name)!r}: {why}")

        for name in ("n_urban", "n_rural", "horizon_years", "fleet_seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise bad(name, "must be an integer")
        if self.n_urban < 1:
            raise bad("n_urban", "must be at least 1")
        if self.n_rural < 1:
            raise bad("n_rural", "must be at least 1")
        if self.horizon_years < 1:
            raise bad("horizon_years", "must be at least 1")
        for name in (
            "annual_budget_usd", "urban_budget_share", "deterioration_cv", "ysm_acceleration",
            "new_structure_rate", "target_condition", "critical_rating", "critical_penalty",
            "aadt_reference", "aadt_exponent", "cost_lambda", "discount", "inventory_budget_usd_per_m2",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise bad(name, "must be a finite number")
        if self.annual_budget_usd < 0:
            raise bad("annual_budget_usd", "must be ≥ 0 USD")
        if not 0.0 <= self.urban_budget_share <= 1.0:
            raise bad("urban_budget_share", "must be in [0, 1]")
        if self.deterioration_cv < 0:
            raise bad("deterioration_cv", "must be ≥ 0")
        if self.ysm_acceleration < 0:
            raise bad("ysm_acceleration", "must be ≥ 0")
        if self.new_structure_rate < 0:
            raise bad("new_structure_rate", "must be ≥ 0 rating points per year")
        for name in ("target_condition", "critical_rating"):
            if not 0.0 <= getattr(self, name) <= 9.0:
                raise bad(name, "must be a rating in [0, 9]")
        if self.critical_penalty < 0:
            raise bad("critical_penalty", "must be ≥ 0")
        if self.aadt_reference <= 0:
            raise bad("aadt_reference", "must be > 0 vehicles/day")
        if self.inventory_budget_usd_per_m2 < 0:
            raise bad("inventory_budget_usd_per_m2", "must be ≥ 0 USD/m²")
        for name in ("county", "owner", "inventory_mapping", "inventory"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                setattr(self, name, str(value))
        if self.cost_lambda < 0:
            raise bad("cost_lambda", "must be ≥ 0")
        if not 0.0 < self.discount <= 1.0:
            raise bad("discount", "must be in (0, 1]")
        costs = self.unit_costs_usd_per_m2
        if len(costs) != 5 or any(not math.isfinite(c) or c < 0 for c in costs):
            raise bad("unit_costs_usd_per_m2", "must be 5 finite, non-negative USD/m² values")
        if costs[0] != 0.0:
            raise bad("unit_costs_usd_per_m2", "action 0 (do nothing) must cost 0")
        if self.max_urban is not None and (not isinstance(self.max_urban, int) or self.max_urban < 1):
            raise bad("max_urban", "must be a positive integer or null")
        if self.inventory is None:
            for name in ("max_urban", "county", "owner", "inventory_mapping"):
                if getattr(self, name) is not None:
                    raise bad(name, "applies only to an inventory fleet: set 'inventory' (--inventory) too")
        if self.extra:
            raise bad("extra", "unknown keys")

    def replace(self, **changes: Any) -> FleetConfig:
        """A copy with some fields changed (validated)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d.pop("extra")
        d["unit_costs_usd_per_m2"] = list(self.unit_costs_usd_per_m2)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> FleetConfig:
        """Build from a mapping; unknown keys raise ConfigError naming them and ``source``."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a mapping of FleetConfig fields, got {type(data).__name__}")
        known = {f.name for f in fields(cls)} - {"extra"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown FleetConfig field(s) {unknown}; known: {sorted(known)}")
        try:
            return cls(**data)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        except TypeError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    @classmethod
    def from_yaml(cls, path: str | Path) -> FleetConfig:
        """Load from a YAML file (a mapping of field names to values, optionally under a ``fleet:`` key)."""
        data = read_yaml(path)
        if isinstance(data, dict) and "fleet" in data:
            data = data["fleet"]
        return cls.from_dict(data or {}, source=str(path))
