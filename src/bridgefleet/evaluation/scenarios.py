"""What each budget buys, on FHWA's measures: the planner at several budget levels, the 10 % poor rule, and
the least budget that can meet it.

For each budget level (a multiple of the fleet's sized budget, or USD a year) the ``lagrangian`` planner
(:mod:`bridgefleet.planning.planner`, the rule priced when one is given) is simulated on the evaluation
fleets: the share of deck area good and poor by year with 95 % CIs (FHWA's national measures, 23 CFR
490.407), agency and user cost in USD (discounted and undiscounted), how often the rule is breached (any year,
three consecutive years: 23 U.S.C. 119(f)(2)), and the upper bound. Then the **certified least budget**
(:mod:`bridgefleet.planning.least_budget`: below it no policy meets the rule in expectation) and the least
budget at which the planner meets it in simulation (probes up from the certificate, then bisection). A fleet
model's synthetic fleet is held fixed (fleet seed = the first evaluation seed), as an inventory is, so every
expectation is over deterioration on one fleet, the quantity the certificate is about.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.config.fleet import check_years
from bridgefleet.config.seeds import TEST_SEED
from bridgefleet.evaluation.aims import first_within
from bridgefleet.evaluation.evaluate import EvalResult, evaluate_policy
from bridgefleet.inventory.fleet import MAX_BUDGET_USD, one_fleet, set_budget
from bridgefleet.planning.bound import fleet_certifier, fleet_mdps
from bridgefleet.planning.columns import ColumnPool
from bridgefleet.planning.exact_planner import ExactPlanner, SearchColumns
from bridgefleet.planning.least_budget import least_budget
from bridgefleet.planning.planner import (
    PLANNER_STEP,
    RULE_STEP_MAX_BRIDGES,
    SEARCH_STEP,
    LagrangianPlanner,
    planner_step,
)
from bridgefleet.planning.transitions import check_certify_step
from bridgefleet.progress import open_bar
from bridgefleet.sim.model import treatment_lumps
from bridgefleet.sim.simulator import FleetSimulator

DEFAULT_SCALES = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)
"""Budget levels, multiples of the sized budget (1/75 of the replacement value a year, docs/fleet-model.md)."""
CERTIFY_STEP = 0.005
"""Rating grid of the certified least budget (``--certify-step``): it holds for the simulator's model at any
step, and rises toward the continuous relaxation's least budget as the step falls (O(h²)). Measured at the same
prices (a `/tmp` script, 2026-12-03): dc-2019 0.2314 / 0.2397 / 0.2434 at steps 0.02 / 0.01 / 0.005, Indiana
0.1279 / 0.1339 / 0.1364, the default fleet 0.1970 / 0.2036 at 0.02 / 0.01; Indiana's least budget took 19 / 30
/ 73 s (one certified DP a class of alike bridges, :mod:`bridgefleet.planning.alike`), the default fleet's
(whose bridges are all different) 8 / 18 s. 0.005 since 2026-12-05 (was 0.01): on dc-2019 at the prices of 60
solves 0.2445 → 0.2480 (the relaxation on the planner's grid: 0.2500–0.2530) for about 18 s more, the default
fleet 0.2036 → 0.2065 for 35 s more (docs/decisions.md)."""
PLANNER_GRID_ITERS = 60
"""DP solves of the least budget on the planner's grid (the mixture's candidates, started from the search grid's
prices; it stops sooner where its two ends meet) on a fleet of at most
:data:`bridgefleet.planning.planner.RULE_STEP_MAX_BRIDGES`. Its best prices give the certificate, and more solves
give better ones: on dc-2019 (2026-12-05, docs/decisions.md) 25 solves end at [0.2465, 0.2573] × the sized
budget and certify 0.2404 ×, 60 at [0.2500, 0.2530] and 0.2445 × (13 s more); the default fleet's meet within 25."""
PLANNER_GRID_ITERS_LARGE = 40
"""The same on a larger fleet (Indiana's 4,794 bridges, within its 15 minutes). On Indiana (2026-12-05,
docs/decisions.md) 25 solves end at [0.1376, 0.1421] × the sized budget and certify 0.1373 ×, 40 at [0.1386,
0.1404] and 0.1381 × (about 15 s more), and the mixture at 0.1510 × then keeps 9.9 % in its worst year on 16
paths where it kept 10.1 % with the columns of 25."""
SEARCH_TOL = 1e-2
"""Each level's price search stops when its bound is within 1 % of its master LP's value (the planner's own
default is 0.2 %): measured on dc-2019 at 0.3125 × the sized budget, 34 DP solves instead of 47, a bound 0.15 %
higher (looser) and the planner's simulated poor deck area within 0.6 points."""
PROBE_ITERS = 12
"""DP solves of the price search at a probe for the planner's least budget (a level's: up to 80, until within
:data:`SEARCH_TOL`). A probe starts from the columns of every search before it, and near the certificate the
mixture it follows draws on the least budget's columns, not the search's. Measured on Indiana (traced runs, same
day): the probes met and missed the rule as with up to 80 solves (0.148 × 11.2 % both, 0.162 × 9.5 % both, 0.155 ×
9.6 and 9.8 %), and the first probe's search and knapsack took 64 s instead of 131 s."""
PROBE_ORDER = (1,)
"""What a probe of the planner's least budget tries of :data:`AIMS`: the mixture alone. Near the certificate it is
what meets the rule, and the knapsacks miss by far where it misses (traces of 2026-12-05, docs/decisions.md: the
knapsack at F and its tighter check in their worst year on dc-2019 18–33 % at 1.05–1.15 × a certificate of 0.2404 ×,
on the default fleet 27 / 44 % and 16 / 37 % at 1.10 and 1.15 × its certificate, on Indiana 52 / 61 % at 1.10 ×
where the mixture kept 10.1 %); on dc-2019 they took 14 of the run's 125 s."""
PROBE_TOL = 0.05
"""The search for the planner's least budget stops once the budgets at which it was seen to miss and to meet the
rule lie within this share of the certified least budget of each other (or after ``bisect`` probes)."""
GALLOP_FIRST = 0.10
"""The planner's least budget is first tried at (1 + this) × the certified least budget (the issue's target
ratio), then at twice the excess each time it misses."""
PROBE_SE = 0.05
"""The planner's least budget is judged on enough sample paths that each year's mean share of deck area poor
has a standard error of about this share of the rule (:func:`probe_episodes`)."""
PROBE_MAX_EPISODES = 256
AIMS = ((False, 1.0, 1.0), (True, 0.9, 0.95), (False, 0.4, 1.0))
"""What the planner tries in turn until its simulated mean poor deck area meets the rule F in every year: (each
path follows the relaxation's mixture, ``LagrangianPlanner(rounded=…)``; the share of F it aims at; the share of
the budget the mixture spends in expectation, ``LagrangianPlanner.budget_share``). The knapsack first (the better
return where the rule does not bind), planning each year to F (its year-by-year check, at the prices of the rule
F); at the relaxation's prices it is indifferent between policies the LP mixes, and the one it picks can miss the
rule. Then the mixture, with margins for what the simulation adds to the planner's grid and for the paths whose
spend runs above its expectation (on Indiana at 0.15 × the sized budget, aim F: the mixture keeps 10.0 % poor on
the planner's grid, the simulation reaches 11.7 % in year 26 with all of the budget and 10.7 % with 95 % of it in
the mixture), then the knapsack's tighter check. The mixture at F with the whole budget was tried before the
margins until the twelfth session: it met the rule in none of 15 traced probes (dc-2019, Indiana; 10.5–14.4 %).
Where none meets the rule the level shows the one with the least poor share in its worst year."""


