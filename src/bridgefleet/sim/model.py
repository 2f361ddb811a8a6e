"""Vectorized bridge-fleet dynamics: every function works on arrays of shape (E, B).

E is the number of fleets (environments), B the number of bridges per fleet. Bridges are ordered
urban first (columns ``0 .. n_urban-1``), then rural. All state arrays are float32. The model and the
source of every constant are documented in ``docs/fleet-model.md``.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from bridgefleet.config import RATE_RANGE, RURAL_RANGES, URBAN_RANGES, FleetConfig
from bridgefleet.sim import kernels

__all__ = ["RATE_RANGE", "RURAL_RANGES", "URBAN_RANGES"]  # re-exported: the synthetic fleet's ranges

N_ACTIONS = 5
"""Per-bridge actions: 0 do nothing, 1 preventive maintenance, 2 repair, 3 rehabilitation, 4 replacement."""
ACTION_NAMES = ("do_nothing", "preventive", "repair", "rehabilitation", "replacement")
RATING_GAIN = np.array([0.0, 1.0, 2.0, 4.0, 9.0], dtype=np.float32)
"""Condition rating gain of each action, rating points (replacement sets the rating to 9)."""
MAX_RATING = 9.0
GOOD_RATING = 7.0
"""FHWA Good/Fair/Poor: lowest rating ≥ 7 good, 5–6 fair, ≤ 4 poor (here: < 5 on the float scale)."""
POOR_BELOW = 5.0

MEAN_RATE = sum(RATE_RANGE) / 2
"""The synthetic fleet's mean deterioration rate (0.04 rating points a year): the unit of the rate factors."""


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
        truck_share: float32 (E, B), share of trucks in AADT (NBI item 109 / 100; default 0.10).
        detour_km: float32 (E, B), detour while the bridge is posted, km (NBI item 19; default 8).
        nhs: bool (E, B), True for bridges on the National Highway System (NBI item 104 = 1, or the CSV
            mapping's ``nhs`` rule; not coded → False): FHWA's deck-area measures (23 CFR 490.407) count these
            (:func:`fhwa_weight`). A synthetic fleet has no NHS coding, so every bridge is True and the measures
            cover all bridges; None (the default) means the same.
    """

    bridge_id: np.ndarray
    urban: np.ndarray
    deck_area: np.ndarray
    aadt: np.ndarray
    cost_factor: np.ndarray
    target_condition: np.ndarray
    truck_share: np.ndarray
    detour_km: np.ndarray
    nhs: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.nhs is None:
            self.nhs = np.ones(np.shape(self.deck_area), dtype=bool)

    def select(self, fleets: slice | np.ndarray) -> FleetProfile:
        """The profile of some fleets (rows of the (E, B) arrays; ids and clusters are per bridge)."""
        per_fleet = {f.name: getattr(self, f.name)[fleets] for f in dataclasses.fields(self)
                     if f.name not in ("bridge_id", "urban")}
        return FleetProfile(self.bridge_id, self.urban, **per_fleet)


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

    def copy(self) -> FleetState:
        return FleetState(self.condition.copy(), self.age.copy(), self.ysm.copy(), self.rate.copy())

    def select(self, fleets: slice | np.ndarray) -> FleetState:
        """The state of some fleets (rows of the (E, B) arrays)."""
        return FleetState(self.condition[fleets], self.age[fleets], self.ysm[fleets], self.rate[fleets])


def initial_condition(age: np.ndarray, z: np.ndarray, initial_rating: tuple[float, float, float]) -> np.ndarray:
    """Initial rating decreasing with age, float32 like ``age`` (rating points).

    intercept − loss × age + sd × z, clipped to [3, 9], with (intercept, loss, sd) = ``initial_rating``
    (``FleetConfig.initial_rating``: fitted to Indiana's 2019 NBI; plan-2025: 9, 0.07, 0.5) and z standard normal.
    """
    a, loss, sd = initial_rating
    return np.minimum(np.maximum(a - loss * age + sd * z, 3.0), MAX_RATING).astype(np.float32)


@functools.lru_cache(maxsize=8)
def _ranges(n_urban: int, n_rural: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower bounds and widths (4, B) of age, deck area, AADT and rate for the synthetic draw."""
    lo = np.empty((4, n_urban + n_rural))
    hi = np.empty_like(lo)
    for j, key in enumerate(("age", "deck", "aadt")):
        lo[j, :n_urban], hi[j, :n_urban] = URBAN_RANGES[key]
        lo[j, n_urban:], hi[j, n_urban:] = RURAL_RANGES[key]
    lo[3], hi[3] = RATE_RANGE
    return lo, hi - lo


def draw_synthetic_fleet(rng: np.random.Generator, n_urban: int, n_rural: int,
                         initial_rating: tuple[float, float, float] = (9.0, 0.07, 0.5)) -> tuple[dict, dict]:
    """One synthetic fleet: (profile columns, state columns), each a dict of float32 arrays (B,).

    Two draws define it (their order defines reproducibility): uniforms (6, B) for age, deck area,
    AADT, cost factor (0.9–1.1), rate and the share of age since the last maintenance (capped at
    15 years); then normals (B,) for the initial-condition noise (:func:`initial_condition`).
    """
    lo, span = _ranges(n_urban, n_rural)
    u = rng.random((6, n_urban + n_rural))
    z = rng.standard_normal(n_urban + n_rural)
    x = lo + span * u[:4]
    age = np.floor(x[0])
    f32 = np.float32
    profile = {"deck_area": x[1].astype(f32), "aadt": x[2].astype(f32),
               "cost_factor": (0.9 + 0.2 * u[4]).astype(f32)}
    state = {"condition": initial_condition(age, z, initial_rating), "age": age.astype(f32),
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


def cost_in_budgets(profile: FleetProfile, unit_costs: np.ndarray, budgets_usd: tuple[float, ...] | list[float],
                    agency: np.ndarray | None = None) -> np.ndarray:
    """Each action's cost for each bridge in annual budgets of its agency: how lumpy a treatment is to the money
    that must pay it whole.

    Args:
        unit_costs: float (5,), USD per m² of deck for actions 0–4.
        budgets_usd: each agency's annual budget, USD a year (A of them).
        agency: int (B,), each bridge's agency; None: urban (``profile.urban``, agency 0) and rural (1).

    Returns:
        float64 (E, B, 5): :func:`action_cost` of actions 0–4 over the annual budget of the bridge's agency, in years
        of that budget; inf where the budget is 0 and the action costs something.
    """
    shape = profile.deck_area.shape
    usd = np.stack([action_cost(np.full(shape, a), profile, unit_costs) for a in range(5)], axis=-1)
    if agency is None:
        agency = (~np.asarray(profile.urban, dtype=bool)).astype(np.int64)
    budget = np.asarray(budgets_usd, dtype=np.float64)[np.asarray(agency, dtype=np.int64)][None, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(usd == 0, 0.0, usd / budget)


LUMP_KEYS = ("rehabilitation_median", "rehabilitation_max", "replacement_median", "replacement_max")
"""The figures of :func:`treatment_lumps`, in its order."""


def treatment_lumps(profile: FleetProfile, unit_costs: np.ndarray, budgets_usd: list[float],
                    agency: np.ndarray | None = None) -> dict[str, float] | None:
    """How lumpy the treatments are at a budget: the median and the largest cost of a rehabilitation and of a
    replacement over fleet 0's bridges, in annual budgets of the bridge's agency (:func:`cost_in_budgets`;
    ``budgets_usd``: each agency's, USD a year; ``agency`` int (B,), None: urban and rural), keyed by
    :data:`LUMP_KEYS`; None where a budget that must pay is 0."""
    years = cost_in_budgets(profile, unit_costs, budgets_usd, agency)[0]
    values = [fn(years[:, a]) for a in (3, 4) for fn in (np.median, np.max)]
    return dict(zip(LUMP_KEYS, map(float, values), strict=True)) if np.isfinite(values).all() else None


def fund_actions(
    actions: np.ndarray, cost: np.ndarray, condition: np.ndarray, budget: np.ndarray, agency: np.ndarray | int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Apply the annual budgets: fund requested actions worst-condition first, defer what does not fit.

    Within each agency requests are taken worst condition first (ratings compared at 0.001 rating points, ties
    by column). Each is funded if its cost fits the budget that remains after the requests before it; otherwise
    it is deferred (done as "do nothing") and the next request is tried. Compiled in
    :func:`bridgefleet.sim.kernels.fund`.

    Args:
        actions: int (E, B) requested actions.
        cost: float64 (E, B) USD cost of each request.
        condition: float32 (E, B) ratings before the action (the priority key).
        budget: float64 (E, A) available USD of each agency.
        agency: int (B,), each bridge's agency in 0 … A−1; an int n_urban means the urban agency (0) pays the
            first n_urban columns and the rural one (1) the rest.

    Returns:
        (funded actions int64 (E, B), deferred bool (E, B), spent float64 (E, A) USD).
    """
    e, b = actions.shape
    if np.ndim(agency) == 0:
        agency = (np.arange(b) >= int(agency)).astype(np.int64)
    agency = np.ascontiguousarray(agency, dtype=np.int64)
    budget = np.ascontiguousarray(budget, dtype=np.float64)
    bits = kernels.key_bits(b)
    wide = bits + 14 + kernels.agency_bits(budget.shape[1]) > 31
    keys = np.empty((e, b), dtype=np.int64 if wide else np.int32)
    kernels.priority_keys(np.ascontiguousarray(condition, dtype=np.float32), agency, bits, keys)
    keys.sort(axis=1)
    funded = np.empty((e, b), dtype=np.int64)
    deferred = np.empty((e, b), dtype=bool)
    spent = np.empty(budget.shape, dtype=np.float64)
    kernels.fund(np.ascontiguousarray(actions, dtype=np.int64), np.ascontiguousarray(cost, dtype=np.float64),
                 keys, bits, budget, agency, funded, deferred, spent)
    return funded, deferred, spent


def maintain_and_deteriorate(state: FleetState, actions: np.ndarray, noise: np.ndarray, config: FleetConfig,
                             shock: np.ndarray | None = None) -> None:
    """One year in place: funded actions, then deterioration (docs/fleet-model.md, "Deterioration").

    Actions 1–3 add 1, 2, 4 rating points, up to the new-structure rating (``config.new_structure_rating``; a
    bridge already above it keeps its rating); 4 sets the rating to the new-structure rating, age to 0 and the
    rate to ``config.new_structure_rate``; actions 1–4 set years since maintenance to 0. Then the mean drop is
    rate × factor × (1 + ``config.ysm_acceleration`` × ysm), the factor ``config.rating_rate_factors`` of the
    whole rating point of the rating after the action, the drop that mean times ``noise`` (mean-1 gamma draws,
    float32 (E, B)) plus ``shock`` (sudden damage, rating points, float32 (E, B); None = none); ratings stay
    ≥ 0; age and years since maintenance grow by 1.
    """
    shocks = _NO_SHOCK if shock is None else np.ascontiguousarray(shock, dtype=np.float32)
    kernels.maintain_and_deteriorate(actions, state.condition, state.age, state.ysm, state.rate,
                                     np.ascontiguousarray(noise, dtype=np.float32), shocks, shock is not None,
                                     RATING_GAIN, config.new_structure_rate, config.new_structure_rating,
                                     config.ysm_acceleration, _rate_factors(config.rating_rate_factors))


_NO_SHOCK = np.zeros((1, 1), np.float32)


@functools.lru_cache(maxsize=16)
def _rate_factors(factors: tuple[float, ...]) -> np.ndarray:
    """The rating rate factors as float32 (9,), the factor of ratings [k, k + 1) at index k (9 at 8); one
    read-only array per model, not one per simulated year."""
    out = np.asarray(factors, dtype=np.float32)
    out.flags.writeable = False
    return out


def factor_index(condition: np.ndarray) -> np.ndarray:
    """Index into the rating rate factors of float ratings: floor(rating) in 0–8, int64 like ``condition``."""
    return np.clip(np.floor(np.asarray(condition, dtype=np.float64) + 1e-9), 0, 8).astype(np.int64)


def draw_shocks(rng: np.random.Generator, config: FleetConfig, size: tuple[int, ...]) -> np.ndarray | None:
    """Sudden-damage drops, float32 ``size`` (rating points; 0 where none), or None when the model has none
    (then nothing is drawn from ``rng``): a bridge is hit with probability ``config.shock_probability`` a year,
    the drop exponential with mean ``config.shock_mean_drop``. Uniforms, then exponentials, one array each."""
    if not config.has_sudden_damage:
        return None
    hit = rng.random(size, dtype=np.float32) < np.float32(config.shock_probability)
    size_drop = rng.standard_exponential(size, dtype=np.float32) * np.float32(config.shock_mean_drop)
    return np.where(hit, size_drop, np.float32(0.0))


DEFAULT_TRUCK_SHARE = 0.10
"""Share of trucks in AADT where NBI item 109 is not coded (assumption)."""
DEFAULT_DETOUR_KM = 8.0
"""Detour length where NBI item 19 is not coded, km (assumption)."""


def poor_user_cost(aadt: np.ndarray, truck_share: np.ndarray, detour_km: np.ndarray, config: FleetConfig
                   ) -> np.ndarray:
    """Yearly user cost of a bridge while it is poor, float64 like ``aadt`` (USD per year).

    ``config.poor_user_cost_usd_per_aadt`` is the cost per vehicle/day at the default truck share (10 %) and
    detour (8 km); a bridge's own truck share (NBI item 109, a fraction) and detour (item 19, km) scale it:
    AADT × truck share × 365 × detour × USD 1.41 per truck-km (ATRI 2023).
    """
    scale = (np.asarray(truck_share, np.float64) / DEFAULT_TRUCK_SHARE) * (np.asarray(detour_km, np.float64)
                                                                             / DEFAULT_DETOUR_KM)
    return config.poor_user_cost_usd_per_aadt * np.asarray(aadt, dtype=np.float64) * scale


def band_index(condition: np.ndarray) -> np.ndarray:
    """FHWA band of float ratings: 0 good (≥ 7), 1 fair (5 to < 7), 2 poor (< 5), int64 like ``condition``."""
    c = np.asarray(condition)
    return np.where(c >= GOOD_RATING, 0, np.where(c >= POOR_BELOW, 1, 2)).astype(np.int64)


def traffic_weight(aadt: np.ndarray, config: FleetConfig) -> np.ndarray:
    """Reward weight of each bridge: (AADT / AADT_ref) ** a, float32 like ``aadt``."""
    return ((aadt / config.aadt_reference) ** config.aadt_exponent).astype(np.float32)


def standard_gamma_noise(rng: np.random.Generator, cv: float, size: tuple[int, ...]) -> np.ndarray:
    """Mean-1 gamma draws with coefficient of variation ``cv`` (shape 1/cv², scale cv²), float32.

    ``cv == 0`` gives ones (deterministic model) and draws nothing from ``rng``.
    """
    if cv == 0:
        return np.ones(size, dtype=np.float32)
    k = 1.0 / cv**2
    x = rng.standard_gamma(k, size=size, dtype=np.float32)
    x *= np.float32(1.0 / k)
    return x


def band_shares(condition: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """FHWA shares (good ≥ 7, fair 5 to < 7, poor < 5) along the last axis, float64 (..., 3), each 0–1.

    ``weight`` (broadcast to ``condition``): deck area, m², for FHWA's measures of 23 CFR 490.407 (the share of
    deck area in good and in poor condition); None counts bridges.
    """
    c = np.asarray(condition)
    w = np.ones(c.shape) if weight is None else np.broadcast_to(np.asarray(weight, np.float64), c.shape)
    total = w.sum(-1)
    good, poor = (w * (c >= GOOD_RATING)).sum(-1), (w * (c < POOR_BELOW)).sum(-1)
    return np.stack([good, total - good - poor, poor], -1) / np.maximum(total, 1e-300)[..., None]


def fhwa_weight(deck_area: np.ndarray, nhs: np.ndarray) -> np.ndarray:
    """Deck-area weight of FHWA's measures (23 CFR 490.407: NHS deck area good / poor), float64 (..., B) m².

    ``deck_area`` (m²) where ``nhs`` (bool, broadcast to ``deck_area``), 0 elsewhere; a fleet (last axis =
    bridges) with no NHS bridge — an inventory that codes no NHS membership — counts every bridge's deck area.
    Pass it as ``weight`` to :func:`band_shares`.
    """
    area = np.asarray(deck_area, dtype=np.float64)
    on = np.broadcast_to(np.asarray(nhs, dtype=bool), area.shape)
    return np.where(on | ~on.any(-1, keepdims=True), area, 0.0)


def fhwa_basis(nhs: np.ndarray) -> str:
    """Which bridges :func:`fhwa_weight` counts, for reports: ``"NHS bridges"`` when every fleet (rows of bool
    (..., B); one fleet for (B,)) has an NHS bridge, ``"all bridges (no NHS coding)"`` when none has (a
    synthetic fleet marks every bridge NHS, so it reads "NHS bridges" and covers all bridges)."""
    coded = np.asarray(nhs, dtype=bool).any(-1)
    if np.all(coded):
        return "NHS bridges"
    if not np.any(coded):
        return "all bridges (no NHS coding)"
    return "NHS bridges (all bridges in fleets with no NHS coding)"


def band_counts(condition: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """FHWA bands per fleet: (good ≥ 7, fair 5 to < 7, poor < 5) counts along the last axis."""
    good = (condition >= GOOD_RATING).sum(-1)
    poor = (condition < POOR_BELOW).sum(-1)
    return good, condition.shape[-1] - good - poor, poor
