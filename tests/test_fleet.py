"""Fleet model: hand-computed costs, budget deferral, deterioration, and the scalar reference oracle."""

import numpy as np
import pytest

from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.sim import model
from bridgefleet.sim.reference import reference_year
from bridgefleet.sim.simulator import FleetSimulator


def _profile(deck, aadt=None, cf=None):
    deck = np.asarray(deck, dtype=np.float32)[None]
    ones = np.ones_like(deck)
    return model.FleetProfile(np.arange(deck.shape[1]).astype(str), np.ones(deck.shape[1], bool), deck,
                              ones * 10_000 if aadt is None else np.asarray(aadt, np.float32)[None],
                              ones if cf is None else np.asarray(cf, np.float32)[None], ones * 7, ones * 0.1,
                              ones * 8.0)


def test_cost_is_unit_cost_times_deck_area_times_cost_factor():
    cfg = FleetConfig()
    prof = _profile([1000.0, 500.0, 400.0], cf=[1.1, 1.0, 0.9])
    cost = model.action_cost(np.array([[2, 3, 4]]), prof, np.asarray(cfg.unit_costs_usd_per_m2))
    # repair 131 USD/m² × 1000 m² × 1.1; rehabilitation 1698 × 500; replacement 2497 × 400 × 0.9
    np.testing.assert_allclose(cost[0], [144_100.0, 849_000.0, 898_920.0], rtol=1e-6)


