"""What more money buys, from the price of money of the exact bound.

The Lagrangian bound (:func:`bridgefleet.planning.exact_bound.lagrangian_bound`) prices each agency's money in each
year by μ ≥ 0 (present-value reward units per USD of a budget row). Since the bound L(b) is concave in the budget
rows' right-hand sides b and μ is a supergradient (LP duality),

    L(b + Δ) ≤ L(b) + Σ_rows μ_row Δ_row,

so the price of money times the extra money is the most that money is worth to the relaxation
(:func:`money_worth`). What money buys at that price comes from each bridge's exact DP at a slightly lower and a
slightly higher price of money (:func:`price_response`): the bridges whose best plan changes between the two are
those at the cut-off, and the difference of their plans' expected spend and poor years is what the money between
the two prices buys (the slope of the relaxation's demand for money; the dual function's subgradients at the two
prices, Hawkins 2003; Adelman & Mersereau 2008, "Relaxations of weakly coupled stochastic dynamic programs",
Operations Research 56(3)).
"""

from __future__ import annotations

import numpy as np

from bridgefleet.planning.exact_dp import FleetModel, solve

SPREAD = 0.2
"""The price of money is taken this share below and above the bound's (:func:`price_response`). Measured on the
default fleet at the sized budget (rule priced; 2026-12-07): per USD 1 million a year the two plans' difference
kept 517 / 542 / 615 / 637 / 648 m² of deck area out of poor in year 10 and avoided USD 22.1 / 18.3 / 15.1 / 12.6 /
12.7 million of road users' cost at spreads 0.02 / 0.05 / 0.1 / 0.2 / 0.3; two planner runs a million apart on 16
paths: 971 ± 543 m² and USD 10.8 ± 3.1 million (a small spread moves few bridges, whose users' cost is uneven)."""


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


def price_response(model: FleetModel, price: np.ndarray, price_poor: np.ndarray,
                   spread: float = SPREAD) -> tuple[np.ndarray, np.ndarray]:
    """Each bridge's best plan (exact DP) at the price of money × (1 − ``spread``) against × (1 + ``spread``)
    (module docstring), the charge for a poor year kept.

    Args:
        model: the fleet (its bridges from their state now).
        price: float64 (B, T), each bridge's price of a USD in year t (the DP's units; inf: no money that year).
        price_poor: float64 (B, T), the charge for ending year t poor (the rule's price), reward units.
        spread: in (0, 1).

    Returns:
        (expected spend float64 (B, T) USD, probability of ending each year poor float64 (B, T)): the cheaper
        price's plans less the dearer price's.

    Raises:
        ValueError: ``spread`` outside (0, 1).
    """
    if not 0.0 < spread < 1.0:
        raise ValueError(f"spread {spread:g}: must be in (0, 1)")
    cheap = solve(model, price * (1.0 - spread), price_poor, keep_policy=False)
    dear = solve(model, price * (1.0 + spread), price_poor, keep_policy=False)
    return cheap.spend - dear.spend, cheap.poor - dear.poor
