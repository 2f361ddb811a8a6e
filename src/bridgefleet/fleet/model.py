"""Vectorized bridge-fleet dynamics: every function works on arrays of shape (E, B).

E is the number of fleets (environments), B the number of bridges per fleet. Bridges are ordered
urban first (columns ``0 .. n_urban-1``), then rural. All state arrays are float32. The model and the
source of every constant are documented in ``docs/fleet-model.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bridgefleet.config import FleetConfig

N_ACTIONS = 5
"""Per-bridge actions: 0 do nothing, 1 preventive maintenance, 2 repair, 3 rehabilitation, 4 replacement."""
ACTION_NAMES = ("do_nothing", "preventive", "repair", "rehabilitation", "replacement")
RATING_GAIN = np.array([0.0, 1.0, 2.0, 4.0, 9.0], dtype=np.float32)
"""Condition rating gain of each action, rating points (replacement sets the rating to 9)."""
MAX_RATING = 9.0
GOOD_RATING = 7.0
"""FHWA Good/Fair/Poor: lowest rating ≥ 7 good, 5–6 fair, ≤ 4 poor (here: < 5 on the float scale)."""
POOR_BELOW = 5.0
N_FEATURES = 4
"""Bridge state features, in order: condition rating, age (years), years since maintenance, rate."""

# Synthetic fleet ranges (issue 2): age in years, deck area in m², AADT in vehicles/day.
URBAN_RANGES = {"age": (20.0, 50.0), "deck": (800.0, 1200.0), "aadt": (15_000.0, 25_000.0)}
RURAL_RANGES = {"age": (25.0, 50.0), "deck": (300.0, 600.0), "aadt": (500.0, 3_000.0)}
RATE_RANGE = (0.030, 0.050)
"""Per-bridge deterioration rate of existing structures, rating points per year (see fleet-model.md)."""


@dataclass
class FleetProfile:
    """Static bridge attributes of E fleets of B bridges (all arrays (E, B)).

    Attributes:
        bridge_id: str array (B,), identifiers (NBI item 8 structure number for real inventories).
        urban: bool (B,), True for urban bridges (the first ``n_urban`` columns).
        deck_area: float32 (E, B), deck area in m².
        aadt: float32 (E, B), average annual daily traffic, vehicles/day.
        cost_factor: float32 (E, B), multiplier on unit costs (regional price level), dimensionless.
        target_condition: float32 (E, B), rating the bridge should keep, rating points.
    """

    bridge_id: np.ndarray
    urban: np.ndarray
    deck_area: np.ndarray
    aadt: np.ndarray
    cost_factor: np.ndarray
    target_condition: np.ndarray

    @property
    def n_urban(self) -> int:
        return int(self.urban.sum())


@dataclass
class FleetState:
    """Dynamic bridge state of E fleets (arrays (E, B), float32).

    Attributes:
        condition: NBI condition rating, 0–9 as a float (9 = as new), rating points.
        age: years since construction or replacement.
        ysm: years since the last maintenance action (actions 1–4).
        rate: deterioration rate at zero years since maintenance, rating points per year.
    """

    condition: np.ndarray
    age: np.ndarray
    ysm: np.ndarray
    rate: np.ndarray

    def features(self) -> np.ndarray:
        """The 4 features stacked: float32 (E, B, 4) in the documented order."""
        return np.stack([self.condition, self.age, self.ysm, self.rate], axis=-1)

    def copy(self) -> FleetState:
        return FleetState(self.condition.copy(), self.age.copy(), self.ysm.copy(), self.rate.copy())


def initial_condition(age: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """Initial rating decreasing with age: 9 − 0.07 × age + noise, clipped to [3, 9] (rating points)."""
    return np.clip(9.0 - 0.07 * age + noise, 3.0, MAX_RATING).astype(np.float32)


def draw_synthetic_fleet(rng: np.random.Generator, n_urban: int, n_rural: int) -> tuple[dict, dict]:
    """One synthetic fleet: (profile columns, state columns), each a dict of float32 arrays (B,).

    Two draws define it (their order defines reproducibility): uniforms (6, B) for age, deck area,
    AADT, cost factor (0.9–1.1), rate and the share of age since the last maintenance (capped at
    15 years); then normals (B,) for the initial-condition noise (σ = 0.5 rating points).
    """
    lo = np.empty((4, n_urban + n_rural))
    hi = np.empty_like(lo)
    for j, key in enumerate(("age", "deck", "aadt")):
        lo[j, :n_urban], hi[j, :n_urban] = URBAN_RANGES[key]
        lo[j, n_urban:], hi[j, n_urban:] = RURAL_RANGES[key]
    lo[3], hi[3] = RATE_RANGE
    u = rng.random((6, n_urban + n_rural))
    z = rng.standard_normal(n_urban + n_rural)
    x = lo + (hi - lo) * u[:4]
    age = np.floor(x[0])
    f32 = np.float32
    profile = {"deck_area": x[1].astype(f32), "aadt": x[2].astype(f32),
               "cost_factor": (0.9 + 0.2 * u[4]).astype(f32)}
    state = {"condition": initial_condition(age, 0.5 * z), "age": age.astype(f32),
             "ysm": np.floor(u[5] * np.minimum(age, 15.0)).astype(f32), "rate": x[3].astype(f32)}
    return profile, state


def action_cost(actions: np.ndarray, profile: FleetProfile, unit_costs: np.ndarray) -> np.ndarray:
    """Cost of the requested actions: unit cost × deck area × cost factor.

    Args:
        actions: int (E, B) in 0–4.
        unit_costs: float (5,), USD per m² of deck for actions 0–4.

    Returns:
        float64 (E, B), USD.
    """
    return unit_costs[actions] * profile.deck_area.astype(np.float64) * profile.cost_factor


def priority_order(condition: np.ndarray, n_urban: int | None = None) -> np.ndarray:
    """Funding order within each fleet: worst condition first, ties by column index.

    With ``n_urban`` given, the urban columns come first (in their own order), then the rural ones, so
    both agencies are ordered by one sort. Ratings are compared at 0.001 rating-point resolution;
    packing (agency, rating, index) into one integer lets a plain sort replace a slower argsort.

    Args:
        condition: float32 (E, B) ratings in [0, 9].

    Returns:
        int (E, B): column indices in funding order.
    """
    b = condition.shape[-1]
    bits = max(1, (b - 1).bit_length())
    wide = bits + 15 > 31
    key = (condition * 1000.0 + 0.5).astype(np.int64 if wide else np.int32)
    key <<= bits
    key |= np.arange(b, dtype=key.dtype)
    if n_urban is not None:
        key[:, n_urban:] |= key.dtype.type(1) << (bits + 14)
    return np.sort(key, axis=-1) & ((1 << bits) - 1)


def fund_actions(
    actions: np.ndarray, cost: np.ndarray, condition: np.ndarray, budget: np.ndarray, n_urban: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Apply the annual budgets: fund requested actions worst-condition first, defer what does not fit.

    Within each agency (urban columns, rural columns) requests are taken in :func:`priority_order`. Each
    is funded if its cost fits the budget that remains after the requests before it; otherwise it is
    deferred (done as "do nothing") and the next request is tried (greedy, skipping).

    Vectorized in rounds instead of per bridge: the remaining budget never grows, so every request that
    costs more than it is deferred at once; the longest affordable run of the rest (a cumulative sum) is
    funded; the first request after that run is deferred; repeat until none are pending. Each round
    settles at least one request per agency; typically one or two rounds suffice.

    Args:
        actions: int (E, B) requested actions.
        cost: float64 (E, B) USD cost of each request.
        condition: float32 (E, B) ratings before the action (the priority key).
        budget: float64 (E, 2) available USD: [:, 0] urban, [:, 1] rural.
        n_urban: number of urban columns.

    Returns:
        (funded actions int (E, B), deferred bool (E, B), spent float64 (E, 2) USD).
    """
    e, b = actions.shape
    nu = n_urban
    order = priority_order(condition, nu)
    rows = np.arange(e)
    r2 = rows[:, None]
    c = cost[r2, order]
    pending = actions[r2, order] > 0
    # Remaining budget of each sorted position's agency; a cent of slack keeps exact fits funded.
    left = np.empty((e, b))
    left[:, :nu] = budget[:, :1] + 0.01
    left[:, nu:] = budget[:, 1:] + 0.01
    ok = np.zeros((e, b), dtype=bool)
    while True:
        pending &= c <= left
        if not pending.any():
            break
        x = c * pending
        # One flat cumulative sum is much faster than one per row; rebase it per agency block.
        run = np.cumsum(x.ravel()).reshape(e, b)
        run[:, nu:] -= run[:, nu - 1 : nu]
        run[:, :nu] -= (run[:, :1] - x[:, :1])
        fit = pending & (run <= left)
        ok |= fit
        if not (pending & ~fit).any():
            break  # everything pending was funded: the usual single round
        paid = c * fit
        left[:, :nu] -= paid[:, :nu].sum(axis=1, keepdims=True)
        left[:, nu:] -= paid[:, nu:].sum(axis=1, keepdims=True)
        pending &= ~fit
        # The first request of each agency that did not fit is deferred for good.
        pending[rows, np.argmax(pending[:, :nu], axis=1)] = False
        pending[rows, nu + np.argmax(pending[:, nu:], axis=1)] = False
    paid = c * ok
    spent = np.stack([paid[:, :nu].sum(axis=1), paid[:, nu:].sum(axis=1)], axis=1)
    funded = np.empty_like(ok)
    funded[r2, order] = ok
    return np.where(funded, actions, 0), (actions > 0) & ~funded, spent


