"""FleetSimulator: E independent fleets stepped together as NumPy arrays (E, B).

Each fleet has its own ``numpy.random.Generator``; at reset it draws the fleet (unless fixed) and the
whole episode's deterioration noise (horizon, B) in one call, so a step does no per-fleet work. A fleet
seeded with ``s`` behaves identically whether it is simulated alone or as column ``i`` of a batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.sim import components, kernels, model
from bridgefleet.sim.model import FleetProfile, FleetState
from bridgefleet.sim.strategies import N_STRATEGIES, rural_actions

# Observation scaling (documented in docs/fleet-model.md): features divided by these.
COND_SCALE = 9.0
AGE_SCALE = 100.0
YSM_SCALE = 30.0
RATE_SCALE = 0.05
RURAL_OBS_DIM = 10
URBAN_FEATURES = 4
"""Urban observation features per urban bridge (condition rating, age, years since maintenance, rate, each
scaled); the urban observation is these for every urban bridge and the budget fraction (:func:`urban_obs_dim`)."""
_SCALES = np.array([COND_SCALE, AGE_SCALE, YSM_SCALE, RATE_SCALE])


def draw_fleet(rng: np.random.Generator, config: FleetConfig) -> tuple[dict, dict]:
    """One synthetic fleet of ``config`` (:func:`bridgefleet.sim.model.draw_synthetic_fleet`); with the component
    model, each bridge's three ratings drawn after it (:func:`bridgefleet.sim.components.initial_components`), so
    the continuous models' fleets stay as they were."""
    fleet = model.draw_synthetic_fleet(rng, config.n_urban, config.n_rural, config.initial_rating)
    if config.component_model is not None:
        fleet[1]["components"] = components.initial_components(fleet[1]["age"], rng.random(config.n_bridges))
    return fleet


def urban_obs_dim(n_urban: int) -> int:
    """Urban observation width: :data:`URBAN_FEATURES` per urban bridge and the budget fraction (81 for 20)."""
    return n_urban * URBAN_FEATURES + 1


def plan_agents_problem(n_urban: int, n_rural: int) -> str | None:
    """Why the plan's two fleet agents (``agent: fleet``: the urban action-branching Q-network over the first
    ``n_urban`` bridges, the rural agent's 8 strategies over the other ``n_rural``) cannot run on a fleet, in one
    line; None where they can. Each needs bridges to observe: an inventory of one cluster (a city's, all urban;
    a county's, all rural) leaves one with none. The other policies (the per-bridge network, the planner, the rules
    of thumb) take such a fleet."""
    if n_urban > 0 and n_rural > 0:
        return None
    n = n_urban + n_rural
    if n_rural == 0:
        fix = (f"or --max-urban N with N < {n} to hand the lower-traffic urban bridges to the rural agent"
               if n > 1 else "or add bridges (loosen the --county/--owner filter)")
        what = f"all {n} bridges are urban (functional class 11–19) and none rural"
    else:
        fix = "or loosen the --county/--owner filter, or use a mapping whose cluster rule marks some bridges urban"
        what = f"all {n} bridges are rural and none urban (functional class 11–19)"
    return (f"{what}, but the plan's fleet agents (agent: fleet: the urban Q-network and the rural agent's 8 "
            "strategies) need both; train the default preset (agent: bridge, one network for every bridge, the "
            f"budgets held by the owners) {fix}")


@dataclass
class StepResult:
    """What one year of simulation produced, per fleet.

    Attributes:
        reward: float64 (E,), municipality reward (urban + rural).
        urban_reward, rural_reward: float64 (E,), the two agencies' parts.
        bridge_reward: float32 (E, B), per-bridge utility minus cost_lambda × (USD spent on it + its user cost
            in USD if it ends the year poor).
        cost: float64 (E, A), USD spent by each agency (:attr:`FleetSimulator.agency`; A = 2, urban and rural, unless
            an inventory's owners hold the budgets).
        deferred: bool (E, B), requested actions not funded.
        actions: int64 (E, B), actions carried out.
        truncated: bool (E,), the horizon was reached (time limit).
    """

    reward: np.ndarray
    urban_reward: np.ndarray
    rural_reward: np.ndarray
    bridge_reward: np.ndarray
    cost: np.ndarray
    deferred: np.ndarray
    actions: np.ndarray
    truncated: np.ndarray


