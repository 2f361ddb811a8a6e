"""The relaxation's mixture as a policy: the randomized rounding the ``lagrangian`` planner follows where a poor
deck-area rule binds.

At the relaxation's best prices most bridges are indifferent between the policies its master LP mixes (each
costs exactly what the budget's price says it is worth), so a planner that ranks treatments by their priced
benefit (the knapsack) breaks those ties by noise: on dc-2019 at 0.28 × the sized budget it left 16 % of NHS
deck area poor in year 30 where the relaxation's mixture keeps ≤ 10 % every year within the same budget. Here
the mixture itself is followed: an LP over the master's columns (the most return whose expected spend keeps
every budget row and whose expected poor deck area keeps every rule row, elastic so an answer always exists)
gives each unit of bridges a weight on each of its policies (:func:`mixture_weights`), and each sample path
follows one policy per unit drawn with those weights (:func:`assign`). Over the draws, the fleet's expected
spend and poor deck area are exactly the mixture's, on the grid its candidates were valued on (the planner
values them on its own grid, where it follows them); the per-path budget is then kept by the planner's
knapsack. This is randomized rounding (Raghavan & Thompson, "Randomized rounding", Combinatorica 7(4), 1987)
of a Dantzig–Wolfe master (Vanderbeck, Operations Research 48(1), 2000); the draws are stratified over the
sample paths of one fleet (each policy followed on ⌊E × weight⌋ or ⌈E × weight⌉ of E paths), so the mean over
the paths keeps the mixture's expectation. An integer program choosing one policy per unit instead (HiGHS, 100
nodes) lost the rule where the mixture needs many units split: on Indiana at 0.15 × the sized budget the LP's
mixture keeps 10.0 % of deck area poor from year 5 on, the integer program's choice 13.4 % (`/tmp` script,
2026-12-03).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from bridgefleet.planning.bound import coupling_rows
from bridgefleet.planning.columns import Columns
from bridgefleet.planning.rows import CouplingRows


def mixture_weights(cols: Columns, x: np.ndarray, unit_agency: np.ndarray, rows: CouplingRows, e: int,
                    poor_b: np.ndarray | None = None, budget_share: float = 1.0,
                    evaluate: Callable[[Columns, np.ndarray], Columns] | None = None,
                    always: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The policies each unit mixes and their weights: (columns int64 (K',) indices into ``cols``, weights
    float64 (K',) > 0 summing to 1 over each unit's columns).

    Args:
        cols: fleet e's K columns (every unit has at least one; do-nothing columns keep the budget rows
            feasible). x: float64 (K,), their weights in the master LP (the fallback where HiGHS fails).
        unit_agency: int64 (U,), 0 urban, 1 rural.
        rows: the fleets' coupling rows (:func:`bridgefleet.planning.bound.fleet_mdps`): budget USD (and
            treatments) per agency and row, and the rule's m² allowed poor each year (elastic), if any.
        poor_b: float64 (T,), m² allowed poor at the end of each year instead of the rows' own (an aim below the
            rule), or None.
        budget_share: the share of each budget row the mixture may spend in expectation (below 1: a margin for
            the paths whose spend runs above its expectation), 0–1.
        evaluate: the candidates' spend, treatments and poor deck area as the planner will follow them (its own
            rating grid: the search grid's policies solved again there can leave more deck area poor, on dc-2019
            at 0.28 × the sized budget 10.4–11.9 % a year against 8.9–10.0 % on the search grid), given the
            candidates and their indices into ``cols``; None: the columns' own.
        always: bool (K,), columns the second LP always weighs (those found on the planner's own grid, which the
            first LP, on the columns' own values, may pass over for ones that look better there); None: none.

    Returns:
        The mixture with the least excess over the rule rows, then the most return, within the budget rows: first
        the LP over every column, then, over the policies it mixes and doing nothing as ``evaluate`` values them,
        the same LP again (a basic LP solution mixes at most one policy more per coupling row than there are
        units, so most units keep one policy).
    """
    kinds, poor_scale, rhs = rows.scaled(e, poor_b)
    rhs = rhs.copy()
    rhs[: len(rhs) - len(poor_scale)] *= budget_share
    lp = _solve(cols, unit_agency, kinds, poor_scale, rhs)
    x = x if lp is None else lp  # the master's own mixture only where HiGHS failed
    keep = np.flatnonzero((x > 1e-9) | (cols.used == 0) | (False if always is None else always))  # and doing nothing
    part = cols.take(keep)
    if evaluate is not None:
        part = evaluate(part, keep)
    y = _solve(part, unit_agency, kinds, poor_scale, rhs)
    y = np.maximum(x[keep] if y is None else y, 0.0)
    y /= np.bincount(part.bridge, y, minlength=len(unit_agency))[part.bridge]  # each unit's row sums to 1 (rounding)
    on = y > 1e-9
    return keep[on], y[on]


