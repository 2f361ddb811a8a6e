"""Policy evaluation on seeded fleets, all episodes simulated at once."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.inventory.fleet import resolve_fleet, set_budget
from bridgefleet.progress import BRIDGE_YEARS_PER_UNIT
from bridgefleet.progress import current as current_bar
from bridgefleet.sim.heuristics import HEURISTICS, Policy, distinct
from bridgefleet.sim.model import ACTION_NAMES, POOR_BELOW, band_shares
from bridgefleet.sim.simulator import FleetSimulator
from bridgefleet.stats import ci95


@dataclass
class EvalResult:
    """Evaluation of one policy over N seeded episodes.

    Attributes:
        mean_return: mean discounted return (γ = config.discount), reward units.
        ci95: half-width of the 95 % confidence interval of the mean (Student t σ/√N: :func:`bridgefleet.stats.ci95`).
        mean_annual_cost_usd: mean spend per year, USD.
        share_poor_end: mean share of bridges rated poor (< 5) at the end of the horizon, 0–1.
        deferred_per_year: mean number of requested actions deferred for lack of budget, per year.
        returns: float64 (N,) per-episode discounted returns.
        annual_cost_by_agency_usd: float64 (A,) mean spend per year of each agency (``agencies``' order), USD.
        share_poor_by_year: float64 (T,) mean share of bridges poor at the end of each year, 0–1.
        treatments_per_year: float64 (5,) mean number of bridges given each action (0 = none … 4) per year.
        deck_by_year: float64 (N, T, 3) share of deck area good / fair / poor at the end of each year, 0–1
            (FHWA's measures, 23 CFR 490.407).
        agency_usd, user_usd: float64 (N, T) agency spend and user cost (detours of poor bridges), USD a year.
        discount: γ, for present values. basis: which bridges the deck-area shares count (NHS bridges where
            the inventory codes them, NBI item 104).
        agencies: the agencies' names (``FleetConfig.agency_labels``: urban and rural, or an inventory's owners).
    """

    policy: str
    episodes: int
    mean_return: float
    ci95: float
    mean_annual_cost_usd: float
    share_poor_end: float
    deferred_per_year: float
    returns: np.ndarray
    annual_cost_by_agency_usd: np.ndarray
    share_poor_by_year: np.ndarray
    treatments_per_year: np.ndarray
    deck_by_year: np.ndarray
    agency_usd: np.ndarray
    user_usd: np.ndarray
    discount: float
    basis: str = "all bridges"
    agencies: tuple[str, ...] = ("urban", "rural")

    def row(self) -> dict:
        d = asdict(self)
        for k in ("returns", "annual_cost_by_agency_usd", "share_poor_by_year", "treatments_per_year",
                  "deck_by_year", "agency_usd", "user_usd"):
            d.pop(k)
        return d

    def present_value(self, usd: np.ndarray) -> np.ndarray:
        """(N,) discounted sum over the years of ``usd`` (N, T), USD of today (year 1 undiscounted)."""
        return (usd * self.discount ** np.arange(usd.shape[1])).sum(1)

    def breached(self, rule: float = 0.10) -> np.ndarray:
        """bool (N, T): the fleet-years whose share of deck area poor exceeds ``rule``."""
        return self.deck_by_year[..., 2] > rule

    def breaches(self, rule: float = 0.10) -> dict[str, float]:
        """How the policy fares against "at most ``rule`` of deck area poor" (23 CFR 490.411): share of
        fleet-years in breach, probability of a breach in any year and in 3 consecutive years (23 U.S.C.
        119(f)(2)), the worst year (1-based) of the mean poor share and that share."""
        b = self.breached(rule)
        run = np.zeros(b.shape[0], dtype=np.int64)
        three = np.zeros(b.shape[0], dtype=bool)
        for t in range(b.shape[1]):
            run = np.where(b[:, t], run + 1, 0)
            three |= run >= 3
        mean_poor = self.deck_by_year[..., 2].mean(0)
        worst = int(mean_poor.argmax())
        return {"fleet_years": float(b.mean()), "any_year": float(b.any(1).mean()),
                "three_consecutive": float(three.mean()), "worst_year": worst + 1,
                "worst_year_poor": float(mean_poor[worst])}


def evaluate_policy(policy: Policy, config: FleetConfig, episodes: int = 100, seed: int = 0,
                    name: str = "policy", sim: FleetSimulator | None = None) -> EvalResult:
    """Run ``policy`` on ``episodes`` fleets seeded ``seed, seed+1, …`` in one batched simulator.

    Args:
        policy: callable (simulator, rng) → (urban actions int (E, n_urban), rural strategy int (E,)), or
            a per-bridge policy's requests int (E, B).
        config: the fleet configuration (an inventory in it is loaded).
        sim: an existing simulator with ``num_envs == episodes`` to reuse (optional).
    """
    if episodes < 1:
        raise ValueError(f"--episodes {episodes}: must be at least 1")
    if sim is None:
        config, fleet = resolve_fleet(config)
        sim = FleetSimulator(config, episodes, fleet)
    sim.reset(None, [seed + i for i in range(episodes)])
    rng = np.random.default_rng(seed)
    gamma = sim.config.discount
    ret = np.zeros(episodes)
    deferred = np.zeros(episodes)
    by_agency = np.zeros(sim.n_agencies)
    treatments = np.zeros(5)
    poor_by_year = []
    horizon = sim.config.horizon_years
    deck = np.zeros((episodes, horizon, 3))
    agency = np.zeros((episodes, horizon))
    user = np.zeros((episodes, horizon))
    counted = sim.fhwa_weight()  # the deck area FHWA counts: fixed for the episodes
    for t in range(horizon):
        decision = policy(sim, rng)
        if isinstance(decision, np.ndarray):  # a per-bridge policy: requests (E, B)
            res = sim.step_requests(decision)
        else:
            urban, rural = decision
            res = sim.step(np.broadcast_to(urban, (episodes, sim.n_urban)), np.broadcast_to(rural, (episodes,)))
        ret += gamma**t * res.reward
        by_agency += res.cost.mean(0)
        treatments += np.bincount(res.actions.ravel(), minlength=5)[:5] / episodes
        deferred += res.deferred.sum(1)
        poor_by_year.append(float((sim.state.condition < POOR_BELOW).mean()))
        deck[:, t] = band_shares(sim.state.condition, counted)
        agency[:, t] = res.cost.sum(1)
        user[:, t] = (sim.user_cost * (sim.state.condition < POOR_BELOW)).sum(1)
    poor = (sim.state.condition < POOR_BELOW).mean(1)
    return EvalResult(name, episodes, float(ret.mean()), ci95(ret),
                      float(by_agency.sum() / horizon), float(poor.mean()), float(deferred.mean() / horizon), ret,
                      by_agency / horizon, np.array(poor_by_year), treatments / horizon, deck, agency, user,
                      float(gamma), sim.fhwa_basis, sim.config.agency_labels)


def evaluate_heuristics(config: FleetConfig, names: list[str] | None = None, episodes: int = 100,
                        seed: int = 0) -> list[EvalResult]:
    """Evaluate several heuristics (all by default) on the same seeds.

    Raises:
        ValueError: ``episodes`` < 1.
    """
    return evaluate_with_bound(config, names, episodes, seed, planner=False)[0]


def best_heuristic(results: list[EvalResult]) -> EvalResult:
    """The result with the highest mean return, random excluded."""
    return max((r for r in results if r.policy != "random"), key=lambda r: r.mean_return)


def bound_gap(result: EvalResult, bound: float, n_bridges: int, cost_lambda: float) -> tuple[float, float]:
    """How far a policy is below the bound, per bridge: (bound − mean return) / bridges in return units, and the
    same in USD of cost-equivalent per bridge and year (÷ λ, reward units per USD, and ÷ Σ_{t<T} γ^t, the
    annuity factor of the horizon). Unlike a percentage of the return, neither depends on where the return's
    zero lies."""
    per_bridge = (bound - result.mean_return) / n_bridges
    annuity = float(np.sum(result.discount ** np.arange(result.deck_by_year.shape[1])))
    return per_bridge, per_bridge / cost_lambda / annuity


def format_table(results: list[EvalResult], bound: tuple[float, ...] | None = None, n_bridges: int | None = None,
                 cost_lambda: float | None = None) -> str:
    """Markdown table of results, best first.

    With ``bound`` (mean, 95 % CI half-width of the budget-relaxed upper bound on the same fleets) the bound
    is the last row, a column gives the share of the distance from do-nothing to the bound that each
    policy covers (do_nothing must be among the results) and, with ``n_bridges`` and ``cost_lambda``, two more
    the distance to the bound per bridge, in return units and in USD a year (:func:`bound_gap`).
    """
    base = next((r.mean_return for r in results if r.policy == "do_nothing"), None)
    covered = bound is not None and base is not None and bound[0] > base
    gaps = bound is not None and n_bridges is not None and cost_lambda is not None
    head = ("| policy | mean discounted return | 95 % CI | mean annual cost (USD) | share of bridges poor at end "
            "| deferred / year |" + (" do-nothing → bound covered |" if covered else "")
            + (" below the bound, per bridge | USD per bridge a year |" if gaps else "")
            + "\n|---|---:|---:|---:|---:|---:|" + ("---:|" if covered else "") + ("---:|---:|" if gaps else ""))
    rows = []
    for r in sorted(results, key=lambda r: -r.mean_return):
        row = (f"| {r.policy} | {r.mean_return:.2f} | ± {r.ci95:.2f} | {r.mean_annual_cost_usd:,.0f} | "
               f"{r.share_poor_end:.1%} | {r.deferred_per_year:.2f} |")
        if covered:
            row += f" {(r.mean_return - base) / (bound[0] - base):.1%} |"
        if gaps:
            units, usd = bound_gap(r, bound[0], n_bridges, cost_lambda)
            row += f" {units:.3f} | {usd:,.0f} |"
        rows.append(row)
    if bound is not None:
        rows.append(f"| upper bound (budget relaxed) | {bound[0]:.2f} | ± {bound[1]:.2f} | – | – | – |"
                    + (" 100% |" if covered else "") + (" 0 | 0 |" if gaps else ""))
    return "\n".join([head, *rows])


def format_fhwa_table(results: list[EvalResult], rule: float = 0.10, cost_lambda: float | None = None) -> str:
    """Markdown table of FHWA's measures and money, best return first: deck area good / poor at years 10 and
    the last, breaches of the rule (any year, 3 consecutive), agency and user cost (present value, USD), and —
    with ``cost_lambda`` (reward units per USD) — each policy's return difference to the best one in
    cost-equivalent USD (one reward unit is worth 1 / λ USD)."""
    best = max(r.mean_return for r in results)
    t_n = results[0].deck_by_year.shape[1]
    y = min(10, t_n)
    head = (f"| policy | deck good / poor y{y} | deck good / poor y{t_n} | P(breach any year) | P(3 years running) "
            "| worst year poor | agency USD (PV) | user USD (PV) |"
            + (" below the best, USD (PV) |" if cost_lambda else "")
            + "\n|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if cost_lambda else ""))
    rows = []
    for r in sorted(results, key=lambda r: -r.mean_return):
        d = r.deck_by_year.mean(0)
        b = r.breaches(rule)
        row = (f"| {r.policy} | {d[y - 1, 0]:.1%} / {d[y - 1, 2]:.1%} | {d[-1, 0]:.1%} / {d[-1, 2]:.1%} | "
               f"{b['any_year']:.0%} | {b['three_consecutive']:.0%} | "
               f"{b['worst_year_poor']:.1%} (y{b['worst_year']}) | "
               f"{r.present_value(r.agency_usd).mean():,.0f} | {r.present_value(r.user_usd).mean():,.0f} |")
        if cost_lambda:
            row += f" {(best - r.mean_return) / cost_lambda:,.0f} |"
        rows.append(row)
    note = (f"\ndeck area: {results[0].basis}; rule: ≤ {rule:.0%} of deck area poor (23 CFR 490.411); PV "
            f"discounted at γ = {results[0].discount}, USD of today"
            + (f"; one reward unit = {1 / cost_lambda:,.0f} USD of cost-equivalent (1/λ)" if cost_lambda else ""))
    return "\n".join([head, *rows]) + note


def to_json(results: list[EvalResult], bound: tuple[float, ...] | None = None,
            rule: float = 0.10, n_bridges: int | None = None, cost_lambda: float | None = None) -> dict:
    """``{"policies": {NAME: {mean, ci95, annual_cost_usd, annual_cost_by_agency_usd {agency name: USD},
    share_poor_end, deferred_per_year, share_poor_at_year {"10", "20", "30"} (years within the horizon),
    treatments_per_year {action name: bridges per year}, deck_area_share_by_year {good, fair, poor: (T,)},
    agency_cost_usd and user_cost_usd {per_year (T,), present_value, undiscounted}, poor_deck_area_rule {rule,
    fleet_years, any_year, three_consecutive, worst_year, worst_year_poor}, below_bound {per_bridge,
    usd_per_bridge_year} (with the bound, ``n_bridges`` and ``cost_lambda``; :func:`bound_gap`)}}, "bound": {mean,
    ci95}}`` (bound None when not computed)."""
    policies = {r.policy: {"mean": r.mean_return, "ci95": r.ci95, "annual_cost_usd": r.mean_annual_cost_usd,
                           "annual_cost_by_agency_usd": dict(zip(r.agencies, r.annual_cost_by_agency_usd.tolist(),
                                                                 strict=True)),
                           "share_poor_end": r.share_poor_end, "deferred_per_year": r.deferred_per_year,
                           "share_poor_at_year": {str(y): float(r.share_poor_by_year[y - 1])
                                                  for y in (10, 20, 30) if y <= len(r.share_poor_by_year)},
                           "treatments_per_year": dict(zip(ACTION_NAMES, r.treatments_per_year.tolist(),
                                                           strict=True)),
                           "deck_area_share_by_year": {k: r.deck_by_year[..., i].mean(0).tolist()
                                                       for i, k in enumerate(("good", "fair", "poor"))},
                           "agency_cost_usd": {"per_year": r.agency_usd.mean(0).tolist(),
                                               "present_value": float(r.present_value(r.agency_usd).mean()),
                                               "undiscounted": float(r.agency_usd.sum(1).mean())},
                           "user_cost_usd": {"per_year": r.user_usd.mean(0).tolist(),
                                             "present_value": float(r.present_value(r.user_usd).mean()),
                                             "undiscounted": float(r.user_usd.sum(1).mean())},
                           "poor_deck_area_rule": {"rule": rule, **r.breaches(rule)}}
                for r in results}
    if bound is not None and n_bridges is not None and cost_lambda is not None:
        for r in results:
            units, usd = bound_gap(r, bound[0], n_bridges, cost_lambda)
            policies[r.policy]["below_bound"] = {"per_bridge": units, "usd_per_bridge_year": usd}
    return {"policies": policies, "bound": None if bound is None else {"mean": bound[0], "ci95": bound[1]}}


class BoundEstimate(NamedTuple):
    """The budget-relaxed upper bound on the fleets of an evaluation (:func:`evaluate_with_bound`): ``mean`` and
    ``ci95`` (half-width of its 95 % CI over the fleets, t σ/√E; 0 on a fixed fleet), return units, and ``values``
    float64 (N,), the bound of each episode's fleet (a fixed fleet's one bound on every episode), so that a policy's
    distance to it can be paired episode by episode. Reads as the tuple (mean, ci95) where only those are used."""

    mean: float
    ci95: float
    values: np.ndarray


def evaluate_with_bound(config: FleetConfig, names: list[str] | None = None, episodes: int = 100, seed: int = 0,
                        extra: dict[str, Policy] | None = None, planner: bool = True, step: float | None = None,
                        max_iter: int = 80, progress: bool = False, max_poor_deck_area: float | None = None,
                        budget_scale: float | None = None, bound_step: float | None = None,
                        watch: Callable[[Policy], Policy] | None = None,
                        ) -> tuple[list[EvalResult], BoundEstimate | None]:
    """Heuristics (all by default), ``extra`` policies by name and, with ``planner``, the ``lagrangian``
    planner and the budget-relaxed upper bound, all on the same seeded fleets. ``max_poor_deck_area``: the
    planner and the bound also price the rule "at most this share of deck area poor in any year" (the bound is
    then over policies that meet it in expectation). ``budget_scale``: every policy at this multiple of the
    fleet's sized annual budget (:func:`bridgefleet.inventory.fleet.set_budget`). ``bound_step``: the bound on
    a rating grid of this step (rating points) instead of the planner's, which still plans on its own: the grid
    bound's error has no sign and shrinks with the step (on dc-2019 at the sized budget 13.303 per bridge at 0.05,
    13.388 at 0.02, 13.423 at 0.01; docs/decisions.md, "The bound on a finer grid"), and where the planner is
    within it of the bound a distance to the bound means little. ``watch``: wraps the planner before it is evaluated
    (the report keeps its year-1 reasons, :class:`bridgefleet.evaluation.explain.FirstYear`); it must decide as
    the planner does. ``progress``: the price searches' solves shown, and the policies counted on the command's
    bar where one is open (:mod:`bridgefleet.progress`: each policy's fleet-bridge-years at its cost, the planner's
    price searches their own parts).

    Returns:
        (results, the bound (:class:`BoundEstimate`) or None without the planner).

    Raises:
        ValueError: ``episodes`` < 1, a negative or non-finite ``budget_scale``, or a ``bound_step`` off (0, 1].
    """
    from bridgefleet.planning.exact_planner import ExactPlanner
    from bridgefleet.planning.planner import LagrangianPlanner
    from bridgefleet.planning.transitions import grid_points

    if episodes < 1:
        raise ValueError(f"--episodes {episodes}: must be at least 1")
    exact = config.component_model is not None
    given = [name for name, value in (("--grid-step", step), ("--bound-step", bound_step)) if value is not None]
    if exact and planner and given:
        raise ValueError(f"{', '.join(given)}: the component model's bound is exact on its finite states (no grid); "
                         "leave them out")
    if bound_step is not None:
        grid_points(bound_step, "bound step")
    config, fleet = resolve_fleet(config)
    config = set_budget(config, scale=budget_scale)
    sim = FleetSimulator(config, episodes, fleet)
    names, same = distinct(list(HEURISTICS) if names is None else names, config.n_urban, config.n_rural)
    if same:  # an inventory with no rural (or no urban) bridge: rules that are another rule there, shown once
        cluster = "rural" if config.n_rural == 0 else "urban"
        warnings.warn(f"with no {cluster} bridge these rules are another rule and are shown once: "
                      + ", ".join(f"{gone} = {kept}" for gone, kept in same.items()), stacklevel=2)
    policies = [(n, HEURISTICS[n], RULE_COST) for n in names] + [(n, p, NETWORK_COST) for n, p in (extra or {}).items()]
    work = current_bar() if progress else None  # the command's bar (bridgefleet.progress), in its units
    years = episodes * sim.n_bridges * config.horizon_years / BRIDGE_YEARS_PER_UNIT
    if work is not None:  # the planner's price searches add their own parts when they start
        work.total += years * (sum(cost for *_, cost in policies) + (PLANNER_YEAR_COST if planner else 0.0))
    results = []
    for n, p, cost in policies:
        if work is not None:
            work.stage(f"policies on {episodes} fleets: {n}")
        results.append(evaluate_policy(p, config, episodes, seed, n, sim))
        if work is not None:
            work.advance(years * cost)
    if not planner:
        return results, None
    if work is not None:
        work.stage(f"the planner on {episodes} fleets")

    def counted(policy: Policy, fleets: int) -> Policy:  # the planner's years on the bar as they are simulated
        if work is None:
            return policy
        per_year = fleets * sim.n_bridges * PLANNER_YEAR_COST / BRIDGE_YEARS_PER_UNIT

        def decide(fleet_sim: FleetSimulator, rng: np.random.Generator):
            decision = policy(fleet_sim, rng)
            work.advance(per_year)
            return decision

        return decide
    # Fleets of a fleet model (each episode its own fleet, each bridge its own deterioration case) in groups of
    # at most PLANNER_BRIDGES bridges: the planner's DP weights grow with the distinct cases (about 1 GB per
    # 2,000 bridges at step 0.05). Each fleet's prices and plan are its own, so the groups give the same figures.
    if exact:  # one planner: it prices the fleets in groups itself
        lagr = ExactPlanner(max_iter=max_iter, progress=progress, max_poor_deck_area=max_poor_deck_area)
        results.append(evaluate_policy(counted(watch(lagr) if watch else lagr, episodes), config, episodes, seed,
                                       "lagrangian", sim))
        values = lagr.bound.values if sim.fixed is None else np.full(episodes, lagr.bound.values[0])
        return results, BoundEstimate(float(values.mean()), ci95(values), values)
    per = episodes if sim.fixed is not None else max(1, PLANNER_BRIDGES // sim.n_bridges)
    parts, bounds = [], []
    for lo in range(0, episodes, per):
        n = min(per, episodes - lo)
        lagr = LagrangianPlanner(step=step, max_iter=max_iter, progress=progress,
                                 max_poor_deck_area=max_poor_deck_area)
        part_sim = sim if n == episodes else FleetSimulator(config, n, fleet)
        parts.append(evaluate_policy(counted(watch(lagr) if watch else lagr, n), config, n, seed + lo, "lagrangian",
                                     part_sim))
        bound = lagr.bound
        del lagr  # its tables go before the next group's are made
        if bound_step is not None:  # the same fleets at year 0, on the finer grid
            part_sim.reset(None, [seed + lo + i for i in range(n)])
            bound = LagrangianPlanner(step=bound_step, max_iter=max_iter, progress=progress,
                                      max_poor_deck_area=max_poor_deck_area).bound_only(part_sim)
        bounds.append(bound.values)
    values = np.concatenate(bounds)
    if sim.fixed is not None:  # one fleet, one bound
        values = np.full(episodes, values[0])
    results.append(merge_results(parts))
    return results, BoundEstimate(float(values.mean()), ci95(values), values)


RULE_COST = 0.02
"""A fleet-bridge-year simulated under a rule of thumb, on the command's progress bar: in bridge-years of the
planner's DP (:data:`bridgefleet.progress.BRIDGE_YEARS_PER_UNIT`; 0.1 s for 10 fleets × 100 bridges × 30 years
against the DP's 0.18 ms a bridge-year, components-2026, 2-core EPYC, 2026-12-07)."""
NETWORK_COST = 0.4
"""A fleet-bridge-year under a trained network (2 s for the 30,000 above)."""
PLANNER_YEAR_COST = 5.5
"""A fleet-bridge-year under the planner once its prices are found (its benefits and knapsack: 30 s for the
30,000 above)."""

