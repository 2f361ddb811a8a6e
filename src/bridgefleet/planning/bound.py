"""A budget-relaxed upper bound on the expected discounted return of every budget-feasible policy.

The annual budgets couple the bridges of a fleet only through each agency's yearly spend (a weakly coupled
MDP). Pricing that spend with multipliers κ ≥ 0 splits the fleet into independent single-bridge MDPs:

    L(κ) = Σ_i V_i^κ(s_i0) + Σ_rows κ_row × b_row  ≥  the return of any policy that respects the budget

(Hawkins 2003; Adelman & Mersereau, "Relaxations of weakly coupled stochastic dynamic programs",
Operations Research 56(3), 2008). The rows, per fleet and agency: the spend of each year ≤ the annual
budget (with carry-over: the spend up to year t ≤ (t + 1) budgets), and the number of treatments of each
year ≤ the most that can fit in one budget (the cheapest treatments first; implied by the budget, it
tightens the relaxation because budgets buy whole treatments). An action whose cost alone exceeds what an
agency can ever spend in a year is not available to its bridge.

The prices are found by column generation on the master LP (Dantzig–Wolfe): each iteration solves every
bridge's DP under the current prices (:mod:`bridgefleet.planning.dp`), adds each bridge's policy (its
discounted reward, spend and treatments per year) as a column, and re-solves the LP per fleet with HiGHS
(``highspy``: one model per fleet, warm-started from its last basis); the LP's duals are the next prices.
The search runs on a coarse rating grid (fast; prices barely depend on the grid) and the bound is L(κ) at
the best prices on the fine grid. Every L(κ) evaluated is a valid bound; the LP's value (a lower end for
min L) measures how far it may still be from the tightest.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import highspy
import numpy as np
import scipy.sparse as sp

from bridgefleet.config import FleetConfig
from bridgefleet.planning.certify import Certifier
from bridgefleet.planning.columns import MASTER_UNITS, ColumnPool, Columns, MasterUnits
from bridgefleet.planning.dp import Solution, solve
from bridgefleet.planning.rows import SAMPLE_BRIDGES, CouplingRows, sample_bridges, sampled_rows
from bridgefleet.planning.transitions import BridgeMDPs, at_budget, bridge_mdps
from bridgefleet.sim.model import fhwa_weight, poor_user_cost
from bridgefleet.stats import ci95

EXPECTED_SOLVES = 20
"""DP solves a price search is expected to take on the command's progress bar (it stops when the bound and the LP
agree: 17 of the 80 allowed in the report's searches of issue 80); more or fewer move the bar's total
(:class:`bridgefleet.progress.Share`)."""
BIG_PRICE = 1e9
"""A price per USD no action can pay: its DP policy is do-nothing (the LP's first, always feasible column)."""
RULE_PENALTY = 1e6
"""Reward units for exceeding one year's poor deck-area allowance by all of it again, in the master LP's
elastic rows: far above any fleet's return, so its mixture meets the rule wherever the columns allow, and small
enough for HiGHS's simplex (1e4 per m² was not, on dc-2019)."""


@dataclass
class BoundResult:
    """The tightest bound found on each of E fleets.

    Attributes:
        values: float64 (E,), upper bound on the expected discounted return of each fleet, reward units.
        lp_values: float64 (E,), value of the last master LP (the bound is at most values − lp_values above
            the tightest bound of this relaxation).
        price_cost: float64 (E, 2, T), discounted price of one USD spent by the urban (0) / rural (1) agency
            in year t, reward units per USD (the step price is this divided by γ^t).
        price_count: float64 (E, 2, T), discounted price of one treatment, reward units.
        price_poor: float64 (E, T) or None (no rule): discounted price of one m² of deck ending year t poor,
            reward units per m².
        rule_slack: float64 (E,) or None: m²-years by which the last master LP's mixture still exceeds the
            poor deck-area rule (0: the relaxation meets it; > 0: none of the policies found does).
        rule_met: bool (E,) or None: whether that slack is nil (≤ 1e-6 m² per m² of the fleet's counted deck).
        certified: float64 (E,) or None: L(κ) at the same prices with each bridge's value from
            :func:`bridgefleet.planning.certify.certified_values`, an upper bound of the continuous model (the
            simulator's) whatever the grid; ``values`` bound the grid model, whose error has no sign.
        tables: float32 EU tables of the reported grid at the best prices for the years asked
            (``lagrangian_bound(store=…)``, :func:`bridgefleet.planning.dp.solve`), or None.
        kept: float32 values V_c of the same solve at the years asked (``lagrangian_bound(keep=…)``,
            ``Solution.kept``), or None.
        mixture: per fleet, the last master LP's columns (:class:`bridgefleet.planning.columns.Columns`, on the
            search grid) and their weights x float64 (K,) (each unit's sum to 1), and how the fleet's bridges
            make its units (:class:`bridgefleet.planning.columns.MasterUnits`): what
            :mod:`bridgefleet.planning.rounding` turns into one policy per bridge.
        iterations: column-generation iterations run (DP solves of the whole fleet).
        sample: (bridges of each fleet's sample, its search's DP solves) when the search started from a sample's
            prices (``lagrangian_bound(sample=…)``), else None.
        seconds: wall time, s.
    """

    values: np.ndarray
    lp_values: np.ndarray
    price_cost: np.ndarray
    price_count: np.ndarray
    iterations: int
    seconds: float
    history: list[float] = field(default_factory=list)
    price_poor: np.ndarray | None = None
    rule_slack: np.ndarray | None = None
    rule_met: np.ndarray | None = None
    certified: np.ndarray | None = None
    tables: np.ndarray | None = None
    kept: np.ndarray | None = None
    mixture: list[tuple[Columns, np.ndarray, MasterUnits]] | None = None
    sample: tuple[int, int] | None = None

    @property
    def meets_rule(self) -> bool:
        """The relaxation meets the poor deck-area rule on every fleet (True without a rule)."""
        return self.rule_met is None or bool(self.rule_met.all())

    @property
    def mean(self) -> float:
        return float(self.values.mean())

    @property
    def ci95(self) -> float:
        """Half-width of the 95 % CI of the mean over fleets (Student t σ/√E: :func:`bridgefleet.stats.ci95`; 0
        for one fleet)."""
        return ci95(self.values)

    @property
    def gap(self) -> float:
        """Largest relative distance between a fleet's bound and its master LP value."""
        return float(np.max((self.values - self.lp_values) / np.maximum(np.abs(self.values), 1e-9)))


def _bridge_inputs(config: FleetConfig, profile, state, weight: np.ndarray, annual_budget: np.ndarray) -> dict:
    """The keyword arguments of :func:`bridge_mdps` for E fleets (arrays (E, B)) and the budget per fleet and
    agency, (E, 2) USD a year."""
    e_n, b_n = state.condition.shape
    annual = np.broadcast_to(np.asarray(annual_budget, dtype=np.float64), (e_n, 2))
    agency = (np.arange(b_n) >= config.n_urban).astype(np.int64)
    cap = annual[:, agency] * (config.horizon_years if config.carry_over_budget else 1)  # (E, B)
    counted = np.broadcast_to(fhwa_weight(profile.deck_area, profile.nhs), (e_n, b_n))
    return dict(condition=state.condition, ysm=state.ysm, rate=state.rate, deck_area=profile.deck_area,
                cost_factor=profile.cost_factor, weight=weight, target=profile.target_condition, cap_usd=cap,
                user_cost=poor_user_cost(profile.aadt, profile.truck_share, profile.detour_km, config),
                counted_deck=counted), annual


def fleet_certifier(config: FleetConfig, profile, state, weight: np.ndarray, annual_budget: np.ndarray,
                    step: float = 0.02, memory_bytes: float = 2**30) -> Certifier:
    """The certified values of the bridges of E fleets (in the order of :func:`fleet_mdps`), built and solved
    in chunks whose weights fit ``memory_bytes`` (:class:`bridgefleet.planning.certify.Certifier`).

    Raises:
        ValueError: (when used) a new-structure rating that is not on the grid of ``step``.
    """
    inputs, _ = _bridge_inputs(config, profile, state, weight, annual_budget)
    shape = state.condition.shape
    flat = {k: np.broadcast_to(np.asarray(v, dtype=np.float64), shape).reshape(1, -1) for k, v in inputs.items()}

    def build(part: np.ndarray) -> BridgeMDPs:
        return bridge_mdps(config, step=step, certify=True, **{k: v[:, part] for k, v in flat.items()})

    return Certifier(build, shape[0] * shape[1], memory_bytes)


def fleet_mdps(config: FleetConfig, profile, state, weight: np.ndarray, annual_budget: np.ndarray,
               step: float = 0.05, max_poor: float | None = None,
               like: BridgeMDPs | None = None) -> tuple[BridgeMDPs, CouplingRows]:
    """The single-bridge MDPs and coupling rows of E fleets.

    Args:
        profile, state: :class:`~bridgefleet.sim.model.FleetProfile` / ``FleetState`` with arrays (E, B).
        weight: float (E, B) reward traffic weight. annual_budget: float (2,) or (E, 2), USD per year.
        max_poor: the most share of each fleet's deck area expected poor at the end of every year, 0–1 (0.10:
            FHWA's minimum condition, 23 CFR 490.411), one more row per year; None: no such rule. The deck area
            is FHWA's (NHS bridges where the inventory codes them; ``BridgeMDPs.deck``).
        like: the MDPs of the same fleets and config on the same grid at another budget (the caller checks):
            only the actions the budget allows are computed again (:func:`bridgefleet.planning.transitions.at_budget`).
    """
    t_n = config.horizon_years
    inputs, annual = _bridge_inputs(config, profile, state, weight, annual_budget)
    counted = inputs["counted_deck"]
    mdps = None if like is None else at_budget(like, inputs["cap_usd"])
    if mdps is None:
        mdps = bridge_mdps(config, step=step, **inputs)
    poor_b = None
    if max_poor is not None:
        if not 0.0 <= max_poor <= 1.0:
            raise ValueError(f"--max-poor-deck-area {max_poor}: must be a share in [0, 1] (0.10 for FHWA's rule)")
        poor_b = np.repeat((max_poor * counted.sum(1))[:, None], t_n, 1)
    return mdps, CouplingRows.of(mdps, annual, t_n, config.carry_over_budget, poor_b)


def lagrangian_bound(mdps: BridgeMDPs, rows: CouplingRows, search: BridgeMDPs | None = None, max_iter: int = 80,
                     tol: float = 2e-3, smoothing: float = 0.5, stage_iters: int = 10, keep_iters: int = 3,
                     progress: bool = False, certify: Certifier | None = None, pool: ColumnPool | None = None,
                     store: tuple[int, int] | None = None, solver: Callable[..., Solution] = solve,
                     master_units: int = MASTER_UNITS, keep: tuple[int, ...] = (),
                     sample: int = SAMPLE_BRIDGES) -> BoundResult:
    """Minimise L(κ) over the prices of each fleet; return the bound at the best prices found.

    Column generation (every DP solve adds each bridge's policy as a column of its fleet's master LP) with
    Wentges smoothing: the next prices are ``smoothing`` × the best prices so far + the rest × the LP's duals.
    The first solves price one discount-weighted row per agency and kind (4 prices per fleet, at most
    ``stage_iters`` solves), the rest every year's rows, starting from there. A fleet stops when its best L is
    within ``tol`` (relative) of its LP value, or after ``max_iter`` DP solves. A column is kept while the LP
    used it in the last ``keep_iters`` solves; a policy already in the pool is not added again.

    Args:
        mdps: the bridges on the grid the bound is reported on.
        rows: their coupling rows (:func:`fleet_mdps`).
        search: the same bridges on a coarser grid for the price search (the bound under budget prices changes
            by < 0.1 % between grid steps 0.2 and 0.025, measured on the default fleet), or None to search on
            ``mdps``. The bound is L(κ) of ``mdps`` at the best prices, a valid bound whatever the search grid.
        certify: the same bridges' certified values (any grid step, :func:`fleet_certifier`):
            ``BoundResult.certified`` is then L(κ) at the best prices with them (:mod:`bridgefleet.planning.certify`).
        pool: columns of earlier searches on the same bridges and search grid at other budgets
            (:mod:`bridgefleet.planning.columns`): where it has columns for a fleet, the search starts from them
            (every year's rows, at the master LP's prices), and it keeps this search's columns for the next.
        store: (lo, hi) years whose EU tables of ``mdps`` at the best prices to return in
            ``BoundResult.tables`` (what the planner acts on, :func:`bridgefleet.planning.dp.solve`); needs
            ``search`` (the final solve on ``mdps`` gives them). keep: years whose values V_c that solve returns
            in ``BoundResult.kept`` (the planner's checkpoints, ``dp.solve(keep=…)``).
        solver: what solves the bridges' DPs, :func:`bridgefleet.planning.dp.solve` (this process, its cores) or
            :class:`bridgefleet.planning.chunks.RaySolver` (chunks of bridges as Ray tasks on a cluster; the
            master LPs stay here). The same results either way.
        master_units: the most convexity rows of a fleet's master LP; a larger fleet's bridges enter it in
            blocks (:class:`bridgefleet.planning.columns.MasterUnits`), so its time stays linear in the fleet.
        sample: a fleet of more than twice this many bridges (and no pool to start from) first runs this search
            on a random sample of about this many of its bridges (:func:`bridgefleet.planning.rows.sample_bridges`,
            rows scaled by :func:`bridgefleet.planning.rows.sampled_rows`), then its own search from the sample's
            best prices (every year's rows from the start): fewer DP solves of the whole fleet, the same
            stopping rule (docs/planning.md).

    Returns:
        :class:`BoundResult`.
    """
    began = time.perf_counter()
    grid = mdps if search is None else search
    e_n = int(grid.fleet.max()) + 1
    t_n = grid.horizon
    b_n = grid.n // e_n
    disc = grid.gamma ** np.arange(t_n)
    stages = [rows.coarsen(grid.gamma, [(0, t_n)]), rows]
    stage = 0
    stage_start = 1
    year_budget, year_count = rows.per_year()
    cost_p = np.full((e_n, 2, t_n), BIG_PRICE)  # discounted per-year prices of the next solve
    count_p = np.zeros((e_n, 2, t_n))
    best = np.full(e_n, np.inf)
    best_cost = np.zeros((e_n, 2, t_n))
    best_count = np.zeros((e_n, 2, t_n))
    rule = rows.poor_b is not None
    poor_p = np.zeros((e_n, t_n))  # discounted price of one m² poor at the end of year t
    best_poor = np.zeros((e_n, t_n))
    slack = np.zeros(e_n)
    lp_value = np.full(e_n, -np.inf)
    units = MasterUnits.per_fleet(grid, master_units)
    shape = (e_n, units[0].n, t_n, grid.utility.shape[1])
    seeds = [None if pool is None else pool.valid(e, units[e].feasible(grid.feasible[e * b_n : (e + 1) * b_n]),
                                                  shape) for e in range(e_n)]
    warm = all(c is not None for c in seeds)  # every fleet starts from its pool's columns
    start = None  # the search on a sample, whose best prices the second solve prices instead of the LP's duals
    if not warm and b_n > 2 * sample:
        few = grid.select(sample_bridges(grid, sample))
        start = lagrangian_bound(few, sampled_rows(rows, grid, few), None, max_iter, tol, smoothing, stage_iters,
                                 keep_iters, progress, solver=solver, master_units=master_units, sample=sample)
    if warm or start is not None:
        stage = 1  # every year's rows from the start
    masters = [_Master(e, units[e].agency, stages[stage], t_n) for e in range(e_n)]
    if warm:  # at the LP's prices over the pool's columns
        for e, cols in enumerate(seeds):
            masters[e].add(cols, 0)
            _, ks, kn, kp, _ = masters[e].solve(0)
            cost_p[e], count_p[e] = (p[0] for p in masters[e].rows.year_prices((ks[None], kn[None])))
            if rule:
                poor_p[e] = kp
    first = 1 if warm else 2  # the first bound: a cold search's first solve prices every action out
    active = np.ones(e_n, dtype=bool)
    history = []
    it = 0
    bar = outer = share = None
    size = f"{b_n:,} bridges" if e_n == 1 else f"{e_n} fleets × {b_n:,} bridges"
    if progress:  # its solves, in the command's bar where one is open; on its own a count (no total: the search
        # stops when the bound and the LP agree, often after a fifth of max_iter, and a bar to max_iter stops there)
        from bridgefleet.progress import BRIDGE_YEARS_PER_UNIT, Share, current

        outer = current()
        if outer is not None:
            share = Share(e_n * b_n * t_n * EXPECTED_SOLVES / BRIDGE_YEARS_PER_UNIT, EXPECTED_SOLVES)
        else:
            from tqdm import tqdm

            bar = tqdm(desc=f"price search ({size}, grid {grid.h:g})", unit="DP", leave=False)
    for it in range(1, max_iter + 1):
        sc = cost_p[grid.fleet, grid.agency] / disc
        sn = count_p[grid.fleet, grid.agency] / disc
        spp = poor_p[grid.fleet] / disc * grid.deck[:, None] if rule else None
        sol = solver(grid, sc, sn, active[grid.fleet], price_poor=spp)
        value0, exp_cost, exp_count, exp_poor, used = sol.value0, sol.exp_cost, sol.exp_count, sol.exp_poor, sol.used
        priced = sc * exp_cost + sn * exp_count + (spp * exp_poor if rule else 0.0)
        reward = value0 + (priced * disc).sum(1)  # the column's own return
        poor = exp_poor * grid.deck[:, None]  # m² expected poor at the end of each year
        if it >= first:
            lval = _dual_value(value0, cost_p, count_p, year_budget, year_count, e_n, poor_p, rows.poor_b)
            better = active & (lval < best)
            best[better] = lval[better]
            best_cost[better] = cost_p[better]
            best_count[better] = count_p[better]
            best_poor[better] = poor_p[better]
        history.append(float(best.mean()) if it >= first else float("nan"))
        if it >= first:
            gap = (best - lp_value) / np.maximum(np.abs(best), 1.0)
            stalled = it - stage_start >= 3 and history[-3] - history[-1] < tol * abs(history[-1])
            done = not (active & (gap > tol)).any()
            if stage == 0 and (it - stage_start >= stage_iters or done or stalled):
                stage = 1  # price every year: prices may now differ between years
                stage_start = it
                for e in np.flatnonzero(active):
                    masters[e].set_rows(stages[1])
            elif stage == 1:
                active &= gap > tol
        for e in np.flatnonzero(active):
            sl = slice(e * b_n, (e + 1) * b_n)
            found = (cost_p[e], count_p[e], poor_p[e])  # the prices this solve priced
            masters[e].add(units[e].columns(reward[sl], exp_cost[sl], exp_count[sl], poor[sl], used[sl], found), it)
            lp, ks, kn, kp, slack[e] = masters[e].solve(it)
            masters[e].prune(it, keep_iters)
            lp_value[e] = lp
            c_lp, n_lp = masters[e].rows.year_prices((ks[None], kn[None]))
            a = smoothing if it >= first else 0.0
            cost_p[e] = a * best_cost[e] + (1 - a) * c_lp[0]
            count_p[e] = a * best_count[e] + (1 - a) * n_lp[0]
            if rule:
                poor_p[e] = a * best_poor[e] + (1 - a) * (kp if kp.size else 0.0)
        if it == 1 and start is not None:
            cost_p, count_p = start.price_cost.copy(), start.price_count.copy()
            if rule:
                poor_p = start.price_poor.copy()
        if bar is not None:
            bar.update(1)
            bar.set_postfix(L=f"{best.mean():.2f}" if it > 1 else "-", open=int(active.sum()))
        elif outer is not None:
            outer.note(f"price search ({size}): {it} DP solves, L {best.mean():.2f}" if it >= first else
                       f"price search ({size}): {it} DP solves")
            share.step()
        if not active.any():
            break
    if bar is not None:
        bar.close()
    if share is not None:
        share.finish()
    if pool is not None:
        for e, master in enumerate(masters):
            pool.add(e, master.cols, shape)
    values = best
    tables = kept = None
    if search is not None:  # the bound on the reported grid, at the best prices
        dm = mdps.gamma ** np.arange(mdps.horizon)
        fine = solver(mdps, best_cost[mdps.fleet, mdps.agency] / dm, best_count[mdps.fleet, mdps.agency] / dm,
                     price_poor=best_poor[mdps.fleet] / dm * mdps.deck[:, None] if rule else None, store=store,
                     keep=keep, forward=False)
        value0, tables, kept = fine.value0, fine.eu, fine.kept
        values = _dual_value(value0, best_cost, best_count, year_budget, year_count, e_n, best_poor, rows.poor_b)
    certified = None
    if certify is not None:
        value0 = certify.values(best_cost[grid.fleet, grid.agency] / disc, best_count[grid.fleet, grid.agency] / disc,
                                best_poor[grid.fleet] / disc * grid.deck[:, None] if rule else None)
        certified = _dual_value(value0, best_cost, best_count, year_budget, year_count, e_n, best_poor, rows.poor_b)
    met = slack <= 1e-6 * np.maximum(1.0, grid.deck.reshape(e_n, b_n).sum(1)) if rule else None
    mixture = [(m.cols, m.x, units[e]) for e, m in enumerate(masters)]
    return BoundResult(values, lp_value, best_cost, best_count, it, time.perf_counter() - began, history,
                       best_poor if rule else None, slack if rule else None, met, certified, tables, kept, mixture,
                       None if start is None else (few.n // e_n, start.iterations))


def column_generation_options(h: highspy.Highs) -> None:
    """Quiet, and the primal simplex: columns added to a solved master LP leave its basis primal feasible, so
    the primal simplex goes on from it (the dual simplex HiGHS chooses by default starts over; measured on the
    least budget of dc-2019, 60 solves: 10 s of HiGHS against 27 s)."""
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")
    h.setOptionValue("simplex_strategy", 4)  # primal


def run_highs(h: highspy.Highs, what: str) -> highspy.HighsSolution:
    """Solve the model in ``h`` (from its last basis; once more from scratch if that does not reach an optimum,
    which is rare) and return its solution.

    Raises:
        RuntimeError: no optimum either way, naming ``what``.
    """
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        h.clearSolver()
        h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"{what}: {h.modelStatusToString(h.getModelStatus())}")
    return h.getSolution()


def _dual_value(value0: np.ndarray, cost_p: np.ndarray, count_p: np.ndarray, year_budget: np.ndarray,
                year_count: np.ndarray | None, e_n: int, poor_p: np.ndarray, poor_b: np.ndarray | None) -> np.ndarray:
    """L(κ) per fleet: Σ_i V_i + Σ_t (price_t × budget_t + count price_t × count_t + poor price_t × the most
    poor deck area_t), (E,)."""
    lval = value0.reshape(e_n, -1).sum(1) + (cost_p * year_budget).sum((1, 2))
    if year_count is not None:
        lval += (count_p * year_count).sum((1, 2))
    if poor_b is not None:
        lval += (poor_p * poor_b).sum(1)
    return lval


def coupling_rows(cols: Columns, agency: np.ndarray, kinds: list[tuple[np.ndarray, np.ndarray]],
                  poor_scale: np.ndarray) -> np.ndarray:
    """float64 (K, R): the K columns' entries in the scaled coupling rows of :meth:`CouplingRows.scaled` (``kinds``,
    ``poor_scale``); ``agency`` int64 (U,), each unit's. Entries below 1e-7 of a row are dropped: they only slow
    the simplex down."""
    g = agency[cols.bridge]
    dense = np.zeros((len(cols.reward), sum(len(s) for _, s in kinds) + len(poor_scale)))
    col = 0
    for n, (rows, scale) in enumerate(kinds):
        use = cols.spend if n < 2 else cols.count
        m = rows.shape[0]
        dense[:, col : col + m] = np.where((g == n % 2)[:, None], use @ rows.T, 0.0) * scale
        col += m
    if len(poor_scale):
        dense[:, col:] = cols.poor * poor_scale
    dense[np.abs(dense) < 1e-7] = 0.0
    return dense


def add_master_columns(h: highspy.Highs, cost: np.ndarray, coupling: np.ndarray, bridge: np.ndarray,
                       b_n: int) -> None:
    """Add k columns x ≥ 0 of objective ``cost`` (k,) to a master LP whose rows are M coupling rows, then B
    convexity rows: column i has ``coupling[i]`` (M,) in the coupling rows and a 1 in row M + ``bridge[i]``.
    Built sparse: a dense (k, M + B) array took k × B × 8 bytes (2.9 GB for 19,176 bridges' first columns),
    growing with the square of the fleet."""
    k = len(bridge)
    conv = sp.csc_matrix((np.ones(k), (bridge, np.arange(k))), shape=(b_n, k))
    a = sp.vstack([sp.csc_matrix(coupling.T), conv], format="csc")
    h.addCols(k, cost, np.zeros(k), np.full(k, highspy.kHighsInf), a.nnz, a.indptr[:-1].astype(np.int32),
              a.indices.astype(np.int32), a.data)


class _Master:
    """One fleet's master LP over the distinct policies found so far for its B bridges (the columns):

        max Σ_k r_k x_k − P Σ_t y_t  s.t.  Σ_k (rows of k) x_k ≤ b,  Σ_k poor_k,t x_k − y_t ≤ F·D,
        Σ_{k of bridge i} x_k = 1,   x, y ≥ 0,

    kept in one HiGHS model so each solve starts from the last basis (a few simplex iterations instead of a
    solve from scratch). Rows are scaled to right-hand side 1 so USD, counts and m² share one scale. The poor
    deck-area rows (with a rule) have elastic slacks y at ``RULE_PENALTY`` per allowance: the LP stays feasible
    while the columns found cannot meet the rule yet, and its duals stay ≤ the penalty (every price ≥ 0 still
    gives a valid L).
    """

    def __init__(self, e: int, agency: np.ndarray, rows: CouplingRows, t_n: int):
        self.e = e
        self.agency = agency
        self.cols = Columns.empty(t_n)
        self.key = np.zeros(0)
        self.last = np.zeros(0)  # last solve whose LP used the column; inf: always kept (do-nothing)
        self.x = np.zeros(0)  # the last solve's weight of each column
        self.keys: dict[tuple[int, float], int] = {}
        self.set_rows(rows)

    def set_rows(self, rows: CouplingRows) -> None:
        """(Re)build the model on new coupling rows with the columns so far."""
        self.rows = rows
        self._kinds, self.poor_scale, rhs = rows.scaled(self.e)
        self.n_budget = sum(len(s) for _, s in self._kinds)
        b_n = len(self.agency)
        self.n_ub = len(rhs)
        self.n_slack = len(self.poor_scale)
        self.h = highspy.Highs()
        column_generation_options(self.h)
        lower = np.concatenate([np.full(self.n_ub, -highspy.kHighsInf), np.ones(b_n)])
        upper = np.concatenate([rhs, np.ones(b_n)])
        self.h.addRows(len(lower), lower, upper, 0, np.zeros(len(lower), dtype=np.int32),
                       np.zeros(0, dtype=np.int32), np.zeros(0))
        if self.n_slack:  # y_t, the first columns: −1 in poor row t (scaled units: shares of the allowance)
            k = self.n_slack
            self.h.addCols(k, np.full(k, RULE_PENALTY), np.zeros(k), np.full(k, highspy.kHighsInf), k,
                           np.arange(k, dtype=np.int32), (self.n_budget + np.arange(k)).astype(np.int32),
                           -np.ones(k))
        self._add_cols(np.arange(len(self.cols.reward)))

    def _add_cols(self, idx: np.ndarray) -> None:
        if not len(idx):
            return
        c = self.cols
        dense = coupling_rows(c.take(idx), self.agency, self._kinds, self.poor_scale)
        add_master_columns(self.h, -c.reward[idx], dense, c.bridge[idx], len(self.agency))

    def add(self, new: Columns, it: int) -> None:
        """Add the policies ``new`` unless already columns (a column found again keeps the better reward); a
        policy that never treats its bridge (``used`` 0: do-nothing, the column that keeps the LP feasible) is
        never pruned."""
        key = new.fingerprint()
        once = new.distinct(key)  # a policy handed twice in one batch (the pool's) reaches the LP once
        new, key = new.take(once), key[once]
        fresh = []
        for n, (i, k) in enumerate(zip(new.bridge.tolist(), key.tolist(), strict=True)):
            j = self.keys.get((i, k))
            if j is None:
                self.keys[(i, k)] = len(self.cols.reward) + len(fresh)
                fresh.append(n)
            elif new.reward[n] > self.cols.reward[j]:
                self.cols.reward[j] = new.reward[n]
                self.h.changeColCost(self.n_slack + j, -new.reward[n])
        if not fresh:
            return
        idx = np.array(fresh)
        k0 = len(self.cols.reward)
        self.cols = self.cols + new.take(idx)
        self.key = np.concatenate([self.key, key[idx]])
        self.last = np.concatenate([self.last, np.where(new.used[idx] == 0, np.inf, float(it))])
        self._add_cols(np.arange(k0, len(self.cols.reward)))

    def solve(self, it: int) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, float]:
        """Solve; mark the columns used; return (value, spend-row duals (2, M), count-row duals (2, M'),
        poor-row duals (T,) per m², slack m²-years)."""
        sol = run_highs(self.h, f"master LP of fleet {self.e}")
        x = np.asarray(sol.col_value)
        slack = float((x[: self.n_slack] / np.maximum(self.poor_scale, 1e-300)).sum()) if self.n_slack else 0.0
        x = x[self.n_slack :]
        self.x = x
        self.last[x > 1e-9] = np.maximum(self.last[x > 1e-9], it)
        row = np.maximum(-np.asarray(sol.row_dual)[: self.n_ub], 0.0)
        duals = row[: self.n_budget] * np.concatenate([s for _, s in self._kinds])
        parts = np.split(duals, np.cumsum([len(s) for _, s in self._kinds])[:-1])
        ks = np.stack(parts[0:2])
        kn = np.stack(parts[2:4]) if len(parts) > 2 else np.zeros((2, 1))
        kp = row[self.n_budget :] * self.poor_scale
        return -self.h.getInfo().objective_function_value, ks, kn, kp, slack

    def prune(self, it: int, keep_iters: int) -> None:
        """Drop the columns the LP has not used in the last ``keep_iters`` solves."""
        drop = self.last < it - keep_iters
        if not drop.any():
            return
        self.h.deleteCols(int(drop.sum()), (self.n_slack + np.flatnonzero(drop)).astype(np.int32))
        keep = ~drop
        self.cols, self.key, self.last, self.x = self.cols.take(keep), self.key[keep], self.last[keep], self.x[keep]
        self.keys = {k: n for n, k in enumerate(zip(self.cols.bridge.tolist(), self.key.tolist(), strict=True))}
