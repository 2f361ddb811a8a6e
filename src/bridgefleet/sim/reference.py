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
    actions: list[int], noise: list[float], budget: tuple[float, ...], n_urban: int, config: FleetConfig,
    shock: list[float] | None = None, user_cost_usd: list[float] | None = None, agency: list[int] | None = None,
) -> tuple[list[float], list[bool], tuple[float, ...]]:
    """One year for one fleet; the state lists are updated in place. ``shock``: sudden-damage drops (rating
    points, None = none); ``user_cost_usd``: each bridge's yearly user cost while poor, USD (None: the model's
    cost per vehicle/day × AADT); ``agency``: each bridge's agency, indexing ``budget`` (None: the urban agency 0
    pays the first ``n_urban`` bridges, the rural one 1 the rest).

    Returns (per-bridge reward, per-bridge deferred flag, each agency's spend USD).
    """
    b = len(condition)
    if agency is None:
        agency = [0 if i < n_urban else 1 for i in range(b)]
    cost = [config.unit_costs_usd_per_m2[actions[i]] * deck_area[i] * cost_factor[i] for i in range(b)]
    funded = [False] * b
    spent = [0.0] * len(budget)
    for k in range(len(budget)):
        # Worst condition first (0.001-point resolution, ties by index), skip what does not fit.
        mine = [i for i in range(b) if agency[i] == k]
        order = sorted(mine, key=lambda i: (round(min(max(condition[i], 0.0), 9.0) * 1000), i))
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
        top = config.new_structure_rating
        if a == 4:
            condition[i], age[i], rate[i] = top, 0.0, config.new_structure_rate
        elif a > 0:
            condition[i] = max(min(condition[i] + GAIN[a], top), condition[i])
        if a > 0:
            ysm[i] = 0.0
        factor = config.rating_rate_factors[min(int(condition[i]), 8)]
        drop = rate[i] * factor * (1.0 + config.ysm_acceleration * ysm[i]) * noise[i]
        if shock is not None:
            drop += shock[i]
        condition[i] = min(max(condition[i] - drop, 0.0), 9.0)
        age[i] += 1.0
        ysm[i] += 1.0
        w = (aadt[i] / config.aadt_reference) ** config.aadt_exponent
        shortfall = max(config.critical_rating - condition[i], 0.0)
        utility = w * ((condition[i] - target[i]) - config.critical_penalty * shortfall**2)
        poor_cost = config.poor_user_cost_usd_per_aadt * aadt[i] if user_cost_usd is None else user_cost_usd[i]
        user_cost = poor_cost if condition[i] < 5.0 else 0.0
        rewards.append(utility - config.cost_lambda * ((cost[i] if a > 0 else 0.0) + user_cost))
    return rewards, deferred, tuple(spent)
