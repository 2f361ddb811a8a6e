"""Bridges whose priced problems are one problem up to scale: solve one of each, scale the rest.

Without the reward (the least budget's pricing problem, :func:`bridgefleet.planning.transitions.prices_only`) a
bridge's DP minimises Σ_t price_t × cost(a_t) + poor price_t × deck area × [poor at the end of year t]. Its
costs are unit costs × its size (deck area × cost factor, :func:`bridgefleet.planning.transitions.bridge_mdps`)
and the deck area the rule counts is its size over its cost factor (0 off the NHS), so two bridges with the same
deterioration case, initial rating, agency, fleet and ratio of counted deck area to cost have problems that
differ by a factor s: the same optimal policy, s times the values and the spend, the same treatments and the
same probabilities of ending a year poor. Indiana's 4,794 bridges are 156 such classes, dc-2019's 244 are 41:
the least budget's DP solves and its certificate run on one bridge a class. :func:`classes` finds them for the
component model's least budget too (:mod:`bridgefleet.planning.exact_least_budget`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bridgefleet.planning.dp import Solution, solve
from bridgefleet.planning.transitions import BridgeMDPs

DIGITS = 12
"""Significant digits to which two bridges' cost and deck-area ratios must agree to share a class (the products
that make them differ only by rounding)."""


def _rounded(x: np.ndarray) -> np.ndarray:
    """``x`` to :data:`DIGITS` significant digits (0 stays 0)."""
    mag = np.where(x == 0, 0.0, np.floor(np.log10(np.abs(np.where(x == 0, 1.0, x)))))
    return np.round(x / 10.0**mag, DIGITS - 1) * 10.0**mag


def classes(exact: np.ndarray, cost: np.ndarray, deck: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bridges whose prices-only problems are one problem up to scale: equal ``exact`` keys (N, k) (fleet,
    agency, kind, start, …), and costs float64 (N, A) USD and counted deck area float64 (N,) m² in the same
    proportions (to :data:`DIGITS` digits). The scale is the dearest action's cost (the deck area where no action
    costs anything).

    Returns:
        (rep int64 (K,) the first bridge of each class, ascending; of int64 (N,) each bridge's class; ratio
        float64 (N,) its scale over its class's representative's).
    """
    scale = cost.max(1)
    scale = np.where(scale > 0, scale, np.where(deck > 0, deck, 1.0))
    key = np.column_stack([exact, _rounded(cost / scale[:, None]), _rounded(deck / scale)]).astype(np.float64)
    _, rep, of = np.unique(key, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(rep)  # classes in the order of their first bridge
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    rep, of = rep[order], rank[of.reshape(-1)]
    return rep.astype(np.int64), of.astype(np.int64), scale / scale[rep][of]


@dataclass
class Alike:
    """Classes of bridges whose prices-only problems are equal up to scale.

    Attributes:
        rep: int64 (K,), one bridge of each class (the first), ascending.
        of: int64 (N,), each bridge's class (index into ``rep``).
        ratio: float64 (N,), each bridge's scale over its class's representative's (1 for the representative).
        mdps: the representatives' MDPs (K bridges), which :meth:`solve` solves.
    """

    rep: np.ndarray
    of: np.ndarray
    ratio: np.ndarray
    mdps: BridgeMDPs

    @classmethod
    def prices_only(cls, mdps: BridgeMDPs) -> Alike:
        """The classes of ``mdps``'s bridges for prices that depend only on the fleet, the agency and the year
        (the cost of a USD and of a m² poor; no price per treatment): equal fleet, agency, deterioration case,
        initial rating and years since maintenance, allowed actions, and costs and counted deck area in the same
        proportions (to :data:`DIGITS` digits). The scale is the bridge's dearest action's cost (its deck area
        where no action costs anything).

        Raises:
            ValueError: MDPs with a reward (the classes ignore it; build them with
                :func:`bridgefleet.planning.transitions.prices_only`).
        """
        if mdps.utility.any() or mdps.poor_step.any() or mdps.cost_lambda != 0.0:
            raise ValueError("Alike.prices_only: these MDPs carry a reward, which the classes ignore "
                             "(use transitions.prices_only)")
        rep, of, ratio = classes(np.column_stack([mdps.fleet, mdps.agency, mdps.kind, mdps.c0, mdps.ysm0,
                                                  mdps.feasible]), mdps.cost, mdps.deck)
        return cls(rep, of, ratio, mdps.select(rep))

    def solve(self, price_cost: np.ndarray, price_poor: np.ndarray, active: np.ndarray, eval_utility: np.ndarray,
              eval_step: np.ndarray) -> Solution:
        """:func:`bridgefleet.planning.dp.solve` of the N bridges classified (no reward: prices only, no price
        per treatment), solved for one bridge a class: every field as that solve's (value0 and exp_cost scaled by
        ``ratio``; exp_utility valued with each bridge's own ``eval_utility`` float64 (N, G) and ``eval_step``
        (N,) from its class's discounted occupancy). ``price_cost``, ``price_poor``: float64 (N, T) step prices
        as there (the same per class: they come from the fleet and agency, the poor one × the deck area);
        ``active`` bool (N,) (a class is solved where its representative is active)."""
        cost = price_cost[self.rep]
        sol = solve(self.mdps, cost, np.zeros_like(cost), active[self.rep], price_poor=price_poor[self.rep],
                    occupancy=True)
        k, r = self.of, self.ratio
        return Solution(sol.value0[k] * r, sol.exp_cost[k] * r[:, None], sol.exp_count[k], None, sol.exp_poor[k],
                        sol.used[k], (sol.occupancy[k] * eval_utility).sum(1) + sol.occupancy_step[k] * eval_step)

    def expand(self, values: np.ndarray) -> np.ndarray:
        """Per-bridge values float64 (N,) from their classes' representatives' ``values`` (K,), scaled."""
        return values[self.of] * self.ratio
