"""Scalar reference of the fleet dynamics: plain Python, one bridge at a time.

Used only as a test oracle and a benchmark baseline for the vectorized model; given the same noise draws
it must produce the same ratings, costs, funding decisions and rewards.
"""

from __future__ import annotations

from bridgefleet.config import FleetConfig

GAIN = (0.0, 1.0, 2.0, 4.0)


def reference_year(
    condition: list[float], age: list[float], ysm: list[float], rate: list[float],
    deck_area: list[float], aadt: list[float], cost_factor: list[float], target: list[float],
    actions: list[int], noise: list[float], budget: tuple[float, float], n_urban: int, config: FleetConfig,
) -> tuple[list[float], list[bool], tuple[float, float]]:
    """One year for one fleet; the state lists are updated in place.

    Returns (per-bridge reward, per-bridge deferred flag, (urban spend, rural spend) USD).
    """
    b = len(condition)
    cost = [config.unit_costs_usd_per_m2[actions[i]] * deck_area[i] * cost_factor[i] for i in range(b)]
    funded = [False] * b
    spent = [0.0, 0.0]
    for k, (lo, hi) in enumerate(((0, n_urban), (n_urban, b))):
        # Worst condition first (0.001-point resolution, ties by index), skip what does not fit.
        order = sorted(range(lo, hi), key=lambda i: (round(min(max(condition[i], 0.0), 9.0) * 1000), i))
        left = budget[k] + 0.01
        for i in order:
            if actions[i] > 0 and cost[i] <= left:
                funded[i] = True
                left -= cost[i]
                spent[k] += cost[i]
    rewards = []
    deferred = []
    for i in range(b):
        a = actions[i] if funded[i] else 0
        deferred.append(actions[i] > 0 and not funded[i])
        if a == 4:
            condition[i], age[i], rate[i] = 9.0, 0.0, config.new_structure_rate
        elif a > 0:
            condition[i] = min(condition[i] + GAIN[a], 9.0)
        if a > 0:
            ysm[i] = 0.0
        band = 0 if condition[i] >= 7.0 else (1 if condition[i] >= 5.0 else 2)
        drop = rate[i] * config.band_rate_factors[band] * (1.0 + config.ysm_acceleration * ysm[i]) * noise[i]
        condition[i] = min(max(condition[i] - drop, 0.0), 9.0)
        age[i] += 1.0
        ysm[i] += 1.0
        w = (aadt[i] / config.aadt_reference) ** config.aadt_exponent
        shortfall = max(config.critical_rating - condition[i], 0.0)
        utility = w * ((condition[i] - target[i]) - config.critical_penalty * shortfall**2)
        user_cost = config.poor_user_cost_usd_per_aadt * aadt[i] if condition[i] < 5.0 else 0.0
        rewards.append(utility - config.cost_lambda * ((cost[i] if a > 0 else 0.0) + user_cost))
    return rewards, deferred, (spent[0], spent[1])