class FleetSimulator:
    """E fleets of ``config.n_urban + config.n_rural`` bridges.

    Each bridge's requests are paid from its agency's budget: ``agency`` int64 (B,) indexes the A agencies of
    ``config.agency_labels`` (an inventory's owners where ``config.agencies`` is ``owners``: the fleet's profile
    ``agency``; else 0 for the first ``n_urban`` columns, the urban agency, and 1 for the rest, the rural one);
    budgets are float64 (E, A) USD.

    Args:
        config: the fleet configuration.
        num_envs: E, number of fleets simulated together.
        fleet: optional fixed fleet (profile columns, state columns) as returned by
            :func:`bridgefleet.sim.model.draw_synthetic_fleet` or an inventory loader; overrides the
            synthetic draw. Its sizes must match ``config``.
    """

    def __init__(self, config: FleetConfig, num_envs: int = 1, fleet: tuple[dict, dict] | None = None):
        if num_envs < 1:
            raise ValueError(f"num_envs = {num_envs!r}: must be at least 1")
        self.config = config
        self.num_envs = num_envs
        self.n_urban = config.n_urban
        self.n_bridges = config.n_bridges
        self.unit_costs = np.asarray(config.unit_costs_usd_per_m2, dtype=np.float64)
        if fleet is None and config.fixed_fleet:
            fleet = draw_fleet(np.random.default_rng(config.fleet_seed), config)
        self.fixed = fleet
        if fleet is not None:
            n = len(fleet[0]["deck_area"])
            if n != self.n_bridges:
                raise ValueError(f"fleet has {n} bridges, config says {self.n_bridges}")
        ids = fleet[0].get("bridge_id") if fleet is not None else None
        if ids is None:
            ids = np.array([f"U{i:03d}" for i in range(self.n_urban)]
                           + [f"R{i:03d}" for i in range(config.n_rural)])
        urban = np.zeros(self.n_bridges, dtype=bool)
        urban[: self.n_urban] = True
        agency = fleet[0].get("agency") if fleet is not None else None
        if config.agency_names is not None and agency is None:
            raise ValueError(f"the config names {len(config.agency_names)} agencies (an inventory's owners) but the "
                             "fleet has no agency index: resolve it with bridgefleet.inventory.fleet.resolve_fleet")
        self.agency = (np.asarray(agency, dtype=np.int64) if config.agency_names is not None
                       else (~urban).astype(np.int64))
        self.n_agencies = config.n_agencies
        if self.agency.shape != (self.n_bridges,) or self.agency.min() < 0 or self.agency.max() >= self.n_agencies:
            raise ValueError(f"fleet's agency index must be {self.n_bridges} integers in 0 … {self.n_agencies - 1} "
                             f"(config.agency_labels), got shape {self.agency.shape}")
        cluster = fleet[0].get("cluster") if fleet is not None else None
        self.cluster = np.asarray(cluster) if cluster is not None else np.where(urban, "urban", "rural")
        e, b = num_envs, self.n_bridges
        z = np.zeros((e, b), dtype=np.float32)
        self.profile = FleetProfile(np.asarray(ids), urban, z.copy(), z.copy(), z.copy(),
                                    np.full((e, b), config.target_condition, dtype=np.float32),
                                    np.full((e, b), model.DEFAULT_TRUCK_SHARE, dtype=np.float32),
                                    np.full((e, b), model.DEFAULT_DETOUR_KM, dtype=np.float32),
                                    np.ones((e, b), dtype=bool))  # no NHS coding: every bridge counts
        self.state = FleetState(z.copy(), z.copy(), z.copy(), z.copy())
        self.weight = z.copy()
        self.user_cost = np.zeros((e, b), dtype=np.float64)
        self.annual_budget = np.array(config.budgets_usd, dtype=np.float64)
        self.budget_scale = np.ones(e)
        self.budget = np.tile(self.annual_budget, (e, 1))
        self.noise = np.ones((e, config.horizon_years, b), dtype=np.float32)
        self.shock = (np.zeros((e, config.horizon_years, b), dtype=np.float32) if config.has_sudden_damage
                      else None)
        self.t = np.zeros(e, dtype=np.int64)
        self.rngs = [np.random.default_rng() for _ in range(e)]
        # The component model (None: the continuous one): ratings int8 (E, B, 3), deck protection (E, B), kind
        # (B,) 0 bridge / 1 culvert, and each year's uniforms for treatment, deterioration and lapse (E, T, B, 9).
        self.components_model = (components.ComponentModel.load(config.component_model)
                                 if config.component_model is not None else None)
        if self.components_model is not None:
            kind = fleet[0].get("kind") if fleet is not None else None
            self.kind = np.zeros(b, np.int64) if kind is None else np.asarray(kind, np.int64)
            self.components = np.full((e, b, 3), components.NOT_APPLICABLE, np.int8)
            self.protected = np.zeros((e, b), bool)
            self.uniforms = np.zeros((e, config.horizon_years, b, 9), np.float32)

    @property
    def urban_rural(self) -> bool:
        """Whether the agencies are the urban (the first ``n_urban`` columns) and the rural one, as the plan's fleet
        agents need (their observations hold each one's budget)."""
        return self.config.agency_names is None

    @property
    def fleet_annual_budget(self) -> np.ndarray:
        """Each fleet's annual budget of each agency, float64 (E, A) USD: the configured ``annual_budget`` × the
        fleet's ``budget_scale`` (1 unless :meth:`set_budget_scale` changed it)."""
        return self.annual_budget * self.budget_scale[:, None]

    def set_budget_scale(self, scale: np.ndarray) -> None:
        """Each fleet's annual budgets as ``scale`` float (E,) × the configured ones, from the next reset on (a
        policy trained across budget levels meets a level per episode).

        Raises:
            ValueError: ``scale`` is not (E,) or has a negative or non-finite value.
        """
        scale = np.asarray(scale, dtype=np.float64)
        if scale.shape != (self.num_envs,) or not (np.isfinite(scale) & (scale >= 0)).all():
            raise ValueError(f"budget scale {scale!r}: must be {self.num_envs} finite numbers ≥ 0")
        self.budget_scale = scale

    # -- reset ---------------------------------------------------------------------------------------
    def reset(self, env_ids: Sequence[int] | np.ndarray | None = None,
              seeds: Sequence[int | None] | None = None) -> None:
        """Start a new episode in the given fleets (all if None); ``seeds[k]`` reseeds fleet ``env_ids[k]``."""
        ids = np.arange(self.num_envs) if env_ids is None else np.asarray(env_ids, dtype=np.int64)
        cfg = self.config
        fleets = []
        for k, i in enumerate(ids):
            seed = None if seeds is None else seeds[k]
            if seed is not None:
                self.rngs[i] = np.random.default_rng(seed)
            rng = self.rngs[i]
            if self.fixed is None:
                fleets.append(draw_fleet(rng, cfg))
            self._draw_noise(i, rng)
        # One assignment per field for all reset fleets, not one per fleet (a fixed fleet broadcasts).
        for part, names, target in ((0, ("deck_area", "aadt", "cost_factor", "target_condition", "truck_share",
                                         "detour_km", "nhs"), self.profile),
                                    (1, ("condition", "age", "ysm", "rate"), self.state)):
            for name in names:
                if self.fixed is not None and name in self.fixed[part]:
                    getattr(target, name)[ids] = self.fixed[part][name]
                elif fleets and name in fleets[0][part]:
                    getattr(target, name)[ids] = np.stack([f[part][name] for f in fleets])
        if self.components_model is not None:
            if self.fixed is not None:
                self.components[ids] = self.fixed[1]["components"]
            else:
                self.components[ids] = np.stack([f[1]["components"] for f in fleets])
            self.protected[ids] = False
            preserved = None if self.fixed is None else self.fixed[1].get("preserved_years")
            if preserved is not None:  # an SNBI inventory: decks whose last work was a recent preservation
                self.protected[ids] = components.protected_at_start(self.components_model, preserved)
            self._component_state(ids)
        self.weight[ids] = model.traffic_weight(self.profile.aadt[ids], cfg)
        p = self.profile
        self.user_cost[ids] = model.poor_user_cost(p.aadt[ids], p.truck_share[ids], p.detour_km[ids], cfg)
        self.budget[ids] = self.fleet_annual_budget[ids]
        self.t[ids] = 0
        for name in ("condition", "age", "ysm", "rate"):
            arr = getattr(self.state, name)[ids]
            if not np.isfinite(arr).all():
                raise ValueError(f"fleet state '{name}' contains NaN or infinity after reset")

    def redraw_noise(self, seeds: Sequence[int]) -> None:
        """Another sample path of the same fleets: every fleet's deterioration noise (and sudden damage) drawn
        anew from ``seeds[i]`` (one per fleet), its bridges and their year-0 state kept. Call at year 0, after
        :meth:`reset`.

        Raises:
            ValueError: not one seed per fleet, or a fleet past year 0.
        """
        if len(seeds) != self.num_envs or self.t.any():
            raise ValueError(f"redraw_noise needs {self.num_envs} seeds and every fleet at year 0")
        for i, seed in enumerate(seeds):
            self.rngs[i] = np.random.default_rng(seed)
            self._draw_noise(i, self.rngs[i])

    def _component_state(self, ids: np.ndarray | slice) -> None:
        """The condition (the lowest component rating) and the rate the agents observe (the lowest component's
        expected one-year drop) of fleets ``ids`` from their component ratings."""
        c = self.components[ids]
        self.state.condition[ids] = components.lowest(c)
        self.state.rate[ids] = components.expected_drop(self.components_model, c, self.kind)

    def _draw_noise(self, i: int, rng: np.random.Generator) -> None:
        """Fleet i's deterioration noise and sudden damage for every year, float32 (T, B), from ``rng`` (the
        component model: uniforms (T, B, 9) for treatment, deterioration and lapse)."""
        cfg = self.config
        if self.components_model is not None:
            self.uniforms[i] = rng.random((cfg.horizon_years, self.n_bridges, 9), dtype=np.float32)
            return
        self.noise[i] = model.standard_gamma_noise(rng, cfg.deterioration_cv, (cfg.horizon_years, self.n_bridges))
        if self.shock is not None:
            self.shock[i] = model.draw_shocks(rng, cfg, (cfg.horizon_years, self.n_bridges))

    # -- step ----------------------------------------------------------------------------------------
    def rural_requests(self, strategy: np.ndarray) -> np.ndarray:
        """Per-bridge actions int64 (E, n_rural) of rural strategies ``strategy`` (E,)."""
        r = slice(self.n_urban, None)
        s = self.state
        return rural_actions(strategy, s.condition[:, r], s.age[:, r], s.ysm[:, r], self.weight[:, r])

    def step(self, urban_actions: np.ndarray, rural_strategy: np.ndarray) -> StepResult:
        """Advance every fleet by one year.

        Args:
            urban_actions: int (E, n_urban) in 0–4.
            rural_strategy: int (E,) in 0–7.

        Order within a year: requests → budget (worst first) → maintenance → deterioration → reward on
        the end-of-year ratings. The caller resets fleets whose ``truncated`` is True.
        """
        requested = np.empty((self.num_envs, self.n_bridges), dtype=np.int64)
        requested[:, : self.n_urban] = urban_actions
        requested[:, self.n_urban :] = self.rural_requests(np.asarray(rural_strategy))
        return self.step_requests(requested)

    def step_requests(self, requested: np.ndarray) -> StepResult:
        """Advance every fleet by one year from per-bridge requests int (E, B) in 0–4 (urban and rural
        bridges alike, as a per-bridge policy decides them); the budgets fund them as in :meth:`step`."""
        cfg = self.config
        requested = np.ascontiguousarray(requested, dtype=np.int64)
        cost = model.action_cost(requested, self.profile, self.unit_costs)
        actions, deferred, spent = model.fund_actions(requested, cost, self.state.condition, self.budget,
                                                      self.agency)
        year = np.minimum(self.t, cfg.horizon_years - 1)
        rows = np.arange(self.num_envs)
        if self.components_model is None:
            model.maintain_and_deteriorate(self.state, actions, self.noise[rows, year], cfg,
                                           None if self.shock is None else self.shock[rows, year])
        else:
            self._component_year(actions, self.uniforms[rows, year])
        e = self.num_envs
        bridge_reward = np.empty((e, self.n_bridges), dtype=np.float32)
        urban_reward = np.empty(e)
        rural_reward = np.empty(e)
        kernels.rewards(self.state.condition, self.profile.target_condition, self.weight, actions, cost,
                        self.user_cost, np.float32(model.POOR_BELOW), self.n_urban, cfg.critical_rating,
                        cfg.critical_penalty, cfg.cost_lambda, bridge_reward, urban_reward, rural_reward)
        if cfg.carry_over_budget:
            self.budget = self.budget - spent + self.fleet_annual_budget
        self.t += 1
        return StepResult(urban_reward + rural_reward, urban_reward, rural_reward, bridge_reward, spent,
                          deferred, actions, self.t >= cfg.horizon_years)

    def _component_year(self, actions: np.ndarray, u: np.ndarray) -> None:
        """One year of the component model for every fleet: funded ``actions`` int (E, B), then deterioration
        and lapse, with this year's uniforms ``u`` float32 (E, B, 9); age and years since maintenance as the
        continuous model counts them (replacement: age 0)."""
        m, st = self.components_model, self.state
        components.treat(m, self.components, self.protected, self.kind, actions, u[..., 0:3])
        components.deteriorate(m, self.components, self.protected, self.kind, u[..., 3:8], u[..., 8])
        st.age[actions == model.N_ACTIONS - 1] = 0.0
        st.ysm[actions > 0] = 0.0
        st.age += 1.0
        st.ysm += 1.0
        self._component_state(slice(None))

    # -- observations --------------------------------------------------------------------------------
    def fhwa_weight(self) -> np.ndarray:
        """Deck area counted by FHWA's measures, float64 (E, B) m²: NHS bridges of an inventory that codes NHS
        membership (NBI item 104), every bridge otherwise (:func:`bridgefleet.sim.model.fhwa_weight`)."""
        return model.fhwa_weight(self.profile.deck_area, self.profile.nhs)

    @property
    def fhwa_basis(self) -> str:
        """Which bridges :meth:`fhwa_weight` counts, in words."""
        if self.config.inventory is None:
            return "all bridges (a synthetic fleet has no NHS coding)"
        return model.fhwa_basis(self.profile.nhs)

    def budget_fraction(self) -> np.ndarray:
        """Available budget over the agency's annual budget, float32 (E, A) (0 when the annual is 0)."""
        return (self.budget / np.maximum(self.fleet_annual_budget, 1.0)).astype(np.float32)

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """Scaled observations of the plan's two agents: urban float32 (E, n_urban*4 + 1), rural float32 (E, 10).

        Raises:
            ValueError: the budgets are an inventory's owners' (``FleetConfig.agencies`` ``owners``), not the urban
                and the rural agency's these observations hold; or the fleet has no urban or no rural bridge
                (:func:`plan_agents_problem`).
        """
        if not self.urban_rural:
            raise ValueError("the plan's urban and rural agents observe the urban and the rural agency's budgets, but "
                             f"this fleet's budgets are its owners' ({', '.join(self.config.agency_labels)}); use "
                             "agencies: urban_rural")
        problem = plan_agents_problem(self.n_urban, self.config.n_rural)
        if problem is not None:
            raise ValueError(problem)
        s = self.state
        e, nu = self.num_envs, self.n_urban
        urban = np.empty((e, urban_obs_dim(nu)), dtype=np.float32)
        rural = np.empty((e, RURAL_OBS_DIM), dtype=np.float32)
        kernels.observe(s.condition, s.age, s.ysm, s.rate, self.budget_fraction(), nu, _SCALES, model.POOR_BELOW,
                        model.GOOD_RATING, urban, rural)
        return urban, rural


