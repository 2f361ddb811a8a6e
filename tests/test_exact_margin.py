"""The relaxation given more money (planning/exact_margin.py), against the occupation-measure LP of small fleets: the
master re-solved over the bound's own columns is a feasible mixture at the new budget (never above the LP there), and
the price of money times the extra money bounds what it can be worth (LP concavity)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_exact_rule import _two_bridges, occupation_lp

from bridgefleet.planning.exact_bound import Rule, lagrangian_bound
from bridgefleet.planning.exact_margin import money_worth, remix


def test_more_money_is_worth_at_most_its_price_and_the_remix_is_a_feasible_mixture():
    """Eight 2-bridge fleets, rules of 95 %, 80 % and 65 % of deck area poor, each agency's budget its cheapest
    treatment a year and no cost in the reward (cost_lambda 0), so the budgets bind; one more USD a year each."""
    gained = 0
    for case in range(8):
        for share in (0.95, 0.8, 0.65):
            gained += _case(case, share)
    assert gained >= 6  # the extra money buys something: the checks are not about nothing


def _case(case: int, share: float) -> bool:
    model, agency, budget, deck, _ = _two_bridges(100 + case, case, 5)
    model = replace(model, cost_lambda=0.0)
    # each row at its agency's cheapest treatment: binding, and none enforced at 0 (a row below it would be)
    cheapest = [model.cost[agency == g, 1:].min() if (agency == g).any() else 1.0 for g in range(2)]
    budget = np.repeat(np.array(cheapest)[:, None], budget.shape[1], axis=1)
    rule = Rule(np.zeros(2, int), deck, share)
    lp = occupation_lp(model, agency, budget, deck, share)
    if lp is None:
        return False  # the rule cannot be met at this budget
    res = lagrangian_bound(model, agency, budget, rule=rule, tol=1e-10, max_iter=300)
    extra = np.full_like(budget, 1.0)
    at_b, more = remix(model.cost, model.gamma, agency, budget, False, rule, res.mixture, [extra])
    lp_more = occupation_lp(model, agency, budget + extra, deck, share)
    # at the bound's own budget: the LP's optimum (the search's columns reach it), a mixture within every row
    assert at_b.value == pytest.approx(lp, rel=1e-6, abs=1e-7)
    g_spend = np.stack([at_b.spend[agency == g].sum(0) for g in range(2)])
    assert (g_spend <= budget + 1e-7).all()
    assert (deck @ at_b.poor <= share * deck.sum() + 1e-7).all()
    # with more money: within the new rows, never above the LP there, and the LP within the price of money's reach
    g_more = np.stack([more.spend[agency == g].sum(0) for g in range(2)])
    assert (g_more <= budget + extra + 1e-7).all()
    assert at_b.value - 1e-9 <= more.value <= lp_more + 1e-7
    assert lp_more <= res.bound + money_worth(res.row_price, extra, False) + 1e-6
    return more.value > at_b.value + 1e-6


def test_money_worth_counts_cumulative_rows_under_carry_over():
    # rows of cumulative spend: a USD more each year adds 1, 2, 3 USD to rows 1–3 (prices 0.5, 0.25, 0.1)
    price = np.array([[0.5, 0.25, 0.1]])
    assert money_worth(price, np.ones((1, 3)), True) == pytest.approx(0.5 + 0.5 + 0.3)
    assert money_worth(price, np.ones((1, 3)), False) == pytest.approx(0.85)


def test_remix_refuses_extra_money_of_another_shape():
    model, agency, budget, _, _ = _two_bridges(400, 0, 4)
    res = lagrangian_bound(model, agency, budget, tol=1e-8)
    with pytest.raises(ValueError, match="extra money"):
        remix(model.cost, model.gamma, agency, budget, False, None, res.mixture, [np.ones(3)])
