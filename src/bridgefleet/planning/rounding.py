"""One policy per bridge from the relaxation's mixture: the rounding the ``lagrangian`` planner follows where a
poor deck-area rule binds.

At the relaxation's best prices most bridges are indifferent between the policies its master LP mixes (each
costs exactly what the budget's price says it is worth), so a planner that ranks treatments by their priced
benefit (the knapsack) breaks those ties by noise: on dc-2019 at 0.28 × the sized budget it left 16 % of NHS
deck area poor in year 30 where the relaxation's mixture keeps ≤ 10 % every year within the same budget. Here
each bridge (each unit of the master LP) is instead given one of the policies found, chosen by a small integer
program over the master's columns: the most return whose expected spend keeps every budget row and whose
expected poor deck area keeps every rule row (elastic, so an answer always exists). With every bridge following
its own policy the fleet's expected spend and poor deck area are the sums of its columns', so the rounded plan
meets the rows in expectation on the search grid; the per-path budget is then kept by the planner's knapsack.
This is the rounding of a Dantzig–Wolfe master to an integer point (Vanderbeck, "On Dantzig–Wolfe decomposition
in integer programming", Operations Research 48(1), 2000), solved by HiGHS's branch and bound
(``scipy.optimize.milp``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from bridgefleet.planning.columns import Columns

NODE_LIMIT = 100
"""Most branch-and-bound nodes (a limit on nodes, not on seconds, so a rounding is the same on any machine);
HiGHS then returns the best integer point found (the LP's largest weights where it found none)."""


def round_mixture(cols: Columns, x: np.ndarray, unit_agency: np.ndarray, spend_rows: np.ndarray,
                  spend_b: np.ndarray, count_rows: np.ndarray | None, count_b: np.ndarray | None,
                  poor_b: np.ndarray | None, node_limit: int = NODE_LIMIT) -> np.ndarray:
    """The column each unit follows, int64 (U,) indices into ``cols``.

    Args:
        cols: one fleet's K columns (every unit has at least one; do-nothing columns keep the budget rows
            feasible). x: float64 (K,), their weights in the master LP (the fallback's choice: the largest).
        unit_agency: int64 (U,), 0 urban, 1 rural.
        spend_rows: float64 (M, T), the budget rows over years (identity, or lower-triangular ones with
            carry-over); spend_b: float64 (2, M), USD each row allows per agency. count_rows, count_b: the same for
            treatments (M', T) and (2, M'), or None.
        poor_b: float64 (T,), m² of deck area the rule allows poor at the end of each year, or None (no rule).
        node_limit: branch-and-bound nodes of the integer program.

    Returns:
        int64 (U,): the chosen column of each unit, maximising the summed return within the budget rows with the
        least excess over the rule rows (the excess first, then the return). First the LP over every column
        (these rows may be tighter than the master's: an aim below the rule), then the integer program over the
        policies that LP mixes and doing nothing (a basic LP solution mixes at most one policy more per coupling
        row than there are units, so most units have one candidate: on dc-2019 at 0.28 × the sized budget, 325 of
        1,617 columns, 244 units, HiGHS 3–7 s for 50–500 nodes and a return within 0.1 %; over all 1,617, 36 s).
    """
    lp = _solve(cols, unit_agency, spend_rows, spend_b, count_rows, count_b, poor_b, integral=False)
    x = x if lp is None else lp  # the master's own mixture only where HiGHS failed
    keep = np.flatnonzero((x > 1e-9) | (cols.used == 0))  # the mixture's policies, and doing nothing
    part = cols.take(keep)
    y = _solve(part, unit_agency, spend_rows, spend_b, count_rows, count_b, poor_b, integral=True,
               node_limit=node_limit)
    return keep[_largest(part.bridge, x[keep] if y is None else y, len(unit_agency))]


def _largest(unit: np.ndarray, weight: np.ndarray, u_n: int) -> np.ndarray:
    """int64 (U,): the index of each unit's largest weight."""
    order = np.lexsort((weight, unit))  # by unit, then weight: the last of each unit is its choice
    last = np.r_[np.flatnonzero(np.diff(unit[order])), len(order) - 1]
    pick = np.zeros(u_n, dtype=np.int64)
    pick[unit[order][last]] = order[last]
    return pick


def _solve(cols: Columns, unit_agency: np.ndarray, spend_rows: np.ndarray, spend_b: np.ndarray,
           count_rows: np.ndarray | None, count_b: np.ndarray | None, poor_b: np.ndarray | None, integral: bool,
           node_limit: int = NODE_LIMIT) -> np.ndarray | None:
    """The weights float64 (K,) of the best mixture (``integral``: one column per unit) within the rows, or None
    where HiGHS returned no point."""
    k_n = len(cols.reward)
    u_n = len(unit_agency)
    unit = cols.bridge
    g = unit_agency[unit]
    blocks = []  # (rows over years, per-year amounts (K, T), allowed (2, M))
    blocks.append((spend_rows, cols.spend, spend_b))
    if count_rows is not None:
        blocks.append((count_rows, cols.count, count_b))
    a_rows, ub = [], []
    for rows, amount, allowed in blocks:
        use = amount @ rows.T  # (K, M)
        for a in (0, 1):
            scale = 1.0 / np.maximum(allowed[a], 1.0)
            a_rows.append(np.where((g == a)[:, None], use * scale, 0.0).T)
            ub.append(allowed[a] * scale)
    coupling = np.vstack(a_rows)
    t_rule = 0 if poor_b is None else len(poor_b)
    r = cols.reward
    spread = max(float(np.abs(r).max()), 1e-9)
    c = np.concatenate([-r / spread, np.full(t_rule, 4.0 * u_n + 1.0)])  # any excess costs more than all returns
    parts = [sp.hstack([sp.csr_matrix(coupling), sp.csr_matrix((coupling.shape[0], t_rule))])]
    lo, hi = [np.full(coupling.shape[0], -np.inf)], [np.concatenate(ub)]
    if t_rule:
        scale = 1.0 / np.maximum(poor_b, 1e-9)
        parts.append(sp.hstack([sp.csr_matrix((cols.poor * scale).T), -sp.identity(t_rule)]))
        lo.append(np.full(t_rule, -np.inf))
        hi.append(np.ones(t_rule))
    conv = sp.csr_matrix((np.ones(k_n), (unit, np.arange(k_n))), shape=(u_n, k_n))
    parts.append(sp.hstack([conv, sp.csr_matrix((u_n, t_rule))]))
    lo.append(np.ones(u_n))
    hi.append(np.ones(u_n))
    a = sp.vstack(parts, format="csr")
    integrality = np.concatenate([np.full(k_n, int(integral)), np.zeros(t_rule)])
    bounds = Bounds(np.zeros(k_n + t_rule), np.concatenate([np.ones(k_n), np.full(t_rule, np.inf)]))
    res = milp(c, constraints=LinearConstraint(a, np.concatenate(lo), np.concatenate(hi)), integrality=integrality,
               bounds=bounds, options={"node_limit": node_limit, "mip_rel_gap": 1e-3, "disp": False})
    return None if res.x is None else res.x[:k_n]
