"""Each agency's yearly budget split over its bridges: one action per bridge, maximum summed benefit.

A multiple-choice knapsack (Sinha & Zoltners, Operations Research 27(3), 1979), solved exactly:

1. an incumbent: the LP-relaxation greedy on benefit per USD (increments along each bridge's upper convex hull
   of (cost, benefit), from its best free action), then each bridge in turn taking a better action that still
   fits; and the best single treatment that fits, if worth more (so never below half the optimum);
2. the Lagrangian bound at the LP's price λ of a USD (the split increment's benefit per USD),
   U = λ·budget + Σ_j max_a (b_ja − λ·c_ja) ≥ optimum. A plan worth more than the incumbent V can only use
   actions whose reduced value max_a' (b_ja' − λ·c_ja') − (b_ja − λ·c_ja) is below U − V; every other action
   is ruled out, and a bridge left with one action is fixed (Dembo & Hammer 1980 reduction);
3. the bridges left (the core: near the split) by dynamic programming over the exact (cost, benefit) Pareto
   frontier (Nemhauser & Ullmann 1969), states that cannot beat V pruned by the same bound.

Guarantee: the plan is never worth less than the greedy, the greedy with the split increment forced in, or
the best single treatment, so never less than half the optimum (Sinha & Zoltners' bound: optimum ≤ greedy
prefix + split increment); and it is the optimum whenever the core's frontier stays within its state limit
(:data:`MAX_STATES` a layer, :data:`MAX_WORK` in all), as it does for every budget that buys a few
treatments and in the brute-force tests. Past the limit, states are merged per equal part of the remaining
budget (its cheapest and its best kept): on 4,794-bridge fleets that kept 99.90–100 % of the optimum
(docs/planning.md). Costs of 0 (a free action) are allowed: each bridge takes its best free action at no
cost.
Used by the ``lagrangian`` planner (benefits from the DP) and the per-bridge agent (benefits from its
Q-network): both give, per bridge, the benefit of each action over doing nothing, and this decides which are
funded.
"""

from __future__ import annotations

import numba as nb
import numpy as np

MAX_STATES = 4096
"""Most Pareto states (cost, benefit) a core layer keeps exactly; above it they are merged per 1/MAX_STATES of
the remaining budget (the cheapest and the best of each part kept)."""
MAX_WORK = 200_000
"""Most states summed over the core layers: a core of n bridges keeps at most max(64, MAX_WORK // n) states a
layer (fewer than MAX_STATES only for cores of more than 48 bridges), which bounds the time of a split."""


@nb.njit(cache=True, nogil=True)
def _greedy(b, c, ok, base, budget, act, forced):  # pragma: no cover - compiled
    """The LP-relaxation greedy from each bridge's base (best free) action: increments along the upper convex
    hull of (cost, benefit), best benefit per USD first, each taken while it fits; writes act. Also writes
    into ``forced`` the LP's prefix with the split increment (the first that does not fit) taken and the
    prefix's last increments given back until it fits. Returns the price λ (the split increment's benefit
    per USD; 0 when every increment fits) and whether ``forced`` is a plan that fits."""
    n = b.shape[0]
    inc_k = np.zeros(4 * n, dtype=np.int64)
    inc_a = np.zeros(4 * n, dtype=np.int64)
    inc_p = np.zeros(4 * n, dtype=np.int64)
    inc_r = np.zeros(4 * n)
    m = 0
    for k in range(n):
        cur = base[k]
        act[k] = cur
        while True:
            best_r = 0.0
            nxt = -1
            for a in range(1, 5):
                if not ok[k, a]:
                    continue
                dc = c[k, a] - c[k, cur]
                db = b[k, a] - b[k, cur]
                if db > 0.0 and dc > 0.0:
                    r = db / dc
                    if r > best_r or (r == best_r and nxt >= 0 and dc > c[k, nxt] - c[k, cur]):
                        best_r = r
                        nxt = a
            if nxt < 0:
                break
            inc_k[m] = k
            inc_a[m] = nxt
            inc_p[m] = cur
            inc_r[m] = best_r
            m += 1
            cur = nxt
    left = budget
    for k in range(n):
        left -= c[k, act[k]]
    lam = 0.0
    split = -1
    order = np.argsort(-inc_r[:m], kind="mergesort")
    for t in range(m):
        i = order[t]
        k = inc_k[i]
        a = inc_a[i]
        cur = act[k]
        if b[k, a] <= b[k, cur]:
            continue
        dc = c[k, a] - c[k, cur]
        if dc <= left:
            left -= dc
            act[k] = a
        elif split < 0:
            split = t
            lam = inc_r[i]
            forced[:] = act
    usable = split >= 0
    if split >= 0:  # the split increment in, the prefix's lowest-ratio increments out until it fits
        ks = inc_k[order[split]]
        forced[ks] = inc_a[order[split]]
        spend = 0.0
        for k in range(n):
            spend += c[k, forced[k]]
        t = split - 1
        while spend > budget and t >= 0:
            i = order[t]
            k = inc_k[i]
            if k != ks and forced[k] == inc_a[i]:
                spend += c[k, inc_p[i]] - c[k, inc_a[i]]
                forced[k] = inc_p[i]
            t -= 1
        usable = spend <= budget
    return lam, usable