def apply_actions(state: FleetState, actions: np.ndarray, new_rate: float) -> None:
    """Apply funded actions in place: rating gain, reset of years since maintenance, replacement resets.

    Actions 1–3 add 1, 2, 4 rating points (capped at 9); 4 sets the rating to 9, age to 0 and the rate to
    ``new_rate``. Actions 1–4 set years since maintenance to 0.
    """
    np.minimum(state.condition + RATING_GAIN[actions], MAX_RATING, out=state.condition)
    state.ysm *= actions == 0
    replaced = actions == 4
    if replaced.any():
        state.age[replaced] = 0.0
        state.rate[replaced] = new_rate


def deteriorate(state: FleetState, noise: np.ndarray, ysm_acceleration: float) -> None:
    """One year of deterioration in place.

    Mean drop = rate × (1 + ysm_acceleration × ysm); the drop is that mean times ``noise`` (mean-1 gamma
    draws, float32 (E, B)). Ratings are clipped to [0, 9]; age and years since maintenance grow by 1.
    """
    drop = state.ysm * np.float32(ysm_acceleration)
    drop += 1.0
    drop *= state.rate
    drop *= noise
    state.condition -= drop
    np.maximum(state.condition, 0.0, out=state.condition)  # drops are ≥ 0, so 9 is never exceeded
    state.age += 1.0
    state.ysm += 1.0


