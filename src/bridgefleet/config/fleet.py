"""Fleet configuration: one dataclass, loadable from YAML, validated on construction."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from bridgefleet.config import quantities
from bridgefleet.config.names import unknown_names
from bridgefleet.textfile import TextEncodingError, utf8_text

# Synthetic fleet ranges (issue 2): age in years, deck area in m², AADT in vehicles/day (re-exported by
# bridgefleet.sim.model, which draws the fleets).
URBAN_RANGES = {"age": (20.0, 50.0), "deck": (800.0, 1200.0), "aadt": (15_000.0, 25_000.0)}
RURAL_RANGES = {"age": (25.0, 50.0), "deck": (300.0, 600.0), "aadt": (500.0, 3_000.0)}
RATE_RANGE = (0.030, 0.050)
"""Per-bridge deterioration rate of existing structures, rating points per year (see fleet-model.md)."""

# The default fleet model's deterioration, fitted by ``bridgefleet calibrate`` to Ontario's inspection histories
# and Indiana's young bridges (``benchmarks/calibrate_deterioration.py`` prints the fit and its checks).
RATING_RATE_FACTORS: tuple[float, ...] = (3.11, 3.11, 3.11, 3.11, 2.797, 4.415, 2.932, 0.615, 4.336)
YSM_ACCELERATION = 0.025
DETERIORATION_CV = 0.5
SHOCK_PROBABILITY = 0.0297
SHOCK_MEAN_DROP = 1.174
NEW_STRUCTURE_RATING = 8.3
INITIAL_RATING = (7.527, 0.031, 0.703)
MAX_PLAN_YEARS = 100
"""The longest horizon ``plan`` and ``scenarios`` run, years (their time grows with it; ``scenarios --years 1000`` ran
for minutes with no output); asset management plans compare strategies over at least 10 years (23 CFR 515.7)."""


def check_years(years: int) -> None:
    """Refuse a planning horizon under 1 year or over :data:`MAX_PLAN_YEARS` (``plan``, ``scenarios``).

    Raises:
        ValueError: naming --years and the limit.
    """
    if years < 1:
        raise ValueError(f"--years {years}: must be at least 1")
    if years > MAX_PLAN_YEARS:
        raise ValueError(f"--years {years}: at most {MAX_PLAN_YEARS} (a plan's horizon; asset management plans compare "
                         "strategies over at least 10 years, 23 CFR 515.7)")


def band_factors_to_rating(factors: Any) -> tuple[float, ...]:
    """The nine per-rating-point factors of three FHWA band factors (good ≥ 7, fair 5 to < 7, poor < 5)."""
    good, fair, poor = (float(x) for x in factors)
    return (poor,) * 5 + (fair,) * 2 + (good,) * 2


class ConfigError(ValueError):
    """A configuration value is invalid; the message names the field and the value.

    Attributes:
        option: the training option the message is about, where one is (None otherwise): how
            :func:`bridgefleet.config.presets.resolve_config` knows whether a config file set it.
    """

    def __init__(self, message: str, option: str | None = None):
        super().__init__(message)
        self.option = option


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader that refuses a key given twice in one mapping (YAML 1.2 requires keys to be unique;
    PyYAML would keep the last value silently, so a setting a user wrote first would be lost unseen), and keeps a
    number no float holds (``1.0e+400``) as the user wrote it (:class:`~bridgefleet.config.quantities.Written`), so
    that its refusal echoes it rather than ``inf``."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark)
            except TypeError:  # an unhashable key: the base class says so
                continue
            if first is not key_node.start_mark:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice, first on line {first.line + 1}",
                    key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _float_as_written(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """A YAML float; one that overflows a float (not ``.inf``) as its text (:class:`quantities.Written`)."""
    value = loader.construct_yaml_float(node)
    if value in (math.inf, -math.inf) and ".inf" not in str(node.value).lower():
        return quantities.Written(str(node.value))
    return value


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:float", _float_as_written)


def read_yaml(path: str | Path) -> Any:
    """Parse a UTF-8 YAML file (a UTF-8 byte-order mark allowed; :func:`bridgefleet.textfile.utf8_text`).

    Raises:
        ConfigError: one line naming the file (and the line and column of a YAML syntax error) when the
            file cannot be read, is not UTF-8 text (UTF-16/32 said so; a stray byte by its offset and line),
            or is not valid YAML (a key given twice in one mapping included).
    """
    path = Path(path)
    try:
        return yaml.load(utf8_text(path.read_bytes()), Loader=_UniqueKeyLoader)  # a SafeLoader
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except TextEncodingError as exc:
        where = f", line {exc.line}" if exc.line else ""
        raise ConfigError(f"{path}{where}: {exc.what}") from None
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
    """Urban bridges under per-bridge control (urban agent), count; at least 1, except for an inventory with none."""
    n_rural: int = 80
    """Rural bridges under strategy-level control (rural agent), count; at least 1, except for an inventory with
    none."""
    horizon_years: int = 30
    """Episode length in years; the end is a time limit (``truncated=True``)."""
    annual_budget_usd: float | None = None
    """Annual maintenance budget of the municipality, USD per year; None = sized from the fleet's replacement
    value (``budget_share_of_replacement``)."""
    urban_budget_share: float | None = None
    """Share of the annual budget given to the urban agency (the rest goes to the rural agency), 0–1; None =
    each agency's share of the replacement value."""
    budget_share_of_replacement: float = 1.0 / 75.0
    """With a budget sized from the fleet: each agency's annual budget is this share of the replacement value
    of its bridges (deck area × replacement unit cost × cost factor), per year. Default 1/75: the renewal need
    of bridges that last their 75-year design life (AASHTO LRFD Bridge Design Specifications, art. 1.2)."""
    carry_over_budget: bool = True
    """If true, unspent budget carries over to the next year (a capital programme saves for major work)."""
    deterioration_cv: float = DETERIORATION_CV
    """Coefficient of variation of the gamma-distributed yearly deterioration (0 = deterministic)."""
    ysm_acceleration: float = YSM_ACCELERATION
    """Growth of the mean drop per year since maintenance: drop = rate × factor × (1 + this × ysm) (fitted to
    Ontario's inspection histories, ``benchmarks/calibrate_deterioration.py``)."""
    rating_rate_factors: tuple[float, ...] = RATING_RATE_FACTORS
    """Multiplier of the rate by the whole rating point of the rating after the year's action (index
    floor(rating) 0–8; a rating of 9 counts as 8): mean yearly drop = rate × factor × (1 + a × ysm). Maximum
    likelihood fit to Ontario's two-year do-nothing pairs (``bridgefleet calibrate``, docs/fleet-model.md). A
    fleet YAML may give the three FHWA bands' factors instead as ``band_rate_factors: [good, fair, poor]`` (the band
    model of ``bands-2026``: see :data:`PRE_23_FIELDS`)."""
    shock_probability: float = SHOCK_PROBABILITY
    """Probability per bridge and year of sudden damage (a drop beyond the gradual one: impact, scour, a
    failed element), fitted to Ontario's two-year drops with the rate factors; 0 = none."""
    shock_mean_drop: float = SHOCK_MEAN_DROP
    """Mean size of a sudden-damage drop (exponentially distributed), rating points."""
    initial_rating: tuple[float, float, float] = INITIAL_RATING
    """Initial rating of a synthetic bridge: (intercept, loss per year of age, standard deviation), rating points:
    intercept − loss × age + N(0, sd²), clipped to [3, 9]; fitted to Indiana's 2019 NBI by age (lowest of items
    58–60, + 0.5 for the continuous scale; docs/fleet-model.md)."""
    new_structure_rate: float = 0.04
    """Deterioration rate of a new structure after replacement, rating points per year (the synthetic fleet's
    mean rate)."""
    new_structure_rating: float = NEW_STRUCTURE_RATING
    """Rating of a new structure (after a replacement), rating points; no treatment raises a bridge above it
    (nor above 9). Fitted so that new bridges deteriorated by the model match the lowest NBI item of Indiana's
    bridges aged 2–9 (docs/fleet-model.md)."""
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
    poor_user_cost_usd_per_aadt: float = 0.10 * 365.0 * 8.0 * 1.41
    """Yearly user cost of a poor bridge (rating < 5) per vehicle/day of its AADT, USD: it is load posted and
    its trucks detour (10 % trucks × 365 days × 8 km detour × USD 1.41 per truck-km, ATRI 2023 operational
    cost of trucking, USD 2.270 per mile); 0 leaves it out. Enters the reward as λ × USD, like the agency's
    spend."""
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
    inventory_budget_usd_per_m2: float | None = None
    """With an inventory: annual budget per m² of deck, USD/m²/year, split between the agencies by the deck
    area each controls; None = sized from the replacement value as for synthetic fleets."""
    agencies: str = "urban_rural"
    """Who holds an inventory's budgets: ``owners_by_locality`` (the ``components-2026`` model's), one agency per
    owner code (NBI item 22, SNBI ``BCL01``; one agency where the inventory codes no owner:
    :mod:`bridgefleet.inventory.agencies`), a county highway agency one per county (item 3, ``BL02``) and a town or
    city one per place (item 4) where its bridges lie in several, each with its own budget sized from its bridges;
    ``owners``, one agency per code (the model's value until 2026-12-07: runs written then keep it);
    ``urban_rural``, an urban and a rural agency (functional class, item 26), the split of the plan's fleet agents
    (``agent: fleet``, which always use it) and of every config and run written before owners (the field's
    default). A synthetic fleet has no owners: its urban and rural agencies either way. The owners need the
    component model (the continuous models' grid bound and planner price two agencies)."""
    agency_names: tuple[str, ...] | None = field(default=None, repr=False)
    """Set by :func:`bridgefleet.inventory.fleet.resolve_fleet` (not a setting: never read from or written to a
    config file): the agencies' names, A of them; None: ("urban", "rural")."""
    agency_budget_shares: tuple[float, ...] | None = field(default=None, repr=False)
    """Set with :attr:`agency_names`: each agency's share of ``annual_budget_usd`` (A,), summing to 1; None: the
    urban / rural split of ``urban_budget_share``."""
    discount: float = 0.95
    """Discount factor per year used for returns (IMP-MARL convention)."""
    component_model: str | None = None
    """The component model (a bundled name such as ``massachusetts-2026``, or a model YAML): each bridge's deck,
    superstructure and substructure ratings as whole NBI ratings, Markov deterioration and fitted treatments
    (:mod:`bridgefleet.sim.components`, docs/fleet-model.md); the condition is the lowest of them and the
    continuous deterioration fields above are unused. None: the continuous single-rating model."""
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    """Reserved for forward compatibility; must be empty."""

    def __post_init__(self) -> None:
        for name in ("unit_costs_usd_per_m2", "rating_rate_factors", "initial_rating"):
            value = getattr(self, name)
            try:
                setattr(self, name, tuple(float(x) for x in value))
            except (TypeError, ValueError):
                raise ConfigError(f"FleetConfig.{name} = {value!r}: must be a list of numbers") from None
        self.validate()

    @property
    def n_bridges(self) -> int:
        return self.n_urban + self.n_rural

    @property
    def replacement_value_usd(self) -> tuple[float, float]:
        """Expected replacement value of the synthetic fleet's (urban, rural) bridges, USD: count × mean deck
        area × replacement unit cost (the mean cost factor is 1)."""
        unit = self.unit_costs_usd_per_m2[4]
        return (self.n_urban * sum(URBAN_RANGES["deck"]) / 2 * unit,
                self.n_rural * sum(RURAL_RANGES["deck"]) / 2 * unit)

    @property
    def has_sudden_damage(self) -> bool:
        """Whether the model has sudden damage (a probability and a mean drop above 0)."""
        return self.shock_probability > 0 and self.shock_mean_drop > 0

    @property
    def budgets_usd(self) -> tuple[float, ...]:
        """Each agency's annual budget (:attr:`agency_labels`' order), USD per year: ``annual_budget_usd`` split by
        ``agency_budget_shares`` (an inventory's owners), else (urban, rural) by ``urban_budget_share``, each None
        sized from :attr:`replacement_value_usd` (see the fields)."""
        value = self.replacement_value_usd
        total = (self.annual_budget_usd if self.annual_budget_usd is not None
                 else self.budget_share_of_replacement * sum(value))
        if self.agency_budget_shares is not None:
            return tuple(total * s for s in self.agency_budget_shares)
        share = self.urban_budget_share if self.urban_budget_share is not None else value[0] / sum(value)
        return total * share, total * (1.0 - share)

    @property
    def urban_budget_usd(self) -> float:
        """The urban agency's annual budget, USD per year (a fleet of urban and rural agencies)."""
        return self.budgets_usd[0]

    @property
    def rural_budget_usd(self) -> float:
        """The rural agency's annual budget, USD per year (a fleet of urban and rural agencies)."""
        return self.budgets_usd[1]

    @property
    def agency_labels(self) -> tuple[str, ...]:
        """The agencies' names, A of them: an inventory's owners where resolved by owner, else ("urban", "rural")."""
        return self.agency_names if self.agency_names is not None else ("urban", "rural")

    @property
    def n_agencies(self) -> int:
        """A, the agencies holding budgets (2: urban and rural, unless an inventory's owners)."""
        return len(self.agency_labels)


    def validate(self) -> None:
        """Check every field: its type, and each number against its physical range and unit
        (:data:`bridgefleet.config.quantities.FLEET`), so it stays finite where it is used; and the budget sized
        from a synthetic fleet.

        Raises:
            ConfigError: one line naming the field as a fleet YAML writes it, the value and the range.
        """
        def bad(name: str, why: str) -> ConfigError:
            return ConfigError(f"{name} = {getattr(self, name)!r}: {why}")

        for name in ("carry_over_budget", "fixed_fleet"):
            if not isinstance(getattr(self, name), bool):
                raise bad(name, "must be true or false")
        for name in quantities.FLEET:  # 1e300 and 5e6 in a YAML file are numbers (YAML 1.2), not text
            setattr(self, name, quantities.yaml_number(getattr(self, name)))
        for name, limits in quantities.FLEET.items():  # the range, unit and whole-ness the message states
            value = getattr(self, name)
            if value is None and name in _OPTIONAL_NUMBERS:
                continue
            if name in ("n_urban", "n_rural") and self.inventory is not None and value == 0 \
                    and not isinstance(value, bool):
                continue  # an inventory's counts: a city's may have no rural bridge, a county's no urban one
            _check_numbers(name, value, limits)
        for name in ("n_urban", "n_rural", "horizon_years", "fleet_seed", "max_urban"):  # 1e18 is the count 10**18
            value = getattr(self, name)
            if isinstance(value, float):
                setattr(self, name, int(value))
        for name, size in (("rating_rate_factors", 9), ("unit_costs_usd_per_m2", 5)):
            if len(getattr(self, name)) != size:
                raise bad(name, f"must be {size} numbers")
        if self.unit_costs_usd_per_m2[0] != 0.0:
            raise bad("unit_costs_usd_per_m2", "action 0 (do nothing) must cost 0")
        if len(self.initial_rating) != 3:
            raise bad("initial_rating", "must be 3 numbers (intercept, loss per year, sd), rating points")
        for i, limits in enumerate(quantities.INITIAL_RATING):
            _check_numbers(f"initial_rating[{i}]", self.initial_rating[i], limits)
        for name in ("county", "owner", "inventory_mapping", "inventory", "component_model"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                setattr(self, name, str(value))
        if self.agencies not in AGENCIES:
            raise bad("agencies", f"must be {' or '.join(AGENCIES)}")
        if self.agencies in OWNER_AGENCIES and self.component_model is None:
            raise bad("agencies", f"{self.agencies} needs the component model (component_model, fleet model "
                      "components-2026): "
                      "the continuous models' bound and planner price an urban and a rural agency; use urban_rural")
        if (self.agency_names is None) != (self.agency_budget_shares is None) or (
                self.agency_names is not None and len(self.agency_names) != len(self.agency_budget_shares)):
            raise bad("agency_budget_shares", "must come with agency_names, one share each")
        if self.inventory is None:
            for name in ("max_urban", "county", "owner", "inventory_mapping"):
                if getattr(self, name) is not None:
                    raise bad(name, "applies only to an inventory fleet: set 'inventory' (--inventory) too")
            _check_sized_budget(self)
        if self.extra:
            raise bad("extra", "unknown keys")

    def replace(self, **changes: Any) -> FleetConfig:
        """A copy with some fields changed (validated)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        for name in ("extra", *RESOLVED_FIELDS):
            d.pop(name)
        d["unit_costs_usd_per_m2"] = list(self.unit_costs_usd_per_m2)
        d["rating_rate_factors"] = list(self.rating_rate_factors)
        d["initial_rating"] = list(self.initial_rating)
        return d

    def model_name(self) -> str:
        """The named fleet model (:data:`FLEET_MODELS`) whose model fields this config has, else "custom"
        (fleet size, inventory, seeds and the annual budget and its split do not count: a budget level is not
        another model)."""
        keys = {k for values in FLEET_MODELS.values() for k in values} - set(BUDGET_LEVEL_FIELDS) - {"agencies"}
        mine = {k: v for k, v in self.to_dict().items() if k in keys}
        for name in FLEET_MODELS:
            if mine == {k: v for k, v in FleetConfig.named(name).to_dict().items() if k in keys}:
                return name
        return "custom"

    def with_inventory(self, inventory: str | None, mapping: str | None = None,
                       own_layout: bool = False) -> FleetConfig:
        """This fleet on ``inventory`` instead (None: unchanged), read with ``mapping`` (a column-mapping YAML or a
        bundled mapping's name; None: this config's, unless ``own_layout`` — an NBI or SNBI file, read by its own
        layout: :func:`bridgefleet.inventory.fleet.on_inventory` decides it from the file; issue 79's probe)."""
        if inventory is None:
            return self
        keep = None if own_layout else self.inventory_mapping
        return self.replace(inventory=inventory, inventory_mapping=mapping or keep)

    def fleet_in_words(self) -> str:
        """Which fleet this config draws, in words: its inventory (as given), or one fleet of the fleet model and
        its seed."""
        return self.inventory or f"one fleet of the {self.model_name()} fleet model (fleet seed {self.fleet_seed})"

    @classmethod
    def default_model(cls, **changes: Any) -> FleetConfig:
        """The fleet of a command or a new run given none: :data:`DEFAULT_FLEET_MODEL` with some fields changed."""
        return cls.named(DEFAULT_FLEET_MODEL, **changes)

    @classmethod
    def named(cls, name: str, **changes: Any) -> FleetConfig:
        """The named fleet model (:data:`FLEET_MODELS`) with some fields changed.

        Raises:
            ConfigError: unknown name (the message lists the known ones) or invalid change.
        """
        return cls.from_dict({"model": name, **changes}, source=f"fleet model {name!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> FleetConfig:
        """Build from a mapping; unknown keys raise ConfigError naming them and ``source``.

        A ``model: NAME`` key starts from the named fleet model (:data:`FLEET_MODELS`); the other keys
        change it.
        """
        data = fleet_mapping(data, source)
        if "band_rate_factors" in data:
            # Written before issue 23 (a run folder's config.yaml): the fields that came with the fitted model
            # and are missing take the values of the model it was trained on, not today's defaults.
            data = {**{k: v for k, v in FLEET_MODELS["bands-2026"].items() if k in PRE_23_FIELDS}, **data}
            value = data.pop("band_rate_factors")
            try:
                if len(value) != 3:
                    raise ValueError
                data["rating_rate_factors"] = band_factors_to_rating(value)
            except (TypeError, ValueError):
                raise ConfigError(f"{source}: FleetConfig.band_rate_factors = {value!r}: must be a list of 3 numbers "
                                  "(good, fair, poor)") from None
        if "model" in data:
            name = str(data.pop("model"))
            name = MODEL_ALIASES.get(name, name)
            if name not in FLEET_MODELS:
                raise ConfigError(f"{source}: unknown fleet model {unknown_names([name], FLEET_MODELS)}; known: "
                                  f"{', '.join(FLEET_MODELS)}")
            data = {**FLEET_MODELS[name], **data}
        known = {f.name for f in fields(cls)} - {"extra", *RESOLVED_FIELDS}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown FleetConfig field(s) {unknown_names(unknown, known)}; known: "
                              f"{', '.join(sorted(known))}")
        try:
            return cls(**data)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        except TypeError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    @classmethod
    def from_yaml(cls, path: str | Path, model: str | None = None) -> FleetConfig:
        """Load from a YAML file (a mapping of field names to values, optionally under a ``fleet:`` key), or a
        fleet model's name (:data:`FLEET_MODELS`) where no such file exists; ``model`` (a fleet model's name)
        replaces the file's ``model:``, the file's other values change it.

        A relative ``component_model`` path (not a bundled model's name) that names a file in the YAML file's folder
        is read from there (``bridgefleet calibrate --panel`` writes ``fleet.yaml`` and ``fleet.components.yaml``
        side by side), so the config works from any working directory; otherwise it stays as given (relative to
        the working directory, as before)."""
        if MODEL_ALIASES.get(str(path), str(path)) in FLEET_MODELS and not Path(path).exists():
            data: Any = {"model": str(path)}
        else:
            data = read_yaml(path)
            if isinstance(data, dict) and "fleet" in data:
                data = data["fleet"]
            if isinstance(data, dict) and isinstance(data.get("component_model"), str):
                import os

                given = data["component_model"]
                beside = Path(path).parent / given
                if given not in BUNDLED_COMPONENT_MODELS and not Path(given).is_absolute() and beside.is_file():
                    data = {**data, "component_model": os.path.abspath(beside)}
        if model is not None:
            data = {**fleet_mapping(data or {}, str(path)), "model": model}
        return cls.from_dict(data or {}, source=str(path))


_OPTIONAL_NUMBERS = ("annual_budget_usd", "urban_budget_share", "inventory_budget_usd_per_m2", "max_urban")
"""FleetConfig's numbers that may be None (left out: sized from the fleet, or no limit)."""


def _check_numbers(name: str, value: Any, limits: quantities.Quantity) -> None:
    """``value`` (a number, or a list of them: each) is ``limits``' quantity.

    Raises:
        ConfigError: ``name = value: must be in [low, high] unit (why)``, naming ``name`` as a fleet YAML writes it.
    """
    for i, x in enumerate(value if isinstance(value, tuple | list) else [value]):
        why = limits.problem(x)
        if why is not None:
            shown = name if not isinstance(value, tuple | list) else f"{name}[{i}]"
            raise ConfigError(f"{shown} = {quantities.shown_value(x)}: {why}", name)


def _check_sized_budget(config: FleetConfig) -> None:
    """A synthetic fleet's budget sized from its replacement value stays a budget a user can have.

    Raises:
        ConfigError: above :data:`~bridgefleet.config.quantities.MAX_BUDGET_USD`, naming the keys that size it.
    """
    if config.annual_budget_usd is not None:
        return
    total = config.budget_share_of_replacement * sum(config.replacement_value_usd)
    if not total <= quantities.MAX_BUDGET_USD:
        share = config.budget_share_of_replacement
        raise ConfigError(
            f"the annual budget sized from the fleet, budget_share_of_replacement {share:g} × the replacement value "
            f"of its {config.n_bridges:,} bridges at unit_costs_usd_per_m2[4] = {config.unit_costs_usd_per_m2[4]:g} "
            f"USD/m², is USD {total:,.0f} a year, more than the USD "
            f"{quantities.shown(quantities.MAX_BUDGET_USD)} a budget may be: lower one of them, or give "
            "annual_budget_usd", "budget_share_of_replacement")


def fleet_mapping(data: Any, source: str) -> dict[str, Any]:
    """A fresh fleet mapping from a mapping of FleetConfig fields or a fleet model's name (``{"model": NAME}``).

    Raises:
        ConfigError: anything else, naming ``source``.
    """
    if isinstance(data, str) and MODEL_ALIASES.get(data, data) in FLEET_MODELS:
        return {"model": data}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of FleetConfig fields or a fleet model's name "
                          f"({', '.join(FLEET_MODELS)}), got {data!r}")
    return dict(data)


BUNDLED_COMPONENT_MODELS = {
    "massachusetts-2026": Path(__file__).resolve().parents[1] / "calibration" / "massachusetts-2026.yaml"}
"""Bundled component models by name (``FleetConfig.component_model``; :mod:`bridgefleet.sim.components` reads them)."""
POSTED_GIVEN_POOR = 0.30
"""Share of poor bridges (lowest rating ≤ 4) that are load posted or closed: 3 of DC's 10 in the 2019 NBI (item 41
P, R, D, E or K; 95 % Wilson interval 0.11–0.60); FHWA's "poor" does not mean posted. The component model charges
the detour user cost of a posted bridge on this share of a poor bridge's traffic."""
COMPONENT_UNIT_COSTS = (0.0, 70.0, 912.0, 1589.0, 2497.0)
"""USD per m² of deck of the component model's actions: deck preservation (thin polymer overlay, USD 65–75/m²),
rehabilitation of the lowest component and major rehabilitation (MassDOT's projects 2000–2016: 0.365 and 0.636 of
a replacement's USD per m², n = 57 and 186, times the replacement cost), replacement (FHWA 2017 replacement unit
cost, District of Columbia, USD 232/ft², the inventories' reference price; ``benchmarks/fit_treatments.py``)."""

FLEET_MODELS: dict[str, dict[str, Any]] = {
    # The default since 2026-12-07 (issue 77): component ratings as inspectors record them (deck, superstructure,
    # substructure), fitted to Massachusetts' NBI ratings 2000-2016 and MassDOT's projects
    # (benchmarks/component_model.py), with an exact planning DP.
    "components-2026": {"component_model": "massachusetts-2026", "unit_costs_usd_per_m2": COMPONENT_UNIT_COSTS,
                        "poor_user_cost_usd_per_aadt": round(POSTED_GIVEN_POOR * 0.10 * 365.0 * 8.0 * 1.41, 4),
                        "agencies": "owners_by_locality"},
    # The continuous single-rating model, the default from issue 23 to issue 77 (FleetConfig's field defaults:
    # a fleet mapping without model: means it, as every config and run written before the change did).
    "continuous-2026": {},
    # The default of issue 16 (every figure from it to issue 23): one rate factor per FHWA band fitted to
    # Ontario's band transitions, good bridges 2.4 times slower than observed, new structures at 9.
    "bands-2026": {"rating_rate_factors": band_factors_to_rating((0.6, 4.1, 2.6)), "shock_probability": 0.0,
                   "ysm_acceleration": 0.05, "deterioration_cv": 0.3, "new_structure_rate": 0.035,
                   "new_structure_rating": 9.0, "initial_rating": (9.0, 0.07, 0.5)},
    # The model every figure before issue 16 was measured on (the plan's benchmark table among them): a fixed
    # budget of 0.2 % of the replacement value that lapses each year (rehabilitation and replacement never fit
    # it), one deterioration rate for every band, no user cost of poor bridges.
    "plan-2025": {"annual_budget_usd": 282_000.0, "urban_budget_share": 0.34, "carry_over_budget": False,
                  "ysm_acceleration": 0.1, "rating_rate_factors": (1.0,) * 9, "poor_user_cost_usd_per_aadt": 0.0,
                  "shock_probability": 0.0, "new_structure_rate": 0.035, "new_structure_rating": 9.0,
                  "deterioration_cv": 0.3, "initial_rating": (9.0, 0.07, 0.5),
                  "inventory_budget_usd_per_m2": 282_000.0 / 56_000.0},
}
"""Named fleet models: field values over the defaults (``model: NAME`` in a fleet mapping, ``--fleet-model``)."""
DEFAULT_FLEET_MODEL = "components-2026"
"""The fleet model of a command, a new training run or an environment given no fleet (no --config, no
--fleet-model, no fleet section). A fleet mapping without ``model:`` keeps FleetConfig's field defaults, the
continuous model, so configs and runs written before 2026-12-07 mean what they meant."""
MODEL_ALIASES = {"default": "continuous-2026"}
"""Former names of fleet models, read in files written before the rename (``calibrate`` wrote ``model: default``)."""
AGENCIES = ("owners_by_locality", "owners", "urban_rural")
"""The values of :attr:`FleetConfig.agencies`."""
OWNER_AGENCIES = ("owners_by_locality", "owners")
"""The values of :attr:`FleetConfig.agencies` whose agencies are an inventory's owners."""
RESOLVED_FIELDS = ("agency_names", "agency_budget_shares")
"""FleetConfig fields an inventory sets when it is read (:func:`bridgefleet.inventory.fleet.resolve_fleet`), never
read from or written to a config file."""
BUDGET_LEVEL_FIELDS = ("annual_budget_usd", "urban_budget_share")
"""Fields that set a budget level (``--budget-scale``, ``--budget-usd``), not a fleet model: a model's name holds
at any budget (:meth:`FleetConfig.model_name`)."""
PRE_23_FIELDS = ("shock_probability", "new_structure_rating", "initial_rating")
"""Fleet fields added with the fitted model of issue 23: a config that still says ``band_rate_factors`` (and
so was written before them) gets ``bands-2026``'s values where it does not give them."""
