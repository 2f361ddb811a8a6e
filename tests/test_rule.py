"""The planner's year-by-year poor deck-area rule: the model's probability of ending the year poor, and the
knapsack that keeps a plan within the rule."""

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.planning.rule import allocate_within_rule, only_choice, poor_probability


def test_probability_of_ending_the_year_poor_by_hand():
    cfg = FleetConfig(deterioration_cv=0.0, shock_probability=0.0, ysm_acceleration=0.0,
                      rating_rate_factors=(1.0,) * 9)
    # Rating 5.1 drops 0.3 (rate 0.3, factor 1): poor unless treated; +1 → 5.8, not poor; rating 4.2 + 1 is poor.
    p = poor_probability(cfg, np.array([[5.1, 4.2, 6.0]]), np.zeros((1, 3)), np.full((1, 3), 0.3))
    np.testing.assert_array_equal(p[0, 0], [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(p[0, 1], [1, 1, 0, 0, 0])
    np.testing.assert_array_equal(p[0, 2], [0, 0, 0, 0, 0])
    # Gamma drops of CV 0.5 (shape 4, scale 0.075), from 5.2: P(D > 0.2) = e^−x (1 + x + x²/2 + x³/6), x = 8/3.
    noisy = FleetConfig(deterioration_cv=0.5, shock_probability=0.0, ysm_acceleration=0.0,
                        rating_rate_factors=(1.0,) * 9)
    q = poor_probability(noisy, np.array([[5.2]]), np.zeros((1, 1)), np.full((1, 1), 0.3))
    x = 8 / 3
    np.testing.assert_allclose(q[0, 0, 0], np.exp(-x) * (1 + x + x**2 / 2 + x**3 / 6), rtol=1e-9)
    # Sudden damage can only add to it: P(D + J > x) ≥ P(D > x).
    shocked = FleetConfig(deterioration_cv=0.5, shock_probability=0.2, ysm_acceleration=0.0,
                          rating_rate_factors=(1.0,) * 9)
    s = poor_probability(shocked, np.array([[5.2]]), np.zeros((1, 1)), np.full((1, 1), 0.3))
    assert q[0, 0, 0] < s[0, 0, 0] < 0.8 * q[0, 0, 0] + 0.2 + 1e-12


def test_sudden_damage_adds_the_convolution_of_the_gamma_and_the_exponential_drop():
    from scipy.integrate import quad
    from scipy.stats import gamma

    # P(poor) = (1 − p) P(D > x) + p P(D + J > x); P(D + J ≤ x) = ∫_0^x f_J(j) F_D(x − j) dj by adaptive
    # quadrature, against the closed form (θ < jm / 2) and the Gauss–Legendre one (a drop of 1.5 a year at CV 1.0:
    # θ = 1.5 ≥ jm / 2).
    for cv, rate, c in ((0.5, 0.3, 5.7), (0.2, 0.1, 7.0), (1.0, 1.5, 6.5)):
        cfg = FleetConfig(deterioration_cv=cv, shock_probability=0.1, shock_mean_drop=1.174, ysm_acceleration=0.0,
                          rating_rate_factors=(1.0,) * 9)
        x, k, theta = c - 5.0, 1 / cv**2, rate * cv**2
        conv = quad(lambda j, x=x, k=k, theta=theta: np.exp(-j / 1.174) / 1.174 * gamma.cdf(x - j, k, scale=theta),
                    0, x, epsabs=1e-13)[0]
        want = 0.9 * gamma.sf(x, k, scale=theta) + 0.1 * (1 - conv)
        got = poor_probability(cfg, np.array([[c]]), np.zeros((1, 1)), np.full((1, 1), rate))[0, 0, 0]
        np.testing.assert_allclose(got, want, rtol=1e-6 if cv < 1 else 1e-4)


def test_the_plan_treats_the_bridge_the_rule_needs_instead_of_the_better_one():
    # Two bridges of one agency, both poor at year end unless treated; the budget pays for one treatment.
    # The knapsack alone treats the small one (benefit 5 against 1); the rule (≤ 50 % of 1,000 m² poor) needs
    # the large one treated: 100 m² poor instead of 900.
    ben = np.array([[[0.0, 5.0, -np.inf, -np.inf, -np.inf], [0.0, 1.0, -np.inf, -np.inf, -np.inf]]])
    cost = np.full((1, 2, 5), 1000.0)
    cost[..., 0] = 0.0
    deck = np.array([[100.0, 900.0]])
    p_poor = np.array([[[1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0]]])
    out = np.zeros((1, 2), dtype=np.int64)
    agency = np.zeros(2, dtype=np.int64)
    budget = np.array([[1000.0, 0.0]])
    allocate_within_rule(ben, cost, agency, budget, deck, p_poor, np.array([1000.0]), out)
    np.testing.assert_array_equal(out, [[1, 0]])  # no rule that binds: the better treatment
    allocate_within_rule(ben, cost, agency, budget, deck, p_poor, np.array([500.0]), out)
    np.testing.assert_array_equal(out, [[0, 1]])
    # A rule no plan can meet (≤ 5 %): the plan with the least expected poor deck area.
    allocate_within_rule(ben, cost, agency, budget, deck, p_poor, np.array([50.0]), out)
    np.testing.assert_array_equal(out, [[0, 1]])


def test_a_rounded_plan_funds_each_bridges_choice_or_nothing_and_the_rule_picks_who_waits():
    # Bridge 0 (800 m²) chose action 2 (benefit 10, USD 100); its cheaper action 1 (benefit 9, USD 50) is not its
    # policy's choice. Bridges 1 and 2 (100 m² each) chose action 1 (benefit 6, USD 50). USD 100 this year.
    ben = np.array([[[0.0, 9.0, 10.0, -np.inf, -np.inf], [0.0, 6.0, 2.0, -np.inf, -np.inf],
                     [0.0, 6.0, -np.inf, -np.inf, -np.inf]]])
    only = only_choice(ben.copy())
    np.testing.assert_array_equal(only[0, 0], [0.0, -np.inf, 10.0, -np.inf, -np.inf])
    np.testing.assert_array_equal(only[0, 1], [0.0, 6.0, -np.inf, -np.inf, -np.inf])
    cost = np.array([[[0.0, 50.0, 100.0, 0.0, 0.0]] * 3])
    deck = np.array([[800.0, 100.0, 100.0]])
    p_poor = np.array([[[1.0, 1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0]]])
    agency = np.zeros(3, dtype=np.int64)
    budget = np.array([[100.0, 0.0]])
    out = np.zeros((1, 3), dtype=np.int64)
    allocate_within_rule(ben.copy(), cost, agency, budget, deck, p_poor, np.array([1000.0]), out)
    np.testing.assert_array_equal(out, [[1, 1, 0]])  # every action open: bridge 0's cheaper one, 15 > 12 or 10
    allocate_within_rule(only_choice(ben.copy()), cost, agency, budget, deck, p_poor, np.array([1000.0]), out)
    np.testing.assert_array_equal(out, [[0, 1, 1]])  # choices only, no rule that binds: 12 > 10
    allocate_within_rule(only_choice(ben.copy()), cost, agency, budget, deck, p_poor, np.array([500.0]), out)
    np.testing.assert_array_equal(out, [[2, 0, 0]])  # ≤ 500 m² poor: 200 m² with bridge 0's choice, not 800