@dataclass
class Level:
    """The planner at one budget on E deterioration samples of the fleet over Y years.

    Attributes:
        scale: budget as a multiple of the sized budget. budget_usd: total annual budget, USD.
        result: the planner's evaluation (:class:`bridgefleet.evaluation.evaluate.EvalResult`: deck-area shares,
            agency and user cost by sample and year, breaches, present values).
        bound: mean upper bound on the return over the fleets, reward units (with the rule: over policies
            meeting it in expectation). rule_met_by_bound: whether the relaxation meets the rule.
        aim: the share of deck area poor the planner planned each year to (the rule × one of :data:`AIMS`).
        rounded: whether it followed the relaxation's mixture (``LagrangianPlanner(rounded=True)``) or the knapsack.
        budget_share: the share of the budget the mixture it followed spends in expectation.
        margin: what the next USD 1 million a year buys here, from the planner's prices (the component model:
            :class:`bridgefleet.evaluation.next_million.NextMillion`; None elsewhere, or where the relaxation
            misses the rule).
        tightened: the planner was run again aimed as tight as a lower budget needed (:func:`bridgefleet.
            evaluation.budget_terms.rule_first`), and this is that run.
    """

    scale: float
    budget_usd: float
    result: EvalResult
    bound: float
    rule_met_by_bound: bool
    aim: float = 0.0
    rounded: bool = False
    budget_share: float = 1.0
    margin: Any = None
    tightened: bool = False

    @property
    def deck(self) -> np.ndarray:
        """float64 (E, Y, 3), share of deck area good / fair / poor at the end of each year, 0–1."""
        return self.result.deck_by_year

    @property
    def episodes(self) -> int:
        """The sample paths this level was simulated on (a probe's can be more than the levels')."""
        return self.deck.shape[0]

    @property
    def agency_usd(self) -> np.ndarray:
        """float64 (E, Y), agency spend, USD a year."""
        return self.result.agency_usd


