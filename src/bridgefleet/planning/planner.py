"""The ``lagrangian`` planner: the bound's budget prices value the future, and each year's budget is split
exactly.

Each year, every bridge's benefit of each action is the single-bridge DP's Q(a) − Q(do nothing) under the
bound's prices of the later years (:mod:`bridgefleet.planning.dp`), interpolated at its actual rating; each
agency then chooses one action per bridge to maximise the summed benefit within what it can spend this year
(a multiple-choice knapsack, solved by DP over the budget in 2,000 parts). This is the incremental
benefit–cost analysis of bridge management systems (AASHTOWare BrM, Pontis) with the benefit computed from
the model rather than guessed, and the one-step lookahead on the Lagrangian value function of Hawkins (2003)
and Adelman & Mersereau (2008). Ranking requests by benefit per USD instead loses to the knapsack when one
treatment takes most of a budget (measured on 20 default fleets: −493.4 by ratio with this year's price,
−465.0 by the knapsack, bound −461.3). A model-based planner, not a rule of thumb.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from bridgefleet.fleet.model import RATING_GAIN
from bridgefleet.fleet.simulator import FleetSimulator
from bridgefleet.planning.bound import BoundResult, fleet_mdps, lagrangian_bound
from bridgefleet.planning.dp import solve
from bridgefleet.planning.transitions import grid_points

BUDGET_UNITS = 2000
"""Least number of whole parts of an agency's yearly budget in the knapsack DP. Costs are rounded up to parts
(a plan may leave up to one part per funded bridge unspent, then filled), so the parts are made as small as 1 %
of the cheapest treatment, within MAX_UNITS parts and MAX_CELLS parts × bridges of work."""

MAX_UNITS = 20_000
MAX_CELLS = 40_000_000

DEFAULT_MEMORY_MB = 1024
"""Most memory the planner's value tables may take; beyond it they are recomputed in windows of years."""


@nb.njit(cache=True, nogil=True)
def _interp(row, x, h):  # pragma: no cover - compiled
    g_n = row.shape[0]
    pos = x / h
    j = min(max(int(pos), 0), g_n - 2)
    f = min(max(pos - j, 0.0), 1.0)
    return (1.0 - f) * row[j] + f * row[j + 1]


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
def _repair(ben, cost, index, members, budget, out_row):  # pragma: no cover - compiled
    """Make the plan fit the real costs (dropping the funded actions of least benefit per USD while it does
    not), then let each bridge in turn take a better action that fits what is left."""
    spend = 0.0
    for j in members:
        if out_row[j] > 0:
            spend += cost[index[j], out_row[j]]
    while spend > budget:
        worst = -1
        worst_r = np.inf
        for j in members:
            a = out_row[j]
            if a > 0 and ben[j, a] / cost[index[j], a] < worst_r:
                worst_r = ben[j, a] / cost[index[j], a]
                worst = j
        spend -= cost[index[worst], out_row[worst]]
        out_row[worst] = 0
    for j in members:
        cur = out_row[j]
        c_cur = cost[index[j], cur] if cur > 0 else 0.0
        ba = cur
        for a in range(1, 5):
            if ben[j, a] > ben[j, ba] and spend - c_cur + cost[index[j], a] <= budget:
                ba = a
        if ba != cur:
            spend += cost[index[j], ba] - c_cur
            out_row[j] = ba


