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
discounted reward, spend and treatments per year) as a column, and re-solves the LP per fleet with SciPy's
HiGHS; the LP's duals are the next prices. Every L(κ) evaluated is a valid bound; the smallest is kept, and
the LP's value (a lower end for min L) measures how far it may still be from the tightest.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from bridgefleet.config import FleetConfig
from bridgefleet.planning.dp import solve
from bridgefleet.planning.transitions import BridgeMDPs, bridge_mdps

BIG_PRICE = 1e9
"""A price per USD no action can pay: its DP policy is do-nothing (the LP's first, always feasible column)."""

MAX_COLUMNS = 64
"""Columns per bridge kept in the master LP (the do-nothing column and the newest): bounds its solve time."""


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
        iterations: column-generation iterations run.
        seconds: wall time, s.
    """

    values: np.ndarray
    lp_values: np.ndarray
    price_cost: np.ndarray
    price_count: np.ndarray
    iterations: int
    seconds: float
    history: list[float] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return float(self.values.mean())

    @property
    def ci95(self) -> float:
        """Half-width of the 95 % CI of the mean over fleets (1.96 σ/√E; 0 for one fleet)."""
        e = len(self.values)
        return 1.96 * float(self.values.std(ddof=1)) / math.sqrt(e) if e > 1 else 0.0

    @property
    def gap(self) -> float:
        """Largest relative distance between a fleet's bound and its master LP value."""
        return float(np.max((self.values - self.lp_values) / np.maximum(np.abs(self.values), 1e-9)))


