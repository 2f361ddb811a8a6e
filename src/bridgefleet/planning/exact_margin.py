"""What the relaxation does with more money: its master LP over the policies the price search found, at another
budget.

The Lagrangian bound (:func:`bridgefleet.planning.exact_bound.lagrangian_bound`) ends with a master LP that mixes each
bridge's policies (its columns: value, expected spend and probability of ending each year poor) within the budget
rows, priced by μ ≥ 0 (the price of money, present-value reward units per USD of each row). Since the bound L(b) is
concave in the budget rows' right-hand sides b and μ is a supergradient (LP duality),

    L(b + Δ) ≤ L(b) + Σ_rows μ_row Δ_row,

so the price of money times the extra money is the most that money is worth to the relaxation. What it buys comes
from the same master re-solved at b + Δ over the same columns (:func:`remix`): the bridges the prices left mixed
between a cheaper and a dearer policy (those at the cut-off) move to the dearer one, and the mixture's expected poor
deck area and road users' cost follow. The columns were found at b, so the re-solved master is a mixture any
budget-feasible relaxation at b + Δ may use (its value a lower end of L(b + Δ)); it buys no policy the search did
not meet. Sources: Dantzig & Wolfe 1960 (the master LP); Adelman & Mersereau 2008, "Relaxations of weakly coupled
stochastic dynamic programs", Operations Research 56(3).
"""

from __future__ import annotations

from typing import NamedTuple

import highspy
import numpy as np

from bridgefleet.planning.exact_bound import RULE_PENALTY, BudgetRows, Mixture, Rule, RuleRows, _Master


class Remix(NamedTuple):
    """The master LP re-solved over given columns (:func:`remix`).

    Attributes:
        value: the mixture's value, reward units (present value), less the penalty of any rule allowance exceeded.
        weight: float64 (N,), each column's weight (each bridge's sum to 1).
        poor: float64 (B, T), the probability each bridge ends year t poor under the mixture.
        spend: float64 (B, T) USD, each bridge's expected spend per year.
        rule_met: whether the mixture keeps every rule row within its allowance (True without a rule).
    """

    value: float
    weight: np.ndarray
    poor: np.ndarray
    spend: np.ndarray
    rule_met: bool


def remix(cost: np.ndarray, gamma: float, agency: np.ndarray, budget: np.ndarray, carry_over: bool,
          rule: Rule | None, mixture: Mixture, extra: list[np.ndarray]) -> list[Remix]:
    """The master LP of :func:`~bridgefleet.planning.exact_bound.lagrangian_bound` over ``mixture``'s columns at
    ``budget``, then at ``budget`` + each of ``extra`` in turn, each from the last one's basis (HiGHS warm: the
    mixture moves along the LP's own path, not to another optimum of equal value; module docstring).

    Args:
        cost: float64 (B, A) USD, each bridge's action costs (rows below an agency's cheapest treatment are
            enforced as the bound enforces them). gamma: the discount factor.
        agency: int (B,), each bridge's agency, a row of ``budget``.
        budget: float64 (G, T) USD a year per agency.
        carry_over: unspent money carries over (cumulative rows).
        rule: the poor deck-area rule the bound priced (at the share it aimed at), or None.
        mixture: the bound's columns (``ExactBound.mixture``; do-nothing columns among them, iteration −1).
        extra: float64 (G, T) arrays ≥ 0, USD a year per agency added to ``budget``.

    Returns:
        :class:`Remix` at ``budget``, then one for each of ``extra``.

    Raises:
        ValueError: shapes of agency, budget or rule (:class:`~bridgefleet.planning.exact_bound.BudgetRows`), an
            extra of another shape or below 0.
        RuntimeError: HiGHS finds no optimum.
    """
    b_n = len(agency)
    rows_budget = BudgetRows(agency, budget, carry_over, gamma, b_n, cost=cost)
    for more in extra:
        if np.shape(more) != rows_budget.budget.shape or not (np.asarray(more) >= 0).all():
            raise ValueError(f"extra money: shape {np.shape(more)} ≥ 0 USD expected, as budget's "
                             f"{rows_budget.budget.shape}")
    rows_rule = RuleRows(rule, b_n, rows_budget.t_n)
    nothing = np.abs(mixture.reward[mixture.iteration < 0]).sum()
    master = _Master(rows_budget.n + rows_rule.n, b_n, rows_budget.n + np.arange(rows_rule.n),
                     RULE_PENALTY * max(1.0, float(nothing)))
    # a column that spends where a row is enforced (below the cheapest treatment) cannot be mixed in
    spent = np.cumsum(mixture.spend, axis=1) if carry_over else mixture.spend
    keep = np.flatnonzero(~(rows_budget.forbid[rows_budget.agency[mixture.bridge]] & (spent > 0)).any(1))
    bridge = mixture.bridge[keep]
    master.add(mixture.reward[keep], np.concatenate([rows_budget.entries(mixture.spend[keep], bridge),
                                                     rows_rule.entries(mixture.poor[keep], bridge)], axis=1), bridge)
    rows = np.arange(rows_budget.n, dtype=np.int32)
    out = []
    for more in [np.zeros_like(rows_budget.budget), *extra]:
        added = np.cumsum(more, axis=1) if carry_over else np.asarray(more, dtype=np.float64)
        # the rows are scaled by the budget's right-hand sides: more money lifts their upper bounds above 1
        upper = 1.0 + added.ravel()[rows_budget.active] / rows_budget.scale
        master.h.changeRowsBounds(len(rows), rows, np.full(len(rows), -highspy.kHighsInf), upper)
        value, _, _, weight = master.solve()
        full = np.zeros(len(mixture.bridge))
        full[keep] = weight
        poor = np.zeros((b_n, rows_budget.t_n))
        spend = np.zeros((b_n, rows_budget.t_n))
        np.add.at(poor, mixture.bridge, full[:, None] * mixture.poor)
        np.add.at(spend, mixture.bridge, full[:, None] * mixture.spend)
        out.append(Remix(value, full, poor, spend, bool(master.slacks().sum() <= 1e-6 * max(1, rows_rule.n))))
    return out


def money_worth(row_price: np.ndarray, extra: np.ndarray, carry_over: bool) -> float:
    """Σ_rows μ_row Δ_row: the most ``extra`` money is worth to the relaxation (module docstring), reward units.

    Args:
        row_price: float64 (G, T), the budget rows' multipliers μ (``ExactBound.row_price``; cumulative rows with
            carry-over).
        extra: float64 (G, T), the extra money, USD a year per agency.
        carry_over: whether the rows are cumulative.
    """
    rows = np.cumsum(extra, axis=1) if carry_over else extra
    return float((row_price * rows).sum())