def probe_episodes(deck: np.ndarray, rule: float, episodes: int) -> int:
    """Sample paths for the probes of the planner's least budget: at least ``episodes``, and enough that the
    mean share of deck area poor in a year, F(1 − F) / (n_eff × E) in variance for independent bridges each poor
    with probability F, has a standard error ≤ :data:`PROBE_SE` × F (at most :data:`PROBE_MAX_EPISODES`).
    n_eff = (Σ d)² / Σ d² is Kish's effective number of bridges of the deck areas d the rule counts (Kish,
    *Survey Sampling*, 1965): 43 on dc-2019, whose 144 NHS bridges' deck areas are uneven (84 paths), 83 on the
    default fleet (44), 711 on Indiana (16). With 16 paths dc-2019's verdict was noise: following one mixture at
    0.266 × the sized budget the worst year's mean was 12.0 % on 16 paths and 11.7 % on 64 (year 9: 12.0 and
    9.8 %), and the planner's least budget fell from 0.339 × to 0.278 × on 64 paths.

    Args:
        deck: float64 (B,), m² of deck area the rule counts per bridge (0 for a bridge it does not count).
        rule: F, 0–1. episodes: the levels' sample paths, ≥ 1.
    """
    total, squares = float(deck.sum()), float((deck**2).sum())
    if rule <= 0.0 or squares <= 0.0:
        return episodes
    n_eff = total**2 / squares
    need = math.ceil(rule * (1.0 - rule) / (n_eff * (PROBE_SE * rule) ** 2))
    return int(max(episodes, min(need, PROBE_MAX_EPISODES)))


def simulate_level(cfg: FleetConfig, fleet, scale: float, episodes: int, seed: int, rule: float,
                   scale_usd: float, pool: ColumnPool | None = None, candidates: ColumnPool | None = None,
                   order: tuple[int, ...] | None = None, max_iter: int = 80) -> Level:
    """The planner at ``scale`` × the sized budget (``cfg`` resolved, ``scale_usd`` its total USD a year),
    pricing the rule and trying each of :data:`AIMS` in turn (or those of ``order``, :func:`try_aims`) until it
    meets the rule in expectation (the best otherwise). ``pool``: the price searches' columns, shared by the
    levels of one fleet (they start from each other's); ``candidates``: the least budget's policies on the
    planner's grid (``LagrangianPlanner(candidates=…)``), found once for all levels; ``max_iter``: DP solves of the
    price search at most (fewer: a looser bound, still an upper bound)."""
    level_cfg = set_budget(cfg, scale=scale)
    planner = LagrangianPlanner(max_poor_deck_area=rule, pool=pool, tol=SEARCH_TOL,  # priced once per level
                                candidates=candidates, max_iter=max_iter)

    def attempt() -> Level:
        result = evaluate_policy(planner, level_cfg, episodes, seed, "lagrangian",
                                 FleetSimulator(level_cfg, episodes, fleet))
        return Level(scale, scale * scale_usd, result, planner.bound.mean, planner.bound.meets_rule, planner.aim,
                     planner.rounded, planner.budget_share)

    return try_aims(planner, rule, attempt, lambda lv: lv.deck[..., 2].mean(0), stop_at_zero=True, order=order)


