"""The budget split shared by the lagrangian planner and the per-bridge agent: hand-computed knapsacks and brute
force on random instances, very cheap and free treatments among them."""

import itertools

import numpy as np
import pytest

from bridgefleet.planning.knapsack import allocate

NO = -np.inf


def _run(ben, cost, agency, budget):
    ben = np.asarray(ben, dtype=np.float64)[None]
    cost = np.asarray(cost, dtype=np.float64)[None]
    out = np.zeros(ben.shape[:2], dtype=np.int64)
    allocate(ben, cost, np.asarray(agency, dtype=np.int64), np.asarray([budget], dtype=np.float64), out)
    return out[0]


def _one_action_each(values_costs):
    """Bridges with one treatment each (action 1): [(benefit, cost USD), ...]."""
    ben = [[0, v, NO, NO, NO] for v, _ in values_costs]
    cost = [[0, c, 1e12, 1e12, 1e12] for _, c in values_costs]
    return ben, cost


def test_one_big_treatment_beats_the_best_ratio_when_the_budget_fits_one():
    # Budget 100: bridge 0's action 1 has the best benefit per USD (3/30) but leaves 70 unusable;
    # bridge 1's action 2 (cost 90, benefit 8) is worth more. Greedy by ratio would give 3 + 0.
    ben = [[0, 3, -np.inf, -np.inf, -np.inf], [0, -np.inf, 8, -np.inf, -np.inf]]
    cost = [[0, 30, 1e9, 1e9, 1e9], [0, 75, 90, 1e9, 1e9]]
    assert list(_run(ben, cost, [0, 0], [100.0, 0.0])) == [0, 2]


def test_one_action_per_bridge_and_the_agencies_budgets_apart():
    # Urban budget 50 fits bridge 0's action 2 (benefit 5) but not both bridges; rural bridge 2 has its own.
    ben = [[0, 2, 5, -np.inf, -np.inf], [0, 4, -np.inf, -np.inf, -np.inf], [0, 1, 6, -np.inf, -np.inf]]
    cost = [[0, 10, 40, 1e9, 1e9], [0, 30, 1e9, 1e9, 1e9], [0, 10, 60, 1e9, 1e9]]
    # urban: {0:2}=5 (40), {0:1,1:1}=6 (40) → the pair; rural budget 20: action 1 only.
    assert list(_run(ben, cost, [0, 0, 1], [50.0, 20.0])) == [1, 1, 1]


def test_a_very_cheap_treatment_does_not_switch_the_split_to_the_greedy():
    # Issue 26: budget 200,000; A 10.0 @ 200,000 and B 5.1 @ 100,000 → A. With D 0.001 @ 70 added the old
    # greedy funded B + D = 5.101; the optimum is still A = 10.0.
    ben, cost = _one_action_each([(10.0, 200_000), (5.1, 100_000)])
    assert list(_run(ben, cost, [0, 0], [200_000.0, 0.0])) == [1, 0]
    ben, cost = _one_action_each([(10.0, 200_000), (5.1, 100_000), (0.001, 70)])
    got = _run(ben, cost, [0, 0, 0], [200_000.0, 0.0])
    assert list(got) == [1, 0, 0]
    assert np.asarray(ben)[np.arange(3), got].sum() == 10.0


def test_two_big_treatments_beat_the_greedy_with_many_cheap_ones():
    # Budget 400,000: B 5.1 @ 100,000 has the best ratio, then A1, A2 10.0 @ 200,000 each, then 2,000 treatments
    # worth 0.001 @ 70. The greedy takes B + A1 + cheap ones (≈ 16.5); the optimum is A1 + A2 = 20.0.
    ben, cost = _one_action_each([(5.1, 100_000), (10.0, 200_000), (10.0, 200_000)] + [(0.001, 70)] * 2000)
    got = _run(ben, cost, [0] * 2003, [400_000.0, 0.0])
    value = np.asarray(ben)[np.arange(2003), got].sum()
    assert value == pytest.approx(20.0 + 0.001 * 0) and list(got[:3]) == [0, 1, 1]


