"""The ``lagrangian`` planner on the component model: the exact bound's prices, each bridge's exact values, a
knapsack a year.

At year 0 the planner computes the Lagrangian bound of the fleets it sees (:func:`bridgefleet.planning.exact_bound.
lagrangian_bound`: every bridge's exact DP at the best price of each agency's money in each year). Each year it
values each action of each bridge at the bridge's state now,

    Q(x, a) = −cost_lambda · cost_a + E[reward at the year's end + γ V_{t+1}(next state) | x, a],

V_{t+1} the bridge's exact value at the relaxation's prices (tables kept for a window of years and recomputed from
the horizon when the simulation leaves it), and funds the actions with the most benefit Q(x, a) − Q(x, do nothing)
within each agency's money (:func:`bridgefleet.planning.knapsack.allocate`): this year's budget is kept exactly, the
later years' through their prices. With a poor deck-area rule (``max_poor_deck_area``) the bound prices it too
(:class:`bridgefleet.planning.exact_bound.Rule`, aimed at ``aim`` of each fleet's counted deck area) and the values
charge each bridge's poor years at its price. Same interface as :class:`bridgefleet.planning.planner.
LagrangianPlanner`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numba as nb
import numpy as np

from bridgefleet.planning.columns import distinct, fingerprint
from bridgefleet.planning.exact_bound import ExactBound, Mixture, Rule, lagrangian_bound
from bridgefleet.planning.exact_dp import _backward, expected_next
from bridgefleet.planning.exact_model import FleetModel, make_bank, state_index
from bridgefleet.planning.knapsack import fund
from bridgefleet.progress import BRIDGE_YEARS_PER_UNIT, Share, note
from bridgefleet.sim import model as sim_model
from bridgefleet.sim.simulator import FleetSimulator

WINDOW_MB = 768.0
"""Memory for the value tables of a window of years, MB (float32 (W, B, S)): each window is solved again from the
horizon, so the default fleet's 100 test fleets (80 MB a year) take 10 windows at 256 MB (about 63 s of DP) and
3 at 768 (about 24 s)."""
GROUP_BRIDGES = 2000
"""The most bridges of a fleet model's fleets priced together (each fleet's bound is its own)."""


@nb.njit(cache=True, nogil=True, parallel=True)
def _tables(kind, utility, cost, price, price_poor, poor_top, lam, gamma, lapse, protect, ptr, idx, w, flag, det, tr,
            how, ax, low, mn, dig, cnext, clen, coup, stop, keep_lo, out):  # pragma: no cover - compiled
    """V_t of every bridge for t in [keep_lo, keep_lo + W) into out (W, B, S) float32, solving back to ``stop``."""
    b_n = kind.shape[0]
    t_n = price.shape[1]
    s_n = 2 * mn.shape[0]
    for b in nb.prange(b_n):
        pol = np.zeros((t_n, s_n), dtype=np.int8)
        v = np.empty(s_n)
        keep = np.empty((out.shape[0], s_n), dtype=np.float32)
        _backward(b, kind[b], utility, cost, price, price_poor, poor_top, lam, gamma, lapse, protect, ptr, idx, w,
                  flag, det, tr, how, ax, low, mn, dig, cnext, clen, coup, pol, v, stop, keep_lo, keep)
        for j in range(out.shape[0]):
            out[j, b] = keep[j]


@nb.njit(cache=True, nogil=True, parallel=True)
def _q_now(model_bridges, first, order, state, t, vnext, kind, utility, cost, price_poor, poor_top, lam, gamma, lapse,
           protect, lowest_only, ptr, idx, w, flag, det, tr, low, mn, dig, cnext, clen, coup,
           q_out):  # pragma: no cover - compiled
    """q_out[i, a] = Q(x_i, a) of year t without this year's price (−cost_lambda · cost) for every simulated bridge
    i in state ``state[i]``, from V_{t+1} ``vnext`` (B, S) float32 of the model's bridges: for each model bridge b
    of ``model_bridges`` its expected next value once, then the simulated bridges ``order[first[b] : first[b + 1]]``
    that are it (a fixed fleet's E samples share one)."""
    a_n = protect.shape[0]
    r3 = mn.shape[0]
    r_n = utility.shape[1]
    stride = (r_n * r_n, r_n, 1)
    for j in nb.prange(model_bridges.shape[0]):
        b = model_bridges[j]
        k = kind[b]
        x = np.empty((2, r3))
        d = np.empty((2, r3))
        buf = np.empty(r3)
        lo = np.empty(3, dtype=np.int64)
        hi = np.empty(3, dtype=np.int64)
        mat = np.empty(3, dtype=np.int64)
        expected_next(b, k, utility, price_poor[b, t], poor_top, gamma, lapse, vnext[b], ptr, idx, w, flag, det, mn,
                      cnext, clen, coup, x, d, buf)
        for ii in range(first[b], first[b + 1]):
            _q_one(order[ii], b, k, state, d, cost, lam, protect, lowest_only, tr, flag, low, dig, ptr, idx, w, stride,
                   lo, hi, mat, r3, a_n, q_out)


@nb.njit(cache=True, nogil=True)
def _q_one(i, b, k, state, d, cost, lam, protect, lowest_only, tr, flag, low, dig, ptr, idx, w, stride, lo, hi, mat,
           r3, a_n, q_out):  # pragma: no cover - compiled
    """q_out[i, :] of simulated bridge i (model bridge b, kind k) from its expected next value ``d`` (2, R³)."""
    p = state[i] // r3
    s = state[i] % r3
    for a in range(a_n):
        q = p if protect[a] == 2 else protect[a]
        # the post-treatment triple: each slot's row (a delta where the action leaves the slot alone)
        for c in range(3):
            mm = tr[k, a, c]
            mat[c] = mm
            if flag[mm] == 1 or (lowest_only[a] and c != low[s]):
                lo[c] = -1
                hi[c] = 0
            else:
                rc = dig[s, c]
                lo[c] = ptr[mm, rc]
                hi[c] = ptr[mm, rc + 1]
        acc = 0.0
        for k0 in range(lo[0], hi[0]) if lo[0] >= 0 else range(-1, 0):
            y0 = dig[s, 0] if k0 < 0 else idx[mat[0], k0]
            w0 = 1.0 if k0 < 0 else w[mat[0], k0]
            for k1 in range(lo[1], hi[1]) if lo[1] >= 0 else range(-1, 0):
                y1 = dig[s, 1] if k1 < 0 else idx[mat[1], k1]
                w1 = 1.0 if k1 < 0 else w[mat[1], k1]
                for k2 in range(lo[2], hi[2]) if lo[2] >= 0 else range(-1, 0):
                    y2 = dig[s, 2] if k2 < 0 else idx[mat[2], k2]
                    w2 = 1.0 if k2 < 0 else w[mat[2], k2]
                    acc += w0 * w1 * w2 * d[q, y0 * stride[0] + y1 * stride[1] + y2]
        q_out[i, a] = acc - lam * cost[b, a]


@dataclass
class PlannerBound:
    """The bound of each of E fleets (what ``evaluate`` and ``bound`` print).

    Attributes:
        values: float64 (E,), an upper bound on the expected discounted return of any budget-feasible policy of
            each fleet under the component model, reward units.
        parts: the :class:`ExactBound` of each group of fleets priced together.
        seconds: wall time, s.
    """

    values: np.ndarray
    parts: list[ExactBound]
    seconds: float

    @property
    def mean(self) -> float:
        return float(self.values.mean())

    @property
    def meets_rule(self) -> bool:
        """The relaxation meets the poor deck-area rule on every fleet (True without a rule)."""
        return all(p.rule_met for p in self.parts)


def fleet_model(sim: FleetSimulator, fleets: np.ndarray) -> tuple[FleetModel, np.ndarray, np.ndarray]:
    """The finite model of the bridges of fleets ``fleets`` (int (F,) rows of ``sim``) as it is now, with the
    simulator's reward (:func:`bridgefleet.sim.kernels.rewards`) as each bridge's utility by the lowest rating.

    Returns:
        (model of F × B bridges, agency int64 (F·B,) = A f + the bridge's agency (:attr:`FleetSimulator.agency`: 0
        urban and 1 rural, or an inventory's owners; A = ``sim.n_agencies``), budget float64 (A·F, T) USD a year: one
        row per fleet and agency).
    """
    cfg, cm = sim.config, sim.components_model
    f_n, b_n = len(fleets), sim.n_bridges
    m = np.arange(10, dtype=np.float64)
    p = sim.profile
    weight = sim.weight[fleets].astype(np.float64).reshape(-1, 1)
    target = p.target_condition[fleets].astype(np.float64).reshape(-1, 1)
    short = np.maximum(cfg.critical_rating - m, 0.0)
    user = sim.user_cost[fleets].reshape(-1, 1) * (m < sim_model.POOR_BELOW)
    utility = ((m - target) - cfg.critical_penalty * short**2) * weight - cfg.cost_lambda * user
    cost = np.stack([sim_model.action_cost(np.full((f_n, b_n), a), p.select(fleets), sim.unit_costs)
                     for a in range(cm.n_actions)], axis=-1).reshape(-1, cm.n_actions)
    start = np.concatenate([sim.components[fleets].reshape(-1, 3).astype(np.int64),
                            sim.protected[fleets].reshape(-1, 1).astype(np.int64)], axis=1)
    model = FleetModel(P=cm.deterioration, P_protected=cm.deck_protected, lapse=cm.lapse, treat=cm.treatment,
                       protect=cm.protect.astype(np.int64), lowest_only=cm.lowest_only,
                       kind=np.tile(sim.kind, f_n), utility=utility, cost=cost, cost_lambda=cfg.cost_lambda,
                       gamma=cfg.discount, start=start, poor_top=int(sim_model.POOR_BELOW) - 1,
                       coupling=cm.coupling)
    a_n = sim.n_agencies
    agency = (a_n * np.arange(f_n)[:, None] + sim.agency[None, :]).reshape(-1)
    budget = np.repeat(sim.fleet_annual_budget[fleets].reshape(-1, 1), cfg.horizon_years, axis=1)
    return model, agency, budget


EXPECTED_SOLVES = (30, 15)
"""DP solves a price search is expected to take on the command's progress bar, from no prices and from a group's
before (35 and 16 to tolerance 1e-3 on 10 fleets of the default fleet, 2026-12-07); a search that takes more or
fewer moves the bar's total (:class:`bridgefleet.progress.Share`)."""


def _search_share(bridge_years: int, cold: bool, progress: bool, fleets: int = 1) -> Share | None:
    """A price search's part of the command's bar (None where not showing progress); over several ``fleets``
    front-loaded (each fleet stops on its own: :class:`bridgefleet.progress.Share`)."""
    if not progress:
        return None
    solves = EXPECTED_SOLVES[0 if cold else 1]
    return Share(bridge_years * solves / BRIDGE_YEARS_PER_UNIT, solves, front=fleets > 1)


def _solves_noted(size: str, share: Share | None):
    """A price search's callback: its solves in the command's progress bar (nothing without one)."""

    def solved(it: int, bound: float, master: float) -> None:
        note(f"price search ({size}): {it + 1} DP solves")
        if share is not None:
            share.step()

    return solved


@dataclass
class SearchColumns:
    """The policies (master LP columns) the price searches on one fixed fleet found, for the next search on it at
    another budget or aim (:func:`bridgefleet.planning.exact_bound.lagrangian_bound`'s ``columns``): a column is
    one bridge's policy, its value, spend and poor years, whatever the budget or the rule, so a search started
    from the columns of the searches before prices from near its end (column generation warm-started from a pool,
    Lübbecke & Desrosiers, "Selected topics in column generation", Operations Research 53(6), 2005). Kept: the
    columns each search's last master LP weighs, equal ones once (the best reward); a fleet model of other arrays
    empties it. A search asked again (same model, budget, aim, tolerance) gives its first answer again (``found``),
    without DP solves."""

    key: bytes = b""
    kept: Mixture | None = None
    found: dict[bytes, ExactBound] = field(default_factory=dict)

    def solve(self, model: FleetModel, budget: np.ndarray, rule: Rule | None, *what: object,
              search: Callable[..., ExactBound]) -> ExactBound:
        """``search(columns=…)`` (a :func:`~bridgefleet.planning.exact_bound.lagrangian_bound` of ``model`` at
        ``budget`` float64 (G, T) USD and ``rule``) started from the columns kept, its weighed columns kept after;
        or its answer of before where the same search (``what`` too: carry-over, tolerance …) was asked already."""
        key, asked = self._keys(model, budget, rule, what)
        if asked in self.found:
            return self.found[asked]
        res = search(columns=self.kept if key == self.key else None)
        self._add(key, res.mixture)
        self.found[asked] = res._replace(mixture=Mixture(*(np.asarray(a)[:0] for a in res.mixture)))
        return res

    @staticmethod
    def _keys(model: FleetModel, budget: np.ndarray, rule: Rule | None, what: tuple) -> tuple[bytes, bytes]:
        """(what the columns belong to: the model's per-bridge arrays, discount and horizon; what the answer depends
        on too: budget, rule and ``what``)."""
        h = hashlib.sha1(np.array([model.gamma, model.cost_lambda, budget.shape[1]], dtype=np.float64).tobytes())
        for a in (model.kind, model.start, model.cost, model.utility):
            h.update(np.ascontiguousarray(a).tobytes())
        key = h.digest()
        for a in (budget, *(() if rule is None else (rule.group, rule.deck))):
            h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
        h.update(repr((None if rule is None else rule.share, *what)).encode())
        return key, h.digest()

    def _add(self, key: bytes, mix: Mixture) -> None:
        """Keep ``mix``'s weighed columns that treat (do-nothing ones every search has)."""
        take = (mix.weight > 1e-9) & (mix.iteration != -1)
        new = Mixture(*(np.asarray(a)[take] for a in mix))
        if key == self.key and self.kept is not None:
            new = Mixture(*(np.concatenate([a, b]) for a, b in zip(self.kept, new, strict=True)))
        keep = distinct(new.bridge, new.reward, fingerprint(new.spend, new.poor))
        self.key, self.kept = key, Mixture(*(a[keep] for a in new))


class ExactPlanner:
    """A per-bridge policy for :func:`bridgefleet.evaluation.evaluate.evaluate_policy` on the component model:
    returns requests int64 (E, B) (module docstring).

    Args:
        tol: the price search stops when the bound is within this share of the master LP's value.
        max_iter: DP solves of the price search.
        window_mb: memory for the value tables of a window of years, MB.
        progress: print the price search's progress.
        columns: policies kept from the price searches before on the same fleet (:class:`SearchColumns`, filled as
            it searches); None: each search starts cold.
        max_poor_deck_area: F, the rule priced (at most F of each fleet's counted deck area poor at the end of every
            year, in expectation; 0.10: 23 CFR 490.411); None: no rule.

    Attributes:
        aim: the share of counted deck area the prices aim the expected poor deck area at (F unless set lower, as
            :mod:`bridgefleet.evaluation.component_scenarios` does where the simulated plan misses F).
    """

    def __init__(self, tol: float = 1e-3, max_iter: int = 200, window_mb: float = WINDOW_MB, progress: bool = False,
                 max_poor_deck_area: float | None = None, columns: SearchColumns | None = None):
        self.tol, self.max_iter, self.window_mb, self.progress = tol, max_iter, window_mb, progress
        self.max_poor_deck_area = max_poor_deck_area
        self.columns = columns
        self.aim = max_poor_deck_area
        self.bound: PlannerBound | None = None
        self._key: tuple | None = None

    def prepare(self, sim: FleetSimulator) -> PlannerBound:
        """Prices and bound of the fleets of ``sim`` as they are now (year 0); one fleet when the fleet is fixed."""
        if sim.components_model is None:
            raise ValueError("the exact planner needs the component model (FleetConfig.component_model)")
        t0 = time.perf_counter()
        e_n = 1 if sim.fixed is not None else sim.num_envs
        b_n, a_n = sim.n_bridges, sim.n_agencies
        per = max(1, GROUP_BRIDGES // b_n)
        full, agency, budget = fleet_model(sim, np.arange(e_n))
        counted = sim.fhwa_weight()[:e_n].reshape(-1)
        values, parts, prices, poor_prices = np.empty(e_n), [], [], []
        # The first fleet alone, then the others in groups, each from the prices of the group before (fleets of one
        # fleet model are alike).
        groups = [np.arange(1)] + [np.arange(lo, min(lo + per, e_n)) for lo in range(1, e_n, per)]
        like = None
        # each group's part of the command's bar, all declared now
        shares = [_search_share(len(f) * b_n * sim.config.horizon_years, k == 0 and like is None, self.progress,
                                len(f)) for k, f in enumerate(groups)]
        for fleets, share in zip(groups, shares, strict=True):
            bridges = (fleets[:, None] * b_n + np.arange(b_n)).reshape(-1)
            rows = slice(a_n * fleets[0], a_n * (fleets[-1] + 1))  # the group's agencies, A a fleet
            part_budget = budget[rows]
            rule = None if self.aim is None else Rule(bridges // b_n - fleets[0], counted[bridges], self.aim)
            part, carry = full.subset(bridges), sim.config.carry_over_budget
            search = partial(lagrangian_bound, part, agency[bridges] - a_n * fleets[0], part_budget, carry, rule=rule,
                             tol=self.tol, max_iter=self.max_iter,
                             start=None if like is None else np.tile(like, (len(fleets), 1)),
                             callback=_solves_noted(f"{len(bridges):,} bridges", share))
            if self.columns is not None and like is None:  # a fleet's first search: from the policies found before
                res = self.columns.solve(part, part_budget, rule, carry, self.tol, self.max_iter, search=search)
            else:
                res = search()
            if share is not None:
                share.finish()
            # the next group starts from the median prices of this one's fleets (a large fleet's first from a
            # sample's): a typical fleet's prices, where one fleet's are its own
            like = np.median(res.row_price.reshape(len(fleets), a_n, -1), axis=0)
            parts.append(res)
            row_value = res.row_price * _row_budget(part_budget, sim.config.carry_over_budget)
            values[fleets] = res.values.reshape(len(fleets), -1).sum(1) + row_value.reshape(len(fleets), -1).sum(1)
            prices.append(res.price[agency[bridges] - a_n * fleets[0]])  # (F·B, T) DP units
            poor_prices.append(res.price_poor)
        self.bound = PlannerBound(values, parts, time.perf_counter() - t0)
        self._model = full
        self._price = np.concatenate(prices)
        self._bank = make_bank(self._model)
        self._poor = np.ascontiguousarray(np.concatenate(poor_prices))  # (B, T): the rule's charge, 0 without
        self._window: tuple[int, int] = (0, 0)
        self._tables_: np.ndarray | None = None
        self._one = sim.fixed is not None
        return self.bound

    def _tables(self, t: int) -> np.ndarray:
        """V_{t+1} of every bridge, float32 (B_all, S), from the window's tables (solved again from the horizon
        when ``t + 1`` is outside it)."""
        lo, hi = self._window
        if not lo <= t + 1 < hi:
            m, bank = self._model, self._bank
            b_n, s_n, t_n = len(m.kind), m.states, self._price.shape[1]
            width = int(max(1, min(t_n - t, self.window_mb * 2**20 // (4 * b_n * s_n))))
            out = np.empty((width, b_n, s_n), dtype=np.float32)
            _tables(m.kind.astype(np.int64), np.ascontiguousarray(m.utility), np.ascontiguousarray(m.cost),
                    np.ascontiguousarray(self._price), self._poor, int(m.poor_top),
                    float(m.cost_lambda), float(m.gamma), float(m.lapse), np.asarray(m.protect, np.int64),
                    bank.ptr, bank.idx, bank.w, bank.flag, bank.det, bank.tr, bank.how, bank.ax, bank.low, bank.mn,
                    bank.dig, bank.cnext, bank.clen, bank.coup, t + 1, t + 1, out)
            self._window, self._tables_ = (t + 1, t + 1 + width), out
        return self._tables_[t + 1 - self._window[0]]

    def benefits(self, sim: FleetSimulator) -> np.ndarray:
        """Each action's benefit over doing nothing now, float64 (E, B, A) in return units, without this year's
        price (the knapsack keeps this year's budget) but, where budgets carry over, net of what the money it spends
        would be worth next year (:meth:`carry_price`); prepares on a simulator at year 0 of fleets it has not seen.

        Raises:
            ValueError: fleets at different years, or a year beyond the horizon.
        """
        t = int(sim.t.max())
        if int(sim.t.min()) != t:
            raise ValueError("the exact planner needs every fleet at the same year")
        key = (id(sim), sim.num_envs, self.aim,
               (sim.components.tobytes(), sim.protected.tobytes()) if t == 0 else None)
        if t == 0 and key != self._key:
            self.prepare(sim)
            self._key = key
        if t >= self._price.shape[1]:
            raise ValueError(f"year {t} is beyond the {self._price.shape[1]}-year horizon the prices were computed for")
        m, bank = self._model, self._bank
        e_n, b_n = sim.num_envs, sim.n_bridges
        r_n = m.levels
        st = np.concatenate([sim.components.reshape(-1, 3).astype(np.int64),
                             sim.protected.reshape(-1, 1).astype(np.int64)], axis=1)
        state = state_index(st, r_n)
        q = np.empty((e_n * b_n, m.cost.shape[1]))
        rows = self._rows(e_n, b_n)
        count = np.bincount(rows, minlength=len(m.kind))  # simulated bridges of each model bridge
        _q_now(np.flatnonzero(count), np.concatenate([[0], np.cumsum(count)]), np.argsort(rows, kind="stable"),
               state, t, self._tables(t), np.asarray(m.kind, np.int64), m.utility, m.cost, self._poor,
               int(m.poor_top), float(m.cost_lambda), float(m.gamma), float(m.lapse), np.asarray(m.protect, np.int64),
               np.asarray(m.lowest_only, np.bool_), bank.ptr, bank.idx, bank.w, bank.flag, bank.det, bank.tr,
               bank.low, bank.mn, bank.dig, bank.cnext, bank.clen, bank.coup, q)
        ben = (q - q[:, :1]).reshape(e_n, b_n, -1)
        if sim.config.carry_over_budget:  # a USD kept is worth next year's price: spend only where more
            ben -= (self.carry_price(t)[rows, None] * m.cost[rows]).reshape(e_n, b_n, -1)
        return ben

    def carry_price(self, t: int) -> np.ndarray:
        """float64 (B_all,): what a USD left unspent in year t is worth when budgets carry over, in year-t reward
        units: next year's price of money, γ × price[:, t + 1] (0 after the last year, or where next year's
        money is forbidden, i.e. there is none)."""
        if t + 1 >= self._price.shape[1]:
            return np.zeros(self._price.shape[0])
        nxt = self._price[:, t + 1]
        return np.where(np.isfinite(nxt), self._model.gamma * nxt, 0.0)

    def bridge_problem(self, row: int) -> tuple[FleetModel, np.ndarray, np.ndarray]:
        """Bridge ``row`` of the prepared fleets (a fixed fleet: its column) as the planner values it: its model
        (one bridge, from its state at year 0), its price of a USD float64 (1, T) and charge for a poor year
        float64 (1, T), year-t units (:func:`bridgefleet.planning.exact_dp.solve`'s ``price``, ``price_poor``).

        Raises:
            RuntimeError: before :meth:`prepare`.
        """
        if self.bound is None:
            raise RuntimeError("the planner has no prices yet: prepare it on the fleet first")
        return self._model.subset(np.array([row])), self._price[row : row + 1], self._poor[row : row + 1]

    def _rows(self, e_n: int, b_n: int) -> np.ndarray:
        """int64 (E·B,): the model's bridge of each simulated bridge (a fixed fleet's E samples share its B)."""
        return np.tile(np.arange(b_n), e_n) if self._one else np.arange(e_n * b_n)

    def benefits_and_costs(self, sim: FleetSimulator) -> tuple[np.ndarray, np.ndarray]:
        """(:meth:`benefits` float64 (E, B, A) return units, each action's cost float64 (E, B, A) USD)."""
        ben = self.benefits(sim)
        e_n, b_n = sim.num_envs, sim.n_bridges
        return ben, np.ascontiguousarray(self._model.cost[self._rows(e_n, b_n)].reshape(e_n, b_n, -1))

    def __call__(self, sim: FleetSimulator, rng: np.random.Generator | None = None) -> np.ndarray:
        return fund(*self.benefits_and_costs(sim), sim.agency, sim.budget)


def _row_budget(budget: np.ndarray, carry_over: bool) -> np.ndarray:
    """The budget of each row, USD (G, T): each year's, or with carry-over the cumulative budget to it."""
    return np.cumsum(budget, axis=1) if carry_over else budget
