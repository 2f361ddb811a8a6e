"""An upper bound on the continuous single-bridge MDP's optimal value, whatever the rating grid.

The interpolating DP (:mod:`bridgefleet.planning.dp`) is accurate but its error has no sign: it interpolates
across the model's steps (the user cost below rating 5, the rate factors that change at whole ratings). This
module computes, for the same prices, functions Ū_t with Ū_t(c) ≥ V_t(c) at every continuous rating c, so the
Lagrangian L(κ) built on them bounds every budget-feasible policy of the simulator's model, not of a grid
model. The argument (docs/planning.md, "Why the bound is a bound"):

- Ū_t(c) = PL_t(c) + e_t(cell of c): PL_t is the continuous piecewise-linear function through grid values
  U_t(j) and e_t ≥ 0 one error allowance per cell [c_j, c_j+1). Ū_T = 0 = V_T.
- Expectations of a piecewise-linear function over a drop D are exact at grid points (the hat weights). Between
  two grid points, E[PL(p − D)] = linear + Σ_k Δ_k E[(p − D − c_k)⁺] with Δ_k the slope change of PL at c_k;
  each E[(p − D − c_k)⁺] is convex in p, so the chord through the cell's end values is above it, except for the
  concave kinks (Δ_k < 0), whose excess is at most h/4 × |Δ_k| × P(k' ≤ D/h < k' + 1) with k' the cell's
  distance to c_k (the chord gap of a convex function is at most h/4 times its slope increase). That adds
  ¼ Σ_k max(0, −second difference of U at k) × P(whole-step drop) to the cell's allowance.
- The allowance e itself is carried as a step function: a drop from the cell m ends in cell m − ⌊D/h⌋ or the
  one below, so the next allowance is Σ_n P(⌊D/h⌋ = n) max(e(m − n), e(m − n − 1)).
- The reward is linear in the rating except the critical penalty (a concave parabola: its chord is at most
  w × p × h² / 4 below it, ``BridgeMDPs.utility_gap``) and the steps at rating 5 (user cost, the rule's price),
  which lie on grid points and step up, so the chord across the cell below 5 is above the reward.
- Actions move a cell to a cell (the gains are whole steps, the new-structure rating is a grid point), the rate
  factor is constant within a cell (it changes at whole ratings: the chord at a cell's right end uses the
  cell's own factor), and the max over actions of lines on a cell is convex, so the chord through the end
  values of the best action is above it.

The error of Ū is O(h²) where the interpolating DP's is O(h) near the steps, at about twice the DP's cost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba as nb
import numpy as np

from bridgefleet.planning.dp import _at, _expect, _shock, continuation
from bridgefleet.planning.transitions import BridgeMDPs, prices_only

_NO_SHOCK = np.zeros(4)


@nb.njit(cache=True, nogil=True)
def _allowance(f, e, g):  # pragma: no cover - compiled
    """g[j] = max(e[j], e[j − 1]) + ¼ max(0, −(f[j+1] − 2 f[j] + f[j−1])) (f[−1] = f[0]: the rating floor;
    no kink at the top of the scale)."""
    g_n = f.shape[0]
    for j in range(g_n):
        left = f[j - 1] if j > 0 else f[0]
        kink = 0.0 if j == g_n - 1 else left - 2.0 * f[j] + f[j + 1]
        g[j] = max(e[j], e[j - 1] if j > 0 else e[0]) + 0.25 * max(0.0, -kink)


@nb.njit(cache=True, nogil=True, parallel=True)
def certify_kernel(utility, gap, cost, feasible, weights, n_taps, kind, fweights, f_taps, band, shock, shock_floor, top,
                   c0, shift, h, horizon, gamma, cost_lambda, price_cost, price_count, price_poor, poor_top,
                   value0):  # pragma: no cover - compiled
    """Ū_0 at the initial rating of each bridge into ``value0``; see :func:`certified_values`."""
    n_n, g_n = utility.shape
    r_n = weights.shape[1]
    t_n = horizon
    for n in nb.prange(n_n):
        w_n = kind[n]
        u_next = np.zeros((r_n, t_n + 2, g_n))
        e_next = np.zeros((r_n, t_n + 2, g_n))
        u_cur = np.zeros((r_n, t_n + 2, g_n))
        e_cur = np.zeros((r_n, t_n + 2, g_n))
        eu = np.zeros((r_n, t_n + 2, g_n))  # E[PL(p − D)] at grid p, the factor of p's cell
        eul = np.zeros((r_n, t_n + 2, g_n))  # the same with the factor of the cell below p (its chord's right end)
        ee = np.zeros((r_n, t_n + 2, g_n))  # allowance per cell
        f = np.empty(g_n)
        e = np.empty(g_n)
        g = np.empty(g_n)
        f1 = np.empty(g_n)
        e1 = np.empty(g_n)
        tmp = np.empty(g_n)
        cell_a = np.empty(g_n)
        cell_b = np.empty(g_n)
        for t in range(t_n - 1, -1, -1):
            pp = price_poor[n, t]
            for rt in range(r_n):
                for r in range(t + 2 if rt == 0 else t + 1):
                    kidx = r if r <= t else t_n + t
                    continuation(utility[n], u_next[rt, r + 1], gamma, pp, poor_top, f)
                    continuation(gap[n], e_next[rt, r + 1], gamma, 0.0, 0, e)
                    if shock[0] > 0.0:  # sudden damage: exact at grid points, allowance by whole-step drops
                        _allowance(f, e, g)
                        _shock(f, shock, f1)
                        _shock(g, shock_floor, e1)
                        f[:] = f1
                        e[:] = e1
                    _allowance(f, e, g)
                    w = weights[w_n, rt, kidx]
                    nt = n_taps[w_n, rt, kidx]
                    _expect(f, w, nt, band, _NO_SHOCK, tmp, eu[rt, r])
                    _expect(g, fweights[w_n, rt, kidx], f_taps[w_n, rt, kidx], band, _NO_SHOCK, tmp, ee[rt, r])
                    eul[rt, r, 0] = eu[rt, r, 0]
                    for j in range(1, g_n):
                        b = band[j - 1]
                        eul[rt, r, j] = eu[rt, r, j] if band[j] == b else _at(f, w, nt, b, j)
            pc = cost_lambda + price_cost[n, t]
            pn = price_count[n, t]
            for rt in range(r_n):
                for r in range(1, t + 2 if rt == 0 else t + 1):
                    for j in range(g_n):
                        last = j == g_n - 1
                        a_best = eu[rt, r, j]
                        b_best = a_best if last else eul[rt, r, j + 1]
                        e_best = ee[rt, r, j]
                        for a in range(1, 5):
                            if not feasible[n, a] or (a == 4 and r_n < 2):
                                continue
                            q = pc * cost[n, a] + pn
                            if a == 4:
                                ka, kb, ke = eu[1, 0, top], eu[1, 0, top], ee[1, 0, top]
                            elif j >= top:  # above the new-structure rating: the rating stays
                                ka = eu[rt, 0, j]
                                kb = ka if last else eul[rt, 0, j + 1]
                                ke = ee[rt, 0, j]
                            elif j + shift[a] >= top:  # the whole cell reaches the cap
                                ka, kb, ke = eu[rt, 0, top], eu[rt, 0, top], ee[rt, 0, top]
                            else:
                                i = j + shift[a]
                                ka, kb, ke = eu[rt, 0, i], eul[rt, 0, i + 1], ee[rt, 0, i]
                            a_best = max(a_best, ka - q)
                            b_best = max(b_best, kb - q)
                            e_best = max(e_best, ke)
                        cell_a[j] = a_best
                        cell_b[j] = b_best
                        e_cur[rt, r, j] = e_best
                    u_cur[rt, r, 0] = cell_a[0]
                    for j in range(1, g_n):
                        u_cur[rt, r, j] = max(cell_a[j], cell_b[j - 1])
            u_next, u_cur = u_cur, u_next
            e_next, e_cur = e_cur, e_next
        pos = c0[n] / h
        j0 = min(int(np.floor(pos)), g_n - 2)
        fr = min(max(pos - j0, 0.0), 1.0)
        cell = min(int(np.floor(pos + 1e-9)), g_n - 1)
        value0[n] = (1.0 - fr) * u_next[0, 1, j0] + fr * u_next[0, 1, j0 + 1] + e_next[0, 1, cell]



def certified_values(mdps: BridgeMDPs, price_cost: np.ndarray, price_count: np.ndarray,
                     price_poor: np.ndarray | None = None) -> np.ndarray:
    """Upper bounds on the optimal priced values of N bridges in the continuous model, float64 (N,).

    Args:
        mdps: the bridges, built with ``certify=True`` (:func:`bridgefleet.planning.transitions.bridge_mdps`).
        price_cost, price_count, price_poor: float64 (N, T) step prices as in :func:`bridgefleet.planning.dp.solve`
            (price_poor None: no rule).

    Returns:
        value0 with value0[n] ≥ max over policies of the expected discounted priced return of bridge n from its
        initial state (reward units), whatever the grid step; O(h²) above the continuous value.

    Raises:
        ValueError: ``mdps`` built without ``certify``.
    """
    if mdps.floor_weights is None:
        raise ValueError("certified_values needs BridgeMDPs built with certify=True")
    n, t_n = mdps.n, mdps.horizon
    pp = np.zeros((n, t_n)) if price_poor is None else np.ascontiguousarray(price_poor, dtype=np.float64)
    value0 = np.zeros(n)
    certify_kernel(mdps.utility, mdps.utility_gap, mdps.cost, mdps.feasible, mdps.weights, mdps.n_taps, mdps.kind,
                   mdps.floor_weights, mdps.floor_taps, mdps.band, mdps.shock, mdps.shock_floor, mdps.top, mdps.c0,
                   mdps.shift, mdps.h, t_n, mdps.gamma, mdps.cost_lambda,
                   np.ascontiguousarray(price_cost, dtype=np.float64),
                   np.ascontiguousarray(price_count, dtype=np.float64), pp, mdps.poor_top, value0)
    return value0


@dataclass
class Certifier:
    """Certified values of N bridges, built and solved in chunks of bridges whose arrays (rewards on the fine
    grid, costs, the deterioration weights of their cases) fit ``memory_bytes``, so memory does not grow with the
    fleet and a fine certificate fits a state's inventory.

    Attributes:
        build: the bridges of an int64 array of indices into the N, as :class:`BridgeMDPs` built with ``certify``
            (their ``agency`` and ``fleet`` need not be the fleet's: only their values are used).
        n: number of bridges. memory_bytes: the most the arrays of one chunk may take (the first chunk, 64
            bridges, measures how much a bridge takes).
    """

    build: Callable[[slice], BridgeMDPs]
    n: int
    memory_bytes: float = 2**30

    def values(self, price_cost: np.ndarray, price_count: np.ndarray, price_poor: np.ndarray | None = None,
               reward: bool = True, bridges: np.ndarray | None = None) -> np.ndarray:
        """:func:`certified_values` of the N bridges, float64 (N,), prices float64 (N, T) as there; with
        ``reward`` False only the prices count and every action is allowed (the least budget's pricing).
        ``bridges``: int64 (K,), only these (ascending; the result is then (K,), in their order)."""
        which = np.arange(self.n) if bridges is None else np.asarray(bridges, dtype=np.int64)
        out = np.empty(len(which))
        lo, size = 0, min(len(which), 64)
        while lo < len(which):
            part = slice(lo, min(lo + size, len(which)))
            rows = which[part]
            m = self.build(rows)
            m = m if reward else prices_only(m)
            out[part] = certified_values(m, price_cost[rows], price_count[rows],
                                         None if price_poor is None else price_poor[rows])
            per_bridge = m.nbytes / max(len(rows), 1)  # the chunk's arrays, weights included
            size = max(1, int(self.memory_bytes // max(per_bridge, 1.0)))
            lo = part.stop
        return out
