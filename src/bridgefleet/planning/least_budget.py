"""The least budget that can meet a poor deck-area rule: a certificate below which no policy meets it.

For a rule "at most F of the deck area poor at the end of every year, in expectation" (FHWA's minimum
condition, 23 CFR 490.411: F = 0.10 of NHS deck area), the relaxation of :mod:`bridgefleet.planning.bound`
asks for the smallest annual budget B (a multiple of the fleet's sized budget, split between the agencies as
it is) for which some mixture of single-bridge policies keeps each agency's spend within its budget rows and
the expected poor deck area ≤ F × deck area every year:

    min B   s.t.  Σ_i spend rows of x_i ≤ B × (rows of one budget),   Σ_i E[poor deck area_t] of x_i ≤ F·D_t,

over mixtures x_i of each bridge's policies. Every policy of the fleet that meets the rule in expectation and
keeps the budget gives such a mixture (its bridges' marginal policies), so below this least budget **no
policy meets the rule in expectation**. It is solved by column generation: the master LP over the policies
found so far gives duals κ (budget rows) and μ (rule rows); each bridge's DP (:mod:`bridgefleet.planning.dp`,
no reward, prices only) finds its cheapest policy under them, and weak duality gives, for any κ, μ ≥ 0,

    B ≥ (Σ_i min_π [κ · spend_i(π) + μ · poor_i(π)] − μ · F·D) / (κ · rows of one budget),

the certified lower end reported (the LP value is the upper end). Every action is allowed to every bridge here
(a relaxation: the budget need not fit a treatment in one year), so the certificate holds for any budget.
Budgets that carry over use the cumulative rows (spend up to year t ≤ (t + 1) budgets). The search runs on
the DP's rating grid; with ``certify`` the lower end is recomputed at the best prices with certified values
(:mod:`bridgefleet.planning.certify`), so it holds for the simulator's continuous model (docs/planning.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np

from bridgefleet.planning.alike import Alike
from bridgefleet.planning.bound import add_master_columns, column_generation_options, run_highs
from bridgefleet.planning.certify import Certifier
from bridgefleet.planning.columns import MASTER_UNITS, ColumnPool, Columns, MasterUnits
from bridgefleet.planning.transitions import BridgeMDPs, prices_only

SLACK_PENALTY = 1e3
"""Budget multiples charged per allowance the rule is exceeded by, in the master LP's elastic rows."""


@dataclass
class LeastBudget:
    """Least budget scale per fleet (multiples of the sized annual budget).

    Attributes:
        lower: float64 (E,), certified: below it no policy meets the rule in expectation.
        upper: float64 (E,), the master LP's budget: a mixture of the policies found meets the rule at it
            (inf while the policies found cannot meet it at any budget).
        iterations: DP solves. seconds: wall time, s.
        certified: float64 (E,) or None: the lower end at the best prices with certified single-bridge values
            (``least_budget(certify=…)``): below it no policy of the simulator's model meets the rule in
            expectation, whatever the grid.
        prices: the best lower end's undiscounted per-year prices of a USD, float64 (E, 2, T) (urban, rural), and
            of a m² poor, float64 (E, T) (``least_budget(start=…)`` of another grid).
    """

    lower: np.ndarray
    upper: np.ndarray
    iterations: int
    seconds: float
    certified: np.ndarray | None = None
    prices: tuple[np.ndarray, np.ndarray] | None = None


