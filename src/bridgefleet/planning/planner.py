"""The ``lagrangian`` planner: every bridge asks for its best action under the bound's budget prices, and each
agency funds the requests in order of benefit per USD until its budget is spent.

Benefit is the single-bridge DP's Q(a) − Q(do nothing) under the prices (:mod:`bridgefleet.planning.dp`),
interpolated at the bridge's actual rating; this is the incremental benefit–cost ranking of bridge
management systems (e.g. AASHTOWare BrM, Pontis) with the benefit computed from the model rather than
guessed. Requests that no longer fit are skipped. What is left of the year's budget lapses, so the bridges
left out then rank their actions without this year's price (later years' prices stay in the values), and
each takes its best action that has a positive benefit and still fits. A model-based planner, not a rule of
thumb.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from bridgefleet.fleet.model import RATING_GAIN
from bridgefleet.fleet.simulator import FleetSimulator
from bridgefleet.planning.bound import BoundResult, fleet_mdps, lagrangian_bound
from bridgefleet.planning.dp import solve
from bridgefleet.planning.transitions import grid_points

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
def decide(eu, slot, t, cond, ysm, replaced, ysm0, index, cost, feasible, gain, h, step_cost, step_count,
           cost_lambda, agency, budget, out):  # pragma: no cover - compiled
    """Requests int64 (E, B) of year t: best action under prices, funded by benefit per USD.

    eu: float32 (M, S, R, T+2, G) tables of the window; index: int (E, B) row of each bridge in the tables
    (and in cost, feasible, step_cost, step_count, ysm0); cond, ysm: float32 (E, B); replaced: bool (E, B);
    budget: float64 (E, 2) USD available now; agency: int (B,).
    """
    e_n, b_n = cond.shape
    r_n = eu.shape[2]
    g_n = eu.shape[4]
    best_a = np.zeros(b_n, dtype=np.int64)
    q = np.zeros((b_n, 5))
    ratio = np.zeros(b_n)
    for e in range(e_n):
        for j in range(b_n):
            m = index[e, j]
            rt = 1 if (replaced[e, j] and r_n == 2) else 0
            y = ysm[e, j]
            # row t + 1: never maintained since the start; else maintained y years ago
            row = t + 1 if rt == 0 and abs(y - (ysm0[m] + t)) < 0.5 else min(max(int(y + 0.5), 1), t + 1)
            c = cond[e, j]
            pc = cost_lambda + step_cost[m]
            q0 = _interp(eu[m, slot, rt, row], c, h)
            q[j, 0] = q0
            ba = 0
            bq = q0
            for a in range(1, 5):
                q[j, a] = -np.inf
                if not feasible[m, a]:
                    continue
                if a == 4:
                    if r_n < 2:
                        continue
                    v = eu[m, slot, 1, 0, g_n - 1]
                else:
                    v = _interp(eu[m, slot, rt, 0], min(c + gain[a], 9.0), h)
                qa = v - pc * cost[m, a] - step_count[m]
                q[j, a] = qa
                if qa > bq:
                    bq = qa
                    ba = a
            best_a[j] = ba
            ratio[j] = (bq - q0) / cost[m, ba] if ba > 0 else -1.0
        order = np.argsort(-ratio)
        left = budget[e] + 0.01  # the funding rule's cent
        for j in range(b_n):
            out[e, j] = 0
        funded = np.zeros(b_n, dtype=np.bool_)
        for k in range(b_n):
            j = order[k]
            a = best_a[j]
            if a == 0:
                break
            c_a = cost[index[e, j], a]
            if c_a <= left[agency[j]]:
                left[agency[j]] -= c_a
                out[e, j] = a
                funded[j] = True
        # What is left of this year's budget lapses, so its price no longer applies: the bridges left out
        # rank their actions without it (the later years' prices stay in the continuation values).
        for j in range(b_n):
            m = index[e, j]
            ratio[j] = -1.0
            best_a[j] = 0
            if funded[j]:
                continue
            bq = q[j, 0]
            for a in range(1, 5):
                if q[j, a] > -np.inf:
                    qa = q[j, a] + (step_cost[m]) * cost[m, a] + step_count[m]
                    q[j, a] = qa
                    if qa > bq:
                        bq = qa
                        best_a[j] = a
            if best_a[j] > 0:
                ratio[j] = (bq - q[j, 0]) / cost[m, best_a[j]]
        order = np.argsort(-ratio)
        for k in range(b_n):
            j = order[k]
            if best_a[j] == 0:
                break
            m = index[e, j]
            ba = 0
            bq = q[j, 0]
            for a in range(1, 5):
                if q[j, a] > bq and cost[m, a] <= left[agency[j]]:
                    bq = q[j, a]
                    ba = a
            if ba > 0:
                left[agency[j]] -= cost[m, ba]
                out[e, j] = ba


class LagrangianPlanner:
    """A per-bridge policy for :func:`bridgefleet.evaluate.evaluate_policy`: returns requests int64 (E, B).

    On a simulator at year 0 it computes the bound's prices for the fleets it sees (one fleet when the fleet
    is fixed, e.g. an inventory), then solves every bridge's DP under them and keeps the value tables of a
    window of years within ``memory_mb`` (recomputed when the simulation leaves the window).

    Args:
        step: rating grid step, rating points. max_iter: DP solves of the price search.
        memory_mb: memory for value tables, MB.
    """

    def __init__(self, step: float = 0.05, max_iter: int = 30, memory_mb: float = DEFAULT_MEMORY_MB,
                 progress: bool = False):
        if max_iter < 2:
            raise ValueError(f"max_iter = {max_iter}: the price search needs at least 2 DP solves")
        if memory_mb <= 0:
            raise ValueError(f"memory_mb = {memory_mb}: must be > 0")
        grid_points(step)  # checks the step
        self.step = step
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
        self.mdps, rows = fleet_mdps(sim.config, sub, state, sim.weight[sl], sim.annual_budget, self.step)
        self.bound = lagrangian_bound(self.mdps, rows, max_iter=self.max_iter, progress=self.progress)
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
               m.feasible, RATING_GAIN.astype(np.float64), m.h, np.ascontiguousarray(self._step_cost[:, t]),
               np.ascontiguousarray(self._step_count[:, t]), m.cost_lambda, m.agency[: sim.n_bridges],
               sim.budget, out)
        return out
