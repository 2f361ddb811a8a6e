"""The rounded relaxation: one policy per bridge chosen from the master LP's columns, each solvable again from the
prices it was found at (issue 28: the planner's least budget)."""

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_policy
from bridgefleet.inventory.fleet import set_budget
from bridgefleet.planning.bound import _Rows, fleet_mdps, lagrangian_bound
from bridgefleet.planning.columns import ColumnPool, Columns
from bridgefleet.planning.dp import solve
from bridgefleet.planning.least_budget import least_budget
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.planning.rounding import round_mixture
from bridgefleet.planning.transitions import prices_only
from bridgefleet.sim.simulator import FleetSimulator


def _two_units(reward_treat: tuple[float, float]) -> Columns:
    """Unit 0 (100 m² poor unless treated) and unit 1 (50 m²): do nothing, or treat for USD 10 in the one year."""
    spend = np.array([[0.0], [10.0], [0.0], [10.0]])
    poor = np.array([[100.0], [0.0], [50.0], [0.0]])
    return Columns(np.array([0, 0, 1, 1]), np.array([0.0, reward_treat[0], 0.0, reward_treat[1]]), spend,
                   np.zeros((4, 1)), poor, np.array([0, 2, 0, 2]), np.zeros((4, 4, 1)))


def _round(cols: Columns, poor_b):
    rows = _Rows(np.eye(1), np.array([[[10.0], [0.0]]]), None, None)  # USD 10 for the urban agency's one year
    return round_mixture(cols, np.array([0.5, 0.5, 0.5, 0.5]), np.array([0, 0]), rows, 0, poor_b)


def test_the_rounding_treats_the_bridge_the_rule_needs_not_the_one_the_return_prefers():
    cols = _two_units((3.0, 5.0))  # the budget buys one treatment; unit 1's returns more
    np.testing.assert_array_equal(_round(cols, None), [0, 3])  # no rule: treat unit 1 (return 5)
    np.testing.assert_array_equal(_round(cols, np.array([60.0])), [1, 2])  # ≤ 60 m² poor: only unit 0's does it
    # ≤ 10 m²: no choice meets it; the least excess (50 m² poor, treating unit 0) wins over the return
    np.testing.assert_array_equal(_round(cols, np.array([10.0])), [1, 2])


def test_a_column_solved_again_at_the_prices_it_was_found_at_is_the_same_policy():
    cfg = FleetConfig(n_urban=3, n_rural=3, horizon_years=5, fixed_fleet=True, fleet_seed=3,
                      budget_share_of_replacement=0.004)
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [3])
    mdps, rows = fleet_mdps(cfg, sim.profile, sim.state, sim.weight, sim.fleet_annual_budget, step=0.2,
                            max_poor=0.2)
    pool = ColumnPool()
    least_budget(mdps, 0.2, cfg.budgets_usd, cfg.carry_over_budget, max_iter=6, pool=pool)
    bound = lagrangian_bound(mdps, rows, max_iter=12, pool=pool)
    cols, x, units = bound.mixture[0]
    assert units.identity and len(x) == len(cols.reward) and np.isclose(x.sum(), mdps.n)
    disc = mdps.gamma ** np.arange(mdps.horizon)
    for plain in (False, True):  # columns found with the reward (the bound's), and without (the least budget's)
        mine = np.flatnonzero((cols.found_at[:, 3, 0] == 0) == plain)
        assert len(mine), f"no column found {'without' if plain else 'with'} the reward"
        for k in mine[:4]:
            i = cols.bridge[k]
            price = cols.found_at[k]
            sol = solve(prices_only(mdps) if plain else mdps, np.tile(price[0] / disc, (mdps.n, 1)),
                        np.tile(price[1] / disc, (mdps.n, 1)),
                        price_poor=np.outer(mdps.deck, price[2] / disc))
            np.testing.assert_allclose(sol.exp_cost[i], cols.spend[k], rtol=1e-9, atol=1e-6)
            np.testing.assert_allclose(sol.exp_poor[i] * mdps.deck[i], cols.poor[k], rtol=1e-9, atol=1e-6)


def test_the_rounded_planner_keeps_each_years_budget_and_meets_its_rounded_plan_on_a_deterministic_fleet():
    cfg = set_budget(FleetConfig(n_urban=3, n_rural=3, horizon_years=5, fixed_fleet=True, fleet_seed=3,
                                 deterioration_cv=0.0), scale=0.5)
    planner = LagrangianPlanner(max_poor_deck_area=0.3, rounded=True, max_iter=20)
    sim = FleetSimulator(cfg, 2)
    result = evaluate_policy(planner, cfg, 2, 3, "lagrangian", sim)
    budget = np.asarray(cfg.budgets_usd).sum()
    assert result.agency_usd.shape == (2, 5) and result.agency_usd.sum() > 0
    # carry-over: each sample's spend up to year t within the t + 1 budgets that came in
    assert (np.cumsum(result.agency_usd, axis=1) <= budget * np.arange(1, 6) + 1e-6).all()


def test_candidates_evaluated_on_the_planners_grid_are_the_columns_when_it_is_the_search_grid():
    # The rounding weighs candidates by what they do on the planner's grid; on the search grid itself each
    # column solved again at the prices it was found at (rescaled for the least budget's) is the same policy.
    cfg = set_budget(FleetConfig(n_urban=3, n_rural=3, horizon_years=5, fixed_fleet=True, fleet_seed=3), scale=0.3)
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [3])
    mdps, _ = fleet_mdps(cfg, sim.profile, sim.state, sim.weight, sim.fleet_annual_budget, step=0.2, max_poor=0.2)
    pool = ColumnPool()
    least_budget(mdps, 0.2, cfg.budgets_usd, cfg.carry_over_budget, max_iter=6, pool=pool)
    planner = LagrangianPlanner(step=0.2, search_step=0.2, max_poor_deck_area=0.2, max_iter=12, pool=pool)
    planner.prepare(sim)
    cols, _, units = planner.bound.mixture[0]
    plain = cols.found_at[:, 3, 0] == 0
    assert plain.any() and (~plain).any() and np.bincount(cols.bridge).max() > 1  # both kinds, several a unit
    k_n = len(cols.bridge)
    odd = np.arange(1, k_n, 2)
    first = planner._on_this_grid(cols.take(odd), odd, 0, units.unit)  # half valued, then all (the rest only)
    again = planner._on_this_grid(cols, np.arange(k_n), 0, units.unit)
    for got, want in ((again.spend, cols.spend), (again.count, cols.count), (again.poor, cols.poor)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-6)
    np.testing.assert_array_equal(again.reward, cols.reward)
    np.testing.assert_array_equal(first.poor, again.poor[odd])
