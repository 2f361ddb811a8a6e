"""Compiled kernels of the fleet model (Numba): one pass over arrays (E, B), no Python loop per bridge.

NumPy expressions of the model needed 40–60 array operations per year, each a full pass over memory with
its own dispatch cost; the funding rule (worst first, skip what does not fit) is sequential by nature.
These kernels do a year in a few compiled passes. The plain-Python oracle is ``sim/reference.py``.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_JIT = {"cache": True, "nogil": True}


def key_bits(n_bridges: int) -> int:
    """Bits that hold a column index in a priority key."""
    return max(1, (n_bridges - 1).bit_length())


def agency_bits(n_agencies: int) -> int:
    """Bits that hold an agency index in a priority key (1 for the urban and rural agencies)."""
    return max(1, (n_agencies - 1).bit_length())


@nb.njit(**_JIT)
def priority_keys(condition, agency, bits, keys):  # pragma: no cover - compiled
    """Packed funding-priority keys (agency, rating in 0.001 points, column), one per bridge; ``agency`` int64
    (B,), each column's agency.

    Sorting a row of keys (NumPy's sort is several times faster than a compiled one here) gives the
    funding order: agency 0's columns first (the urban agency's where there are two), each agency worst
    condition first, ties by column.
    """
    e_n, b_n = condition.shape
    shift = bits + 14
    for e in range(e_n):
        for j in range(b_n):
            q = np.int64(condition[e, j] * np.float32(1000.0) + np.float32(0.5))
            keys[e, j] = (q << bits) | j | (agency[j] << shift)


@nb.njit(**_JIT)
def fund(requested, cost, order_keys, bits, budget, agency, funded, deferred, spent):  # pragma: no cover
    """Fund requests in the order of the sorted keys within each agency, skipping those that no longer fit.

    Args (arrays (E, B) unless noted): requested int64 actions; cost float64 USD; order_keys sorted
    priority keys from :func:`priority_keys`; budget float64 (E, A) USD, each agency's; agency int64 (B,), each
    column's agency; outputs funded int64 actions, deferred bool, spent float64 (E, A) USD.
    """
    e_n, b_n = requested.shape
    mask = (1 << bits) - 1
    for e in range(e_n):
        # A cent of slack keeps an exactly fitting request funded despite float rounding.
        left = budget[e] + 0.01
        spent[e, :] = 0.0
        for k in range(b_n):
            j = order_keys[e, k] & mask
            a = requested[e, j]
            funded[e, j] = 0
            deferred[e, j] = False
            if a == 0:
                continue
            g = agency[j]
            c = cost[e, j]
            if c <= left[g]:
                left[g] -= c
                spent[e, g] += c
                funded[e, j] = a
            else:
                deferred[e, j] = True


@nb.njit(**_JIT)
def maintain_and_deteriorate(actions, condition, age, ysm, rate, noise, shock, has_shock, gain, new_rate,
                             new_rating, ysm_acceleration, factors):  # pragma: no cover - compiled
    """Apply funded actions, then one year of deterioration, in place (arrays (E, B), float32 state).

    Actions 1–3 add ``gain[a]`` rating points up to ``new_rating`` (a rating above it is kept), 4 replaces
    (rating ``new_rating``, age 0, rate ``new_rate``); actions 1–4 reset years since maintenance. Then
    drop = rate × factors[floor(rating)] × (1 + ysm_acceleration × ysm) × noise (+ shock when ``has_shock``),
    factors float32 (9,) by whole rating point of the rating after the action (9 counts as 8),
    rating = max(rating − drop, 0), age and ysm + 1.
    """
    e_n, b_n = actions.shape
    one = np.float32(1.0)
    acc = np.float32(ysm_acceleration)
    nr = np.float32(new_rate)
    top = np.float32(new_rating)
    for e in range(e_n):
        for j in range(b_n):
            a = actions[e, j]
            c = condition[e, j]
            if a == 4:
                c = top
                age[e, j] = 0.0
                rate[e, j] = nr
            elif a > 0:
                c = max(min(c + gain[a], top), c)
            if a > 0:
                ysm[e, j] = 0.0
            k = min(max(int(c), 0), 8)
            drop = (ysm[e, j] * acc + one) * rate[e, j] * factors[k] * noise[e, j]
            if has_shock:
                drop += shock[e, j]
            condition[e, j] = max(c - drop, np.float32(0.0))
            age[e, j] += one
            ysm[e, j] += one


@nb.njit(**_JIT)
def rewards(condition, target, weight, funded, cost, user_cost, poor_below, n_urban, critical, penalty,
            cost_lambda, bridge_reward, urban_reward, rural_reward):  # pragma: no cover
    """u = w × [(c − target) − p × max(0, c_crit − c)²] − λ × (USD spent + user cost USD if c < poor_below);
    sums per agency (float64). ``user_cost`` float64 (E, B), USD per year of a poor bridge."""
    e_n, b_n = condition.shape
    crit = np.float32(critical)
    pen = np.float32(penalty)
    for e in range(e_n):
        su = 0.0
        sr = 0.0
        for j in range(b_n):
            c = condition[e, j]
            short = max(crit - c, np.float32(0.0))
            u = ((c - target[e, j]) - pen * short * short) * weight[e, j]
            usd = cost[e, j] if funded[e, j] > 0 else 0.0
            if c < poor_below:
                usd += user_cost[e, j]
            if usd > 0.0:
                u -= np.float32(cost_lambda * usd)
            bridge_reward[e, j] = u
            if j < n_urban:
                su += u
            else:
                sr += u
        urban_reward[e] = su
        rural_reward[e] = sr


@nb.njit(**_JIT)
def rural_requests(strategy, condition, age, ysm, weight, table, bounds, ysm_min, age_min, n_urban,
                   out):  # pragma: no cover - compiled
    """Per-bridge actions of each fleet's rural strategy: ``table[strategy, code]`` for the rural columns.

    code = level × 8 + 4 × (ysm ≥ ysm_min) + 2 × (age ≥ age_min) + risky, level = number of ``bounds``
    (ascending rating thresholds) at or below the rating; risky (only computed for strategy 6): weight ×
    max(0, bounds[-1] − c) above the fleet's mean over rural bridges, and > 0. Writes int64 ``out``
    (E, B − n_urban). Thresholds and table come from :mod:`bridgefleet.sim.strategies`.
    """
    e_n, b_n = condition.shape
    n_rural = b_n - n_urban
    good = bounds[bounds.shape[0] - 1]
    for e in range(e_n):
        s = strategy[e]
        mean_risk = 0.0
        if s == 6:
            for j in range(n_urban, b_n):
                mean_risk += weight[e, j] * max(good - condition[e, j], np.float32(0.0))
            mean_risk /= n_rural
        for j in range(n_urban, b_n):
            c = condition[e, j]
            level = 0
            for bound in bounds:
                level += c >= bound
            code = level * 8 + 4 * (ysm[e, j] >= ysm_min) + 2 * (age[e, j] >= age_min)
            if s == 6:
                risk = weight[e, j] * max(good - c, np.float32(0.0))
                code += (risk > mean_risk) and (risk > 0)
            out[e, j - n_urban] = table[s, code]


@nb.njit(**_JIT)
def observe(condition, age, ysm, rate, budget_fraction, n_urban, scales, poor_below, good_from, urban_out,
            rural_out):  # pragma: no cover - compiled
    """Scaled observations (docs/fleet-model.md): urban (E, n_urban·4 + 1), rural (E, 10), float32.

    scales = (condition, age, ysm, rate) divisors; a rating < poor_below is poor, ≥ good_from good.
    """
    e_n, b_n = condition.shape
    n_rural = b_n - n_urban
    for e in range(e_n):
        for j in range(n_urban):
            urban_out[e, 4 * j] = condition[e, j] / scales[0]
            urban_out[e, 4 * j + 1] = age[e, j] / scales[1]
            urban_out[e, 4 * j + 2] = ysm[e, j] / scales[2]
            urban_out[e, 4 * j + 3] = rate[e, j] / scales[3]
        urban_out[e, 4 * n_urban] = budget_fraction[e, 0]
        s = 0.0
        s2 = 0.0
        lo = 9.0
        hi = 0.0
        sa = 0.0
        sy = 0.0
        sr = 0.0
        poor = 0
        good = 0
        for j in range(n_urban, b_n):
            c = np.float64(condition[e, j])
            s += c
            s2 += c * c
            lo = min(lo, c)
            hi = max(hi, c)
            sa += age[e, j]
            sy += ysm[e, j]
            sr += rate[e, j]
            poor += c < poor_below
            good += c >= good_from
        mean = s / n_rural
        rural_out[e, 0] = mean / scales[0]
        rural_out[e, 1] = lo / scales[0]
        rural_out[e, 2] = hi / scales[0]
        rural_out[e, 3] = np.sqrt(max(s2 / n_rural - mean * mean, 0.0)) / 3.0
        rural_out[e, 4] = sa / n_rural / scales[1]
        rural_out[e, 5] = poor / n_rural
        rural_out[e, 6] = good / n_rural
        rural_out[e, 7] = sy / n_rural / scales[2]
        rural_out[e, 8] = sr / n_rural / scales[3]
        rural_out[e, 9] = budget_fraction[e, 1]
