"""Why a bridge is treated or deferred: its benefit, the year's cut-off in its agency, the budget that would fund it.

Both the ``lagrangian`` planner and the per-bridge agent decide a year the same way: each bridge's benefit of each
action over doing nothing now, b_a = Q(x, a) − Q(x, do nothing) (return units, net of the action's own cost at
``cost_lambda``, so b_a > 0 means "worth its cost"), and a knapsack a year that funds the most benefit within each
agency's money (:func:`bridgefleet.planning.knapsack.allocate`). Since Q(x, do nothing) is "nothing this year, then
the best plan", b_a is the **cost of waiting a year** to do a.

The knapsack's LP relaxation (Sinha & Zoltners 1979) funds treatments in order of benefit per USD along each bridge's
upper convex hull of (cost, benefit); the benefit per USD of the first increment that no longer fits is the
agency's **cut-off** that year, the price of its money (0 where every treatment worth its cost fits). A deferred
bridge's best treatment would be funded this year at the budget that pays for every increment ranked above its
own (:attr:`YearReasons.funded_at`). Benefits per USD are shown in USD of value (÷ ``cost_lambda``) per USD spent.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np


@dataclass
class YearReasons:
    """The reasons of one year's decisions for E fleets of B bridges with A actions.

    Attributes:
        benefit: float64 (E, B, A), b_a in return units (module docstring); −inf where an action is not available.
        cost: float64 (E, B, A), USD.
        action: int64 (E, B), the action funded.
        best: int64 (E, B), the action of the bridge's first hull increment (best benefit per USD among those worth
            their cost); 0 where none is.
        ratio: float64 (E, B), benefit per USD of ``best``'s increment, return units per USD (0 where best is 0).
        cutoff: float64 (E, B), the cut-off of the bridge's agency, return units per USD.
        funded_at: float64 (E, B), USD: the agency's money (this year's, carried money included) at which
            ``best`` enters the LP's plan; 0 where ``best`` is 0.
    """

    benefit: np.ndarray
    cost: np.ndarray
    action: np.ndarray
    best: np.ndarray
    ratio: np.ndarray
    cutoff: np.ndarray
    funded_at: np.ndarray


def hull_increments(benefit: np.ndarray, cost: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each bridge's increments along the upper convex hull of (cost, benefit) from its best free action.

    Args:
        benefit, cost: float64 (N, A), return units and USD; −inf benefit: not available.

    Returns:
        (ratio float64 (N, A−1): benefit per USD of the k-th increment, −inf past the last; delta float64
        (N, A−1): its extra cost, USD; action int64 (N, A−1): the action it moves to).
    """
    n, a_n = benefit.shape
    ok = np.isfinite(benefit)
    free = np.where(ok & (cost <= 0), benefit, -np.inf)
    cur = free.argmax(1)
    rows = np.arange(n)
    cur_b, cur_c = benefit[rows, cur], np.zeros(n)
    ratio = np.full((n, a_n - 1), -np.inf)
    delta = np.zeros((n, a_n - 1))
    action = np.zeros((n, a_n - 1), dtype=np.int64)
    for k in range(a_n - 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(ok & (cost > cur_c[:, None]), (benefit - cur_b[:, None]) / (cost - cur_c[:, None]), -np.inf)
        nxt = r.argmax(1)
        best = r[rows, nxt]
        step = best > 0
        ratio[step, k] = best[step]
        delta[step, k] = cost[rows, nxt][step] - cur_c[step]
        action[step, k] = nxt[step]
        cur_b = np.where(step, benefit[rows, nxt], cur_b)
        cur_c = np.where(step, cost[rows, nxt], cur_c)
    return ratio, delta, action


def year_reasons(benefit: np.ndarray, cost: np.ndarray, agency: np.ndarray, budget: np.ndarray,
                 action: np.ndarray) -> YearReasons:
    """The reasons of a year's decisions (module docstring).

    Args:
        benefit: float64 (E, B, A), return units; cost: float64 (E, B, A) USD (or (B, A), the same every fleet).
        agency: int64 (B,), each bridge's agency in 0 … G−1 (urban 0 and rural 1, or an inventory's owners): whose
            money pays.
        budget: float64 (E, G), each agency's money this year, USD.
        action: int64 (E, B), the actions funded.

    Returns:
        :class:`YearReasons`.
    """
    e_n, b_n, a_n = benefit.shape
    g_n = np.shape(budget)[1]  # agencies a fleet
    cost = np.broadcast_to(cost, benefit.shape)
    ratio, delta, act = hull_increments(benefit.reshape(-1, a_n), cost.reshape(-1, a_n))
    k_n = a_n - 1
    ratio, delta = ratio.reshape(e_n, b_n, k_n), delta.reshape(e_n, b_n, k_n)
    group = np.broadcast_to((np.arange(e_n)[:, None] * g_n + agency[None, :])[..., None], ratio.shape).reshape(-1)
    r, d = ratio.reshape(-1), delta.reshape(-1)
    order = np.lexsort((-r, group))  # by fleet and agency, best benefit per USD first
    spent = np.cumsum(np.where(np.isfinite(r[order]), d[order], 0.0))
    g_sorted = group[order]
    starts = np.searchsorted(g_sorted, np.arange(g_n * e_n))
    base = np.concatenate([[0.0], spent])[starts]  # spend before each group
    spent_in = spent - base[g_sorted]  # (N,) money the LP spends up to and with each increment, in its group
    reached = np.empty_like(spent_in)
    reached[order] = spent_in
    money = np.asarray(budget, dtype=np.float64).reshape(-1)
    over = np.isfinite(r[order]) & (spent_in > money[g_sorted] + 1e-9)
    cut = np.zeros(g_n * e_n)
    first = np.full(g_n * e_n, len(order))  # each group's first increment that does not fit
    np.minimum.at(first, g_sorted[over], np.flatnonzero(over))
    has = first < len(order)
    cut[has] = r[order][first[has]]
    agency_of = np.arange(e_n)[:, None] * g_n + agency[None, :]
    best = act.reshape(e_n, b_n, k_n)[..., 0]
    first_ratio = ratio[..., 0]
    worth = np.isfinite(first_ratio)
    return YearReasons(benefit=benefit, cost=np.asarray(cost), action=np.asarray(action, dtype=np.int64),
                       best=np.where(worth, best, 0), ratio=np.where(worth, first_ratio, 0.0),
                       cutoff=cut[agency_of], funded_at=np.where(worth, reached.reshape(e_n, b_n, k_n)[..., 0], 0.0))


class Explaining:
    """A policy that decides from benefits (the planner, the per-bridge agent: ``benefits_and_costs(sim)`` →
    (benefit (E, B, A), cost (E, B, A))), run unchanged, keeping the reasons of its last decision in ``last``."""

    def __init__(self, policy):
        self.policy = policy
        self.last: YearReasons | None = None

    def __call__(self, sim, rng: np.random.Generator | None = None) -> np.ndarray:
        from bridgefleet.planning.knapsack import fund

        benefit, cost = self.policy.benefits_and_costs(sim)
        out = fund(benefit, cost, sim.agency, sim.budget)
        self.last = year_reasons(benefit, cost, sim.agency, sim.budget, out)
        return out


def explains(policy) -> bool:
    """Whether ``policy`` decides from benefits that :class:`Explaining` can read."""
    return callable(getattr(policy, "benefits_and_costs", None))


class FirstYear:
    """``policy`` run unchanged, keeping the reasons of its year-1 decision (:class:`YearReasons` of the fleets at
    year 0) in ``reasons``; None where it does not decide from benefits (:func:`explains`) or has not decided yet.
    The report wraps the planner of its comparison in it (:func:`bridgefleet.evaluation.evaluate.evaluate_with_bound`'s
    ``watch``) to say where the trained agent decides otherwise, with no planner run of its own."""

    def __init__(self, policy):
        self.policy = policy
        self.reasons: YearReasons | None = None
        self._explaining = Explaining(policy) if explains(policy) else None

    def __call__(self, sim, rng: np.random.Generator | None = None) -> np.ndarray:
        if self._explaining is not None and int(sim.t.max()) == 0:
            out = self._explaining(sim, rng)
            self.reasons = self._explaining.last
            return out
        return self.policy(sim, rng)


BELOW_CUTOFF = ", below it: it fits the money left once the treatment at the cut-off did not (whole treatments)"
"""Said of a funded treatment whose value per USD is below its agency's cut-off: the knapsack funds whole
treatments, so a smaller one can take the money a larger one at the cut-off could not."""


@dataclass
class PlanReasons:
    """The reasons behind a plan's rows, means over its deterioration samples, float64 (Y, B) unless said.

    Attributes:
        treatment: int64 (Y, B), the treatment the row is about: the plan's (modal) action, or for a deferred
            bridge the best treatment it was denied (most often over the samples); 0: none worth its cost.
        waiting_usd: the cost of waiting a year to do it, USD of value (benefit ÷ ``cost_lambda``).
        value_per_usd: ``waiting_usd`` per USD of the treatment's cost.
        cutoff_per_usd: the cut-off of the bridge's agency that year, USD of value per USD.
        funded_at_usd: for a deferred bridge, the agency's money that year at which it would be funded, USD (NaN
            otherwise).
    """

    treatment: np.ndarray
    waiting_usd: np.ndarray
    value_per_usd: np.ndarray
    cutoff_per_usd: np.ndarray
    funded_at_usd: np.ndarray

    @classmethod
    def empty(cls, years: int, b_n: int) -> PlanReasons:
        z = np.zeros((years, b_n))
        return cls(np.zeros((years, b_n), dtype=np.int64), z.copy(), z.copy(), z.copy(), np.full((years, b_n), np.nan))

    def add(self, y: int, r: YearReasons, modal: np.ndarray, cost_lambda: float) -> None:
        """Year ``y``'s reasons (E samples) for the plan's modal actions ``modal`` int (B,)."""
        _, b_n, a_n = r.benefit.shape
        deferred = modal == 0
        best = np.stack([(r.best == a).sum(0) for a in range(a_n)]).argmax(0)  # modal best (B,)
        about = np.where(deferred, best, modal)
        cols = np.arange(b_n)
        ben = r.benefit[:, cols, about].mean(0) / cost_lambda
        cost = r.cost[:, cols, about].mean(0)
        self.treatment[y] = about
        self.waiting_usd[y] = np.where(about > 0, ben, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.value_per_usd[y] = np.where((about > 0) & (cost > 0), ben / cost, 0.0)
        self.cutoff_per_usd[y] = r.cutoff.mean(0) / cost_lambda
        some = deferred & (about > 0)
        at = np.where(r.best == about[None, :], r.funded_at, np.nan)
        with warnings.catch_warnings():  # a bridge whose best is another in every sample: NaN, no warning
            warnings.simplefilter("ignore", RuntimeWarning)
            self.funded_at_usd[y] = np.where(some, np.nanmean(at, axis=0), np.nan)

    def reason(self, y: int, j: int, action: int, names: tuple[str, ...], agency: str) -> str:
        """The row's reason in words; ``agency``: the name of the agency that pays (urban, rural, or an owner)."""
        owner = agency not in ("urban", "rural")  # an owner's name says what it is ("01 state highway agency")
        cut = (f"the cut-off of {agency}" if owner else f"the {agency} agency's cut-off") + \
            f" {self.cutoff_per_usd[y, j]:.2f}"
        if action > 0:
            below = self.value_per_usd[y, j] < self.cutoff_per_usd[y, j]  # whole treatments: it fits what was left
            return (f"funded: {self.value_per_usd[y, j]:.2f} USD of value a USD against {cut}" +
                    (f"{BELOW_CUTOFF}" if below else ""))
        about = int(self.treatment[y, j])
        if about == 0:
            return "nothing: every treatment is worth more later than now"
        funded = self.funded_at_usd[y, j]
        money = f"the money of {agency}" if owner else f"{agency} money"
        where = f"; funded at {money} of USD {funded:,.0f} this year" if np.isfinite(funded) else ""
        value = self.value_per_usd[y, j]
        if value >= self.cutoff_per_usd[y, j]:  # the knapsack's whole treatments: it did not fit what was left
            return (f"deferred: {names[about]} would return {value:.2f} USD of value a USD, above {cut}, but its "
                    f"cost does not fit the money left{where}")
        return f"deferred: {names[about]} would return {value:.2f} USD of value a USD, below {cut}{where}"
