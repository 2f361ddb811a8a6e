"""Heuristic maintenance policies: the rules of thumb asset managers use today.

A policy maps the simulator's raw state to (urban actions int64 (E, n_urban), rural strategy int64 (E,)).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bridgefleet.config.names import unknown_names
from bridgefleet.sim import strategies as st
from bridgefleet.sim.model import GOOD_RATING, N_ACTIONS
from bridgefleet.sim.simulator import FleetSimulator

Policy = Callable[[FleetSimulator, np.random.Generator], tuple[np.ndarray, np.ndarray]]


def _urban(sim: FleetSimulator) -> tuple[np.ndarray, np.ndarray]:
    nu = sim.n_urban
    return sim.state.condition[:, :nu], sim.state.ysm[:, :nu]


def do_nothing(sim: FleetSimulator, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """No maintenance anywhere (urban 0, rural strategy 0)."""
    c, _ = _urban(sim)
    return np.zeros(c.shape, dtype=np.int64), np.zeros(sim.num_envs, dtype=np.int64)


def condition_based(sim: FleetSimulator, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Threshold rule on every bridge (urban per bridge; rural strategy 4, the same rule)."""
    c, _ = _urban(sim)
    return st.condition_based_actions(c), np.full(sim.num_envs, 4, dtype=np.int64)


def worst_first(sim: FleetSimulator, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Worst first under the budget: every urban bridge below good requests the strongest of
    rehabilitation, repair or preventive maintenance whose cost fits its agency's available budget (the urban
    agency's, or its owner's); the budget then funds the worst bridges first. Rural strategy 2 (repair of fair
    bridges)."""
    c, _ = _urban(sim)
    nu = sim.n_urban
    size = sim.profile.deck_area[:, :nu] * sim.profile.cost_factor[:, :nu]
    money = sim.budget[:, sim.agency[:nu], None]  # (E, n_urban, 1): each urban bridge's agency's
    fits = sim.unit_costs[None, None, :] * size[..., None] <= money  # (E, n_urban, 5)
    strongest = np.where(fits[..., 3], 3, np.where(fits[..., 2], 2, np.where(fits[..., 1], 1, 0)))
    return np.where(c < GOOD_RATING, strongest, 0), np.full(sim.num_envs, 2, dtype=np.int64)


def fixed_interval(sim: FleetSimulator, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Preventive maintenance every 5 years, rehabilitation of poor bridges (rural strategy 3)."""
    c, y = _urban(sim)
    return st.interval_preventive_actions(c, y), np.full(sim.num_envs, 3, dtype=np.int64)


def random_policy(sim: FleetSimulator, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Uniformly random actions and strategies."""
    c, _ = _urban(sim)
    return (rng.integers(0, N_ACTIONS, size=c.shape), rng.integers(0, st.N_STRATEGIES, size=sim.num_envs))


def rural_fixed(strategy: int) -> Policy:
    """Urban bridges on the condition-based rule; the rural agent holds ``strategy`` fixed."""

    def policy(sim: FleetSimulator, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        c, _ = _urban(sim)
        return st.condition_based_actions(c), np.full(sim.num_envs, strategy, dtype=np.int64)

    policy.__doc__ = f"Urban condition-based; rural strategy {strategy} ({st.STRATEGY_NAMES[strategy]})."
    return policy


HEURISTICS: dict[str, Policy] = {
    "do_nothing": do_nothing,
    "condition_based": condition_based,
    "worst_first": worst_first,
    "fixed_interval": fixed_interval,
    "random": random_policy,
    **{f"rural_{i}_{name}": rural_fixed(i) for i, name in enumerate(st.STRATEGY_NAMES) if i != 4},
}
"""Every heuristic by name (rural strategy 4 held fixed is ``condition_based`` itself)."""

SAME_WITHOUT_RURAL: dict[str, str] = {name: "condition_based" for name in HEURISTICS if name.startswith("rural_")}
"""On a fleet with no rural bridge (a city's inventory) each ``rural_*`` rule is the condition-based rule, which it
applies to the urban bridges."""
SAME_WITHOUT_URBAN: dict[str, str] = {"rural_0_do_nothing": "do_nothing", "rural_2_repair_fair": "worst_first",
                                      "rural_3_preventive_good": "fixed_interval"}
"""On a fleet with no urban bridge (a county's inventory) these rules are the named rules whose rural strategy they
hold (0, 2 and 3)."""


def distinct(names: list[str], n_urban: int, n_rural: int) -> tuple[list[str], dict[str, str]]:
    """``names`` without the rules that are another of them on a fleet of ``n_urban`` urban and ``n_rural`` rural
    bridges (:data:`SAME_WITHOUT_RURAL`, :data:`SAME_WITHOUT_URBAN`), which would give the same figures: (the names
    kept in order, {each name left out: the rule it is})."""
    same = {**(SAME_WITHOUT_RURAL if n_rural == 0 else {}), **(SAME_WITHOUT_URBAN if n_urban == 0 else {})}
    gone = {n: same[n] for n in names if n in same and same[n] in names}
    return [n for n in names if n not in gone], gone


def get_policy(name: str) -> Policy:
    """Look up a heuristic by name.

    Raises:
        ValueError: for an unknown name, listing the known ones.
    """
    try:
        return HEURISTICS[name]
    except KeyError:
        raise ValueError(f"unknown policy {unknown_names([name], [*HEURISTICS, 'lagrangian'])}; known: "
                         f"{', '.join(HEURISTICS)} (and lagrangian, the planner, "
                         "where a command takes it)") from None
