"""The ``lagrangian`` planner: the bound's budget prices value the future, and each year's budget is split
exactly.

Each year, every bridge's benefit of each action is the single-bridge DP's Q(a) − Q(do nothing) under the
bound's prices of the later years (:mod:`bridgefleet.planning.dp`), interpolated at its actual rating; each
agency then chooses one action per bridge to maximise the summed benefit within what it can spend this year
(a multiple-choice knapsack, :mod:`bridgefleet.planning.knapsack`). This is the incremental
benefit–cost analysis of bridge management systems (AASHTOWare BrM, Pontis) with the benefit computed from
the model rather than guessed, and the one-step lookahead on the Lagrangian value function of Hawkins (2003)
and Adelman & Mersereau (2008). Ranking requests by benefit per USD instead loses to the knapsack when one
treatment takes most of a budget (measured on 20 default fleets: −493.4 by ratio with this year's price,
−465.0 by the knapsack, bound −461.3). A model-based planner, not a rule of thumb.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable

import numpy as np

from bridgefleet.planning.bound import BoundResult, fleet_certifier, fleet_mdps, lagrangian_bound
from bridgefleet.planning.certify import Certifier
from bridgefleet.planning.columns import ColumnPool, Columns
from bridgefleet.planning.dp import Layout, Solution, solve
from bridgefleet.planning.knapsack import allocate
from bridgefleet.planning.least_budget import least_budget
from bridgefleet.planning.reachable import benefits, state_layout, state_rows
from bridgefleet.planning.rounding import assign, mixture_weights
from bridgefleet.planning.rows import CouplingRows
from bridgefleet.planning.rule import allocate_within_rule, fund_poor_cuts, only_choice, poor_probability
from bridgefleet.planning.transitions import BridgeMDPs, grid_points
from bridgefleet.sim.model import RATING_GAIN
from bridgefleet.sim.simulator import FleetSimulator

DEFAULT_MEMORY_MB = 1024
"""Most memory the planner's value tables may take; beyond it they are recomputed in windows of years."""
PLANNER_STEP = 0.05
"""Rating grid step of the planner's value tables (what it acts on), rating points."""
RULE_STEP = 0.03
"""The same under a poor deck-area rule (``max_poor_deck_area``), on a fleet of at most
:data:`RULE_STEP_MAX_BRIDGES` (34 steps a rating point, h = 0.0294). The rule binds on each year's expected poor
deck area and spend, which the grid's chain spreads over more years than the simulator does (a drop of part of a
step moves some of the mass a whole step: ``benchmarks/grid_diffusion.py``), so a mixture planned to the edge of
the rule on the 0.05 grid ends above it in simulation. Measured on dc-2019 (2026-12-05, docs/decisions.md): the
planner's least budget with 6 probes 1.225 × the certificate at 0.05, 1.1375 × at 0.03 and at 0.02; with the 3
probes of ``scenarios`` 1.40 × at 0.05, 1.15 × at 0.03, 0.02 and 0.01, in 96, 115, 169 and 449 s."""
RULE_STEP_MAX_BRIDGES = 1000
"""The largest fleet whose planner acts on :data:`RULE_STEP` under a rule; a larger one keeps
:data:`PLANNER_STEP`. On Indiana's 4,794 bridges ``run_scenarios`` with the planner at 0.02 took 39 min
instead of about 14 (target 15), and its least budget stayed 1.15 × the certificate (missed at 1.10 ×: 11.5 % in
year 30, against 11.2–12.5 % on the 0.05 grid): there each path's money, not the grid, is what is left
(docs/decisions.md)."""
RELEASE_YEARS = 5
"""Following the mixture (``rounded``) with carry-over, the money a path holds as the mixture expects it to
(its margin, ``budget_share`` < 1) is released over the last this many years of the horizon: what a path may keep
at the start of a year with k years left is (k − 1) / this of it, so the last year keeps nothing (money left at the
horizon's end buys nothing). Measured on dc-2019 at 0.2728 × the sized budget (168 paths, the mixture at 0.9 F
with 95 % of the budget; 2026-12-05, docs/decisions.md): the worst of years 26–30 10.25 % (year 30) kept, 9.7 %
released in the last year only, 9.5 % over 5 years, 9.3 % over 10; every USD spent instead of 96 %. At 0.2698 ×:
10.2 %, 9.9 % and 9.8 % released over 1, 5 and 10 years."""
SEARCH_STEP = 0.2
"""Rating grid step of its price search, rating points (the bound under budget prices moved by < 0.1 % between
steps 0.2 and 0.025 on the default fleet)."""


