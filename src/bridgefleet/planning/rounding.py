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
meets the rows in expectation on the grid its candidates were valued on (the planner values them on its own
grid, where it follows them); the per-path budget is then kept by the planner's knapsack.
This is the rounding of a Dantzig–Wolfe master to an integer point (Vanderbeck, "On Dantzig–Wolfe decomposition
in integer programming", Operations Research 48(1), 2000), solved by HiGHS's branch and bound
(``scipy.optimize.milp``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from bridgefleet.planning.bound import _Rows, coupling_rows
from bridgefleet.planning.columns import Columns

NODE_LIMIT = 100
"""Most branch-and-bound nodes (a limit on nodes, not on seconds, so a rounding is the same on any machine);
HiGHS then returns the best integer point found (the LP's largest weights where it found none)."""


def round_mixture(cols: Columns, x: np.ndarray, unit_agency: np.ndarray, rows: _Rows, e: int,
                  poor_b: np.ndarray | None = None, node_limit: int = NODE_LIMIT,
                  evaluate: Callable[[Columns, np.ndarray], Columns] | None = None) -> np.ndarray:
    """The column each unit follows, int64 (U,) indices into ``cols``.

    Args:
        cols: fleet e's K columns (every unit has at least one; do-nothing columns keep the budget rows
            feasible). x: float64 (K,), their weights in the master LP (the fallback's choice: the largest).
        unit_agency: int64 (U,), 0 urban, 1 rural.
        rows: the fleets' coupling rows (:func:`bridgefleet.planning.bound.fleet_mdps`): budget USD (and
            treatments) per agency and row, and the rule's m² allowed poor each year (elastic), if any.
        poor_b: float64 (T,), m² allowed poor at the end of each year instead of the rows' own (an aim below the
            rule), or None.
        node_limit: branch-and-bound nodes of the integer program.
        evaluate: the candidates' spend, treatments and poor deck area as the planner will follow them (its own
            rating grid: the search grid's policies solved again there can leave more deck area poor, on dc-2019
            at 0.28 × the sized budget 10.4–11.9 % a year against 8.9–10.0 % on the search grid), for the integer
            program, given the candidates and their indices into ``cols``; None: the columns' own.

    Returns:
        int64 (U,): the chosen column of each unit, maximising the summed return within the budget rows with the
        least excess over the rule rows (the excess first, then the return). First the LP over every column
        (these rows may be tighter than the master's: an aim below the rule), then the integer program over the
        policies that LP mixes and doing nothing (a basic LP solution mixes at most one policy more per coupling
        row than there are units, so most units have one candidate: on dc-2019 at 0.28 × the sized budget the master's
        LP mixes 325 of 1,617 columns for 244 units; the LP and the integer program took 4 s with 50 nodes (return
        −6,883) and 7 s with 500 (−6,671); the integer program over all 1,617 columns took 36 s)."""
    kinds, poor_scale, rhs = rows.scaled(e, poor_b)
    lp = _solve(cols, unit_agency, kinds, poor_scale, rhs, integral=False)
    x = x if lp is None else lp  # the master's own mixture only where HiGHS failed
    keep = np.flatnonzero((x > 1e-9) | (cols.used == 0))  # the mixture's policies, and doing nothing
    part = cols.take(keep)
    if evaluate is not None:
        part = evaluate(part, keep)
    y = _solve(part, unit_agency, kinds, poor_scale, rhs, integral=True, node_limit=node_limit)
    return keep[_largest(part.bridge, x[keep] if y is None else y, len(unit_agency))]


def _largest(unit: np.ndarray, weight: np.ndarray, u_n: int) -> np.ndarray:
    """int64 (U,): the index of each unit's largest weight."""
    order = np.lexsort((weight, unit))  # by unit, then weight: the last of each unit is its choice
    last = np.r_[np.flatnonzero(np.diff(unit[order])), len(order) - 1]
    pick = np.zeros(u_n, dtype=np.int64)
    pick[unit[order][last]] = order[last]
    return pick


def _solve(cols: Columns, unit_agency: np.ndarray, kinds: list[tuple[np.ndarray, np.ndarray]],
           poor_scale: np.ndarray, rhs: np.ndarray, integral: bool, node_limit: int = NODE_LIMIT) -> np.ndarray | None:
    """The weights float64 (K,) of the best mixture (``integral``: one column per unit) within the scaled rows
    (:meth:`bridgefleet.planning.bound._Rows.scaled`), or None where HiGHS returned no point."""
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
    integrality = np.concatenate([np.full(k_n, int(integral)), np.zeros(t_rule)])
    bounds = Bounds(np.zeros(k_n + t_rule), np.concatenate([np.ones(k_n), np.full(t_rule, np.inf)]))
    res = milp(c, constraints=LinearConstraint(a, lo, hi), integrality=integrality, bounds=bounds,
               options={"node_limit": node_limit, "mip_rel_gap": 1e-3, "disp": False})
    return None if res.x is None else res.x[:k_n]
