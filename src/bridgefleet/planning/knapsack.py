"""Each agency's yearly budget split over its bridges: one action per bridge, maximum summed benefit.

A multiple-choice knapsack (Sinha & Zoltners, Operations Research 27(3), 1979): solved by dynamic
programming over the budget in whole parts when a budget buys few treatments (where ranking by benefit per
USD goes wrong: one treatment can take most of the budget), and by the LP-relaxation greedy on benefit per
USD when it buys many (then optimal up to about one treatment's benefit). Used by the ``lagrangian``
planner (benefits from the DP) and the per-bridge agent (benefits from its Q-network): both give, per bridge,
the benefit of each action over doing nothing, and this decides which are funded.
"""

from __future__ import annotations

import numba as nb
import numpy as np

BUDGET_UNITS = 2000
"""Least number of whole parts of an agency's yearly budget in the knapsack DP. Costs are rounded up to parts
(a plan may leave up to one part per funded bridge unspent, then filled), so the parts are made as small as 1 %
of the cheapest treatment, within MAX_UNITS parts and MAX_CELLS parts × bridges of work."""

MAX_UNITS = 20_000
MANY_TREATMENTS = 50
"""When a budget buys this many of the cheapest treatment, the greedy on benefit per USD replaces the DP (its
loss is at most about one treatment's benefit, and the DP would need many parts)."""
MAX_CELLS = 40_000_000

@nb.njit(cache=True, nogil=True)
def _knapsack(ben, cost_units, members, cap, out_row):  # pragma: no cover - compiled
    """Multiple-choice knapsack by DP over the budget in whole units: one action per member bridge, total
    units ≤ cap, maximum Σ benefit; writes the actions into out_row."""
    n = members.shape[0]
    best = np.zeros(cap + 1)
    choice = np.zeros((n, cap + 1), dtype=np.int8)
    for k in range(n):
        j = members[k]
        new = best.copy()
        for a in range(1, 5):
            if ben[j, a] <= 0.0:
                continue
            w = cost_units[j, a]
            for c in range(w, cap + 1):
                v = best[c - w] + ben[j, a]
                if v > new[c]:
                    new[c] = v
                    choice[k, c] = a
        best = new
    c = cap
    for k in range(n - 1, -1, -1):
        a = choice[k, c]
        out_row[members[k]] = a
        if a > 0:
            c -= cost_units[members[k], a]


@nb.njit(cache=True, nogil=True)
def _fill(ben, cost, members, budget, out_row):  # pragma: no cover - compiled
    """What the rounding of costs to budget parts left unspent: each bridge in turn takes a better action that
    fits it (the plan already fits: costs were rounded up)."""
    spend = 0.0
    for j in members:
        if out_row[j] > 0:
            spend += cost[j, out_row[j]]
    for j in members:
        cur = out_row[j]
        c_cur = cost[j, cur] if cur > 0 else 0.0
        ba = cur
        for a in range(1, 5):
            if ben[j, a] > ben[j, ba] and spend - c_cur + cost[j, a] <= budget:
                ba = a
        if ba != cur:
            spend += cost[j, ba] - c_cur
            out_row[j] = ba


@nb.njit(cache=True, nogil=True)
def _greedy(ben, cost, members, budget, out_row):  # pragma: no cover - compiled
    """The LP-relaxation greedy of the multiple-choice knapsack: the increments along each bridge's upper
    convex hull of (cost, benefit), best benefit per USD first, while they fit. Optimal up to about one
    treatment's benefit, so used when a budget buys many treatments (Sinha & Zoltners 1979)."""
    n = members.shape[0]
    inc_j = np.zeros(4 * n, dtype=np.int64)
    inc_a = np.zeros(4 * n, dtype=np.int64)
    inc_r = np.zeros(4 * n)
    k = 0
    for j in members:
        cur = 0
        while True:
            c_cur = cost[j, cur] if cur > 0 else 0.0
            best_r = 0.0
            nxt = -1
            for a in range(1, 5):
                dc = cost[j, a] - c_cur
                if ben[j, a] > ben[j, cur] and dc > 0:
                    r = (ben[j, a] - ben[j, cur]) / dc
                    if r > best_r:
                        best_r = r
                        nxt = a
            if nxt < 0:
                break
            inc_j[k] = j
            inc_a[k] = nxt
            inc_r[k] = best_r
            k += 1
            cur = nxt
    left = budget
    for i in np.argsort(-inc_r[:k]):
        j = inc_j[i]
        a = inc_a[i]
        cur = out_row[j]
        if ben[j, a] <= ben[j, cur]:
            continue
        dc = cost[j, a] - (cost[j, cur] if cur > 0 else 0.0)
        if dc <= left:
            left -= dc
            out_row[j] = a


@nb.njit(cache=True, nogil=True)
def allocate(ben, cost, agency, budget, out):  # pragma: no cover - compiled
    """Actions int64 (E, B) that maximise Σ benefit within each agency's budget.

    Args:
        ben: float64 (E, B, 5), benefit of each action over doing nothing (ben[..., 0] = 0; −inf where the
            action is not allowed); benefits ≤ 0 are never funded.
        cost: float64 (E, B, 5), USD cost of each action.
        agency: int64 (B,), 0 urban, 1 rural.
        budget: float64 (E, 2), USD each agency can spend now.
        out: int64 (E, B), written.

    Costs are rounded up to whole parts of the budget (see BUDGET_UNITS), so the plan fits; what the
    rounding leaves is then filled by each bridge in turn taking a better action that still fits.
    """
    e_n, b_n = out.shape
    w = np.zeros((b_n, 5), dtype=np.int64)
    for e in range(e_n):
        left = budget[e] + 0.01  # the funding rule's cent
        smallest = np.full(2, np.inf)  # cheapest action a bridge of the agency could take
        for j in range(b_n):
            out[e, j] = 0
            for a in range(1, 5):
                if ben[e, j, a] > -np.inf and cost[e, j, a] < smallest[agency[j]]:
                    smallest[agency[j]] = cost[e, j, a]
        for g in range(2):
            members = np.flatnonzero(agency == g)
            if members.shape[0] == 0 or left[g] <= 0.01:
                continue
            fine = left[g] / (0.01 * smallest[g]) if smallest[g] < np.inf else 0.0  # 1 % of the cheapest
            cap = int(max(BUDGET_UNITS, min(MAX_UNITS, fine, MAX_CELLS // members.shape[0])))
            unit = max(left[g] / cap, 1e-9)
            for j in members:
                for a in range(1, 5):
                    w[j, a] = int(np.ceil(cost[e, j, a] / unit)) if cost[e, j, a] <= left[g] else cap + 1
            ben_e = ben[e].copy()
            for j in members:
                for a in range(1, 5):
                    if cost[e, j, a] > left[g]:
                        ben_e[j, a] = -np.inf
            if left[g] >= MANY_TREATMENTS * smallest[g]:
                _greedy(ben_e, cost[e], members, left[g], out[e])
            else:
                _knapsack(ben_e, w, members, cap, out[e])
            _fill(ben_e, cost[e], members, left[g], out[e])
