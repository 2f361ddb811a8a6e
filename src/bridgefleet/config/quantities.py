"""Every number a user gives, checked in the unit and the precision it is used in (issue 79, kind 3): one table
of physical ranges, :class:`Quantity`, read by the fleet config (:meth:`bridgefleet.config.FleetConfig.validate`),
the training options (:class:`bridgefleet.config.training.TrainConfig`), a column mapping's constants and every
inventory cell (:mod:`bridgefleet.inventory`), and the budget sized from a fleet.

A range keeps a value finite where it is used: the inventories' arrays are 32-bit floats (largest 3.4 × 10³⁸,
smallest normal 1.2 × 10⁻³⁸), so a cost factor of 10³⁰⁰ would be ``inf`` there and one of 10⁻³⁰⁰ would be 0; a
product of them (deck area × unit cost × cost factor, summed over bridges) must stay below the most a budget may be.
The message names the option or key the user gave, the value, the range and its unit, and why (one line)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import yaml

FLOAT32_MAX = float(np.finfo(np.float32).max)
"""The largest finite 32-bit float (3.4 × 10³⁸): an inventory's arrays hold their numbers as 32-bit floats."""
MAX_BUDGET_USD = 1e15
"""The most USD a year a budget may be (a thousand trillion; the planner's sums over years and bridges of larger
amounts overflow float64 with the costs they carry)."""
MAX_BRIDGES = 10_000_000
"""The most bridges a fleet may have (the National Bridge Inventory holds about 620,000)."""


def shown(x: float) -> str:
    """A number as a user reads it: whole numbers below 10⁷ with thousands separators (``999,999``), others in
    the shortest form with a plain exponent (``1e300``, ``0.0133``)."""
    if math.isfinite(x) and x == int(x) and abs(x) < 1e7:
        return f"{int(x):,}"
    return re.sub(r"e\+?(-?)0*(?=[0-9])", r"e\1", f"{x:g}")  # 1e+07 → 1e7, 1e-09 → 1e-9


class Written(str):
    """A number as the user wrote it that no 64-bit float holds (``1e400``, ``1.0e+400``: infinite as a float), kept
    as its text so that a refusal echoes it as written, never as ``inf``; it is no quantity's value (a range check
    refuses it). Made by :func:`yaml_number`, the YAML loader of configs and mappings, and the SNBI reader's JSON
    decoder."""


def shown_value(value: Any) -> str:
    """A value as a message shows it, as the user wrote it: a float as Python writes it with a plain exponent
    (``1.0``, ``1e300``), a whole number in digits, a :class:`Written` number as written (``1e400``), anything else
    by ``repr``."""
    if isinstance(value, Written):
        return str(value)
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return repr(value)
    if isinstance(value, int | np.integer):
        return str(value) if abs(value) < 10**16 else f"{float(value):.3e}".replace("e+", "e")
    return re.sub(r"e\+?(-?)0*(?=[0-9])", r"e\1", repr(float(value)))  # 1e-05 → 1e-5, as a user writes it


YAML_NUMBER = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
"""A number as YAML 1.2 reads one; PyYAML (YAML 1.1) reads ``1e300`` and ``5e6`` (an exponent without a dot) as
text."""


def yaml_number(value: Any) -> Any:
    """``value`` as a number where it is text YAML 1.2 reads as one (``"1e300"``, ``"5e6"``: PyYAML's YAML 1.1 reads
    them as text), a :class:`Written` where no float holds it (``"1e400"``); anything else unchanged (the range check
    says what it must be)."""
    if isinstance(value, str) and YAML_NUMBER.fullmatch(value.strip()):
        text = value.strip()
        if re.fullmatch(r"[-+]?[0-9]+", text):
            return int(text)
        x = float(text)
        return x if math.isfinite(x) else Written(text)
    return value


