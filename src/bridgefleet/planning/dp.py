"""Backward induction for N single-bridge MDPs under budget prices, and the forward pass of their policies.

The state of one bridge at year t is (rating on the grid, years since maintenance y, rate kind). Reachable
y at year t are 1 … t (maintained at some earlier year) and ysm0 + t (never maintained), so the value table
of year t has t + 1 rows plus row 0 for "just maintained" (the state after an action, before deterioration).
Age does not enter the reward or the deterioration, so it is not part of the state. One year:

    Q_t(c, y, a) = EU_t(post_a(c), y_a) − (λ + price_t) × cost_a − count_price_t × [a > 0]
    EU_t(x, y')  = E[u(x') + γ V_{t+1}(x', y' + 1)],   x' = max(x − drop(y'), 0)

with V_T = 0 (the horizon is a time limit, as in the simulator's returns). ``price_t`` and
``count_price_t`` are in step-reward units (a discounted price divided by γ^t). The forward pass pushes the
initial rating's mass through the chosen actions and gives each bridge's expected spend and number of
treatments per year, which the price search needs (Adelman & Mersereau 2008, column generation).
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from bridgefleet.planning.transitions import BridgeMDPs


@nb.njit(cache=True, nogil=True)
def _shock(x, shock, out):  # pragma: no cover - compiled
    """out[j] = (1 − p) x[j] + p (Σ_k w_k x[j − k] for j − k ≥ 1 + the rest of the mass on x[0]): sudden damage
    with the geometric hat weights (p, w0, c1, ρ) of :func:`bridgefleet.planning.transitions.shock_weights`."""
    p, w0, c1, rho = shock[0], shock[1], shock[2], shock[3]
    acc = 0.0  # Σ_{k=1}^{j−1} c1 ρ^{k−1} x[j − k]
    cum = w0  # weight already placed on points ≥ 1
    w = c1  # c1 ρ^{j−2}, the weight the next step adds
    out[0] = x[0]
    for j in range(1, x.shape[0]):
        if j >= 2:
            acc = rho * acc + c1 * x[j - 1]
            cum += w
            w *= rho
        out[j] = (1.0 - p) * x[j] + p * (w0 * x[j] + acc + (1.0 - cum) * x[0])


@nb.njit(cache=True, nogil=True)
def _shock_push(d, shock, out):  # pragma: no cover - compiled
    """Mass d after sudden damage (the transpose of :func:`_shock`), into ``out`` (G,)."""
    p, w0, c1, rho = shock[0], shock[1], shock[2], shock[3]
    g_n = d.shape[0]
    total = 0.0
    tail = 0.0  # Σ_{l>i} ρ^{l−i−1} d[l]
    for i in range(g_n - 1, 0, -1):
        out[i] = (1.0 - p) * d[i] + p * (w0 * d[i] + c1 * tail)
        tail = d[i] + rho * tail
        total += d[i]
    total += d[0]
    rest = 0.0
    for i in range(1, g_n):
        rest += out[i]
    out[0] = total - rest


@nb.njit(cache=True, nogil=True)
def _at(x, weights, taps, b, j):  # pragma: no cover - compiled
    """Σ_k w_bk x[j − k] for j − k ≥ 1 plus the rest of the mass on x[0] (the rating floor), with the weights
    (NB, K) and taps (NB,) of weight group b."""
    acc = 0.0
    cum = 0.0
    for k in range(min(taps[b], j)):
        acc += weights[b, k] * x[j - k]
        cum += weights[b, k]
    return acc + (1.0 - cum) * x[0]


@nb.njit(cache=True, nogil=True)
def _expect(x, weights, taps, band, shock, tmp, out):  # pragma: no cover - compiled
    """out[j] = :func:`_at` (y, weights, taps, band[j], j): the weights of the weight group of grid point j;
    y = x after sudden damage (x itself when its probability shock[0] is 0). Computed a run of grid points of
    one weight group at a time, tap by tap (contiguous in j, the same sums in the same order as ``_at``)."""
    if shock[0] > 0.0:
        _shock(x, shock, tmp)
        x = tmp
    g_n = x.shape[0]
    x0 = x[0]
    j0 = 0
    while j0 < g_n:
        b = band[j0]
        j1 = j0 + 1
        while j1 < g_n and band[j1] == b:
            j1 += 1
        kn = taps[b]
        for j in range(j0, j1):
            out[j] = 0.0
        for k in range(min(kn, j1 - 1)):
            wk = weights[b, k]
            for j in range(max(j0, k + 1), j1):
                out[j] += wk * x[j - k]
        m = min(kn, j0)  # Σ_{k < min(taps, j)} w_k, the mass that stays above the floor, kept as j grows
        cum = 0.0
        for k in range(m):
            cum += weights[b, k]
        for j in range(j0, j1):
            while m < min(kn, j):
                cum += weights[b, m]
                m += 1
            out[j] += (1.0 - cum) * x0
        j0 = j1


@nb.njit(cache=True, nogil=True)
def continuation(utility, v_next, gamma, price_poor, poor_top, out):  # pragma: no cover - compiled
    """out[j] = u[j] + γ V_{t+1}[j] − the poor price where grid point j is poor (j < poor_top)."""
    for j in range(out.shape[0]):
        out[j] = utility[j] + gamma * v_next[j] - (price_poor if j < poor_top else 0.0)


@nb.njit(cache=True, nogil=True)
def _charge(eu_row, charge, q, poor_top):  # pragma: no cover - compiled
    """eu_row[j] −= charge × P(ending the year poor from grid point j after the action): 1 below 5, q above."""
    if charge == 0.0:
        return
    for j in range(eu_row.shape[0]):
        eu_row[j] -= charge * (1.0 if j < poor_top else q[j - poor_top])


@nb.njit(cache=True, nogil=True)
def slot_offset(s, d):  # pragma: no cover - compiled
    """Entries of the slots before slot s in a :class:`Layout` with d diagonals: slot i holds i + 1 + d."""
    return s * (s + 1) // 2 + s * d


@nb.njit(cache=True, nogil=True)
def _layout_row(k, s, diag_rt):  # pragma: no cover - compiled
    """The row (years since maintenance) of entry k of slot s in a :class:`Layout`; −1: an unused diagonal."""
    if k <= s:
        return k
    y = diag_rt[k - s - 1]
    return y + s if y >= 0 else -1


@nb.njit(cache=True, nogil=True)
def _best_treatment(eu, rt, feasible_n, cost_n, shift, top, pc, pn, r_n, q_best, a_best):  # pragma: no cover - compiled
    """The best treatment's value and action (1–4) at each grid point j, into ``q_best``, ``a_best`` (G,): a
    rating gain (1–3) or a replacement (4), the first of equal values; −inf and 0 where none is allowed. A
    treatment leads to row 0 (just maintained) whatever the row it starts from, so this serves every row."""
    g_n = q_best.shape[0]
    for j in range(g_n):
        q_best[j] = -np.inf
        a_best[j] = 0
    for a in range(1, 4):
        if feasible_n[a]:
            charge = pc * cost_n[a]
            for j in range(g_n):
                q = eu[rt, 0, max(min(j + shift[a], top), j)] - charge - pn
                if q > q_best[j]:
                    q_best[j] = q
                    a_best[j] = a
    if r_n == 2 and feasible_n[4]:
        q = eu[1, 0, top] - pc * cost_n[4] - pn
        for j in range(g_n):
            if q > q_best[j]:
                q_best[j] = q
                a_best[j] = 4


@nb.njit(cache=True, nogil=True)
def _year(n, t, s, diag_n, utility, poor_step, poor_q, cost, feasible, weights, n_taps, w_n, band, shock, top, shift,
          horizon, gamma, cost_lambda, price_cost, price_count, price_poor, poor_top, v_next, eu, v_cur, act_t, x, tmp,
          values):  # pragma: no cover - compiled
    """One year t of the backward pass of bridge n over the entries of slot s of a :class:`Layout` (diagonals
    diag_n (R, D)): EU_t from V_{t+1} (entry k + 1 there); with ``values``, V_t and its actions (act_t) too.
    A poor year's charges (the rule's price and the user cost's step) are by the exact probability of ending
    the year poor (``poor_q``), the rest of the continuation by the hat weights."""
    r_n = eu.shape[0]
    k_n = s + 1 + diag_n.shape[1]
    pp = price_poor[n, t]
    step = poor_step[n]
    for rt in range(r_n):
        for k in range(k_n):
            r = _layout_row(k, s, diag_n[rt])
            if r < 0 or (rt == 1 and r > t):
                continue
            kidx = r if r <= t else horizon + t
            continuation(utility[n], v_next[rt, k + 1], gamma, -step, poor_top, x)  # the step taken out
            _expect(x, weights[w_n, rt, kidx], n_taps[w_n, rt, kidx], band, shock, tmp, eu[rt, k])
            _charge(eu[rt, k], pp + step, poor_q[w_n, rt, kidx], poor_top)
    if not values:
        return
    pc = cost_lambda + price_cost[n, t]
    pn = price_count[n, t]
    q_best = x  # scratch: the best treatment at each grid point (the same for every row of a rate kind)
    a_best = np.empty(x.shape[0], dtype=np.int8)
    for rt in range(r_n):
        _best_treatment(eu, rt, feasible[n], cost[n], shift, top, pc, pn, r_n, q_best, a_best)
        for k in range(1, k_n):
            r = _layout_row(k, s, diag_n[rt])
            if r < 0 or (rt == 1 and r > t):
                continue
            for j in range(eu.shape[2]):  # a treatment where it is worth strictly more than waiting
                if q_best[j] > eu[rt, k, j]:
                    v_cur[rt, k, j] = q_best[j]
                    act_t[rt, k, j] = a_best[j]
                else:
                    v_cur[rt, k, j] = eu[rt, k, j]
                    act_t[rt, k, j] = 0


@nb.njit(cache=True, nogil=True, parallel=True)
def window_kernel(utility, poor_step, poor_q, cost, feasible, weights, n_taps, kind, band, shock, top, shift, horizon,
                  gamma,
                  cost_lambda, price_cost, price_count, price_poor, poor_top, active, base, diag, store_lo, store_hi,
                  t_top, v_start, eu_out):  # pragma: no cover - compiled
    """The EU tables of years [store_lo, store_hi) in the compact :class:`Layout` (base, diag), solved back from
    V_{t_top} (v_start with every row, as kept; read in the layout's rows, no copy; zeros at the horizon); see
    :func:`solve`."""
    n_n, g_n = utility.shape
    r_n = weights.shape[1]
    d_n = diag.shape[2]
    k_top = t_top - base + 1 + d_n
    o_lo = slot_offset(store_lo - base, d_n)
    for n in nb.prange(n_n):
        if not active[n]:
            continue
        w_n = kind[n]
        v_next = np.zeros((r_n, k_top + 1, g_n))
        v_cur = np.zeros((r_n, k_top + 1, g_n))
        eu = np.zeros((r_n, k_top, g_n))
        x = np.empty(g_n)
        tmp = np.empty(g_n)
        if t_top < horizon:
            for rt in range(r_n):
                for k in range(k_top):
                    r = _layout_row(k, t_top - base, diag[n, rt])
                    if 0 <= r < v_start.shape[2]:
                        v_next[rt, k] = v_start[n, rt, r]
        act_t = np.zeros((r_n, k_top, g_n), dtype=np.int8)  # not read: the window has no forward pass
        for t in range(t_top - 1, store_lo - 1, -1):
            s = t - base
            k_n = s + 1 + d_n
            _year(n, t, s, diag[n], utility, poor_step, poor_q, cost, feasible, weights, n_taps, w_n, band, shock, top,
                  shift, horizon, gamma, cost_lambda, price_cost, price_count, price_poor, poor_top, v_next, eu, v_cur,
                  act_t, x, tmp, t > store_lo)
            if t < store_hi:
                o = slot_offset(s, d_n) - o_lo
                eu_out[n, :, o : o + k_n] = eu[:, :k_n].astype(np.float32)
            v_next, v_cur = v_cur, v_next


@nb.njit(cache=True, nogil=True, parallel=True)
def solve_kernel(utility, poor_step, poor_q, cost, feasible, weights, n_taps, kind, band, shock, top, c0, shift, h,
                 horizon, gamma, cost_lambda, price_cost, price_count, price_poor, poor_top, active, store_lo, store_hi,
                 eu_out, value0, exp_cost, exp_count, exp_poor, used, eval_utility, eval_step, exp_utility, t_top,
                 v_start, keep_years, v_keep, forward, occ, occ_step):  # pragma: no cover - compiled
    """Solve every active bridge; see :func:`solve` for the arguments."""
    n_n, g_n = utility.shape
    r_n = weights.shape[1]
    t_n = horizon
    # Storing tables for a window of years: the years before it are not needed, nor the forward pass. From a
    # kept V_{t_top} (t_top < horizon) the years from t_top on are not solved again.
    t_stop = store_lo if store_hi > store_lo else 0
    to_zero = t_stop == 0 and t_top == t_n  # the backward pass reaches V_0: value0 (and the forward pass if asked)
    pushes = forward and to_zero  # the forward pass runs, reading every year's actions
    rows_start = v_start.shape[2]
    rows_keep = v_keep.shape[3]
    occupied = occ.shape[0] == n_n  # the discounted occupancy of each grid point is asked for
    full = np.full((r_n, 1), -1, dtype=np.int64)  # Layout.full: entry t + 1 of year t is the never-maintained row
    full[0, 0] = 1
    for n in nb.prange(n_n):
        if not active[n]:
            continue
        w_n = kind[n]
        v_next = np.zeros((r_n, t_n + 2, g_n))
        v_cur = np.zeros((r_n, t_n + 2, g_n))
        eu = np.zeros((r_n, t_n + 2, g_n))
        act = np.zeros((t_n if pushes else 1, r_n, t_n + 2, g_n), dtype=np.int8)
        x = np.empty(g_n)
        tmp = np.empty(g_n)
        if t_top < t_n:
            v_next[:, :rows_start] = v_start[n]
        for t in range(t_top - 1, t_stop - 1, -1):
            _year(n, t, t, full, utility, poor_step, poor_q, cost, feasible, weights, n_taps, w_n, band, shock, top,
                  shift, t_n, gamma, cost_lambda, price_cost, price_count, price_poor, poor_top, v_next, eu, v_cur,
                  act[t if pushes else 0], x, tmp, True)
            if store_lo <= t < store_hi:  # the flat layout of :class:`Layout` from year 0: rows 0 … t + 1
                o = slot_offset(t, 1) - slot_offset(store_lo, 1)
                eu_out[n, :, o : o + t + 2] = eu[:, : t + 2].astype(np.float32)
            v_next, v_cur = v_cur, v_next
            for k in range(keep_years.shape[0]):
                if keep_years[k] == t:
                    v_keep[n, k] = v_next[:, :rows_keep].astype(np.float32)
        if not to_zero:
            continue
        # v_next now holds V_0; the initial state is row 1 (ysm0), own rate, between two grid points.
        pos = c0[n] / h
        j0 = min(int(np.floor(pos)), g_n - 2)
        f = pos - j0
        value0[n] = (1.0 - f) * v_next[0, 1, j0] + f * v_next[0, 1, j0 + 1]
        if not pushes:
            continue
        d = np.zeros((r_n, t_n + 2, g_n))
        d_next = np.zeros((r_n, t_n + 2, g_n))
        d[0, 1, j0] = 1.0 - f
        d[0, 1, j0 + 1] = f
        for t in range(t_n):
            d_next[:] = 0.0
            ec = 0.0
            en = 0.0
            ep = 0.0  # P(poor at the end of the year): exact from each rating after the action (poor_q)
            below = 0.0  # the grid's mass below rating 5, where eval_utility holds the step
            for rt in range(r_n):
                for r in range(1, t + 2 if rt == 0 else t + 1):
                    for j in range(g_n):
                        m = d[rt, r, j]
                        if m == 0.0:
                            continue
                        a = act[t, rt, r, j]
                        rt2, r2, j2 = rt, r, j
                        if a == 4:
                            rt2, r2, j2 = 1, 0, top
                        elif a > 0:
                            r2 = 0
                            j2 = max(min(j + shift[a], top), j)
                        if a > 0:
                            ec += m * cost[n, a]
                            en += m
                            used[n] |= 1 << a
                        kidx = r2 if r2 <= t else t_n + t
                        ep += m * (1.0 if j2 < poor_top else poor_q[w_n, rt2, kidx, j2 - poor_top])
                        bj = band[j2]
                        taps = n_taps[w_n, rt2, kidx, bj]
                        cum = 0.0
                        for k in range(min(taps, j2)):
                            wk = weights[w_n, rt2, kidx, bj, k]
                            d_next[rt2, r2 + 1, j2 - k] += m * wk
                            cum += wk
                        d_next[rt2, r2 + 1, 0] += m * (1.0 - cum)
            if shock[0] > 0.0:  # sudden damage after the gradual drop (the order of the backward pass)
                for rt in range(r_n):
                    for r in range(1, t + 3):
                        if d_next[rt, r].max() > 0.0:
                            _shock_push(d_next[rt, r], shock, x)
                            d_next[rt, r] = x
            exp_cost[n, t] = ec
            exp_count[n, t] = en
            eu_t = 0.0
            g_t = gamma**t
            for rt in range(r_n):
                for r in range(1, t + 3):
                    for j in range(g_n):
                        eu_t += d_next[rt, r, j] * eval_utility[n, j]
                        if j < poor_top:
                            below += d_next[rt, r, j]
                        if occupied:
                            occ[n, j] += g_t * d_next[rt, r, j]
            eu_t += eval_step[n] * (below - ep)  # the user cost's step by the exact probability, not the grid's
            exp_poor[n, t] = ep
            exp_utility[n] += g_t * eu_t
            if occupied:
                occ_step[n] += g_t * (below - ep)
            d, d_next = d_next, d


class Solution(NamedTuple):
    """What :func:`solve` returns (see there)."""

    value0: np.ndarray
    exp_cost: np.ndarray
    exp_count: np.ndarray
    eu: np.ndarray | None
    exp_poor: np.ndarray
    used: np.ndarray
    exp_utility: np.ndarray
    kept: np.ndarray | None = None
    occupancy: np.ndarray | None = None
    occupancy_step: np.ndarray | None = None


class Layout(NamedTuple):
    """Which rows of the EU tables a window of years holds, flat: the planner's tables hold only the rows the
    fleets' states at the window's first year can reach.

    From year ``base`` on, a bridge was maintained since (rows 0 … t − base at year t: the triangle, row 0
    "just maintained") or still is in a state it had at ``base`` (row y + t − base for each of its rows y
    there: its diagonals, the never-maintained row among them). Slot s = t − base holds s + 1 + D entries: the
    triangle rows, then the diagonals. EU tables in a layout are float32 (N, R, E, G) with the slots of a window
    [lo, hi) one after the other (E = :meth:`entries`). The full layout (:meth:`full`: base 0, diagonal row 1,
    the initial state) holds every row, 0 … t + 1; a window whose fleets' states fall on few rows holds far
    fewer (s + 2 at slot s for one fleet, against base + s + 2).

    Attributes:
        base: the layout's first year.
        diag: int64 (N, R, D), each bridge's rows at ``base`` by rate kind (0 own, 1 replaced), ≥ 1; −1 unused.
    """

    base: int
    diag: np.ndarray

    @staticmethod
    def full(n: int, r_n: int) -> Layout:
        """Every row from year 0 (base 0, the initial state's row 1 for the own rate kind)."""
        diag = np.full((n, r_n, 1), -1, dtype=np.int64)
        diag[:, 0] = 1
        return Layout(0, diag)

    def entries(self, lo: int, hi: int) -> int:
        """Entries of the slots of years [lo, hi)."""
        d = self.diag.shape[2]
        return int(slot_offset(hi - self.base, d) - slot_offset(lo - self.base, d))


def solve(mdps: BridgeMDPs, price_cost: np.ndarray, price_count: np.ndarray, active: np.ndarray | None = None,
          store: tuple[int, int] | None = None, price_poor: np.ndarray | None = None,
          eval_utility: np.ndarray | None = None, keep: tuple[int, ...] = (),
          start: tuple[int, np.ndarray] | None = None, layout: Layout | None = None,
          eval_step: np.ndarray | None = None, forward: bool = True, occupancy: bool = False) -> Solution:
    """Optimal values of N bridges under prices, with their policies' expected spend and treatments per year.

    With ``price_poor`` the values include −price_poor[n, t] for each year t the bridge ends poor (rating < 5).

    Args:
        mdps: the bridges (:func:`bridgefleet.planning.transitions.bridge_mdps`).
        price_cost: float64 (N, T), price of a USD spent at year t, step-reward units per USD (≥ 0).
        price_count: float64 (N, T), price of one treatment at year t, step-reward units (≥ 0).
        price_poor: float64 (N, T), price of ending year t poor, step-reward units (≥ 0; the caller multiplies
            the price per m² by the bridge's deck area); None: 0.
        active: bool (N,), bridges to solve (default all); outputs of the others are left at 0.
        store: (lo, hi) years whose expected-continuation tables EU_t to return (for the planner); with lo > 0
            the years before lo are not solved and value0, exp_cost and exp_count are left at 0.
        layout: the rows of the tables to solve and return (:class:`Layout`, base ≤ lo; needs ``store``, no
            ``keep``): only what the planner's states can reach from the layout's base, no forward
            pass (value0 and the expectations left at 0); default every row (:meth:`Layout.full`).
        eval_utility: float64 (N, G), the utility on the grid the policy's ``exp_utility`` is counted in
            (default the MDPs' own; the least budget's policies, found with no reward, are valued with it), and
            eval_step float64 (N,), its step at rating 5 (``BridgeMDPs.poor_step``; counted by the exact
            probability of ending the year poor): both or neither.
        keep: years c whose values V_c (at the start of year c, before its action) to return in ``kept``: the
            checkpoints from which the planner solves its later windows of tables without going back to the
            horizon (Griewank's checkpointing of a backward sweep).
        start: (c, V_c) as kept, float32 (N, R, ≥ c + 2, G): the backward pass starts at year c − 1 from V_c, the
            years from c on are not solved again (and value0, exp_cost, exp_count are left at 0). The tables then
            rest on V_c rounded to float32. With ``layout`` only its rows are read (a view, not copied).

    Returns:
        :class:`Solution`: value0 float64 (N,): optimal expected discounted return from the initial state, prices
        included;
        exp_cost float64 (N, T): expected USD spent per year under the optimal policy;
        exp_count float64 (N, T): expected treatments per year;
        eu float32 (N, R, E, G) or None: EU_t for t in [lo, hi) by rate kind, entry of ``layout`` (default the
        full one: rows 0 just maintained, 1 … t maintained y years ago, t + 1 never maintained, year after year)
        and grid rating; exp_poor float64 (N, T): probability of ending each year poor;
        used int64 (N,): the actions the policy takes with positive probability, bit a for action a (0: it
        never treats the bridge); exp_utility float64 (N,): Σ_t γ^t E[u(rating at the end of year t)] under
        the policy, with u = ``eval_utility`` (its return is this − cost_lambda × the discounted spend);
        kept float32 (N, len(keep), R, max(keep) + 2, G) or None: V_c of each year c in ``keep`` by rate kind, row
        (1 … c + 1 as in eu) and grid rating.
        forward: False: no forward pass (the optimal policy's expectations exp_cost, exp_count, exp_poor, used and
            exp_utility are left at 0; value0, eu and kept as always), for a caller that needs only the values and
            tables (the bound's last solve, the planner's tables): measured on dc-2019 at step 0.05 the forward pass
            is about 45 % of a solve.
        occupancy: also return the policy's discounted occupancy of the grid, ``occupancy`` float64 (N, G):
            Σ_t γ^t P(rating at the end of year t on grid point j, by the hat weights), and ``occupancy_step``
            float64 (N,): Σ_t γ^t (P(below grid point 5) − P(ending year t poor)), so that exp_utility =
            occupancy · u + occupancy_step × step for any utility u (G,) and step at rating 5
            (:class:`bridgefleet.planning.alike.Alike` values one policy for bridges of other utilities this way).
            Needs the forward pass.
    """
    n, t_n = mdps.n, mdps.horizon
    g_n = mdps.utility.shape[1]
    r_n = mdps.weights.shape[1]
    active = np.ones(n, dtype=bool) if active is None else np.ascontiguousarray(active, dtype=bool)
    lo, hi = store if store is not None else (0, 0)
    if layout is not None:
        if keep or eval_utility is not None:
            raise ValueError("a layout solves a window's tables only: no keep, no eval_utility")
        return _solve_window(mdps, price_cost, price_count, active, lo, hi, price_poor, start, layout)
    eu = np.zeros((n, r_n, Layout.full(0, r_n).entries(lo, hi), g_n), dtype=np.float32) if hi > lo else np.zeros(
        (1, 1, 1, 1), np.float32)
    value0 = np.zeros(n)
    exp_cost = np.zeros((n, t_n))
    exp_count = np.zeros((n, t_n))
    exp_poor = np.zeros((n, t_n))
    used = np.zeros(n, dtype=np.int64)
    exp_utility = np.zeros(n)
    if (eval_utility is None) != (eval_step is None):
        raise ValueError("eval_utility and eval_step go together")
    ev = mdps.utility if eval_utility is None else np.ascontiguousarray(eval_utility, dtype=np.float64)
    es = mdps.poor_step if eval_step is None else np.ascontiguousarray(eval_step, dtype=np.float64)
    pp = np.zeros((n, t_n)) if price_poor is None else np.ascontiguousarray(price_poor, dtype=np.float64)
    if occupancy and not forward:
        raise ValueError("occupancy comes from the forward pass: it needs forward=True")
    occ = np.zeros((n if occupancy else 0, g_n))  # no rows: not asked for
    occ_step = np.zeros(n if occupancy else 0)
    keep_years = np.asarray(sorted(keep), dtype=np.int64)
    if len(keep_years) and not (keep_years[0] > 0 and keep_years[-1] < t_n):
        raise ValueError(f"keep = {keep}: checkpoint years must lie in 1 … {t_n - 1}")
    kept = np.zeros((n, len(keep_years), r_n, int(keep_years[-1]) + 2 if len(keep_years) else 1, g_n),
                    dtype=np.float32)
    t_top, v_start = t_n, np.zeros((1, 1, 1, 1), dtype=np.float32)
    if start is not None:
        t_top, v = int(start[0]), start[1]
        if not (lo < t_top <= t_n and v.shape[0] == n and v.shape[2] >= min(t_top + 2, t_n + 2)):
            raise ValueError(f"start year {t_top} with V of shape {v.shape}: needs lo < c ≤ {t_n} and V of "
                             f"{n} bridges with ≥ c + 2 rows")
        v_start = np.ascontiguousarray(v[:, :, : min(t_top + 2, t_n + 2)], dtype=np.float32)  # one copy
    solve_kernel(mdps.utility, mdps.poor_step, mdps.poor_q, mdps.cost, mdps.feasible, mdps.weights, mdps.n_taps,
                 mdps.kind, mdps.band, mdps.shock, mdps.top, mdps.c0, mdps.shift, mdps.h, t_n, mdps.gamma,
                 mdps.cost_lambda, np.ascontiguousarray(price_cost, dtype=np.float64),
                 np.ascontiguousarray(price_count, dtype=np.float64), pp, mdps.poor_top, active, lo, hi, eu,
                 value0, exp_cost, exp_count, exp_poor, used, ev, es, exp_utility, t_top, v_start, keep_years,
                 kept, forward, occ, occ_step)
    return Solution(value0, exp_cost, exp_count, eu if hi > lo else None, exp_poor, used, exp_utility,
                    kept if len(keep_years) else None, occ if occupancy else None, occ_step if occupancy else None)


def _solve_window(mdps: BridgeMDPs, price_cost: np.ndarray, price_count: np.ndarray, active: np.ndarray, lo: int,
                  hi: int, price_poor: np.ndarray | None, start: tuple[int, np.ndarray] | None,
                  layout: Layout) -> Solution:
    """:func:`solve` with a ``layout``: the window's tables only."""
    n, t_n = mdps.n, mdps.horizon
    g_n = mdps.utility.shape[1]
    r_n = mdps.weights.shape[1]
    diag = np.ascontiguousarray(layout.diag, dtype=np.int64)
    if not (0 <= layout.base <= lo < hi <= t_n and diag.shape[:2] == (n, r_n)):
        raise ValueError(f"layout from year {layout.base}, window [{lo}, {hi}), diagonals {diag.shape}: needs "
                         f"base ≤ lo < hi ≤ {t_n} and diagonals of {n} bridges × {r_n} rate kinds")
    t_top, v_start = t_n, np.zeros((1, 1, 1, 1), dtype=np.float32)
    if start is not None:
        t_top, v_start = int(start[0]), start[1]
        if not (hi <= t_top <= t_n and v_start.dtype == np.float32 and v_start.shape[:2] == (n, r_n)
                and v_start.shape[2] >= min(t_top + 2, t_n + 2) and v_start.shape[3] == g_n):
            raise ValueError(f"start year {t_top} with V of shape {v_start.shape}: needs hi ≤ c ≤ {t_n} and float32 V "
                             f"of {n} bridges × {r_n} rate kinds × ≥ c + 2 rows × {g_n} grid points")
    eu = np.zeros((n, r_n, layout.entries(lo, hi), g_n), dtype=np.float32)
    pp = np.zeros((n, t_n)) if price_poor is None else np.ascontiguousarray(price_poor, dtype=np.float64)
    window_kernel(mdps.utility, mdps.poor_step, mdps.poor_q, mdps.cost, mdps.feasible, mdps.weights, mdps.n_taps,
                  mdps.kind, mdps.band, mdps.shock, mdps.top, mdps.shift, t_n, mdps.gamma, mdps.cost_lambda,
                  np.ascontiguousarray(price_cost, dtype=np.float64),
                  np.ascontiguousarray(price_count, dtype=np.float64), pp, mdps.poor_top, active, layout.base, diag,
                  lo, hi, t_top, v_start, eu)
    zero = np.zeros((n, t_n))
    return Solution(np.zeros(n), zero, zero.copy(), eu, zero.copy(), np.zeros(n, dtype=np.int64), np.zeros(n))