@nb.njit(cache=True, nogil=True)
def _fill(b, c, ok, budget, act):  # pragma: no cover - compiled
    """Each bridge in turn takes its best action that still fits (the plan already fits). Returns its value."""
    n = b.shape[0]
    spend = 0.0
    for k in range(n):
        spend += c[k, act[k]]
    value = 0.0
    for k in range(n):
        cur = act[k]
        ba = cur
        for a in range(5):
            if ok[k, a] and b[k, a] > b[k, ba] and spend - c[k, cur] + c[k, a] <= budget:
                ba = a
        spend += c[k, ba] - c[k, cur]
        act[k] = ba
        value += b[k, ba]
    return value


@nb.njit(cache=True, nogil=True)
def _pareto(b, c, allowed, core, budget, lam, target, tol, act):  # pragma: no cover - compiled
    """Exact DP over the core bridges' (cost, benefit) Pareto frontier within ``budget``; states whose
    Lagrangian bound cannot reach ``target`` are pruned. Writes the best plan's core actions into act and
    returns its core value (−inf when no state reaches the target)."""
    n = core.shape[0]
    # suffix bound: Σ over the core bridges still to decide of max_a (b − λc)
    sb = np.zeros(n + 1)
    for i in range(n - 1, -1, -1):
        k = core[i]
        h = -np.inf
        for a in range(5):
            if allowed[k, a]:
                h = max(h, b[k, a] - lam * c[k, a])
        sb[i] = sb[i + 1] + h
    keep = max(64, min(MAX_STATES, MAX_WORK // max(n, 1)))
    cap = 5 * keep
    cs = np.zeros(cap)
    vs = np.zeros(cap)
    hs = np.full(cap, -1, dtype=np.int64)
    ncs = np.zeros(cap)
    nvs = np.zeros(cap)
    nhs = np.zeros(cap, dtype=np.int64)
    s_n = 1
    size = 1024
    par = np.zeros(size, dtype=np.int64)
    rec_a = np.zeros(size, dtype=np.int8)
    pos = 0
    ptr = np.zeros(5, dtype=np.int64)
    for i in range(n):
        k = core[i]
        if pos + 5 * s_n > size:
            size = max(2 * size, pos + 5 * s_n)
            par2 = np.zeros(size, dtype=np.int64)
            rec2 = np.zeros(size, dtype=np.int8)
            par2[:pos] = par[:pos]
            rec2[:pos] = rec_a[:pos]
            par, rec_a = par2, rec2
        for a in range(5):
            ptr[a] = 0 if allowed[k, a] else s_n
        m = 0
        last_v = -np.inf
        while True:
            best_a = -1
            best_c = np.inf
            best_v = -np.inf
            for a in range(5):
                if ptr[a] >= s_n:
                    continue
                cc = cs[ptr[a]] + c[k, a]
                if cc > budget:
                    ptr[a] = s_n  # sorted by cost: the rest do not fit either
                    continue
                vv = vs[ptr[a]] + b[k, a]
                if cc < best_c or (cc == best_c and vv > best_v):
                    best_a, best_c, best_v = a, cc, vv
            if best_a < 0:
                break
            s = ptr[best_a]
            ptr[best_a] += 1
            if best_v <= last_v:
                continue  # dominated: costs as much or more, worth no more
            if best_v + sb[i + 1] + lam * (budget - best_c) < target - tol:
                continue  # cannot beat the incumbent
            if m > 0 and best_c == ncs[m - 1]:
                m -= 1
            ncs[m] = best_c
            nvs[m] = best_v
            par[pos] = hs[s]
            rec_a[pos] = best_a
            nhs[m] = pos
            pos += 1
            m += 1
            last_v = best_v
        if m == 0:
            return -np.inf
        if m > keep:  # merge: the cheapest and the best (first and last) state of each part of the budget
            w = budget / (keep // 2)
            j = 0
            for t in range(m):
                part = int(ncs[t] / w)
                if t == 0 or t == m - 1 or part != int(ncs[t - 1] / w) or part != int(ncs[t + 1] / w):
                    ncs[j], nvs[j], nhs[j] = ncs[t], nvs[t], nhs[t]
                    j += 1
            m = j
        cs[:m] = ncs[:m]
        vs[:m] = nvs[:m]
        hs[:m] = nhs[:m]
        s_n = m
    best = s_n - 1  # values rise with cost along the frontier
    h = hs[best]
    for i in range(n - 1, -1, -1):
        act[core[i]] = rec_a[h]
        h = par[h]
    return vs[best]


@nb.njit(cache=True, nogil=True)
def _solve(b, c, ok, budget, act):  # pragma: no cover - compiled
    """Exact multiple-choice knapsack of one agency (see the module docstring): b, c float (n, 5), ok bool
    (n, 5) the actions a bridge may take (action 0 always); writes the plan into act."""
    n = b.shape[0]
    base = np.zeros(n, dtype=np.int64)
    for k in range(n):
        for a in range(1, 5):
            if ok[k, a] and c[k, a] <= 0.0 and b[k, a] > b[k, base[k]]:
                base[k] = a
    forced = np.zeros(n, dtype=np.int64)
    lam, usable = _greedy(b, c, ok, base, budget, act, forced)
    value = _fill(b, c, ok, budget, act)
    if usable:
        v = _fill(b, c, ok, budget, forced)
        if v > value:
            value = v
            act[:] = forced
    # the best single treatment (others on their free action), if it is worth more: the ½-guarantee
    free_value = 0.0
    spend0 = 0.0
    for k in range(n):
        free_value += b[k, base[k]]
        spend0 += c[k, base[k]]
    bk, ba, bv = -1, 0, value
    for k in range(n):
        for a in range(1, 5):
            if ok[k, a] and spend0 - c[k, base[k]] + c[k, a] <= budget:
                v = free_value - b[k, base[k]] + b[k, a]
                if v > bv:
                    bk, ba, bv = k, a, v
    if bk >= 0:
        alt = base.copy()
        alt[bk] = ba
        v = _fill(b, c, ok, budget, alt)
        if v > value:
            value = v
            act[:] = alt
    # Lagrangian bound and reduction
    h = np.zeros(n)
    upper = lam * budget
    for k in range(n):
        hk = 0.0  # action 0
        for a in range(1, 5):
            if ok[k, a]:
                hk = max(hk, b[k, a] - lam * c[k, a])
        h[k] = hk
        upper += hk
    tol = 1e-9 * max(1.0, abs(upper))
    gap = upper - value
    if gap <= tol:
        return
    allowed = np.zeros((n, 5), dtype=np.bool_)
    core = np.zeros(n, dtype=np.int64)
    n_core = 0
    fixed_cost = 0.0
    fixed_value = 0.0
    trial = act.copy()
    for k in range(n):
        count = 0
        only = 0
        for a in range(5):
            if ok[k, a] and h[k] - (b[k, a] - lam * c[k, a]) <= gap + tol:
                allowed[k, a] = True
                count += 1
                only = a
        if count == 1:
            trial[k] = only
            fixed_cost += c[k, only]
            fixed_value += b[k, only]
        elif count > 1:
            core[n_core] = k
            n_core += 1
    left = budget - fixed_cost
    if left < 0.0:
        return  # the fixed actions do not fit: no plan beats the incumbent
    if n_core == 0:
        if fixed_value > value:
            act[:] = trial
        return
    span = np.zeros(n_core)  # cheap bridges first: the frontier stays small and is merged least
    for i in range(n_core):
        for a in range(5):
            if allowed[core[i], a]:
                span[i] = max(span[i], c[core[i], a])
    v = _pareto(b, c, allowed, core[:n_core][np.argsort(span)], left, lam, value - fixed_value, tol, trial)
    if v > -np.inf and v + fixed_value > value + tol:
        act[:] = trial
        _fill(b, c, ok, budget, act)


@nb.njit(cache=True, nogil=True, parallel=True)
def allocate(ben, cost, agency, budget, out):  # pragma: no cover - compiled
    """Actions int64 (E, B) that maximise Σ benefit within each agency's budget (exactly: module docstring).

    The fleets' knapsacks are independent and run on Numba's threads (``numba.set_num_threads``; the same
    plan whatever their number).

    Args:
        ben: float64 (E, B, 5), benefit of each action over doing nothing (ben[..., 0] = 0; −inf where the
            action is not allowed); benefits ≤ 0 are never funded.
        cost: float64 (E, B, 5), USD cost of each action (≥ 0; 0 = a free action).
        agency: int64 (B,), each bridge's agency in 0 … A−1 (0 urban and 1 rural, or an inventory's owners); a
            bridge is funded only from its own agency's money.
        budget: float64 (E, A), USD each agency can spend now.
        out: int64 (E, B), written.
    """
    e_n = out.shape[0]
    for g in range(budget.shape[1]):
        members = np.flatnonzero(agency == g)
        n = members.shape[0]
        if n == 0:
            continue
        for e in nb.prange(e_n):
            b = np.zeros((n, 5))
            c = np.zeros((n, 5))
            ok = np.zeros((n, 5), dtype=np.bool_)
            act = np.zeros(n, dtype=np.int64)
            left = budget[e, g] + 0.01  # the funding rule's cent
            for k in range(n):
                j = members[k]
                ok[k, 0] = True
                for a in range(1, 5):
                    b[k, a] = ben[e, j, a]
                    c[k, a] = cost[e, j, a]
                    ok[k, a] = ben[e, j, a] > 0.0 and ben[e, j, a] < np.inf and cost[e, j, a] <= left
            _solve(b, c, ok, left, act)
            for k in range(n):
                out[e, members[k]] = act[k]


def agencies(b_n: int, n_urban: int) -> np.ndarray:
    """int64 (B,): whose money pays each bridge, 0 the urban agency (the first ``n_urban`` columns), 1 the rural."""
    return (np.arange(b_n) >= n_urban).astype(np.int64)


def fund(ben: np.ndarray, cost: np.ndarray, agency: np.ndarray | int, budget: np.ndarray) -> np.ndarray:
    """:func:`allocate` of a fleet: ben, cost float (E, B, 5) (return units, USD), ``agency`` int (B,) each bridge's
    agency (an int n_urban: the urban agency pays the first n_urban bridges, the rural the rest), budget float (E, A)
    USD each agency's → actions int64 (E, B)."""
    e_n, b_n = ben.shape[:2]
    if np.ndim(agency) == 0:
        agency = agencies(b_n, int(agency))
    out = np.zeros((e_n, b_n), dtype=np.int64)
    allocate(np.ascontiguousarray(ben, dtype=np.float64), np.ascontiguousarray(cost, dtype=np.float64),
             np.ascontiguousarray(agency, dtype=np.int64), np.ascontiguousarray(budget, dtype=np.float64), out)
    return out