@nb.njit(cache=True, nogil=True)
def decide(eu, slot, t, cond, ysm, replaced, ysm0, index, cost, feasible, gain, h, cost_lambda, agency, budget,
           units, out):  # pragma: no cover - compiled
    """Actions int64 (E, B) of year t: each agency's budget split over its bridges to maximise the summed
    benefit (a multiple-choice knapsack, solved exactly on the budget in ``units`` whole parts).

    Benefit of action a = Q(a) − Q(0) from the tables EU of the later years' prices, without this year's
    price: this year's budget is met here exactly, not priced (what is not spent lapses). eu: float32
    (M, S, R, T+2, G) tables of the window; index: int (E, B) row of each bridge in the tables (and in cost,
    feasible, ysm0); cond, ysm: float32 (E, B); replaced: bool (E, B); budget: float64 (E, 2) USD available
    now; agency: int (B,). Costs are rounded up to whole parts (see BUDGET_UNITS), the rest then filled.
    """
    e_n, b_n = cond.shape
    r_n = eu.shape[2]
    g_n = eu.shape[4]
    ben = np.zeros((b_n, 5))
    w = np.zeros((b_n, 5), dtype=np.int64)
    for e in range(e_n):
        left = budget[e] + 0.01  # the funding rule's cent
        smallest = np.full(2, np.inf)  # cheapest action any bridge of the agency could take
        for j in range(b_n):
            for a in range(1, 5):
                if feasible[index[e, j], a] and cost[index[e, j], a] < smallest[agency[j]]:
                    smallest[agency[j]] = cost[index[e, j], a]
        cap = np.zeros(2, dtype=np.int64)
        unit = np.zeros(2)
        for g in range(2):
            n_g = max(np.sum(agency == g), 1)
            fine = left[g] / (0.01 * smallest[g]) if smallest[g] < np.inf else 0.0  # 1 % of the cheapest
            cap[g] = max(units, min(MAX_UNITS, fine, MAX_CELLS // n_g))
            unit[g] = max(left[g] / cap[g], 1e-9)
        for j in range(b_n):
            m = index[e, j]
            out[e, j] = 0
            rt = 1 if (replaced[e, j] and r_n == 2) else 0
            y = ysm[e, j]
            # row t + 1: never maintained since the start; else maintained y years ago
            row = t + 1 if rt == 0 and abs(y - (ysm0[m] + t)) < 0.5 else min(max(int(y + 0.5), 1), t + 1)
            c = cond[e, j]
            q0 = _interp(eu[m, slot, rt, row], c, h)
            for a in range(1, 5):
                ben[j, a] = -np.inf
                if not feasible[m, a] or cost[m, a] > left[agency[j]] or (a == 4 and r_n < 2):
                    continue
                v = eu[m, slot, 1, 0, g_n - 1] if a == 4 else _interp(eu[m, slot, rt, 0], min(c + gain[a], 9.0), h)
                ben[j, a] = v - cost_lambda * cost[m, a] - q0
                w[j, a] = int(np.ceil(cost[m, a] / unit[agency[j]]))
        for g in range(2):
            members = np.flatnonzero(agency == g)
            if members.shape[0] and left[g] > 0.01:
                _knapsack(ben, w, members, cap[g], out[e])
                _repair(ben, cost, index[e], members, left[g], out[e])


class LagrangianPlanner:
    """A per-bridge policy for :func:`bridgefleet.evaluate.evaluate_policy`: returns requests int64 (E, B).

    On a simulator at year 0 it computes the bound's prices for the fleets it sees (one fleet when the fleet
    is fixed, e.g. an inventory), then solves every bridge's DP under them and keeps the value tables of a
    window of years within ``memory_mb`` (recomputed when the simulation leaves the window).

    Args:
        step: rating grid step of the value tables and the reported bound, rating points.
        search_step: rating grid step of the price search (coarser is faster; the bound under budget prices
            moved by < 0.1 % between steps 0.2 and 0.025 on the default fleet). max_iter: DP solves of the
            price search.
        memory_mb: memory for value tables, MB.
    """

    def __init__(self, step: float = 0.05, max_iter: int = 80, memory_mb: float = DEFAULT_MEMORY_MB,
                 progress: bool = False, search_step: float = 0.2):
        if max_iter < 2:
            raise ValueError(f"max_iter = {max_iter}: the price search needs at least 2 DP solves")
        if memory_mb <= 0:
            raise ValueError(f"memory_mb = {memory_mb}: must be > 0")
        grid_points(step)  # checks the steps
        grid_points(search_step)
        self.step = step
        self.search_step = search_step
        self.max_iter = max_iter
        self.memory_mb = memory_mb
        self.progress = progress
        self.bound: BoundResult | None = None
        self._key: tuple | None = None

    def prepare(self, sim: FleetSimulator) -> BoundResult:
        """Prices and bound for the fleets of ``sim`` as they are now (year 0)."""
        one = sim.fixed is not None
        sl = slice(0, 1) if one else slice(None)
        prof, st = sim.profile, sim.state
        sub = type(prof)(prof.bridge_id, prof.urban, prof.deck_area[sl], prof.aadt[sl], prof.cost_factor[sl],
                         prof.target_condition[sl])
        state = type(st)(st.condition[sl], st.age[sl], st.ysm[sl], st.rate[sl])
        args = (sim.config, sub, state, sim.weight[sl], sim.annual_budget)
        self.mdps, rows = fleet_mdps(*args, step=self.step)
        search = fleet_mdps(*args, step=self.search_step)[0] if self.search_step > self.step else None
        self.bound = lagrangian_bound(self.mdps, rows, search, max_iter=self.max_iter, progress=self.progress)
        disc = self.mdps.gamma ** np.arange(self.mdps.horizon)
        self._step_cost = self.bound.price_cost[self.mdps.fleet, self.mdps.agency] / disc
        self._step_count = self.bound.price_count[self.mdps.fleet, self.mdps.agency] / disc
        b_n = sim.n_bridges
        self._index = (np.zeros((sim.num_envs, 1), dtype=np.int64) if one
                       else np.arange(sim.num_envs)[:, None] * b_n) + np.arange(b_n)
        self._age0 = sim.state.age.copy()
        self._window = (0, 0)
        self._eu = None
        return self.bound

    def __call__(self, sim: FleetSimulator, rng: np.random.Generator | None = None) -> np.ndarray:
        t = int(sim.t.max())
        if int(sim.t.min()) != t:
            raise ValueError("the lagrangian planner needs every fleet at the same year")
        key = (id(sim), sim.num_envs)
        if t == 0 or self._key != key:
            self.prepare(sim)
            self._key = key
        if t >= self.mdps.horizon:
            raise ValueError(f"year {t} is beyond the {self.mdps.horizon}-year horizon the prices were computed for")
        lo, hi = self._window
        if not lo <= t < hi:
            m = self.mdps
            per_year = m.n * m.weights.shape[1] * (m.horizon + 2) * m.utility.shape[1] * 4
            years = int(max(1, min(m.horizon - t, self.memory_mb * 2**20 // per_year)))
            _, _, _, self._eu = solve(m, self._step_cost, self._step_count, store=(t, t + years))
            self._window = (t, t + years)
        st = sim.state
        replaced = st.age < self._age0 + t - 0.5  # age was reset by a replacement
        out = np.zeros((sim.num_envs, sim.n_bridges), dtype=np.int64)
        m = self.mdps
        decide(self._eu, t - self._window[0], t, st.condition, st.ysm, replaced, m.ysm0, self._index, m.cost,
               m.feasible, RATING_GAIN.astype(np.float64), m.h, m.cost_lambda, m.agency[: sim.n_bridges],
               sim.budget, BUDGET_UNITS, out)
        return out