def try_aims(planner: LagrangianPlanner, rule: float, attempt: Callable[[], Any],
             poor_by_year: Callable[[Any], np.ndarray], stop_at_zero: bool = False,
             order: tuple[int, ...] | None = None) -> Any:
    """Each of :data:`AIMS` in turn, or those of ``order`` (indices into it) in that order (``planner.rounded``,
    ``planner.aim`` = ``rule`` × the share, ``planner.budget_share``) until what ``attempt()`` simulates keeps the
    mean share of deck area poor (``poor_by_year`` of it, (Y,) 0–1) ≤ ``rule`` in every year, or the relaxation
    cannot meet the rule at this budget (then no tighter aim can): that one; else the one with the least poor share
    in its worst year.
    ``stop_at_zero``: a rule of 0 stops at the first (every aim is 0 then)."""
    settings = [{"aim": rule * aim, "rounded": rounded, "budget_share": share}
                for rounded, aim, share in (AIMS if order is None else [AIMS[k] for k in order])]
    return first_within(planner, rule, settings, attempt, poor_by_year, stop_at_zero)[0]


@dataclass
class Scenarios:
    """Every level, the least budgets and what they rest on."""

    levels: list[Level]
    rule: float
    certified: float  # holds for the simulator's model (certified values on a ``certify_step`` grid)
    relaxation: tuple[float, float]  # on the planner's grid the relaxed least budget lies between these
    certify_step: float
    planner_at_least: Level | None  # the planner's simulation at its least budget (breaches, worst year)
    planner_missed: float | None  # the largest scale below it at which the planner was seen to miss the rule
    probe_episodes: int  # sample paths the planner's least budget was judged on (:func:`probe_episodes`)
    sized_usd: float
    fleet: str
    episodes: int
    agent: list[EvalResult] | None = None  # a trained run's policy at each level (same fleets), or None
    n_bridges: int = 0
    cost_lambda: float = 1e-5
    planner_step: float = PLANNER_STEP  # nominal rating grid step of the planner's tables (:func:`planner_step`)
    lumps: dict[str, float] | None = None  # at the certificate (:func:`bridgefleet.sim.model.treatment_lumps`)
    exact: bool = False  # the component model's exact least budget (no grid: ``certify_step``, ``planner_step`` 0)
    agency_budgets: dict[str, float] | None = None  # each agency's sized budget, USD a year (its name: the owner's)
    penalty: Any = None  # the least budget for the chance of a penalty (budget_terms.PenaltyBudget; component model)
    million_check: Any = None  # the next million against two planner runs (budget_terms.MillionCheck), or None

    @property
    def planner_least(self) -> float | None:
        """The least budget scale at which the planner met the rule (None: at no level)."""
        return None if self.planner_at_least is None else self.planner_at_least.scale