def test_a_treatment_in_annual_budgets_of_its_own_agency():
    import dataclasses

    unit = np.asarray(FleetConfig().unit_costs_usd_per_m2)
    prof = dataclasses.replace(_profile([100.0, 200.0, 400.0], cf=[1.0, 1.0, 0.5]),
                               urban=np.array([True, False, False]))
    # urban USD 169,800 a year, rural 84,900: rehabilitation 1698 × 100 / 169,800 = 1; 1698 × 200 / 84,900 = 4;
    # 1698 × 400 × 0.5 / 84,900 = 4; replacement × 2497 / 1698
    years = model.cost_in_budgets(prof, unit, (169_800.0, 84_900.0))
    np.testing.assert_allclose(years[0, :, 3], [1.0, 4.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(years[0, :, 4], np.array([1.0, 4.0, 4.0]) * 2497 / 1698, rtol=1e-6)
    assert (years[0, :, 0] == 0).all()  # doing nothing costs no budget
    lumps = model.treatment_lumps(prof, unit, [169_800.0, 84_900.0])
    assert lumps == pytest.approx({"rehabilitation_median": 4.0, "rehabilitation_max": 4.0,
                                   "replacement_median": 4 * 2497 / 1698, "replacement_max": 4 * 2497 / 1698},
                                  rel=1e-6)
    assert model.treatment_lumps(prof, unit, [169_800.0, 0.0]) is None  # rural treatments no budget pays
    assert np.isinf(model.cost_in_budgets(prof, unit, (169_800.0, 0.0))[0, 1:, 3]).all()
    assert model.cost_in_budgets(prof, unit, (169_800.0, 0.0))[0, 1, 0] == 0.0


def test_budget_funds_worst_first_and_defers_what_does_not_fit():
    # Urban budget 200,000 USD. Requests: bridge 0 rating 4 rehabilitation 169,800; bridge 1 rating 5
    # repair 65,500; bridge 2 rating 6 preventive 28,000; bridge 3 rating 3.5 nothing.
    actions = np.array([[3, 2, 1, 0, 0]])
    cost = np.array([[169_800.0, 65_500.0, 28_000.0, 0.0, 0.0]])
    cond = np.array([[4.0, 5.0, 6.0, 3.5, 8.0]], dtype=np.float32)
    funded, deferred, spent = model.fund_actions(actions, cost, cond, np.array([[200_000.0, 0.0]]), 4)
    # 169,800 fits (30,200 left); 65,500 does not → deferred; 28,000 fits (2,200 left).
    assert funded.tolist() == [[3, 0, 1, 0, 0]]
    assert deferred.tolist() == [[False, True, False, False, False]]
    np.testing.assert_allclose(spent, [[197_800.0, 0.0]])


def test_budget_exact_fit_is_funded_and_rural_budget_is_separate():
    actions = np.array([[1, 1]])
    cost = np.array([[50.0, 50.0]])
    funded, deferred, spent = model.fund_actions(actions, cost, np.array([[5.0, 5.0]], np.float32),
                                                 np.array([[50.0, 49.0]]), 1)
    assert funded.tolist() == [[1, 0]] and deferred.tolist() == [[False, True]]
    np.testing.assert_allclose(spent, [[50.0, 0.0]])


def test_deterministic_deterioration_hand_computed():
    st = model.FleetState(*(np.array([[v]], np.float32) for v in (7.0, 30.0, 10.0, 0.04)))
    model.maintain_and_deteriorate(st, np.zeros((1, 1), np.int64), np.ones((1, 1), np.float32),
                                   FleetConfig.named("plan-2025"))
    # drop = 0.04 × (1 + 0.1 × 10) = 0.08
    assert st.condition[0, 0] == pytest.approx(6.92, abs=1e-6)
    assert (st.age[0, 0], st.ysm[0, 0]) == (31.0, 11.0)


def test_replacement_resets_rating_age_and_rate_and_gains_are_capped():
    st = model.FleetState(*(np.array([[v, v, v]], np.float32) for v in (3.0, 40.0, 12.0, 0.05)))
    st.condition[0, 2] = 8.5
    # Zero noise: no deterioration this year, only the actions and the clock.
    model.maintain_and_deteriorate(st, np.array([[4, 3, 2]]), np.zeros((1, 3), np.float32),
                                   FleetConfig.named("plan-2025"))
    assert st.condition.tolist() == [[9.0, 7.0, 9.0]]
    assert st.age.tolist() == [[1.0, 41.0, 41.0]] and st.ysm.tolist() == [[1.0, 1.0, 1.0]]
    assert st.rate[0].tolist() == pytest.approx([0.035, 0.05, 0.05])


def test_gamma_noise_has_mean_one_and_requested_cv():
    x = model.standard_gamma_noise(np.random.default_rng(0), 0.3, (200_000,))
    assert x.mean() == pytest.approx(1.0, abs=0.01)
    assert x.std() == pytest.approx(0.3, abs=0.01)
    assert (model.standard_gamma_noise(np.random.default_rng(0), 0.0, (3,)) == 1).all()


def test_vectorized_simulator_matches_scalar_reference():
    cfg = FleetConfig(n_urban=6, n_rural=9, horizon_years=8, annual_budget_usd=400_000.0)
    sim = FleetSimulator(cfg, num_envs=3)
    sim.reset(None, [11, 12, 13])
    rng = np.random.default_rng(5)
    for _ in range(cfg.horizon_years):
        before = sim.state.copy()
        budget = sim.budget.copy()
        urban = rng.integers(0, 5, size=(3, 6))
        rural = rng.integers(0, 8, size=3)
        requests = np.concatenate([urban, sim.rural_requests(rural)], axis=1)
        noise = sim.noise[np.arange(3), sim.t]
        shock = sim.shock[np.arange(3), sim.t]
        res = sim.step(urban, rural)
        for e in range(3):
            s = {k: getattr(before, k)[e].astype(float).tolist() for k in ("condition", "age", "ysm", "rate")}
            p = sim.profile
            rewards, deferred, spent = reference_year(
                s["condition"], s["age"], s["ysm"], s["rate"], p.deck_area[e].tolist(), p.aadt[e].tolist(),
                p.cost_factor[e].tolist(), p.target_condition[e].tolist(), requests[e].tolist(),
                noise[e].astype(float).tolist(), tuple(budget[e]), 6, cfg, shock[e].astype(float).tolist(),
                sim.user_cost[e].tolist())
            np.testing.assert_allclose(sim.state.condition[e], s["condition"], atol=2e-5)
            np.testing.assert_allclose(sim.state.rate[e], s["rate"], atol=1e-7)
            np.testing.assert_allclose(res.bridge_reward[e], rewards, rtol=1e-4, atol=1e-4)
            assert res.deferred[e].tolist() == deferred
            np.testing.assert_allclose(res.cost[e], spent, rtol=1e-9)


def test_plan_2025_unmaintained_good_bridges_stay_good_about_96_percent_a_year():
    # The plan-2025 model's calibration target: Ontario yearly Good→Good ≈ 0.963 (√0.927 two-year), new
    # structures (rating 9, ysm 0, new-structure rate) left alone for 30 years. The default model's fit to the
    # same histories is tests/test_calibration.py.
    cfg = FleetConfig.named("plan-2025", n_urban=1, n_rural=99, horizon_years=30)
    sim = FleetSimulator(cfg, 50)
    sim.reset(None, list(range(50)))
    sim.state.condition[:] = 9.0
    sim.state.ysm[:] = 0.0
    sim.state.rate[:] = cfg.new_structure_rate
    stay = total = 0
    zeros_u, zeros_r = np.zeros((50, 1), np.int64), np.zeros(50, np.int64)
    for _ in range(30):
        good = sim.state.condition >= 7
        sim.step(zeros_u, zeros_r)
        stay += (good & (sim.state.condition >= 7)).sum()
        total += good.sum()
    assert 0.94 <= stay / total <= 0.98


def test_truncation_at_horizon_not_termination():
    cfg = FleetConfig(horizon_years=3)
    sim = FleetSimulator(cfg, 2)
    sim.reset(None, [0, 1])
    flags = [sim.step(np.zeros((2, 20), np.int64), np.zeros(2, np.int64)).truncated.tolist() for _ in range(3)]
    assert flags == [[False, False], [False, False], [True, True]]


def test_carry_over_budget_adds_unspent_money():
    cfg = FleetConfig(carry_over_budget=True)
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    sim.step(np.zeros((1, 20), np.int64), np.zeros(1, np.int64))
    np.testing.assert_allclose(sim.budget[0], 2 * sim.annual_budget)


@pytest.mark.parametrize(
    ("field", "value"),
    [("annual_budget_usd", -1.0), ("urban_budget_share", 1.5), ("n_urban", 0), ("horizon_years", 2.5),
     ("deterioration_cv", float("nan")), ("discount", 0.0)],
)
def test_config_rejects_invalid_values_naming_the_field(field, value):
    with pytest.raises(ConfigError, match=field):
        FleetConfig(**{field: value})


def test_config_from_yaml_rejects_unknown_keys(tmp_path):
    p = tmp_path / "fleet.yaml"
    p.write_text("fleet:\n  n_urban: 5\n  budget: 3\n")
    with pytest.raises(ConfigError, match=r"fleet.yaml.*budget"):
        FleetConfig.from_yaml(p)
    p.write_text("n_urban: 5\nhorizon_years: 10\n")
    assert FleetConfig.from_yaml(p).n_urban == 5


def test_every_rural_strategy_does_something_distinct_on_the_default_fleet():
    # Issue 16: under plan-2025's budget strategies 1, 5 and 7 could never be afforded and all returned
    # -2,057.68, like doing nothing. Under the default model each of the 8 gives its own return.
    from bridgefleet.evaluation.evaluate import evaluate_policy
    from bridgefleet.sim.heuristics import rural_fixed

    returns = [evaluate_policy(rural_fixed(k), FleetConfig(), episodes=8, seed=1_000_000).mean_return for k in range(8)]
    gaps = np.abs(np.subtract.outer(returns, returns))[np.triu_indices(8, 1)]
    assert gaps.min() > 1.0, returns


def test_plan_2025_reproduces_the_published_worst_first_return():
    # docs/fleet-model.md, "Heuristics on the default fleet" before issue 16: worst_first -735.70 on the 100
    # evaluation fleets (seeds 1,000,000 …). The named model keeps that figure reproducible.
    from bridgefleet.evaluation.evaluate import evaluate_policy
    from bridgefleet.sim.heuristics import get_policy

    result = evaluate_policy(get_policy("worst_first"), FleetConfig.named("plan-2025"), episodes=100, seed=1_000_000)
    assert round(result.mean_return, 2) == -735.70


def test_budgets_are_a_share_of_each_agencys_replacement_value():
    cfg = FleetConfig()
    # 20 urban bridges × 1,000 m² and 80 rural × 450 m² (mean decks) × USD 2,497/m², over 75 years
    assert cfg.urban_budget_usd == pytest.approx(20 * 1000 * 2497 / 75)
    assert cfg.rural_budget_usd == pytest.approx(80 * 450 * 2497 / 75)
    assert FleetConfig.named("plan-2025").budgets_usd == pytest.approx((282_000 * 0.34, 282_000 * 0.66))
    assert FleetConfig(annual_budget_usd=1e6).urban_budget_usd == pytest.approx(1e6 * 20_000 / 56_000)


def test_a_poor_bridge_costs_its_users_the_detour_of_its_trucks():
    cfg = FleetConfig(n_urban=1, n_rural=1, horizon_years=2)
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    sim.noise[:] = 1.0
    sim.state.condition[:] = [[4.9, 8.0]]
    sim.state.ysm[:] = 0.0
    sim.state.rate[:] = 0.04
    sim.profile.aadt[:] = 10_000.0
    sim.weight[:] = 1.0
    sim.user_cost[:] = cfg.poor_user_cost_usd_per_aadt * 10_000.0
    sim.shock[:] = 0.0
    step = sim.step(np.zeros((1, 1), np.int64), np.zeros(1, np.int64))
    # poor (rating point 4, factor 2.797): drop 0.04 × 2.797 = 0.11188 → 4.78812; utility 4.78812 − 7 = −2.21188;
    # user cost 10,000 vehicles/day × 0.10 trucks × 365 days × 8 km × USD 1.41 = USD 4,117,200 → 41.172 reward
    # units at λ = 1e-5 per USD
    assert step.bridge_reward[0, 0] == pytest.approx(4.78812 - 7 - 41.172, abs=1e-3)
    # good (rating point 8, factor 4.336): drop 0.04 × 4.336 = 0.17344 → 7.82656, no user cost
    assert step.bridge_reward[0, 1] == pytest.approx(0.82656, abs=1e-5)


def test_a_bridges_own_detour_and_truck_share_scale_its_user_cost():
    cfg = FleetConfig()
    # 5,000 vehicles/day, 20 % trucks, 3 km: 5,000 × 0.20 × 365 × 3 × 1.41 = USD 1,543,950 a year
    cost = model.poor_user_cost(np.array([5000.0, 5000.0]), np.array([0.20, 0.10]), np.array([3.0, 8.0]), cfg)
    np.testing.assert_allclose(cost, [1_543_950.0, 5000 * 0.10 * 365 * 8 * 1.41])


def test_fitted_kernel_hand_values_and_a_seeded_draw():
    cfg = FleetConfig()
    # rating 7.5 (point 7, factor 0.615), 10 years since maintenance, rate 0.04, mean-1 noise, no shock:
    # expected drop 0.04 × 0.615 × (1 + 0.025 × 10) = 0.03075
    st = model.FleetState(*(np.array([[v]], np.float32) for v in (7.5, 30.0, 10.0, 0.04)))
    model.maintain_and_deteriorate(st, np.zeros((1, 1), np.int64), np.ones((1, 1), np.float32), cfg)
    assert st.condition[0, 0] == pytest.approx(7.5 - 0.03075, abs=1e-6)
    # rating 5.2 (point 5, factor 4.415), ysm 0: 0.04 × 4.415 = 0.1766 times the seeded noise, plus a shock of 1.5
    st = model.FleetState(*(np.array([[v]], np.float32) for v in (5.2, 30.0, 0.0, 0.04)))
    noise = model.standard_gamma_noise(np.random.default_rng(0), cfg.deterioration_cv, (1, 1))
    model.maintain_and_deteriorate(st, np.zeros((1, 1), np.int64), noise, cfg, np.full((1, 1), 1.5, np.float32))
    assert st.condition[0, 0] == pytest.approx(5.2 - 0.1766 * float(noise[0, 0]) - 1.5, abs=1e-5)
    # a replacement yields the new-structure rating 8.3; a rehabilitation stops there too
    st = model.FleetState(*(np.array([[v, v]], np.float32) for v in (4.0, 40.0, 5.0, 0.05)))
    model.maintain_and_deteriorate(st, np.array([[4, 3]]), np.zeros((1, 2), np.float32), cfg)
    assert st.condition.tolist() == [[pytest.approx(8.3), pytest.approx(8.0)]]


def test_a_config_written_before_the_fitted_model_still_means_the_model_it_was_trained_on():
    # A run folder's config.yaml from before issue 23 says band_rate_factors and has no sudden-damage,
    # new-structure-rating or initial-rating fields: they take bands-2026's values, not today's defaults.
    old = FleetConfig.from_dict({"band_rate_factors": [0.6, 4.1, 2.6], "ysm_acceleration": 0.05,
                                 "deterioration_cv": 0.3, "new_structure_rate": 0.035})
    assert old.model_name() == "bands-2026"
    assert (old.shock_probability, old.new_structure_rating, old.initial_rating) == (0.0, 9.0, (9.0, 0.07, 0.5))
