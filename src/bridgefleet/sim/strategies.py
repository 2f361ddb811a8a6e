"""Rule-based maintenance: the per-bridge threshold rule and the rural agent's 8 fleet-level strategies.

All rules work on arrays (E, B) and return int64 action arrays of the same shape. The budget is applied
afterwards by :func:`bridgefleet.sim.model.fund_actions` (worst condition first). The rural strategies
are one lookup table (:data:`STRATEGY_TABLE`) evaluated by a compiled kernel; the thresholds below are
the ones it encodes.
"""

from __future__ import annotations

import numpy as np

from bridgefleet.sim import kernels
from bridgefleet.sim.model import GOOD_RATING, POOR_BELOW

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
CRITICAL_BELOW = 4.0
"""Critical-only strategy: rehabilitation below this rating."""
LEVEL_BOUNDS = np.array([REPLACE_BELOW, CRITICAL_BELOW, POOR_BELOW, REPAIR_BELOW, GOOD_RATING], dtype=np.float32)
"""Ascending rating thresholds that split ratings into the strategy table's 6 condition levels."""


def condition_based_actions(condition: np.ndarray) -> np.ndarray:
    """The standard reactive threshold rule (condition-based maintenance).

    rating < 3 → replacement (4); < 5 (poor) → rehabilitation (3); < 6 → repair (2); otherwise nothing.
    Agencies act when a rating crosses a threshold; preventive work is left to the interval rules.
    """
    a = (condition < REPAIR_BELOW).astype(np.int64)
    a += condition < POOR_BELOW
    a += condition < REPLACE_BELOW
    return np.where(a > 0, a + 1, 0)  # 1 → repair (2), 2 → rehabilitation (3), 3 → replacement (4)


def interval_preventive_actions(condition: np.ndarray, ysm: np.ndarray) -> np.ndarray:
    """Fixed-interval preventive maintenance: preventive every 5 years since maintenance, poor → rehab."""
    return np.where(condition < POOR_BELOW, 3, np.where(ysm >= PREVENTIVE_INTERVAL, 1, 0)).astype(np.int64)


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
    threshold rule; 5 age-based replacement (age ≥ 60 or rating < 3); 6 AADT-risk-weighted: poor bridges get
    the threshold rule (rehabilitation, replacement below 3), and fair ones (5 to < 7) a repair only where
    their risk = weight × max(0, 7 − rating) is above the fleet's mean risk; 7 minimal critical-only:
    rehabilitation below rating 4.
    """
    strategy = np.ascontiguousarray(strategy, dtype=np.int64)
    out = np.empty(condition.shape, dtype=np.int64)
    if out.shape[-1] == 0:  # no rural bridge (an all-urban inventory): nothing to request, no fleet mean to take
        return out
    f32 = np.float32
    kernels.rural_requests(strategy, np.ascontiguousarray(condition, dtype=f32), np.ascontiguousarray(age, dtype=f32),
                           np.ascontiguousarray(ysm, dtype=f32), np.ascontiguousarray(traffic_weight, dtype=f32),
                           STRATEGY_TABLE, LEVEL_BOUNDS, PREVENTIVE_INTERVAL, REPLACEMENT_AGE, 0, out)
    return out


def _strategy_table() -> np.ndarray:
    """Action of each strategy for each (condition level, ysm ≥ 5, age ≥ 60, risky) code: int64 (8, 48).

    Condition level 0: < 3, 1: 3 to < 4, 2: 4 to < 5 (poor), 3: 5 to < 6, 4: 6 to < 7 (fair), 5: ≥ 7.
    """
    level, ysm5, old, risky = np.meshgrid(np.arange(6), [0, 1], [0, 1], [0, 1], indexing="ij")
    # The threshold rule at each level's lowest rating (0, then each bound).
    rule = condition_based_actions(np.concatenate([[0.0], LEVEL_BOUNDS]))[level]
    table = np.stack([
        np.zeros_like(level),
        np.where(level <= 2, 3, 0),
        np.where((level == 3) | (level == 4), 2, 0),
        np.where((level == 5) & (ysm5 == 1), 1, 0),
        rule,
        np.where((old == 1) | (level == 0), 4, 0),
        np.where(level <= 2, rule, np.where((risky == 1) & (level <= 4), 2, 0)),
        np.where(level <= 1, 3, 0),
    ])
    return table.reshape(N_STRATEGIES, -1).astype(np.int64)


STRATEGY_TABLE = _strategy_table()
"""int64 (8, 48): action of strategy s for bridge code (see :func:`_strategy_table`)."""
