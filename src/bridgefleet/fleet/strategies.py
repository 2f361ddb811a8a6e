"""Rule-based maintenance: the per-bridge threshold rule and the rural agent's 8 fleet-level strategies.

All rules are vectorized over arrays (E, B) and return int64 action arrays of the same shape. The budget
is applied afterwards by :func:`bridgefleet.fleet.model.fund_actions` (worst condition first).
"""

from __future__ import annotations

import numpy as np

from bridgefleet.fleet.model import GOOD_RATING, POOR_BELOW

N_STRATEGIES = 8
STRATEGY_NAMES = (
    "do_nothing",
    "reactive_rehabilitation",
    "repair_fair",
    "preventive_good",
    "condition_based",
    "age_based_replacement",
    "aadt_risk_weighted",
    "critical_only",
)
"""Rural strategies 0–7; the rule of each is in :func:`rural_actions` and docs/fleet-model.md."""

REPLACE_BELOW = 3.0
"""Ratings below 3 ('serious' or worse, FHWA coding guide) call for replacement in the threshold rule."""
REPAIR_BELOW = 6.0
PREVENTIVE_INTERVAL = 5.0
"""Years between preventive treatments in the fixed-interval rules (thin polymer overlays last ~5–10 y)."""
REPLACEMENT_AGE = 60.0
"""Age-based replacement threshold, years."""


def condition_based_actions(condition: np.ndarray) -> np.ndarray:
    """The standard reactive threshold rule (condition-based maintenance).

    rating < 3 → replacement (4); < 5 (poor) → rehabilitation (3); < 6 → repair (2); otherwise nothing.
    Agencies act when a rating crosses a threshold; preventive work is left to the interval rules.
    """
    return np.select(
        [condition < REPLACE_BELOW, condition < POOR_BELOW, condition < REPAIR_BELOW], [4, 3, 2], 0
    ).astype(np.int64)


def interval_preventive_actions(condition: np.ndarray, ysm: np.ndarray) -> np.ndarray:
    """Fixed-interval preventive maintenance: preventive every 5 years since maintenance, poor → rehab."""
    return np.where(condition < POOR_BELOW, 3, np.where(ysm >= PREVENTIVE_INTERVAL, 1, 0)).astype(np.int64)


def worst_first_actions(condition: np.ndarray) -> np.ndarray:
    """Worst-first: every bridge below good requests rehabilitation; the budget funds the worst first."""
    return np.where(condition < GOOD_RATING, 3, 0).astype(np.int64)


def rural_actions(
    strategy: np.ndarray,
    condition: np.ndarray,
    age: np.ndarray,
    ysm: np.ndarray,
    traffic_weight: np.ndarray,
) -> np.ndarray:
    """Turn a fleet-level strategy into per-bridge actions for the rural fleet.

    Args:
        strategy: int (E,) in 0–7, one per fleet.
        condition, age, ysm, traffic_weight: float (E, R) rural bridge columns (rating points, years,
            years, dimensionless AADT weight).

    Returns:
        int64 (E, R) requested actions, before the rural budget is applied.

    Strategies: 0 do nothing; 1 reactive rehabilitation of poor bridges (< 5); 2 repair of fair bridges
    (5 to < 7); 3 preventive maintenance of good bridges (≥ 7) every 5 years; 4 the condition-based
    threshold rule; 5 age-based replacement (age ≥ 60 or rating < 3); 6 AADT-risk-weighted: the threshold
    rule on the bridges whose risk = weight × max(0, 7 − rating) is above the fleet's median risk;
    7 minimal critical-only: rehabilitation below rating 4.
    """
    strategy = np.asarray(strategy)
    out = np.zeros(condition.shape, dtype=np.int64)
    # One rule per strategy present, on its fleets only (a loop over ≤ 8 strategies, not bridges).
    for k in np.unique(strategy):
        rows = strategy == k
        if k == 0:
            continue
        c = condition[rows] if not rows.all() else condition
        if k == 1:
            a = np.where(c < POOR_BELOW, 3, 0)
        elif k == 2:
            a = np.where((c >= POOR_BELOW) & (c < GOOD_RATING), 2, 0)
        elif k == 3:
            y = ysm[rows] if not rows.all() else ysm
            a = np.where((c >= GOOD_RATING) & (y >= PREVENTIVE_INTERVAL), 1, 0)
        elif k == 4:
            a = condition_based_actions(c)
        elif k == 5:
            g = age[rows] if not rows.all() else age
            a = np.where((g >= REPLACEMENT_AGE) | (c < REPLACE_BELOW), 4, 0)
        elif k == 6:
            w = traffic_weight[rows] if not rows.all() else traffic_weight
            risk = w * np.maximum(GOOD_RATING - c, 0.0)
            risky = (risk > np.median(risk, axis=1, keepdims=True)) & (risk > 0)
            a = np.where(risky, condition_based_actions(c), 0)
        elif k == 7:
            a = np.where(c < 4.0, 3, 0)
        else:
            raise ValueError(f"rural strategy {k} out of range [0, {N_STRATEGIES - 1}]")
        if rows.all():
            out = a.astype(np.int64)
        else:
            out[rows] = a
    return out
