"""What more money buys, from the price of money (planning/exact_margin.py): on small fleets the price of money times
the extra money bounds what the occupation-measure LP gains with it (LP concavity), and at a cheaper price each
bridge's best plan spends at least as much priced money as at a dearer one (its value is convex in the price)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from test_exact_rule import _two_bridges, occupation_lp

from bridgefleet.planning.exact_bound import Rule, lagrangian_bound
from bridgefleet.planning.exact_margin import money_worth, price_response


def _binding(case: int):
    """A 2-bridge fleet whose budgets bind: each agency's budget its cheapest treatment a year, no cost in the reward
    (cost_lambda 0), so money has a price (no row lies below the cheapest treatment, which the bound would enforce)."""
    model, agency, budget, deck, _ = _two_bridges(100 + case, case, 5)
    model = replace(model, cost_lambda=0.0)
    cheapest = [model.cost[agency == g, 1:].min() if (agency == g).any() else 1.0 for g in range(2)]
    return model, agency, np.repeat(np.array(cheapest)[:, None], budget.shape[1], axis=1), deck


def test_more_money_is_worth_at_most_its_price():
    """Eight fleets, rules of 95 %, 80 % and 65 % of deck area poor, one more USD a year for each agency: the LP with
    the money is within the bound plus the price of money times the money, and the money is worth something in
    most of them."""
    priced = 0
    for case in range(8):
        model, agency, budget, deck = _binding(case)
        for share in (0.95, 0.8, 0.65):
            if occupation_lp(model, agency, budget, deck, share) is None:
                continue  # the rule cannot be met at this budget
            res = lagrangian_bound(model, agency, budget, rule=Rule(np.zeros(2, int), deck, share), tol=1e-10,
                                   max_iter=300)
            extra = np.ones_like(budget)
            worth = money_worth(res.row_price, extra, False)
            assert occupation_lp(model, agency, budget + extra, deck, share) <= res.bound + worth + 1e-6
            priced += worth > 1e-6
    assert priced >= 6  # the bound is tested where money has a price, not only where it is free


def test_money_worth_counts_cumulative_rows_under_carry_over():
    # rows of cumulative spend: a USD more each year adds 1, 2, 3 USD to rows 1–3 (prices 0.5, 0.25, 0.1)
    price = np.array([[0.5, 0.25, 0.1]])
    assert money_worth(price, np.ones((1, 3)), True) == pytest.approx(0.5 + 0.5 + 0.3)
    assert money_worth(price, np.ones((1, 3)), False) == pytest.approx(0.85)


def test_a_cheaper_price_of_money_buys_at_least_as_much():
    more = 0
    for case in range(8):
        model, agency, budget, _ = _binding(case)
        res = lagrangian_bound(model, agency, budget, tol=1e-10, max_iter=300)
        price = res.price[agency]
        spend, _ = price_response(model, price, res.price_poor, 0.3)
        disc = model.gamma ** np.arange(budget.shape[1])
        priced = (price * spend) @ disc  # Σ_t γ^t price_t (spend at 0.7 × − spend at 1.3 ×), each bridge
        assert (priced >= -1e-9).all(), case
        more += (priced > 1e-9).any()
    assert more >= 3  # some bridges buy more at the cheaper price
    with pytest.raises(ValueError, match="spread"):
        price_response(model, price, res.price_poor, 1.0)