def run_scenarios(fleet_cfg: FleetConfig, scales: list[float] | None = None, budgets_usd: list[float] | None = None,
                  rule: float = 0.10, years: int = 30, episodes: int = 16, seed: int = TEST_SEED,
                  bisect: int = 3, progress: bool = True, ray: str | None = None, certify_step: float | None = None,
                  agent: Any = None, max_penalty_chance: float = 0.05) -> Scenarios:
    """The planner at each budget level, and the least budgets for the rule (see the module).

    ``agent``: a trained run's greedy policy (:func:`bridgefleet.runs.load.load_policy`), evaluated at every
    level on the same fleets as the planner (one training run across budget levels: ``budget_scale_range``).

    ``ray``: run the levels as Ray tasks, one core each ("local": start Ray on this machine; else a cluster's
    host:port); the least budgets stay with this process. The same fleets and seeds as the local run; each
    task's price search starts from the least budget's columns only (the local run's also from the levels before
    it), so its bound can differ from the local run's within the searches' tolerance (:data:`SEARCH_TOL`).
    ``certify_step``: rating grid of the certified least budget (finer is tighter and slower; None:
    :data:`CERTIFY_STEP`); continuous models only (the component model's least budget is exact).

    ``max_penalty_chance``: on the component model, the chance of three consecutive years above the rule that the
    least budget for the penalty keeps below (:func:`bridgefleet.evaluation.budget_terms.penalty_least`).

    Raises:
        ValueError: both level lists given, a level < 0, ``rule`` outside [0, 1], ``years`` or ``episodes`` < 1,
            ``bisect`` < 0, ``certify_step`` outside (0, 1], a fleet whose sized budget is 0 (the levels are
            multiples of it), ``max_penalty_chance`` outside what :func:`bridgefleet.evaluation.budget_terms.
            penalty_paths` can show.
    """
    if not 0.0 < rule <= 1.0:
        raise ValueError(f"--rule {rule:g}: must be a share in (0, 1] (0.10 for FHWA's rule; 0 cannot be met in "
                         "expectation: sudden damage can leave any bridge poor)")
    check_years(years)
    if episodes < 1:
        raise ValueError(f"--episodes {episodes}: must be at least 1")
    if bisect < 0:
        raise ValueError(f"--bisect {bisect}: must be ≥ 0")
    exact = fleet_cfg.component_model is not None
    if exact and certify_step is not None:
        raise ValueError(f"--certify-step {certify_step:g}: the component model's least budget is exact on its finite "
                         "states (no grid to certify); leave it out")
    certify_step = CERTIFY_STEP if certify_step is None else certify_step
    if exact:
        from bridgefleet.evaluation.budget_terms import penalty_paths

        penalty_paths(max_penalty_chance)  # refused before any work
    if not 0.0 < certify_step <= 1.0:
        raise ValueError(f"--certify-step {certify_step:g}: must be in (0, 1] rating points")
    cfg, fleet = one_fleet(fleet_cfg.replace(horizon_years=years), seed)  # expectations over deterioration
    if not exact:
        check_certify_step(cfg, certify_step)
    sized = sum(cfg.budgets_usd)
    if not sized > 0:
        raise ValueError("the fleet's annual budget is USD 0: scenarios scale it (set annual_budget_usd, or "
                         "budget_share_of_replacement, above 0)")
    if budgets_usd is not None:
        if scales is not None:
            raise ValueError("give --budgets or --budgets-usd, not both")
        scales = [usd / sized for usd in budgets_usd]
    scales = sorted(set(DEFAULT_SCALES if scales is None else scales))  # a level given twice is one level
    if any(not (math.isfinite(s) and s >= 0) for s in scales):
        raise ValueError(f"budget levels {scales}: each must be a finite number ≥ 0")
    if not max(scales) * sized <= MAX_BUDGET_USD:
        level = (f"--budgets-usd {max(budgets_usd):g}" if budgets_usd is not None else
                 f"--budgets {max(scales):g} (× the sized budget, USD {sized:,.0f} a year)")
        raise ValueError(f"{level}: more than the USD {MAX_BUDGET_USD:,.0f} a year a budget may be")
    bar = open_bar(len(scales) + 1 + bisect, "scenarios", "search" if exact else "level", progress)  # its one bar
    if exact:
        return _exact_scenarios(cfg, fleet, scales, rule, episodes, seed, bisect, bar, ray, agent, sized,
                                max_penalty_chance)
    # The certificate first: the relaxation's least budget scale for the fleet. Its policies, cheap ones that
    # meet the rule, start every level's price search, and the levels then start from each other's.
    pool = ColumnPool()
    sim = FleetSimulator(cfg, 1, fleet)
    sim.reset(None, [seed])
    fine = fleet_certifier(cfg, sim.profile, sim.state, sim.weight, sim.annual_budget, step=certify_step)
    candidates = ColumnPool()  # the cheapest policies meeting the rule on the planner's grid, for its mixture
    coarse, _ = fleet_mdps(cfg, sim.profile, sim.state, sim.weight, sim.annual_budget, step=SEARCH_STEP)
    searched = least_budget(coarse, rule, cfg.budgets_usd, cfg.carry_over_budget, pool=pool)
    step = planner_step(rule, sim.n_bridges)
    planned, _ = fleet_mdps(cfg, sim.profile, sim.state, sim.weight, sim.annual_budget, step=step)
    lb = least_budget(planned, rule, cfg.budgets_usd, cfg.carry_over_budget, pool=candidates,
                      certify=fine,  # at the finer grid's prices (the higher certificate, measured)
                      start=searched.prices, max_iter=PLANNER_GRID_ITERS if sim.n_bridges <= RULE_STEP_MAX_BRIDGES
                      else PLANNER_GRID_ITERS_LARGE)
    if bar is not None:
        bar.update(1)
    if ray is not None:
        levels = _levels_on_ray(ray, cfg, fleet, scales, episodes, seed, rule, sized, pool, candidates)
        if bar is not None:
            bar.update(len(scales))
    else:
        levels = []
        for s in scales:
            levels.append(simulate_level(cfg, fleet, s, episodes, seed, rule, sized, pool, candidates))
            if bar is not None:
                bar.update(1)
    probes = probe_episodes(planned.deck, rule, episodes)

    def probe(scale: float) -> Level:
        return simulate_level(cfg, fleet, scale, probes, seed, rule, sized, pool, candidates, PROBE_ORDER, PROBE_ITERS)

    at_least, planner_missed = _planner_least(levels, rule, bisect, bar, float(lb.certified[0]), probe,
                                              levels_judge=episodes >= probes)
    if bar is not None:
        bar.close()
    name = cfg.fleet_in_words()  # the model's fleet of seed ``seed`` (set above) or the inventory
    return Scenarios(levels, rule, float(lb.certified[0]), (float(lb.lower[0]), float(lb.upper[0])), certify_step,
                     at_least, planner_missed, probes, sized, name, episodes,
                     _agent_levels(agent, cfg, fleet, levels, episodes, seed), sim.n_bridges, cfg.cost_lambda, step,
                     treatment_lumps(sim.profile, sim.unit_costs, [lb.certified[0] * b for b in cfg.budgets_usd]))