def planner_step(max_poor_deck_area: float | None, n_bridges: int) -> float:
    """The planner's default rating grid step for a fleet of ``n_bridges``: :data:`RULE_STEP` under a poor
    deck-area rule on a fleet of at most :data:`RULE_STEP_MAX_BRIDGES`, else :data:`PLANNER_STEP`."""
    fine = max_poor_deck_area is not None and n_bridges <= RULE_STEP_MAX_BRIDGES
    return RULE_STEP if fine else PLANNER_STEP


TABLES = ("mdps", "_step_cost", "_step_count", "_step_poor", "_index", "_full", "_keep", "_kept", "_first")
"""What the planner's value tables are made of: the bridges' MDPs (one row per bridge, or, following the
mixture, one per bridge and policy it follows on some path), their step prices, each path's row of each bridge,
the layouts and checkpoints, and the first window's tables."""


class LagrangianPlanner:
    """A per-bridge policy for :func:`bridgefleet.evaluation.evaluate.evaluate_policy`: returns requests int64 (E, B).

    On a simulator at year 0 it computes the bound's prices for the fleets it sees (one fleet when the fleet
    is fixed, e.g. an inventory), then solves every bridge's DP under them and keeps the value tables of a
    window of years within ``memory_mb``, recomputed when the simulation leaves the window. A later window from
    year t holds only the rows the fleets' states there can reach (:class:`bridgefleet.planning.dp.Layout`: for
    one fleet s + 2 rows at year t + s instead of t + s + 2) and is solved back from the nearest kept value table
    V_c at or after its end, not from the horizon: the first solve keeps V_c at the years that cut the most
    re-solving within another ``memory_mb`` (checkpoints of the backward sweep, Griewank 1992; on Indiana's 4,794
    bridges at step 0.05 one simulation's later windows re-solve 0.08 horizons' worth of rows, 1.9 with every row
    and no checkpoints; docs/planning.md). The first window's tables are kept beside the current one, so a fleet
    simulated again (another aim) starts without a
    DP solve: at most three times ``memory_mb`` in all.

    Args:
        step: rating grid step of the value tables and the reported bound, rating points; None:
            :func:`planner_step` for the fleet it prepares (:data:`RULE_STEP` under a rule on a small fleet,
            else :data:`PLANNER_STEP`).
        search_step: rating grid step of the price search (coarser is faster; the bound under budget prices
            moved by < 0.1 % between steps 0.2 and 0.025 on the default fleet). max_iter: DP solves of the
            price search (each, for a fleet of more than 10,000 bridges: its sample's search and its own,
            ``lagrangian_bound(sample=…)``). tol: the search stops when the bound is within this share of the
            master LP's value.
        memory_mb: memory for value tables, MB.
        max_poor_deck_area: the most share of deck area poor in any year, 0–1 (0.10: FHWA's rule, 23 CFR
            490.411), priced by one more multiplier per year so the planner aims to meet it in expectation;
            None: no rule.
        certify_step: rating grid step of the certified bound (``BoundResult.certified``: an upper bound of the
            simulator's continuous model; tighter for finer steps, O(1/step²) time); None: not computed.
        pool: columns of earlier price searches on the same fleet (:class:`bridgefleet.planning.columns.ColumnPool`,
            e.g. the same planner at other budgets or rules): the search starts from them and adds its own.
        aim: the share of deck area poor each year's own plan keeps to where the budget can (the year-by-year
            check, :mod:`bridgefleet.planning.rule`; with ``rounded`` the rounding's rule rows), 0–1; default the
            rule. Below the rule, the planner prices
            the rule but plans each year with a margin; it can be changed between simulations (``aim``).
        solver: what solves the bridges' DPs (``lagrangian_bound(solver=…)``): this process, or chunks of bridges
            as Ray tasks (:class:`bridgefleet.planning.chunks.RaySolver`).
        rounded: follow the relaxation's mixture (:mod:`bridgefleet.planning.rounding`): LP weights on the
            policies found (the most return whose expected spend keeps ``budget_share`` of each budget row and whose
            expected poor deck area keeps the rule × ``aim`` / rule, on this grid), and on each sample path each unit
            of bridges follows one policy drawn with them, solved again on this grid at the prices it was found at;
            each year's knapsack then keeps the actual budget, funding each bridge's choice or nothing: where the
            money is short, the year-by-year check at ``aim`` decides which bridges wait (their priced benefits come
            from different prices, so they are not compared alone), and a path holding more money than the mixture
            expects it to spends the difference where it cuts this year's expected poor deck area most. False:
            every bridge's benefit at the relaxation's best prices, one knapsack a year (better where no rule binds;
            at those prices most bridges are indifferent between the policies the mixture needs, so where a rule
            binds the knapsack misses it).
        candidates: the least budget's policies on this grid (:func:`bridgefleet.planning.least_budget.least_budget`
            with ``pool``), which the mixture may use beside the price search's: the search grid's policies solved
            again here can leave more deck area poor than the LP counted. An empty pool is filled the first time the
            mixture is followed (one least-budget search on this grid), so planners at several budgets can share it.
        budget_share: the share of each budget row the mixture spends in expectation (below 1: a margin for the
            paths whose spend runs above it), 0–1; can be changed between simulations.
        like: a planner of the same fleets at another budget (``teacher: lagrangian``'s levels): where the fleets,
            their year-0 state, the config but for its budget and the grid are the ones it prepared, its MDPs are
            reused with only the allowed actions computed again (``fleet_mdps(like=…)``).

    The prices are computed again only for a simulator whose fleet, budget or year-0 state differ from the
    last one's (a fixed fleet simulated again, e.g. at another aim, reuses them).
    """

    def __init__(self, step: float | None = None, max_iter: int = 80, memory_mb: float = DEFAULT_MEMORY_MB,
                 progress: bool = False, search_step: float = SEARCH_STEP, max_poor_deck_area: float | None = None,
                 certify_step: float | None = None, pool: ColumnPool | None = None, aim: float | None = None,
                 tol: float = 2e-3, solver: Callable[..., Solution] = solve, rounded: bool = False,
                 candidates: ColumnPool | None = None, budget_share: float = 1.0,
                 like: LagrangianPlanner | None = None):
        if max_iter < 2:
            raise ValueError(f"max_iter = {max_iter}: the price search needs at least 2 DP solves")
        if memory_mb <= 0:
            raise ValueError(f"memory_mb = {memory_mb}: must be > 0")
        if step is not None:
            grid_points(step)  # checks the steps
        grid_points(search_step, "search step")
        if certify_step is not None:
            grid_points(certify_step, "certify step")
        self.certify_step = certify_step
        self.step = step
        self.search_step = search_step
        self.max_iter = max_iter
        self.tol = tol
        self.memory_mb = memory_mb
        self.progress = progress
        self.max_poor = max_poor_deck_area
        self.aim = max_poor_deck_area if aim is None else aim
        self.pool = pool
        self.solver = solver
        self.rounded = rounded
        self.candidates = ColumnPool() if candidates is None else candidates
        self.budget_share = budget_share
        self.like = like
        self._built: tuple | None = None  # (fleets' key without the budget, step, MDPs, search grid's MDPs)
        self.bound: BoundResult | None = None
        self._key: tuple | None = None
        self._start: str | None = None

    def _problem(self, sim: FleetSimulator) -> tuple[BridgeMDPs, CouplingRows, BridgeMDPs | None, Certifier | None]:
        """The relaxation of the fleets of ``sim`` as they are now: the MDPs on the planner's grid, the coupling
        rows, the search grid's MDPs (None where it is not coarser) and the certifier (None without
        ``certify_step``)."""
        one = sim.fixed is not None
        sl = slice(0, 1) if one else slice(None)
        args = (sim.config, sim.profile.select(sl), sim.state.select(sl), sim.weight[sl], sim.fleet_annual_budget[sl])
        step = planner_step(self.max_poor, sim.n_bridges) if self.step is None else self.step
        key = _start_key(sim, budget=False)
        built = self.like._built if self.like is not None else None
        same = built is not None and built[:2] == (key, step)
        mdps, rows = fleet_mdps(*args, step=step, max_poor=self.max_poor, like=built[2] if same else None)
        search = (fleet_mdps(*args, step=self.search_step, max_poor=self.max_poor,
                             like=built[3] if same else None)[0] if self.search_step > step else None)
        self._built = (key, step, mdps, search)
        certify = None if self.certify_step is None else fleet_certifier(*args, step=self.certify_step)
        return mdps, rows, search, certify

    def bound_only(self, sim: FleetSimulator) -> BoundResult:
        """The bound of the fleets of ``sim`` as they are now (year 0), as :meth:`prepare` computes it, without the
        planner's tables (the first years' and the checkpoints it keeps to act): about a sixth less time on the
        default fleet at a 0.01-point grid, and the memory of those tables. The planner is not prepared by it."""
        mdps, rows, search, certify = self._problem(sim)
        return lagrangian_bound(mdps, rows, search, max_iter=self.max_iter, progress=self.progress, certify=certify,
                                pool=self.pool, tol=self.tol, solver=self.solver)

    def prepare(self, sim: FleetSimulator) -> BoundResult:
        """Prices and bound for the fleets of ``sim`` as they are now (year 0)."""
        one = sim.fixed is not None
        self.mdps, rows, search, certify = self._problem(sim)
        self._rows = rows
        self._full = Layout.full(self.mdps.n, self.mdps.weights.shape[1])
        first_hi = self._window_end(0, self._full, ())
        self._keep = self._checkpoints(first_hi)
        store = (0, first_hi) if search is not None else None  # the bound's last solve gives them
        self.bound = lagrangian_bound(self.mdps, rows, search, max_iter=self.max_iter, progress=self.progress,
                                      certify=certify, pool=self.pool, store=store, tol=self.tol,
                                      solver=self.solver, keep=self._keep if search is not None else ())
        self._kept = self.bound.kept
        disc = self.mdps.gamma ** np.arange(self.mdps.horizon)
        self._step_cost = self.bound.price_cost[self.mdps.fleet, self.mdps.agency] / disc
        self._step_count = self.bound.price_count[self.mdps.fleet, self.mdps.agency] / disc
        self._step_poor = (None if self.bound.price_poor is None
                           else self.bound.price_poor[self.mdps.fleet] / disc * self.mdps.deck[:, None])
        b_n = sim.n_bridges
        self._index = (np.zeros((sim.num_envs, 1), dtype=np.int64) if one
                       else np.arange(sim.num_envs)[:, None] * b_n) + np.arange(b_n)
        self._cost = np.ascontiguousarray(self.mdps.cost[self._index])  # (E, B, 5) USD, fixed for the run
        self._feasible = self.mdps.feasible[self._index]  # (E, B, 5) the actions allowed, fixed for the run
        self._deck = self.mdps.deck[self._index]  # (E, B) m² the rule counts
        self._age0 = sim.state.age.copy()
        self._window = (0, 0) if store is None else store
        self._eu, self._layout = self.bound.tables, self._full
        self._first = (self._window, self._eu, self._layout)  # kept for the next simulation of the same fleet
        self._agency = self.mdps.agency[:b_n]
        self._budgets, self._carry_over = sim.config.budgets_usd, sim.config.carry_over_budget
        self._plain = {k: getattr(self, k) for k in TABLES}
        self._rounded_at = None
        self._valued: dict[int, dict[int, tuple]] = {}  # fleet → mixture column → its valuation on this grid
        return self.bound

    def _follow_rounding(self) -> None:
        """Value tables of the policies the paths follow (``rounded``): on each sample path, each unit follows one
        policy of the relaxation's mixture, drawn with its weight (:func:`bridgefleet.planning.rounding.assign`,
        seed 0), solved again on this grid at the prices it was found at; one row of the tables per bridge and
        policy it follows on some path. The mixture weighs each candidate policy by what it does on this grid
        (:meth:`_on_this_grid`)."""
        m = self._plain["mdps"]
        aim = self.aim if self.max_poor else None
        if self._rounded_at == (aim, self.budget_share):
            return
        if not 0.0 < self.budget_share <= 1.0:
            raise ValueError(f"budget_share = {self.budget_share}: must be in (0, 1]")
        rows = self._rows
        e_n = len(self.bound.mixture)
        b_n = m.n // e_n
        index = self._plain["_index"]
        paths = index.shape[0]
        rng = np.random.default_rng(0)
        shape = (e_n, self.bound.mixture[0][2].n, m.horizon, m.utility.shape[1])
        if self.max_poor is not None and self.candidates.shape != shape:  # the cheapest policies meeting the rule
            least_budget(m, self.max_poor, self._budgets, self._carry_over, pool=self.candidates)
        bridges, found = [], []
        follow = np.empty_like(index)
        self._spend_plan = np.zeros((paths, 2, m.horizon))  # each path's expected spend, (P, 2, T) USD
        n = 0
        for e, (cols, x, units) in enumerate(self.bound.mixture):
            poor_b = None  # the aim's allowance, not the rule's
            if rows.poor_b is not None:
                poor_b = rows.poor_b[e] * (aim / self.max_poor if self.max_poor else 1.0)
            own = self.candidates.valid(e, units.feasible(m.feasible[e * b_n : (e + 1) * b_n]), shape)
            exact = np.zeros(len(cols.bridge), dtype=bool)
            if own is not None:  # policies found on this grid: valued as they are
                k0 = len(cols.bridge)
                self._valued.setdefault(e, {}).update(
                    (k0 + j, (own.spend[j], own.count[j], own.poor[j])) for j in range(len(own.bridge)))
                exact = np.r_[exact, np.ones(len(own.bridge), dtype=bool)]
                cols, x = cols + own, np.r_[x, np.zeros(len(own.bridge))]
            keep, weight = mixture_weights(
                cols, x, units.agency, rows, e, poor_b, self.budget_share, always=exact,
                evaluate=lambda part, k, e=e, u=units.unit: self._on_this_grid(part, k, e, u))
            mine = np.arange(paths) if e_n == 1 else np.array([e])  # one fleet: every path; else path e's fleet
            pick = keep[assign(cols.bridge[keep], weight, units.n, len(mine), rng)]  # (paths, U) columns
            spend = np.stack([self._valued[e][int(k)][0] for k in keep])  # (K', T) USD a year on this grid
            self._spend_plan[mine] = np.eye(2)[units.agency[cols.bridge[keep]]].T @ (weight[:, None] * spend)
            col = pick[:, units.unit]  # (paths, B) each bridge's column on each path
            pair, row = np.unique(col * b_n + np.arange(b_n), return_inverse=True)
            bridges.append(e * b_n + pair % b_n)
            found.append(cols.found_at[pair // b_n])
            follow[mine] = n + row.reshape(col.shape)
            n += len(pair)
        self.mdps, self._step_cost, self._step_count, self._step_poor = self._at_prices(np.concatenate(found),
                                                                                         np.concatenate(bridges))
        self._index = follow
        self._full = Layout.full(self.mdps.n, self.mdps.weights.shape[1])
        self._kept, self._eu = None, None
        self._keep = self._checkpoints(self._window_end(0, self._full, ()))
        self._solve_window(0, None, None)
        self._rounded_at = (aim, self.budget_share)

    def _at_prices(self, found: np.ndarray, bridges: np.ndarray | None = None) -> tuple:
        """The MDPs on this grid of the bridges ``bridges`` (int64 (N',) rows of the bridges' MDPs; None: all)
        and their step prices (cost, count, poor: float64 (N', T)) for the policies found at ``found`` float64
        (N', 4, T) (:attr:`bridgefleet.planning.columns.Columns.found_at`; changed in place). A column found
        without the reward, in the least budget's search, has its prices brought to this bound's scale so the
        knapsack can weigh it."""
        m = self._plain["mdps"]
        if bridges is not None:
            m = m.select(bridges)
        disc = m.gamma ** np.arange(m.horizon)
        weight = found[:, 3, 0]
        plain = weight == 0  # found by the least budget's search: prices in budget scales, no reward
        if plain.any():
            own = self.bound.price_cost[m.fleet, m.agency].sum(1)  # this bound's reward units per USD, summed
            theirs = found[:, 0].sum(1)
            found[plain, :3] *= (own[plain] / np.maximum(theirs[plain], 1e-300))[:, None, None]
        mdps = dataclasses.replace(m, utility=m.utility * weight[:, None], poor_step=m.poor_step * weight,
                                   cost_lambda=0.0)
        return (mdps, found[:, 0] / disc + m.cost_lambda * weight[:, None], found[:, 1] / disc,
                None if self._plain["_step_poor"] is None else found[:, 2] / disc * m.deck[:, None])

    def _on_this_grid(self, part: Columns, index: np.ndarray, e: int, unit: np.ndarray) -> Columns:
        """Fleet e's candidate columns ``part`` (``index`` int64 (K,), theirs in the fleet's mixture) with the spend,
        treatments and poor deck area of their policies solved again on this grid at the prices they were found at
        (a unit's bridges summed; ``unit`` int64 (B,), each bridge's unit): one DP solve for each candidate a unit
        has at most (its policy and doing nothing: two or three solves in all), for the columns not valued
        since the prices were found (another aim's rounding shares most of them)."""
        valued = self._valued.setdefault(e, {})
        new = np.flatnonzero([int(k) not in valued for k in index])
        if len(new):
            found = self._valued_now(part.take(new), e, unit)
            for j, k in enumerate(index[new]):
                valued[int(k)] = (found.spend[j], found.count[j], found.poor[j])
        spend, count, poor = (np.stack([valued[int(k)][f] for k in index]) for f in range(3))
        return dataclasses.replace(part, spend=spend, count=count, poor=poor)

    def _valued_now(self, part: Columns, e: int, unit: np.ndarray) -> Columns:
        """:meth:`_on_this_grid` for every column of ``part``."""
        m = self._plain["mdps"]
        b_n = m.n // len(self.bound.mixture)
        k_n = len(part.bridge)
        order = np.lexsort((np.arange(k_n), part.bridge))
        first = np.r_[0, np.flatnonzero(np.diff(part.bridge[order])) + 1]
        rank = np.empty(k_n, dtype=np.int64)
        rank[order] = np.arange(k_n) - np.repeat(first, np.diff(np.r_[first, k_n]))
        spend, count, poor = (np.zeros_like(part.spend) for _ in range(3))
        for r in range(int(rank.max(initial=-1)) + 1):
            of_unit = np.full(int(unit.max()) + 1, -1)
            of_unit[part.bridge[rank == r]] = np.flatnonzero(rank == r)
            k_b = of_unit[unit]  # (B,) the bridge's unit's r-th candidate, −1: none
            has = np.flatnonzero(k_b >= 0)
            bridges = e * b_n + has
            found = np.zeros((m.n, 4, m.horizon))
            found[bridges] = part.found_at[k_b[has]]
            active = np.zeros(m.n, dtype=bool)
            active[bridges] = True
            mdps, step_cost, step_count, step_poor = self._at_prices(found)
            sol = self.solver(mdps, step_cost, step_count, active=active, price_poor=step_poor)
            np.add.at(spend, k_b[has], sol.exp_cost[bridges])
            np.add.at(count, k_b[has], sol.exp_count[bridges])
            np.add.at(poor, k_b[has], sol.exp_poor[bridges] * m.deck[bridges, None])
        return dataclasses.replace(part, spend=spend, count=count, poor=poor)

    def _budget_rows(self) -> int:
        """How many rows of one year's tables of all bridges (N × R × G float32 each) fit ``memory_mb``."""
        m = self.mdps
        return int(self.memory_mb * 2**20 // (m.n * m.weights.shape[1] * m.utility.shape[1] * 4))

    def _window_end(self, t: int, layout: Layout, keep: tuple[int, ...]) -> int:
        """The end of the window of tables from year t in ``layout``: the most years whose entries fit
        ``memory_mb`` (at least one), ending at the next checkpoint in ``keep`` after t if it comes first."""
        t_n = self.mdps.horizon
        budget = self._budget_rows()
        hi = t + 1
        while hi < t_n and layout.entries(t, hi + 1) <= budget:
            hi += 1
        return min([hi] + [c for c in keep if c > t])

    def _checkpoints(self, first_hi: int) -> tuple[int, ...]:
        """Years at which the first solve keeps V_c (every row, c + 2 a year, all within ``memory_mb``), chosen
        greedily to cut the entries the later windows re-solve over a simulation, predicted for one state per
        bridge (a window from year lo solved back from c costs y − lo + 2 entries a year y in [lo, c))."""
        t_n = self.mdps.horizon
        budget = self._budget_rows()
        one = Layout(0, np.ones((1, 1, 1), dtype=np.int64))

        def cost(keep: tuple[int, ...]) -> int:
            total, lo = 0, first_hi
            while lo < t_n:
                hi = self._window_end(lo, one._replace(base=lo), keep)
                top = min([c for c in keep if c >= hi], default=t_n)
                total += sum(y - lo + 2 for y in range(lo, top))
                lo = hi
            return total

        keep: tuple[int, ...] = ()
        best = cost(keep)
        while True:
            fits = [tuple(sorted((*keep, c))) for c in range(first_hi + 1, t_n) if c not in keep]
            fits = [k for k in fits if len(k) * (k[-1] + 2) <= budget]
            if not fits:
                break
            trial, more = min((cost(k), k) for k in fits)
            if trial >= best:
                break
            keep, best = more, trial
        return keep

    def _solve_window(self, t: int, rt: np.ndarray, row: np.ndarray) -> None:
        """Solve the window of tables from year t: every row at year 0 (keeping the checkpoints V_c), later
        only the rows the states (rt, row) int (E, B) can reach, from the nearest kept V_c after the window."""
        m = self.mdps
        if t == 0:
            layout, keep = self._full, (self._keep if self._kept is None else ())
        else:
            layout, keep = state_layout(t, rt, row, self._index, m.n, m.weights.shape[1]), ()
            if layout.diag.shape[2] > t:  # the states cover more rows than there are: every row is fewer
                layout = self._full
        hi = self._window_end(t, layout, self._keep)
        after = [k for k, c in enumerate(self._keep) if c >= hi] if self._kept is not None else []
        start = None
        if after:
            start = (self._keep[after[0]], self._kept[:, after[0]])  # a view: the window's DP reads its rows
        self._eu = None  # the last window's tables go before the next's are made (the first's stay in _first)
        sol = self.solver(m, self._step_cost, self._step_count, store=(t, hi), price_poor=self._step_poor, keep=keep,
                          start=start, layout=None if t == 0 else layout, forward=False)
        self._eu, self._window, self._layout = sol.eu, (t, hi), layout
        if keep:
            self._kept = sol.kept
        if t == 0:
            self._first = (self._window, self._eu, self._layout)

    def benefits(self, sim: FleetSimulator) -> np.ndarray:
        """Each action's benefit over doing nothing now, float64 (E, B, 5) in return units (−inf: not available):
        the value tables of the later years at the relaxation's prices (or, ``rounded``, of the policy each bridge
        follows on its path), without this year's price, which the knapsack of :meth:`__call__` keeps exactly.
        Computes the prices first on a simulator at year 0 of fleets it has not seen (:meth:`prepare`).

        Raises:
            ValueError: fleets at different years, or a year beyond the horizon the prices were computed for.
        """
        t = int(sim.t.max())
        if int(sim.t.min()) != t:
            raise ValueError("the lagrangian planner needs every fleet at the same year")
        if t == 0 or self._key != (id(sim), sim.num_envs):
            key = _start_key(sim)
            if key != self._start or self._key is None:
                self.prepare(sim)
            self._key, self._start = (id(sim), sim.num_envs), key
        if self.rounded:
            self._follow_rounding()
        elif self._rounded_at is not None:  # back to the knapsack on the best prices' tables
            for k, v in self._plain.items():
                setattr(self, k, v)
            self._window, self._eu, self._layout = self._first
            self._rounded_at = None
        if t >= self.mdps.horizon:
            raise ValueError(f"year {t} is beyond the {self.mdps.horizon}-year horizon the prices were computed for")
        st = sim.state
        m = self.mdps
        r_n = m.weights.shape[1]
        replaced = st.age < self._age0 + t - 0.5  # age was reset by a replacement
        rt, row = (np.empty((sim.num_envs, sim.n_bridges), dtype=np.int64) for _ in range(2))
        state_rows(t, st.ysm, replaced, m.ysm0, self._index, r_n, rt, row)
        lo, hi = self._window
        (first_lo, first_hi), first_eu, first_layout = self._first
        if not lo <= t < hi and first_lo <= t < first_hi:
            self._window, self._eu, self._layout = (first_lo, first_hi), first_eu, first_layout
        elif not lo <= t < hi:
            self._solve_window(t, rt, row)
        ben = np.empty((sim.num_envs, sim.n_bridges, 5))
        benefits(self._eu, self._layout.base, self._window[0], self._layout.diag, t, st.condition, rt, row,
                 self._index, m.cost, m.feasible, RATING_GAIN.astype(np.float64), m.h, m.cost_lambda, m.top, ben)
        if np.isnan(ben).any():  # pragma: no cover - a state outside the window's layout is a bug
            raise RuntimeError(f"year {t}: a bridge's state is not in the planner's tables")
        return ben

    def __call__(self, sim: FleetSimulator, rng: np.random.Generator | None = None) -> np.ndarray:
        ben = self.benefits(sim)
        t = int(sim.t.max())
        st = sim.state
        out = np.zeros((sim.num_envs, sim.n_bridges), dtype=np.int64)
        if self.rounded:  # each bridge's own policy at this year's price; the knapsack keeps the actual budget
            ben -= (self._step_cost[self._index, t])[..., None] * self._cost
            ben[..., 1:] -= self._step_count[self._index, t][..., None]
            ben[..., 0] = 0.0
            if self.aim is not None:  # each bridge's choice or nothing; where money is short, the rule picks who waits
                only_choice(ben)
        if self.aim is None:
            allocate(ben, self._cost, self._agency, sim.budget, out)
            return out
        # this year's plan keeps the expected poor deck area within the rule where the budget can
        p_poor = poor_probability(sim.config, st.condition, st.ysm, st.rate)
        allocate_within_rule(ben, self._cost, self._agency, sim.budget, self._deck, p_poor,
                             self.aim * self._deck.sum(1), out)
        if self.rounded:
            self._spend_lead(sim, t, p_poor, out)
        return out

    def _spend_lead(self, sim: FleetSimulator, t: int, p_poor: np.ndarray, out: np.ndarray) -> None:
        """A path ahead of the mixture's expected spend spends its lead now: the treatments, of bridges the plan
        leaves alone, that cut the expected poor deck area at the end of the year most within it (a knapsack on m²
        less poor). The paths behind the expectation had treatments cut by their budget, so without this the mean
        over the paths ran above the mixture's (dc-2019 at 0.30 ×, 64 samples: worst year 11.8 % against its
        10.0 %; 10.8 % with it; docs/planning.md). In the last :data:`RELEASE_YEARS` years the money the plan
        expects a path to hold is released too.

        Args:
            sim: the simulator at year ``t`` (its budget: USD each path's agencies hold now, float64 (E, 2)).
            p_poor: float64 (E, B, 5), each action's probability of ending the year poor (:func:`poor_probability`).
            out: int64 (E, B), this year's plan; treatments added in place.
        """
        spent = np.take_along_axis(self._cost, out[..., None], -1)[..., 0] @ np.eye(2)[self._agency]  # (E, 2) USD
        spare = sim.budget - spent  # without carry-over this year's money is lost if not spent
        if sim.config.carry_over_budget:  # only the money beyond what the plan expects a path to hold now
            held = sim.fleet_annual_budget * (t + 1) - self._spend_plan[: sim.num_envs, :, :t].sum(-1)
            left = self.mdps.horizon - t  # years left, this one included
            if left <= RELEASE_YEARS:  # the margin is released toward the horizon's end
                held = held * ((left - 1) / RELEASE_YEARS)
            spare = np.minimum(spare, sim.budget - held)
        spare = np.maximum(spare, 0.0)
        if (spare > 0).any():
            fund_poor_cuts(out, self._cost, self._agency, spare, self._deck, p_poor, self._feasible)


def _start_key(sim: FleetSimulator, budget: bool = True) -> str:
    """A fingerprint of what the prices depend on: the config, the fleets' profile and year-0 state, the reward
    weights and (``budget``) the budgets (SHA-1 of their bytes). Without the budget: what the MDPs but for their
    allowed actions depend on (the config's budget is left out of it too)."""
    config = sim.config if budget else {k: v for k, v in dataclasses.asdict(sim.config).items()
                                        if k not in ("annual_budget_usd", "budget_share_of_replacement",
                                                     "urban_budget_share")}
    h = hashlib.sha1(repr(config).encode())
    parts = [getattr(sim.profile, f.name) for f in dataclasses.fields(sim.profile)]
    parts += [sim.state.condition, sim.state.age, sim.state.ysm, sim.state.rate, sim.weight,
              sim.fleet_annual_budget if budget else np.zeros(0), np.array([sim.num_envs, int(sim.fixed is not None)])]
    for a in parts:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()