def traffic_weight(aadt: np.ndarray, config: FleetConfig) -> np.ndarray:
    """Reward weight of each bridge: (AADT / AADT_ref) ** a, float32 like ``aadt``."""
    return ((aadt / config.aadt_reference) ** config.aadt_exponent).astype(np.float32)


def bridge_utility(condition: np.ndarray, target: np.ndarray, weight: np.ndarray, config: FleetConfig) -> np.ndarray:
    """Per-bridge condition utility (before costs), float32 (E, B).

    u = w × [(c − c_target) − p × max(0, c_crit − c)²], with w from :func:`traffic_weight`.
    """
    shortfall = np.maximum(np.float32(config.critical_rating) - condition, 0.0)
    shortfall *= shortfall
    shortfall *= np.float32(config.critical_penalty)
    u = condition - target
    u -= shortfall
    u *= weight
    return u


def standard_gamma_noise(rng: np.random.Generator, cv: float, size: tuple[int, ...]) -> np.ndarray:
    """Mean-1 gamma draws with coefficient of variation ``cv`` (shape 1/cv², scale cv²), float32.

    ``cv == 0`` gives ones (deterministic model) and draws nothing from ``rng``.
    """
    if cv == 0:
        return np.ones(size, dtype=np.float32)
    k = 1.0 / cv**2
    return (rng.standard_gamma(k, size=size) / k).astype(np.float32)


def band_counts(condition: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """FHWA bands per fleet: (good ≥ 7, fair 5 to < 7, poor < 5) counts along the last axis."""
    good = (condition >= GOOD_RATING).sum(-1)
    poor = (condition < POOR_BELOW).sum(-1)
    return good, condition.shape[-1] - good - poor, poor