def yaml11_text_number(value: Any) -> bool:
    """Whether ``value`` is text only because PyYAML follows YAML 1.1: an exponent without a dot (``1e300``,
    ``5e6``), which YAML 1.2 and every user read as a number (quoted, a number is text in both)."""
    return (isinstance(value, str) and YAML_NUMBER.fullmatch(value.strip()) is not None
            and "e" in value.lower() and not isinstance(yaml.safe_load(value), int | float))


class QuantityError(ValueError):
    """A number outside its :class:`Quantity`'s range; the message is one line naming it, its value and the range."""


@dataclass(frozen=True)
class Quantity:
    """A physical quantity's range and unit: a value in [``low``, ``high``] (``low_open``: above ``low``;
    ``high_open``: below ``high``), a whole
    number where ``whole``, and where ``float32`` the same after the cast to the 32-bit float it is stored in.

    Attributes:
        low, high: the range's ends, in ``unit``.
        unit: the unit as a user reads it (``m²``, ``USD a year``; "" for a number without one).
        why: what the quantity is, or where the range comes from (shown in the message, in parentheses).
    """

    low: float
    high: float
    unit: str = ""
    why: str = ""
    low_open: bool = False
    whole: bool = False
    float32: bool = False
    high_open: bool = False

    def range_text(self) -> str:
        """``(0, 100]``, ``[0, 999,999] vehicles/day``, ``a whole number in [1, 99]``."""
        text = f"{'(' if self.low_open else '['}{shown(self.low)}, {shown(self.high)}{')' if self.high_open else ']'}"
        text = f"{text} {self.unit}" if self.unit else text
        return f"a whole number in {text}" if self.whole else f"in {text}"

    def need(self) -> str:
        """What a value must be: ``must be in (0, 100] (the state's unit cost over DC's)``."""
        return f"must be {self.range_text()}" + (f" ({self.why})" if self.why else "")

    def contains(self, x: float) -> bool:
        return (self.low < x if self.low_open else self.low <= x) and (x < self.high if self.high_open
                                                                       else x <= self.high)

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not this quantity (None where it is): not a number, not finite, out of range, not
        whole, or out of range once stored as a 32-bit float (10⁻³⁰⁰ is 0 there)."""
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            return self.need()
        try:
            x = float(value)
        except OverflowError:
            return self.need()
        if not math.isfinite(x) or not self.contains(x) or (self.whole and x != int(x)):
            return self.need()
        if self.float32 and not self.contains(float(np.float32(x))):
            return f"{self.need()}; it is {shown(float(np.float32(x)))} as the 32-bit float it is stored in"
        return None

    def check(self, name: str, value: Any) -> float:
        """``value`` as a float, if it is this quantity.

        Raises:
            QuantityError: ``name = value: must be in [low, high] unit (why)`` (``name value`` for a command-line
                option, ``--name``).
        """
        why = self.problem(value)
        if why is not None:
            sep = " " if name.startswith("--") else " = "  # an option as typed (--budget-usd 5), a key as written
            raise QuantityError(f"{name}{sep}{shown_value(value)}: {why}")
        return float(value)


# ------------------------------------------------------------------------------------------------
# An inventory's numbers (a cell of a column, or a mapping's constant for every bridge)

MIN_DECK_AREA_M2 = 1.0
"""The smallest deck area a bridge may have, m²: the NBI records structures spanning more than 6.1 m (20 ft, 23 CFR
650.305) that carry a road, so a real deck is tens of m² (the smallest in DC's 2019 file is 105 m², in Indiana's 50 m²,
in Massachusetts' panel 12.7 in its unit); a positive area below 1 m² (``0.5``, ``1e-45``) is a unit or entry error,
a bad value. 0 is "no deck area", the readers' filter."""

INVENTORY: dict[str, Quantity] = {
    "deck_area": Quantity(MIN_DECK_AREA_M2, 1e6, "m²", "a bridge deck; the NBI's bridges span over 6.1 m, the "
                          "largest deck, the Lake Pontchartrain Causeway's, is about 800,000 m²", float32=True),
    "length": Quantity(0.0, 1e6, "", "a structure's length in the file's unit; NBI item 49 codes at most "
                       "99,999.9 m"),
    "width": Quantity(0.0, 1e5, "", "a deck's width in the file's unit; NBI item 52 codes at most 999.9 m"),
    "aadt": Quantity(0.0, 999_999.0, "vehicles/day", "a count of vehicles; NBI item 29 codes 6 digits; the busiest "
                     "bridges carry about 300,000", whole=True, float32=True),
    "ysm": Quantity(0.0, 400.0, "years", "years since maintenance; no bridge in an inventory is older",
                    float32=True),
    "truck_share": Quantity(0.0, 1.0, "", "the truck share of traffic, NBI item 109 as a fraction", float32=True),
    "truck_percent": Quantity(0.0, 100.0, "%", "the truck share of traffic, NBI item 109", float32=True),
    "detour_km": Quantity(0.0, 199.0, "km", "NBI item 19; 199 = 199 km or more", float32=True),
    "cost_factor": Quantity(0.01, 100.0, "", "the state's unit cost over DC's; the 2017 costs run 0.57 to 1.33",
                            float32=True),
    "area_scale": Quantity(1e-6, 1e6, "", "the multiplier turning deck_area, or length × width, into m²; mm² is "
                           "1e-6"),
    "condition_scale": Quantity(-1e6, 1e6, "", "an end of the index's scale"),
    "state_code": Quantity(1.0, 99.0, "", "an FHWA state code, NBI item 1", whole=True),
    "year": Quantity(1.0, 9999.0, "", "a year", whole=True),
}
"""The ranges of an inventory's numbers, by the mapping key that names them (docs/inventory.md)."""

# ------------------------------------------------------------------------------------------------
# The fleet config's numbers (FleetConfig fields; a fleet YAML's keys)

FLEET: dict[str, Quantity] = {
    "n_urban": Quantity(1, MAX_BRIDGES, "bridges", whole=True),
    "n_rural": Quantity(1, MAX_BRIDGES, "bridges", whole=True),
    "horizon_years": Quantity(1, 1000, "years", "an episode's length", whole=True),
    "fleet_seed": Quantity(0, 10**18, "", "a seed", whole=True),
    "max_urban": Quantity(1, MAX_BRIDGES, "bridges", "urban bridges under per-bridge control", whole=True),
    "annual_budget_usd": Quantity(0.0, MAX_BUDGET_USD, "USD a year", "a municipality's maintenance budget; "
                                  "sums of larger ones overflow"),
    "urban_budget_share": Quantity(0.0, 1.0, "", "the urban agency's share of the budget"),
    "budget_share_of_replacement": Quantity(0.0, 1.0, "per year", "a share of the replacement value; 1/75 renews "
                                            "bridges that last 75 years"),
    "inventory_budget_usd_per_m2": Quantity(0.0, 100_000.0, "USD/m² a year", "a budget per m² of deck; a new "
                                            "bridge costs about USD 2,500/m²"),
    "deterioration_cv": Quantity(0.0, 10.0, "", "the coefficient of variation of the yearly drop"),
    "ysm_acceleration": Quantity(0.0, 10.0, "per year", "growth of the mean drop per year since maintenance"),
    "rating_rate_factors": Quantity(0.0, 1000.0, "", "a multiplier of the deterioration rate"),
    "shock_probability": Quantity(0.0, 0.99, "per year", "a yearly probability; 1 would damage every bridge "
                                  "every year"),
    "shock_mean_drop": Quantity(0.0, 9.0, "rating points"),
    "new_structure_rate": Quantity(0.0, 9.0, "rating points per year"),
    "new_structure_rating": Quantity(1.0, 9.0, "rating points", "a new structure's rating; NBI 0 is failed"),
    "target_condition": Quantity(0.0, 9.0, "rating points"),
    "critical_rating": Quantity(0.0, 9.0, "rating points"),
    "critical_penalty": Quantity(0.0, 1e6, "utility per rating point squared"),
    "aadt_reference": Quantity(1.0, 999_999.0, "vehicles/day", "the AADT of traffic weight 1, a count of "
                               "vehicles; below 1 every weight (AADT / it) ** aadt_exponent overflows"),
    "aadt_exponent": Quantity(0.0, 3.0, "", "the traffic weight's exponent: (AADT / aadt_reference) ** it; a "
                              "negative one makes a bridge without traffic weigh infinitely"),
    "poor_user_cost_usd_per_aadt": Quantity(0.0, 1e6, "USD a year per vehicle/day", "the user cost of a poor "
                                            "bridge; default 411.7"),
    "cost_lambda": Quantity(1e-9, 1.0, "reward units per USD", "default 1e-5: a reward unit is USD 100,000; "
                            "at 1e-9 it is USD 10⁹"),
    "discount": Quantity(0.5, 1.0, "per year", "a yearly discount factor; 0.5 is a 100 % discount rate, far above "
                         "any agency's"),
    "unit_costs_usd_per_m2": Quantity(0.0, 100_000.0, "USD/m²", "an action's cost per m² of deck; a new bridge "
                                      "costs about USD 2,500/m²"),
}
"""The ranges of :class:`bridgefleet.config.FleetConfig`'s numbers (a list field: each of its numbers)."""
INITIAL_RATING = (Quantity(0.0, 20.0, "rating points", "the intercept"),
                  Quantity(-1.0, 1.0, "rating points per year", "the loss per year of age"),
                  Quantity(0.0, 9.0, "rating points", "the standard deviation"))
"""The ranges of ``initial_rating``'s three numbers (intercept, loss per year of age, standard deviation)."""

# ------------------------------------------------------------------------------------------------
# The training options' numbers

TRAINING: dict[str, Quantity] = {
    "lr": Quantity(1e-8, 1.0, "", "Adam's learning rate; default 1e-4; a smaller step is lost in 32-bit weights"),
    "updates_per_step": Quantity(0.001, 1000.0, "", "learner updates per vector-env step"),
    "grad_clip": Quantity(1e-6, 1e6, "", "the gradient-norm clip"),
    "per_alpha": Quantity(0.0, 1.0),
    "per_beta_start": Quantity(0.0, 1.0),
    "eps_start": Quantity(0.0, 1.0),
    "eps_end": Quantity(0.0, 1.0),
    "eps_decay_fraction": Quantity(0.001, 1.0, "", "a share of the episodes"),
    "lr_end_fraction": Quantity(0.001, 1.0, "", "a share of lr"),
    "lr_drop_factor": Quantity(0.001, 1.0, "", "a multiplier of lr"),
    "greedy_bootstrap": Quantity(0.0, 1.0),
    "min_samples_per_transition": Quantity(0.0, 1000.0, "", "samples per stored transition"),
    "margin_weight": Quantity(0.0, 1e6, "", "the weight of rows near the teacher's margin"),
    "fit_warmup": Quantity(0.0, 0.99, "", "a share of each fit's steps"),
    "reward_scale": Quantity(1e-9, 1e6, "", "the rewards' multiplier; default 0.01", float32=True),
    "polyak_tau": Quantity(1e-4, 1.0, "", "the target network's step toward the online one"),
    "weight_average": Quantity(0.01, 0.999, "", "the average's weight on itself; 1 would never move it"),
    "budget_scale_range": Quantity(0.0, 100.0, "", "a multiple of the sized budget"),
    "teacher_levels": Quantity(0.01, 100.0, "", "a multiple of the sized budget"),
}
"""The ranges of :class:`bridgefleet.config.training.TrainConfig`'s real-valued options (a list option: each of
its numbers); whole-number options keep their own rules there."""
MAX_COUNT = 10**12
"""The most any whole-number training option may be (episodes, buffer capacity, …): counts beyond it overflow the
64-bit counters they are kept in long before a run ends."""