PLANNER_BRIDGES = 2000
"""The most bridges of a fleet model's fleets whose planner ``evaluate_with_bound`` prepares at once."""


def merge_results(parts: list[EvalResult]) -> EvalResult:
    """One :class:`EvalResult` of the episodes of ``parts`` (one policy on consecutive groups of seeds), as one
    evaluation of them all would give."""
    if len(parts) == 1:
        return parts[0]
    n = np.array([p.episodes for p in parts], dtype=np.float64)
    w = n / n.sum()

    def mean(field: str) -> np.ndarray:
        return sum(wi * np.asarray(getattr(p, field), dtype=np.float64) for wi, p in zip(w, parts, strict=True))

    ret = np.concatenate([p.returns for p in parts])
    first = parts[0]
    return EvalResult(first.policy, len(ret), float(ret.mean()), ci95(ret), float(mean("mean_annual_cost_usd")),
                      float(mean("share_poor_end")), float(mean("deferred_per_year")), ret,
                      mean("annual_cost_by_agency_usd"), mean("share_poor_by_year"), mean("treatments_per_year"),
                      np.concatenate([p.deck_by_year for p in parts]), np.concatenate([p.agency_usd for p in parts]),
                      np.concatenate([p.user_usd for p in parts]), first.discount, first.basis, first.agencies)