def least_budget(mdps: BridgeMDPs, max_poor: float, share: tuple[float, float], carry_over: bool,
                 max_iter: int = 60, tol: float = 5e-3, smoothing: float = 0.5,
                 certify: Certifier | None = None, pool: ColumnPool | None = None,
                 master_units: int = MASTER_UNITS, keep_iters: int = 6,
                 start: tuple[np.ndarray, np.ndarray] | None = None) -> LeastBudget:
    """The least budget scale s (annual budget s × sized, urban ``share[0]`` of it) at which the relaxation
    meets "expected poor deck area ≤ ``max_poor`` × deck area at the end of every year", per fleet.

    Args:
        mdps: the fleets' bridges (:func:`bridgefleet.planning.bound.fleet_mdps`); their rewards are ignored
            and every action is allowed.
        max_poor: F, a share 0–1. share: the (urban, rural) USD of the sized budget, USD a year.
        carry_over: whether unspent budget carries over (cumulative budget rows).
        tol: stop when (upper − lower) / upper ≤ tol on every fleet. smoothing: Wentges smoothing of the prices
            toward those of the best lower end (the combination of valid prices is valid: weak duality is linear).
        certify: the same bridges' certified values (any grid step; :func:`bridgefleet.planning.bound.fleet_certifier`)
            for ``LeastBudget.certified``.
        pool: where to keep the policies found, valued with the bridges' rewards
            (:class:`bridgefleet.planning.columns.ColumnPool`): cheap policies that meet the rule, from which the
            bound's price search at a budget can start (``lagrangian_bound(pool=…)``).
        keep_iters: a column that treats is dropped from the master LP once the LP has not used it in this many
            solves (measured on dc-2019, 60 solves: HiGHS 11.2 s with every column kept, 2.1 s pruned).
        master_units: the most convexity rows of a fleet's master LP (larger fleets in blocks of bridges,
            :class:`bridgefleet.planning.columns.MasterUnits`; the lower end is still every bridge's own DP's).
            The bound's (the same blocks), so the pool's columns fit the levels' price searches.
        start: the prices of the second DP solve (the first, at prices 0, gives every bridge's do-nothing column),
            as ``LeastBudget.prices`` (e.g. of the same bridges on a coarser grid); None: the master LP's.

    Raises:
        ValueError: ``max_poor`` outside [0, 1].
    """
    if not 0.0 <= max_poor <= 1.0:
        raise ValueError(f"--rule {max_poor}: must be a share in [0, 1] (0.10 for FHWA's rule)")
    started = time.perf_counter()
    free = prices_only(mdps)
    alike = Alike.prices_only(free)  # one DP a class of bridges alike up to scale
    e_n = int(mdps.fleet.max()) + 1
    b_n = mdps.n // e_n
    t_n = mdps.horizon
    disc = mdps.gamma ** np.arange(t_n)
    rows = np.tril(np.ones((t_n, t_n))) if carry_over else np.eye(t_n)  # (M, T) over years
    one = rows.sum(1)  # budgets each row allows, per unit budget (t + 1 cumulative, else 1)
    deck = mdps.deck.reshape(e_n, b_n)
    allowance = max_poor * deck.sum(1)  # m² per year
    units = MasterUnits.per_fleet(mdps, master_units)
    masters = [_Master(units[e].agency, rows, one, np.asarray(share, float), allowance[e], t_n) for e in range(e_n)]
    lower = np.zeros(e_n)
    upper = np.full(e_n, np.inf)
    price_cost = np.zeros((e_n, 2, t_n))  # undiscounted per-year prices of one USD (urban, rural)
    price_poor = np.zeros((e_n, t_n))  # of one m² poor
    worth = np.zeros(e_n)  # Σ of the budget rows' duals at these prices
    best_cost, best_poor, best_worth = price_cost.copy(), price_poor.copy(), worth.copy()  # of the best lower end
    active = np.ones(e_n, dtype=bool)  # fleets whose two ends are still apart
    it = 0
    for it in range(1, max_iter + 1):
        pc = price_cost[mdps.fleet, mdps.agency] / disc  # the DP discounts: step prices
        pp = price_poor[mdps.fleet] / disc * mdps.deck[:, None]
        sol = alike.solve(pc, pp, active[mdps.fleet], mdps.utility, mdps.poor_step)
        poor = sol.exp_poor * mdps.deck[:, None]
        reward = sol.exp_utility - mdps.cost_lambda * (sol.exp_cost * disc).sum(1)  # each policy's own return
        dual = -sol.value0.reshape(e_n, b_n).sum(1)  # Σ_i min_π κ·spend + μ·poor
        if it > 1:  # weak duality at the prices this DP used
            gap = dual - (price_poor * allowance[:, None]).sum(1)
            lb = np.where(worth > 0, gap / np.maximum(worth, 1e-300), np.where(gap > 1e-9, np.inf, 0.0))
            better = active & (lb > lower)
            lower[better] = lb[better]
            best_cost[better], best_poor[better], best_worth[better] = (price_cost[better], price_poor[better],
                                                                        worth[better])
        for e in np.flatnonzero(active):
            sl = slice(e * b_n, (e + 1) * b_n)
            found = (price_cost[e], np.zeros((2, t_n)), price_poor[e])  # the prices this solve priced, no reward
            masters[e].add(units[e].columns(reward[sl], sol.exp_cost[sl], sol.exp_count[sl], poor[sl], sol.used[sl],
                                            found, reward_weight=0.0))
            value, kappa, mu, w, met = masters[e].solve()
            masters[e].prune(keep_iters)
            if met:
                upper[e] = value
            if it == 1 and start is not None:  # another grid's best prices instead of this LP's
                price_cost[e], price_poor[e] = start[0][e], start[1][e]
                worth[e] = (price_cost[e] * np.asarray(share, float)[:, None]).sum()  # κ · one budget's USD
            else:
                a = smoothing if it > 1 and lower[e] > 0 else 0.0  # Wentges: toward the best prices so far
                price_cost[e] = a * best_cost[e] + (1 - a) * kappa
                price_poor[e] = a * best_poor[e] + (1 - a) * mu
                worth[e] = a * best_worth[e] + (1 - a) * w
            active[e] = not (np.isfinite(upper[e]) and upper[e] - lower[e] <= tol * max(upper[e], 1e-9))
        if not active.any():
            break
    if pool is not None:  # the policies of the last LPs' mixtures, and doing nothing
        for e, master in enumerate(masters):
            pool.add(e, master.in_use(), (e_n, units[0].n, t_n, mdps.utility.shape[1]))
    certified = None
    if certify is not None:  # weak duality at the best prices, with values that bound the continuous model's
        value0 = alike.expand(certify.values(best_cost[mdps.fleet, mdps.agency] / disc, np.zeros((mdps.n, t_n)),
                                             best_poor[mdps.fleet] / disc * mdps.deck[:, None], reward=False,
                                             bridges=alike.rep))
        gap = -value0.reshape(e_n, b_n).sum(1) - (best_poor * allowance[:, None]).sum(1)
        certified = np.where(best_worth > 0, np.maximum(gap, 0.0) / np.maximum(best_worth, 1e-300), 0.0)
    return LeastBudget(lower, upper, it, time.perf_counter() - started, certified, (best_cost, best_poor))


