"""The planner's value tables read where the bridges are: each bridge's row of the DP's tables at its state now,
the reachable rows of a year (:class:`bridgefleet.planning.dp.Layout`), and each action's benefit over doing
nothing interpolated at the bridge's rating, for every fleet and bridge at once (Numba kernels; the
``lagrangian`` planner of :mod:`bridgefleet.planning.planner` calls them each year)."""

from __future__ import annotations

import numba as nb
import numpy as np

from bridgefleet.planning.dp import Layout, slot_offset

__all__ = ["benefits", "state_layout", "state_rows"]


@nb.njit(cache=True, nogil=True)
def _interp(row, x, h):  # pragma: no cover - compiled
    g_n = row.shape[0]
    pos = x / h
    j = min(max(int(pos), 0), g_n - 2)
    f = min(max(pos - j, 0.0), 1.0)
    return (1.0 - f) * row[j] + f * row[j + 1]


@nb.njit(cache=True, nogil=True)
def state_rows(t, ysm, replaced, ysm0, index, r_n, rt_out, row_out):  # pragma: no cover - compiled
    """Each bridge's rate kind and row of the DP's tables at year t, int64 (E, B) into ``rt_out``, ``row_out``.

    Rate kind 1 once replaced (where the MDPs have it); row t + 1 if never maintained since the start (ysm =
    ysm0 + t), else the years since maintenance, 1 … t + 1. ysm: float32 (E, B); replaced: bool (E, B);
    index: int (E, B), the bridge's row of the MDPs.
    """
    e_n, b_n = ysm.shape
    for e in range(e_n):
        for j in range(b_n):
            m = index[e, j]
            rt = 1 if (replaced[e, j] and r_n == 2) else 0
            y = ysm[e, j]
            rt_out[e, j] = rt
            row_out[e, j] = t + 1 if rt == 0 and abs(y - (ysm0[m] + t)) < 0.5 else min(max(int(y + 0.5), 1), t + 1)


@nb.njit(cache=True, nogil=True)
def benefits(eu, base, lo, diag, t, cond, rt_of, row_of, index, cost, feasible, gain, h, cost_lambda, top,
             ben):  # pragma: no cover - compiled
    """Benefit of each action over doing nothing, float64 (E, B, 5) into ``ben`` (−inf: not available; NaN: the
    state is not in the window's tables).

    Q(a) − Q(0) from the tables EU of the later years' prices, without this year's price: this year's budget
    is met exactly by :func:`bridgefleet.planning.knapsack.allocate`, not priced. eu: float32 (M, R, E, G),
    the tables of the window [lo, …) in the :class:`bridgefleet.planning.dp.Layout` (base, diag); index: int
    (E, B) row of each bridge in the tables (and in cost, feasible, diag); cond: float32 (E, B); rt_of, row_of:
    int (E, B), :func:`state_rows`.
    """
    e_n, b_n = cond.shape
    r_n = eu.shape[1]
    d_n = diag.shape[2]
    s = t - base
    off = slot_offset(s, d_n) - slot_offset(lo - base, d_n)
    for e in range(e_n):
        for j in range(b_n):
            m = index[e, j]
            rt = rt_of[e, j]
            row = row_of[e, j]
            k = row if row <= s else -1
            for d in range(d_n):
                if k < 0 and diag[m, rt, d] >= 0 and diag[m, rt, d] + s == row:
                    k = s + 1 + d
            if k < 0:
                for a in range(5):
                    ben[e, j, a] = np.nan
                continue
            c = cond[e, j]
            q0 = _interp(eu[m, rt, off + k], c, h)
            ben[e, j, 0] = 0.0
            for a in range(1, 5):
                ben[e, j, a] = -np.inf
                if not feasible[m, a] or (a == 4 and r_n < 2):
                    continue
                v = (eu[m, 1, off, top] if a == 4
                     else _interp(eu[m, rt, off], max(min(c + gain[a], top * h), c), h))
                ben[e, j, a] = v - cost_lambda * cost[m, a] - q0


def state_layout(t: int, rt: np.ndarray, row: np.ndarray, index: np.ndarray, n: int, r_n: int) -> Layout:
    """The :class:`bridgefleet.planning.dp.Layout` from year t of the states (rt, row) int (E, B) of bridges
    ``index`` int (E, B) of n: each bridge's distinct rows at t are its diagonals."""
    span = t + 3
    key = np.unique((index.ravel() * r_n + rt.ravel()) * span + row.ravel())
    group, rows = key // span, key % span  # group = bridge × R + rate kind
    first = np.r_[0, np.flatnonzero(np.diff(group)) + 1]
    rank = np.arange(len(key)) - np.repeat(first, np.diff(np.r_[first, len(key)]))
    diag = np.full((n * r_n, int(rank.max()) + 1), -1, dtype=np.int64)
    diag[group, rank] = rows
    return Layout(t, diag.reshape(n, r_n, -1))