def _agent_levels(agent, cfg: FleetConfig, fleet, levels: list[Level], episodes: int, seed: int
                  ) -> list[EvalResult] | None:
    """A trained run's policy at each level, on the same fleets as the planner (None without one)."""
    if agent is None:
        return None
    cfgs = [set_budget(cfg, scale=lv.scale) for lv in levels]
    return [evaluate_policy(agent, c, episodes, seed, "agent", FleetSimulator(c, episodes, fleet)) for c in cfgs]


def _exact_scenarios(cfg: FleetConfig, fleet, scales: list[float], rule: float, episodes: int, seed: int,
                     bisect: int, bar, ray: str | None, agent, sized: float,
                     max_penalty_chance: float = 0.05) -> Scenarios:
    """:func:`run_scenarios` on the component model (:mod:`bridgefleet.evaluation.component_scenarios`): the exact
    least budget, the rule-priced planner at each level and its least budget; the rule first at every level, the
    least budget that keeps the chance of a penalty below ``max_penalty_chance`` and the next million's check
    (:func:`bridgefleet.evaluation.budget_terms.agency_terms`)."""
    from bridgefleet.evaluation import scenario_work as work
    from bridgefleet.evaluation.budget_terms import PENALTY_PROBES, agency_terms, penalty_paths
    from bridgefleet.evaluation.component_scenarios import AIMS as EXACT_AIMS
    from bridgefleet.evaluation.component_scenarios import PENALTY_AIMS, PROBE_AIMS, exact_least_budget
    from bridgefleet.evaluation.next_million import STEP_USD

    def level_work(scale: float, least: float | None) -> float:
        return work.level(scale, least, len(EXACT_AIMS), episodes)

    if bar is not None:  # the whole run in price searches (scenario_work), the levels before the least budget is known
        bar.total = (work.LEAST + sum(level_work(s, None) for s in scales)
                     + bisect * work.run(len(PROBE_AIMS), episodes)  # the planner's least budget's probes
                     + PENALTY_PROBES * work.penalty(penalty_paths(max_penalty_chance))
                     + work.run(1, episodes))  # the next million's check
    lb, deck = exact_least_budget(cfg, fleet, seed, rule)
    probes = probe_episodes(deck, rule, episodes)
    columns = SearchColumns()  # every price search on the fleet starts from the policies of those before
    if bar is not None:
        bar.update(work.LEAST)
        bar.total += (sum(level_work(s, lb.lower) - level_work(s, None) for s in scales)
                      + bisect * (work.run(len(PROBE_AIMS), probes) - work.run(len(PROBE_AIMS), episodes)))
    if ray is not None:
        from bridgefleet.cluster import one_core_tasks

        ray_mod, task = one_core_tasks(ray)
        fleet_ref = ray_mod.put(fleet)
        levels = ray_mod.get([task.remote(exact_level, cfg, fleet_ref, s, episodes, seed, rule, sized)
                              for s in scales])
        if bar is not None:
            bar.update(sum(level_work(s, lb.lower) for s in scales))
    else:
        levels = []
        for s in scales:
            levels.append(exact_level(cfg, fleet, s, episodes, seed, rule, sized, columns=columns))
            if bar is not None:
                bar.update(level_work(s, lb.lower))

    def probe(scale: float) -> Level:
        return exact_level(cfg, fleet, scale, probes, seed, rule, sized, PROBE_AIMS, columns=columns)

    at_least, missed = _planner_least(levels, rule, bisect, None if bar is None else
                                      work.Counted(bar, work.run(len(PROBE_AIMS), probes)), lb.lower, probe,
                                      levels_judge=episodes >= probes)

    def level_at(scale: float, aims: tuple[float, ...], paths: int, fresh: bool, quick: bool) -> Level:
        out = exact_level(cfg, fleet, scale, paths, seed + paths * fresh, rule, sized, aims, penalty=quick,
                          columns=columns)
        if bar is not None:  # the rule first's reruns and the next million's check, the penalty's probes
            bar.update(work.penalty(paths) if quick else work.level(scale, lb.lower, len(aims), paths))
        return out

    levels, penalty, check = agency_terms(levels, level_at, rule, max_penalty_chance, episodes, sized, cfg.cost_lambda,
                                          EXACT_AIMS, [at_least], MAX_BUDGET_USD / sized, STEP_USD, lb.lower,
                                          PENALTY_AIMS)
    if bar is not None:
        bar.total = bar.done  # what was not needed (probes the searches stopped before) comes off
        bar.close()
    sim = FleetSimulator(cfg, 1, fleet)
    sim.reset(None, [seed])
    return Scenarios(levels, rule, lb.lower, (lb.lower, lb.upper), 0.0, at_least, missed, probes, sized,
                     cfg.fleet_in_words(), episodes, _agent_levels(agent, cfg, fleet, levels, episodes, seed),
                     sim.n_bridges, cfg.cost_lambda, 0.0,
                     treatment_lumps(sim.profile, sim.unit_costs, [lb.lower * b for b in cfg.budgets_usd], sim.agency),
                     exact=True, agency_budgets=dict(zip(cfg.agency_labels, cfg.budgets_usd, strict=True)),
                     penalty=penalty, million_check=check)


