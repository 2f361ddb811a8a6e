"""The DP counts a poor year by the exact probability of ending the year poor, not by the hat weights' mass
below grid point 5 (which is too little: from 5.2 on a 0.2 grid a drop of 0.1 leaves half its mass on 5.2)."""

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.planning.dp import solve
from bridgefleet.planning.transitions import bridge_mdps, drop_exceeds


def _one_bridge(cfg: FleetConfig, rating: float, user_cost: float, step: float):
    one = np.ones((1, 1))
    return bridge_mdps(cfg, np.full((1, 1), rating), np.zeros((1, 1)), np.full((1, 1), 0.3), 100 * one, one,
                       0 * one, 7 * one, 1e9 * one, step=step, user_cost=user_cost * one)


def test_the_first_year_poor_and_its_user_cost_are_the_closed_form():
    # Gamma drops of CV 0.5 and mean 0.3 (shape 4, scale 0.075) from 5.2: P(D > 0.2) = e^−x (1 + x + x²/2 + x³/6),
    # x = 8/3 (0.7029); the hat weights on the 0.2 grid would count E[min(max(D/h − 1, 0), 1)] (0.46 here).
    cfg = FleetConfig(deterioration_cv=0.5, shock_probability=0.0, ysm_acceleration=0.0,
                      rating_rate_factors=(1.0,) * 9, horizon_years=1)
    x = 8 / 3
    want = np.exp(-x) * (1 + x + x**2 / 2 + x**3 / 6)
    assert abs(drop_exceeds(cfg, 0.2, 0.3) - want) < 1e-12
    for step in (0.2, 0.05):
        m = _one_bridge(cfg, 5.2, 50_000.0, step)
        sol = solve(m, np.full((1, 1), 1.0), np.zeros((1, 1)))  # a USD costs 1 reward unit: it does nothing
        assert sol.exp_cost[0, 0] == 0.0
        np.testing.assert_allclose(sol.exp_poor[0, 0], want, rtol=1e-9)
        # The reward is only the user cost's step (AADT weight 0): −λ × USD 50,000 × P(poor), exactly.
        np.testing.assert_allclose(sol.value0[0], -cfg.cost_lambda * 50_000.0 * want, rtol=1e-9)
        np.testing.assert_allclose(sol.exp_utility[0], sol.value0[0], rtol=1e-12)


def test_a_poor_price_is_charged_by_the_exact_probability_and_below_5_always():
    cfg = FleetConfig(deterioration_cv=0.5, shock_probability=0.1, shock_mean_drop=1.0, ysm_acceleration=0.0,
                      rating_rate_factors=(1.0,) * 9, horizon_years=1)
    for rating, want in ((4.8, 1.0), (5.0, 1.0), (6.0, float(drop_exceeds(cfg, 1.0, 0.3)))):
        m = _one_bridge(cfg, rating, 0.0, 0.2)
        sol = solve(m, np.full((1, 1), 1.0), np.zeros((1, 1)), price_poor=np.full((1, 1), 3.0))
        np.testing.assert_allclose(sol.exp_poor[0, 0], want, rtol=1e-9)
        np.testing.assert_allclose(sol.value0[0], -3.0 * want, rtol=1e-9)
    # From 6.0 (x = 1): 0.9 P(D > 1) + 0.1 (1 − ∫_0^1 f_J(j) F_D(1 − j) dj), J exponential of mean 1.
    from scipy.integrate import quad
    from scipy.stats import gamma

    conv = quad(lambda j: np.exp(-j) * gamma.cdf(1.0 - j, 4, scale=0.075), 0, 1, epsabs=1e-13)[0]
    np.testing.assert_allclose(want, 0.9 * gamma.sf(1.0, 4, scale=0.075) + 0.1 * (1 - conv), rtol=1e-6)