def test_free_treatments_are_taken_and_cost_nothing():
    # A unit cost of 0 (a free action): no division by zero; each bridge takes its best free action, and the
    # budget goes to the rest. Budget 0 still funds the free ones.
    ben = [[0, 1.0, 2.0, NO, NO], [0, 0.5, NO, NO, NO], [0, 3.0, NO, NO, NO]]
    cost = [[0, 0.0, 50.0, 1e9, 1e9], [0, 0.0, 1e9, 1e9, 1e9], [0, 60.0, 1e9, 1e9, 1e9]]
    assert list(_run(ben, cost, [0, 0, 0], [60.0, 0.0])) == [1, 1, 1]  # 1 + 0.5 + 3 beats 2 + 0.5
    assert list(_run(ben, cost, [0, 0, 0], [0.0, 0.0])) == [1, 1, 0]


def test_matches_brute_force_and_never_exceeds_the_budget():
    # Random instances with very cheap (USD 0.001–0.1) and free (USD 0) treatments, benefits ≤ 0 and
    # forbidden actions; exact to 1e-9.
    rng = np.random.default_rng(0)
    for it in range(400):
        b = int(rng.integers(1, 6))
        cost = np.zeros((b, 5))
        cost[:, 1:] = np.sort(rng.uniform(10, 100, (b, 4)), axis=1)
        if it % 3:
            cost[:, 1:] *= rng.choice([0.0, 0.001, 1.0, 1.0, 1.0], (b, 4))
        ben = np.zeros((b, 5))
        ben[:, 1:] = rng.normal(3, 3, (b, 4))
        if it % 4 == 0:  # ties
            ben, cost = np.round(ben), np.round(cost / 10) * 10
        ben[:, 1:][rng.random((b, 4)) < 0.15] = NO
        budget = float(rng.choice([rng.uniform(0, 250), rng.uniform(0, 40), 100.0]))
        got = _run(ben, cost, [0] * b, [budget, 0.0])
        rows = np.arange(b)
        assert cost[rows, got].sum() <= budget + 0.01
        assert all(a == 0 or ben[j, a] > 0 for j, a in enumerate(got))  # benefits ≤ 0 are never funded
        best = max(ben[rows, list(c)].sum() for c in itertools.product(range(5), repeat=b)
                   if cost[rows, list(c)].sum() <= budget + 0.01 and all(a == 0 or ben[j, a] > 0
                                                                         for j, a in enumerate(c)))
        assert ben[rows, got].sum() >= best - 1e-9, (it, ben[rows, got].sum(), best)


def test_many_fleets_on_several_threads_give_each_fleets_own_plan():
    # The fleets' knapsacks run in parallel (numba prange): each fleet's plan is what that fleet alone gets,
    # whatever the number of threads (no scratch shared between fleets).
    import numba

    rng = np.random.default_rng(1)
    e_n, b_n = 12, 40
    cost = np.zeros((e_n, b_n, 5))
    cost[..., 1:] = np.sort(rng.uniform(10, 100, (e_n, b_n, 4)), axis=-1)
    ben = np.zeros((e_n, b_n, 5))
    ben[..., 1:] = rng.normal(3, 3, (e_n, b_n, 4))
    agency = rng.integers(0, 2, b_n)
    budget = rng.uniform(50, 400, (e_n, 2))
    alone = np.stack([_run(ben[e], cost[e], agency, budget[e]) for e in range(e_n)])
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            out = np.zeros((e_n, b_n), dtype=np.int64)
            allocate(ben, cost, agency, budget, out)
            np.testing.assert_array_equal(out, alone)
    finally:
        numba.set_num_threads(before)
    assert (alone > 0).any() and (alone == 0).any()