def assign(unit: np.ndarray, weight: np.ndarray, u_n: int, paths: int, rng: np.random.Generator) -> np.ndarray:
    """The policy each of ``paths`` sample paths follows for each unit, int64 (paths, U): indices into ``unit``.

    Stratified: a unit's policy k of weight w_k is followed on ⌊paths × w_k⌋ or ⌈paths × w_k⌉ paths, and on each
    path with probability w_k (systematic sampling with a random start and a random order of the paths, drawn
    for each unit, so the units' draws are independent).

    Args:
        unit: int64 (K,), each policy's unit 0 … U − 1. weight: float64 (K,) ≥ 0, summing to 1 over each unit's
            policies (every unit has one). u_n: U. paths: the sample paths (≥ 1). rng: the draws' generator.
    """
    order = np.lexsort((np.arange(len(unit)), unit))
    u_sorted = unit[order]
    first = np.r_[0, np.flatnonzero(np.diff(u_sorted)) + 1]  # each unit's first and last policy, in order
    last = np.r_[first[1:] - 1, len(u_sorted) - 1]
    cs = np.cumsum(weight[order])
    base = np.r_[0.0, cs][first]  # the sum before each unit
    within = (cs - base[u_sorted]) / np.maximum(cs[last] - base, 1e-300)[u_sorted]  # (0, 1], 1 at a unit's last
    edge = u_sorted + within  # unit u's policies split [u, u + 1)
    rank = rng.permuted(np.tile(np.arange(paths), (u_n, 1)), axis=1).T  # (paths, U)
    point = np.arange(u_n) + (rank + rng.random(u_n)) / paths
    pos = np.clip(np.searchsorted(edge, point, side="right"), first, last)  # float rounding at a unit's ends
    return order[pos]


def _solve(cols: Columns, unit_agency: np.ndarray, kinds: list[tuple[np.ndarray, np.ndarray]],
           poor_scale: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """The weights float64 (K,) of the best mixture within the scaled rows
    (:meth:`bridgefleet.planning.rows.CouplingRows.scaled`), or None where HiGHS returned no point."""
    k_n = len(cols.reward)
    u_n = len(unit_agency)
    t_rule = len(poor_scale)
    coupling = sp.csr_matrix(coupling_rows(cols, unit_agency, kinds, poor_scale).T)  # (R, K)
    slack = sp.vstack([sp.csr_matrix((len(rhs) - t_rule, t_rule)), -sp.identity(t_rule)])  # elastic rule rows
    conv = sp.csr_matrix((np.ones(k_n), (cols.bridge, np.arange(k_n))), shape=(u_n, k_n))
    a = sp.vstack([sp.hstack([coupling, slack]), sp.hstack([conv, sp.csr_matrix((u_n, t_rule))])], format="csr")
    lo = np.concatenate([np.full(len(rhs), -np.inf), np.ones(u_n)])
    hi = np.concatenate([rhs, np.ones(u_n)])
    spread = max(float(np.abs(cols.reward).max()), 1e-9)
    c = np.concatenate([-cols.reward / spread, np.full(t_rule, 4.0 * u_n + 1.0)])  # excess costs more than returns
    bounds = Bounds(np.zeros(k_n + t_rule), np.concatenate([np.ones(k_n), np.full(t_rule, np.inf)]))
    res = milp(c, constraints=LinearConstraint(a, lo, hi), bounds=bounds, options={"disp": False})
    return None if res.x is None else res.x[:k_n]