@dataclass
class _Rows:
    """Coupling rows of each fleet and agency: spend_c @ spend ≤ spend_b, count_c @ treatments ≤ count_b."""

    spend_c: np.ndarray  # (M, T) rows over years (identity; lower-triangular ones with carry-over)
    spend_b: np.ndarray  # (E, 2, M) USD
    count_c: np.ndarray | None  # (M', T), None with carry-over
    count_b: np.ndarray | None  # (E, 2, M') treatments

    def year_prices(self, kappa: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Row prices → discounted per-year prices (E, 2, T) per USD and per treatment."""
        ks, kn = kappa
        count = kn @ self.count_c if self.count_c is not None else np.zeros(ks.shape[:2] + self.spend_c.shape[1:])
        return ks @ self.spend_c, count

    def coarsen(self, gamma: float, blocks: list[tuple[int, int]]) -> _Rows:
        """A valid, coarser set of rows: one discount-weighted row per block of years [start, end) (with
        carry-over: the cumulative rows at the block ends), so prices are constant within a block."""
        t_n = self.spend_c.shape[1]
        if self.count_c is None:  # carry-over: a subset of the cumulative rows
            ends = np.array([end - 1 for _, end in blocks])
            return _Rows(self.spend_c[ends], self.spend_b[..., ends], None, None)
        disc = gamma ** np.arange(t_n)
        c = np.zeros((len(blocks), t_n))
        for i, (lo, hi) in enumerate(blocks):
            c[i, lo:hi] = disc[lo:hi]
        return _Rows(c, self.spend_b @ c.T, c, self.count_b @ c.T)  # identity rows: b is per year


def fleet_mdps(config: FleetConfig, profile, state, weight: np.ndarray, annual_budget: np.ndarray,
               step: float = 0.05) -> tuple[BridgeMDPs, _Rows]:
    """The single-bridge MDPs and coupling rows of E fleets.

    Args:
        profile, state: :class:`~bridgefleet.fleet.model.FleetProfile` / ``FleetState`` with arrays (E, B).
        weight: float (E, B) reward traffic weight. annual_budget: float (2,) or (E, 2), USD per year.
    """
    e_n, b_n = state.condition.shape
    t_n = config.horizon_years
    annual = np.broadcast_to(np.asarray(annual_budget, dtype=np.float64), (e_n, 2))
    agency = (np.arange(b_n) >= config.n_urban).astype(np.int64)
    per_year = annual[:, agency]  # (E, B)
    cap = per_year * (t_n if config.carry_over_budget else 1)
    mdps = bridge_mdps(config, state.condition, state.ysm, state.rate, profile.deck_area, profile.cost_factor,
                       weight, profile.target_condition, cap, step)
    if config.carry_over_budget:
        return mdps, _Rows(np.tril(np.ones((t_n, t_n))), annual[:, :, None] * np.arange(1, t_n + 1), None, None)
    # The most treatments one year's budget can buy: the cheapest treatment of each bridge, cheapest first.
    cheapest = np.where(mdps.feasible[:, 1:], mdps.cost[:, 1:], np.inf).min(1).reshape(e_n, b_n)
    counts = np.zeros((e_n, 2))
    for g in (0, 1):
        cols = cheapest[:, agency == g]
        if cols.shape[1]:
            cum = np.cumsum(np.sort(cols, axis=1), axis=1)
            counts[:, g] = (cum <= annual[:, g : g + 1] + 0.01).sum(1)
    return mdps, _Rows(np.eye(t_n), np.repeat(annual[:, :, None], t_n, 2), np.eye(t_n),
                       np.repeat(counts[:, :, None], t_n, 2))


def lagrangian_bound(mdps: BridgeMDPs, rows: _Rows, max_iter: int = 30, tol: float = 2e-3,
                     smoothing: float = 0.5, stage_iters: int = 8, progress: bool = False) -> BoundResult:
    """Minimise L(κ) over the prices of each fleet; return the tightest bounds found.

    Column generation (every DP solve adds each bridge's policy as a column) with Wentges smoothing: the next
    prices are ``smoothing`` × the best prices so far + the rest × the master LP's duals. The first
    ``aggregate_iters`` solves price one discount-weighted row per agency and kind (4 prices per fleet:
    converges in a few solves); the rest price every year's rows, starting from there. Stops for a fleet
    when its bound is within ``tol`` (relative) of its master LP value, or after ``max_iter`` DP solves.
    """
    start = time.perf_counter()
    e_n = int(mdps.fleet.max()) + 1
    t_n = mdps.horizon
    b_n = mdps.n // e_n
    disc = mdps.gamma ** np.arange(t_n)
    stages = [rows.coarsen(mdps.gamma, b) for b in _year_blocks(t_n)] + [rows]
    stage = 0
    stage_start = 1
    # Every row is C × (per-year amounts), so L = Σ V + Σ_t (price_t × budget_t + count price_t × count_t).
    year_budget = rows.spend_b @ np.linalg.inv(rows.spend_c).T
    year_count = rows.count_b @ np.linalg.inv(rows.count_c).T if rows.count_c is not None else None
    current = stages[0]
    cost_p = np.full((e_n, 2, t_n), BIG_PRICE)  # discounted per-year prices of the next solve
    count_p = np.zeros((e_n, 2, t_n))
    best = np.full(e_n, np.inf)
    best_cost = np.zeros((e_n, 2, t_n))
    best_count = np.zeros((e_n, 2, t_n))
    lp_value = np.full(e_n, -np.inf)
    cols: tuple[list, list, list] = ([], [], [])  # per solve: reward (N,), spend (N, T), treatments (N, T)
    active = np.ones(e_n, dtype=bool)
    history = []
    it = 0
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=max_iter, desc="bound", unit="DP", leave=False)
    for it in range(1, max_iter + 1):
        sc = cost_p[mdps.fleet, mdps.agency] / disc
        sn = count_p[mdps.fleet, mdps.agency] / disc
        value0, exp_cost, exp_count, _ = solve(mdps, sc, sn, active[mdps.fleet])
        cols[0].append(value0 + ((sc * exp_cost + sn * exp_count) * disc).sum(1))  # the column's own return
        cols[1].append(exp_cost)
        cols[2].append(exp_count)
        if it > 1:  # the first solve prices every action out (the do-nothing column), not a useful bound
            lval = value0.reshape(e_n, b_n).sum(1) + (cost_p * year_budget).sum((1, 2))
            if year_count is not None:
                lval += (count_p * year_count).sum((1, 2))
            better = active & (lval < best)
            best[better] = lval[better]
            best_cost[better] = cost_p[better]
            best_count[better] = count_p[better]
        history.append(float(best.mean()) if it > 1 else float("nan"))
        if it > 1:
            gap = (best - lp_value) / np.maximum(np.abs(best), 1.0)
            stalled = it - stage_start >= 3 and history[-3] - history[-1] < tol * abs(history[-1])
            done = not (active & (gap > tol)).any()
            if stage < len(stages) - 1 and (it - stage_start >= stage_iters or done or stalled):
                stage += 1  # refine the rows: prices may now differ between more blocks of years
                current = stages[stage]
                stage_start = it
            elif stage == len(stages) - 1:
                active &= gap > tol
        for e in np.flatnonzero(active):
            lp, ks, kn = _master_lp(e, b_n, current, cols, mdps.agency[:b_n])
            lp_value[e] = lp
            c_lp, n_lp = current.year_prices((ks[None], kn[None]))
            a = smoothing if it > 1 else 0.0
            cost_p[e] = a * best_cost[e] + (1 - a) * c_lp[0]
            count_p[e] = a * best_count[e] + (1 - a) * n_lp[0]
        if bar is not None:
            bar.update(1)
            bar.set_postfix(bound=f"{best.mean():.2f}" if it > 1 else "-", open=int(active.sum()))
        if not active.any():
            break
    if bar is not None:
        bar.close()
    return BoundResult(best, lp_value, best_cost, best_count, it, time.perf_counter() - start, history)


def _year_blocks(t_n: int) -> list[list[tuple[int, int]]]:
    """Coarse-to-fine blocks of years: the whole horizon, then blocks doubling in length (1, 1, 2, 4, …)."""
    doubling = [(0, 1)]
    while doubling[-1][1] < t_n:
        lo = doubling[-1][1]
        doubling.append((lo, min(t_n, lo + max(1, lo))))
    threes = [(lo, min(t_n, lo + 3)) for lo in range(0, t_n, 3)]
    return [[(0, t_n)], doubling, threes]


def _master_lp(e: int, b_n: int, rows: _Rows, cols: tuple[list, list, list], agency: np.ndarray
               ) -> tuple[float, np.ndarray, np.ndarray]:
    """Solve fleet e's master LP over the columns so far; return (value, spend-row duals (2, M), count-row
    duals (2, M'))."""
    keep = [0, *range(max(1, len(cols[0]) - MAX_COLUMNS + 1), len(cols[0]))]  # do-nothing + the newest
    k_n = len(keep)
    sl = slice(e * b_n, (e + 1) * b_n)
    r = np.stack([cols[0][k][sl] for k in keep], 1).ravel()  # variable (i, k) at i * K + k
    spend = np.stack([cols[1][k][sl] for k in keep], 1)  # (B, K, T)
    count = np.stack([cols[2][k][sl] for k in keep], 1)
    blocks, rhs, scales = [], [], []
    kinds = [(spend, rows.spend_c, rows.spend_b)]
    if rows.count_c is not None:
        kinds.append((count, rows.count_c, rows.count_b))
    for use, c, b_all in kinds:
        for g in (0, 1):
            mine = (agency == g)[:, None, None]
            b = b_all[e, g]
            s = 1.0 / np.maximum(b, 1.0)  # rows scaled to rhs 1: USD and counts on one scale for HiGHS
            blocks.append(((np.where(mine, use, 0.0) @ c.T) * s[None, None, :]).reshape(b_n * k_n, -1).T)
            rhs.append(b * s)
            scales.append(s)
    a_ub = sp.csr_matrix(np.concatenate(blocks))
    a_eq = sp.kron(sp.eye(b_n), np.ones((1, k_n)), format="csr")
    res = linprog(-r, A_ub=a_ub, b_ub=np.concatenate(rhs), A_eq=a_eq, b_eq=np.ones(b_n), bounds=(0, None),
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"master LP of fleet {e} failed: {res.message}")
    duals = np.maximum(-res.ineqlin.marginals, 0.0) * np.concatenate(scales)
    sizes = np.cumsum([len(x) for x in rhs])[:-1]
    parts = np.split(duals, sizes)
    ks = np.stack(parts[0:2])
    kn = np.stack(parts[2:4]) if rows.count_c is not None else np.zeros((2, 1))
    return -res.fun, ks, kn