class _Master:
    """One fleet's master LP: min s + P Σ y  s.t.  Σ_k x_k (rows · spend_k) / (one × share) − s ≤ 0 per agency
    and row, Σ_k x_k poor_k,t / allowance − y_t ≤ 1, Σ_{k of bridge i} x_k = 1; x, y, s ≥ 0."""

    def __init__(self, agency: np.ndarray, rows: np.ndarray, one: np.ndarray, share: np.ndarray,
                 allowance: float, t_n: int):
        self.agency, self.rows, self.t_n = agency, rows, t_n
        m = rows.shape[0]
        self.scale = 1.0 / np.maximum(share[:, None] * one[None, :], 1.0)  # (2, M): per USD of the row's budget
        self.poor_scale = 1.0 / max(allowance, 1e-9)
        self.n_ub = 2 * m + t_n
        b_n = len(agency)
        self.h = highspy.Highs()
        column_generation_options(self.h)
        lower = np.concatenate([np.full(self.n_ub, -highspy.kHighsInf), np.ones(b_n)])
        upper = np.concatenate([np.zeros(2 * m), np.ones(t_n), np.ones(b_n)])
        self.h.addRows(len(lower), lower, upper, 0, np.zeros(len(lower), dtype=np.int32),
                       np.zeros(0, dtype=np.int32), np.zeros(0))
        # s (the budget scale): −1 in every budget row; y_t: −1 in rule row t
        self.h.addCols(1, np.array([1.0]), np.zeros(1), np.array([highspy.kHighsInf]), 2 * m,
                       np.zeros(1, dtype=np.int32), np.arange(2 * m, dtype=np.int32), -np.ones(2 * m))
        self.h.addCols(t_n, np.full(t_n, SLACK_PENALTY), np.zeros(t_n), np.full(t_n, highspy.kHighsInf), t_n,
                       np.arange(t_n, dtype=np.int32), (2 * m + np.arange(t_n)).astype(np.int32), -np.ones(t_n))
        self.n_fixed = 1 + t_n
        self.keys: set[tuple[int, float]] = set()
        self.cols = Columns.empty(t_n)
        self.key = np.zeros(0)  # each column's fingerprint
        self.x = np.zeros(0)  # the last solve's weight of each column
        self.idle = np.zeros(0, dtype=np.int64)  # solves since the LP last used each column

    def add(self, cols: Columns) -> None:
        """Each bridge's policy (one column per bridge: spend USD and poor deck area m², (B, T)) as a column
        unless already one."""
        spend, poor = cols.spend, cols.poor
        key = cols.fingerprint()
        new = [i for i, k in enumerate(key.tolist()) if (i, k) not in self.keys]
        if not new:
            return
        self.keys.update((i, float(key[i])) for i in new)
        idx = np.array(new)
        self.cols = self.cols + cols.take(idx)
        self.key = np.concatenate([self.key, key[idx]])
        self.idle = np.concatenate([self.idle, np.zeros(len(idx), dtype=np.int64)])
        m = self.rows.shape[0]
        dense = np.zeros((len(idx), self.n_ub))
        g = self.agency[idx]
        use = spend[idx] @ self.rows.T  # (k, M)
        for a in (0, 1):
            dense[:, a * m : (a + 1) * m] = np.where((g == a)[:, None], use * self.scale[a], 0.0)
        dense[:, 2 * m : 2 * m + self.t_n] = poor[idx] * self.poor_scale
        dense[np.abs(dense) < 1e-9] = 0.0
        add_master_columns(self.h, np.zeros(len(idx)), dense, idx, len(self.agency))

    def solve(self) -> tuple[float, np.ndarray, np.ndarray, float, bool]:
        """(budget scale of the LP, per-year USD prices (2, T), per-year m² prices (T,), the budget rows' duals
        summed (what one unit of budget scale is worth under these prices), rule met)."""
        sol = run_highs(self.h, "least-budget LP")
        x = np.asarray(sol.col_value)
        self.x = x[self.n_fixed :]
        self.idle = np.where(self.x > 1e-9, 0, self.idle + 1)
        row = np.maximum(-np.asarray(sol.row_dual)[: self.n_ub], 0.0)
        m = self.rows.shape[0]
        kappa = np.stack([(row[a * m : (a + 1) * m] * self.scale[a]) @ self.rows for a in (0, 1)])  # (2, T)
        mu = row[2 * m :] * self.poor_scale
        met = float(x[1 : self.n_fixed].sum()) <= 1e-9
        return float(x[0]), kappa, mu, float(row[: 2 * m].sum()), met

    def prune(self, keep_iters: int) -> None:
        """Drop the columns that treat and that the LP has not used in its last ``keep_iters`` solves (the
        do-nothing ones, which keep it feasible, stay); a policy found again later is added again."""
        drop = (self.idle >= keep_iters) & (self.cols.used != 0)
        if not drop.any():
            return
        self.h.deleteCols(int(drop.sum()), (self.n_fixed + np.flatnonzero(drop)).astype(np.int32))
        keep = ~drop
        self.cols, self.key, self.x, self.idle = self.cols.take(keep), self.key[keep], self.x[keep], self.idle[keep]
        self.keys = set(zip(self.cols.bridge.tolist(), self.key.tolist(), strict=True))

    def in_use(self) -> Columns:
        """The columns of the last LP's mixture and the do-nothing ones (in the order added)."""
        x = np.concatenate([self.x, np.zeros(len(self.cols.reward) - len(self.x))])
        return self.cols.take((x > 1e-9) | (self.cols.used == 0))