def check_actions(urban: object, rural: object, num_envs: int | None, n_urban: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate actions; return (urban int64 (E, n_urban), rural int64 (E,)).

    ``num_envs=None`` means a single environment: urban (n_urban,), rural a scalar.

    Raises:
        ValueError: naming the field ('urban' or 'rural') and the offending value or shape.
    """
    u = np.asarray(urban)
    r = np.asarray(rural)
    want_u = (n_urban,) if num_envs is None else (num_envs, n_urban)
    want_r = () if num_envs is None else (num_envs,)
    if r.shape == (1,) and num_envs is None:
        r = r.reshape(())
    for name, arr, shape, hi in (("urban", u, want_u, model.N_ACTIONS), ("rural", r, want_r, N_STRATEGIES)):
        if arr.shape != shape:
            raise ValueError(f"action '{name}' has shape {arr.shape}, expected {shape}")
        if arr.dtype.kind not in "iub":
            if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
                arr = arr.astype(np.int64)
            else:
                raise ValueError(f"action '{name}' must be integers, got dtype {arr.dtype} ({arr!r})")
        if arr.size and (arr.min() < 0 or arr.max() >= hi):
            bad = arr[(arr < 0) | (arr >= hi)].ravel()[0]
            raise ValueError(f"action '{name}' value {bad} out of range [0, {hi - 1}]")
        if name == "urban":
            u = arr
        else:
            r = arr
    u = u.astype(np.int64).reshape(-1, n_urban)
    return u, r.astype(np.int64).reshape(-1)