def exact_level(cfg: FleetConfig, fleet, scale: float, episodes: int, seed: int, rule: float, sized_usd: float,
                aims: tuple[float, ...] | None = None, step_usd: float = 1e6, penalty: bool = False,
                columns: SearchColumns | None = None) -> Level:
    """The component model's planner at ``scale`` × the sized budget (``cfg`` resolved, ``sized_usd`` its USD a
    year) on ``episodes`` samples of the fixed ``fleet``, the rule priced and aimed at ``aims`` of it in turn
    (default :data:`bridgefleet.evaluation.component_scenarios.AIMS`; :func:`~bridgefleet.evaluation.
    component_scenarios.try_aims`); ``step_usd``: the next money a year whose worth ``Level.margin`` gives, USD;
    ``penalty``: the plan with the least chance of a penalty among ``aims`` is kept (:func:`~bridgefleet.
    evaluation.component_scenarios.try_for_penalty`); ``columns``: the policies the price searches before on the
    fleet found, each search starting from them and adding its own (:class:`~bridgefleet.planning.exact_planner.
    SearchColumns`; None: cold)."""
    from bridgefleet.evaluation.component_scenarios import AIMS as EXACT_AIMS
    from bridgefleet.evaluation.component_scenarios import PENALTY_AIMS, try_for_penalty
    from bridgefleet.evaluation.component_scenarios import try_aims as try_exact_aims
    from bridgefleet.evaluation.next_million import level_margin

    level_cfg = set_budget(cfg, scale=scale)
    planner = ExactPlanner(tol=1e-3, max_poor_deck_area=rule, columns=columns)

    def attempt() -> EvalResult:
        return evaluate_policy(planner, level_cfg, episodes, seed, "lagrangian",
                               FleetSimulator(level_cfg, episodes, fleet))

    if penalty:
        result, bound, met, first = try_for_penalty(planner, rule, attempt, lambda r: r.deck_by_year[..., 2],
                                                    PENALTY_AIMS if aims is None else aims)
    else:
        result, bound, met, first = try_exact_aims(planner, rule, attempt, lambda r: r.deck_by_year[..., 2].mean(0),
                                                   EXACT_AIMS if aims is None else aims)
    return Level(scale, scale * sized_usd, result, bound, met, aim=planner.aim,
                 margin=level_margin(planner.bound if planner.bound.meets_rule else first, level_cfg, fleet, seed,
                                     result.deck_by_year[..., 2], rule, step_usd))  # at the aim its paths kept


def _levels_on_ray(address: str, cfg, fleet, scales, episodes, seed, rule, sized, pool, candidates) -> list[Level]:
    from bridgefleet.cluster import one_core_tasks

    ray_mod, task = one_core_tasks(address)
    fleet_ref = ray_mod.put(fleet)  # the inventory's arrays once, not once per level
    pool_ref = ray_mod.put(pool)  # each task starts from the least budget's columns (its own copy)
    candidates_ref = ray_mod.put(candidates)
    return ray_mod.get([task.remote(simulate_level, cfg, fleet_ref, s, episodes, seed, rule, sized, pool_ref,
                                    candidates_ref) for s in scales])


def _meets(level: Level, rule: float) -> bool:
    """The planner meets the rule in expectation: mean poor deck area ≤ the rule in every year."""
    return bool((level.deck[..., 2].mean(0) <= rule + 1e-12).all())


def _planner_least(levels: list[Level], rule: float, bisect: int, bar, certified: float,
                   probe: Callable[[float], Level], levels_judge: bool = True) -> tuple[Level | None, float | None]:
    """Smallest scale at which the planner meets the rule in expectation, searched between the levels that
    bracket it, or the certified least budget where it is higher (no policy meets the rule below it; None when
    no level meets it), in at most ``bisect`` probes: an exponential search up from the certificate (probes at 1.1, 1.2,
    1.4, … × it, where the planner's least budget is expected) until a probe meets the rule or passes the
    lowest level that met it, then bisection (Bentley & Yao, "An almost optimal algorithm for unbounded
    searching", Information Processing Letters 5(3), 1976), until the budgets seen to miss and to meet lie within
    :data:`PROBE_TOL` of the certificate of each other. ``probe(scale)`` simulates the planner there (on the
    continuous model following the relaxation's mixture, :data:`PROBE_ORDER`, on :func:`probe_episodes` paths);
    ``levels_judge``: whether the levels were simulated on as many (else a level that missed bounds nothing
    from below: on fewer paths a miss can be noise, as the default fleet's at 0.25 × on 16 paths, 10.9 % in
    year 30, where 0.259 × kept 7.1 % on 44).

    Returns:
        (the planner's simulation at the least scale found to meet the rule, the largest scale below it found to
        miss it); None where there is none.
    """
    ok = [lv for lv in levels if _meets(lv, rule)]
    if not ok:
        return None, None
    judged = levels if levels_judge else []
    at_hi = min(ok, key=lambda lv: lv.scale)
    hi = at_hi.scale
    missed = max((lv.scale for lv in judged if lv.scale < hi), default=None)
    lo = max(0.0 if missed is None else missed, min(certified, hi))
    excess, gallop = GALLOP_FIRST, certified > 0
    for done in range(bisect):
        if hi - lo <= PROBE_TOL * certified * (1.0 + 1e-9):  # precise enough
            if bar is not None:  # the probes not needed leave the bar's work, not done (its rate stays true)
                bar.total -= bisect - done
            break
        mid = 0.5 * (lo + hi)
        if gallop:
            while certified * (1.0 + excess) <= lo:
                excess *= 2.0
            if certified * (1.0 + excess) < hi:
                mid = certified * (1.0 + excess)
        level = probe(mid)
        if _meets(level, rule):
            hi, at_hi = mid, level
            gallop = False  # bisection from here on
        else:
            lo = missed = mid  # every probe lies above lo
        if bar is not None:
            bar.update(1)
    return at_hi, missed
