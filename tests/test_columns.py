"""The column pool: price searches on one fleet started from each other's policies (issue 28's speed)."""

import numpy as np
from test_planning import _exact_optimum

from bridgefleet.config import FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_policy
from bridgefleet.inventory.fleet import set_budget
from bridgefleet.planning.bound import fleet_mdps, lagrangian_bound
from bridgefleet.planning.columns import ColumnPool, Columns, MasterUnits
from bridgefleet.planning.dp import solve
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.sim.simulator import FleetSimulator

SHAPE = (1, 2, 3, 10)  # one fleet of 2 bridges, 3 years, a 10-point grid


def _cols(bridge, reward, used, spend=None):
    k = len(bridge)
    spend = np.zeros((k, 3)) if spend is None else np.asarray(spend, dtype=float)
    return Columns(np.array(bridge), np.array(reward, dtype=float), spend, np.zeros((k, 3)), np.zeros((k, 3)),
                   np.array(used), np.zeros((k, 4, 3)))


def test_a_smaller_budget_gets_only_the_columns_whose_actions_it_allows():
    pool = ColumnPool()
    pool.add(0, _cols([0, 1, 0, 1], [-3.0, -4.0, -1.0, -2.0], [0, 0, 1 << 1, 1 << 4],
                      [[0, 0, 0], [0, 0, 0], [70, 0, 0], [900, 0, 0]]), SHAPE)
    everything = np.ones((2, 5), dtype=bool)
    no_replacement = everything.copy()
    no_replacement[1, 4] = False  # bridge 1's replacement costs more than a year's budget
    assert len(pool.valid(0, everything, SHAPE).reward) == 4
    kept = pool.valid(0, no_replacement, SHAPE)
    np.testing.assert_array_equal(kept.bridge, [0, 1, 0])
    np.testing.assert_array_equal(kept.reward, [-3.0, -4.0, -1.0])
    assert pool.valid(0, everything, (1, 2, 3, 11)) is None  # another grid: not this pool's MDPs
    assert pool.valid(1, everything, SHAPE) is None  # no columns for that fleet


def test_a_column_found_again_keeps_its_better_reward_and_every_bridge_needs_a_do_nothing_column():
    pool = ColumnPool()
    pool.add(0, _cols([0, 1], [-3.0, -4.0], [0, 0]), SHAPE)
    pool.add(0, _cols([0, 1], [-2.5, -5.0], [0, 0]), SHAPE)  # the same policies, bridge 0's return better
    kept = pool.valid(0, np.ones((2, 5), bool), SHAPE)
    assert dict(zip(kept.bridge.tolist(), kept.reward.tolist(), strict=True)) == {0: -2.5, 1: -4.0}
    lonely = ColumnPool()
    lonely.add(0, _cols([0, 1], [-3.0, -1.0], [0, 1 << 2]), SHAPE)  # bridge 1 has no do-nothing column
    assert lonely.valid(0, np.ones((2, 5), bool), SHAPE) is None  # the master LP would be infeasible


def test_a_large_fleet_enters_its_master_lp_in_blocks_of_alike_bridges_of_one_agency():
    agency = np.array([0, 0, 1, 1, 1, 0, 1])
    rating = np.array([5.0, 9.0, 4.0, 8.0, 6.0, 7.0, 3.0])
    units = MasterUnits.of(agency, (rating,), most=4)  # 7 bridges, ≤ 4 rows: blocks of ⌈7 / 3⌉ = 3
    # urban by rating: bridges 0 (5), 5 (7), 1 (9) → one block; rural: 6 (3), 2 (4), 4 (6) | 3 (8)
    np.testing.assert_array_equal(units.unit, [0, 0, 1, 2, 1, 0, 1])
    np.testing.assert_array_equal(units.agency, [0, 1, 1])
    spend = np.arange(14.0).reshape(7, 2)
    cols = units.columns(np.arange(7.0), spend, spend * 0, spend * 2, np.array([0, 2, 0, 16, 4, 2, 0]))
    np.testing.assert_array_equal(cols.reward, [0 + 1 + 5, 2 + 4 + 6, 3])
    np.testing.assert_array_equal(cols.spend, [[12, 15], [24, 27], [6, 7]])
    np.testing.assert_array_equal(cols.poor, 2 * cols.spend)
    np.testing.assert_array_equal(cols.used, [2, 4, 16])  # the actions any bridge of the block may take
    feasible = np.ones((7, 5), dtype=bool)
    feasible[4, 3] = False
    np.testing.assert_array_equal(units.feasible(feasible)[:, 3], [True, False, True])
    alone = MasterUnits.of(agency, (rating,), most=7)
    assert alone.identity and alone.unit.tolist() == list(range(7))


def test_a_blocked_master_lp_still_gives_a_bound_close_to_the_per_bridge_one():
    cfg = FleetConfig(n_urban=10, n_rural=10, horizon_years=10, fixed_fleet=True, fleet_seed=3)
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    mdps, rows = fleet_mdps(cfg, sim.profile, sim.state, sim.weight, sim.fleet_annual_budget, step=0.2)
    per_bridge = lagrangian_bound(mdps, rows, max_iter=60)
    blocked = lagrangian_bound(mdps, rows, max_iter=60, master_units=5)  # blocks of ⌈20 / 4⌉ = 5 bridges
    # A restricted master LP's value is at most min L (the full master's), and every L(κ) is at least it.
    assert blocked.values[0] >= per_bridge.lp_values[0] - 1e-6
    assert blocked.lp_values[0] <= per_bridge.values[0] + 1e-6
    assert blocked.lp_values[0] != per_bridge.lp_values[0]  # another master LP
    assert abs(blocked.values[0] - per_bridge.values[0]) <= 5e-3 * abs(per_bridge.values[0]), (
        blocked.values, per_bridge.values)


def test_a_warm_search_gives_the_cold_bound_in_fewer_solves():
    cfg = FleetConfig(n_urban=4, n_rural=4, horizon_years=10, fixed_fleet=True, fleet_seed=5)
    results = {}
    pool = ColumnPool()
    for scale, use in ((1.0, pool), (1.5, None), (1.5, pool)):
        c = set_budget(cfg, scale=scale)
        sim = FleetSimulator(c, 1)
        sim.reset(None, [0])
        mdps, rows = fleet_mdps(c, sim.profile, sim.state, sim.weight, sim.fleet_annual_budget, step=0.2,
                                max_poor=0.1)
        results[scale, use is not None] = lagrangian_bound(mdps, rows, max_iter=60, pool=use)
    cold, warm = results[1.5, False], results[1.5, True]
    assert warm.iterations < cold.iterations, (warm.iterations, cold.iterations)
    assert abs(warm.values[0] - cold.values[0]) <= 4e-3 * abs(cold.values[0]), (warm.values, cold.values)
    assert warm.meets_rule and cold.meets_rule


def test_started_from_a_larger_budget_the_certified_bound_stays_above_the_exact_optimum():
    # The 3-bridge fleet of test_planning: at USD 150,000 rehabilitation never fits; at USD 600,000 it does,
    # so the pool holds policies the smaller budget must not use.
    cfg = FleetConfig(n_urban=1, n_rural=2, horizon_years=3, deterioration_cv=0.0, fixed_fleet=True, fleet_seed=7,
                      annual_budget_usd=150_000.0, urban_budget_share=0.5)
    pool = ColumnPool()
    big = cfg.replace(annual_budget_usd=600_000.0)
    sim = FleetSimulator(big, 1)
    sim.reset(None, [0])
    LagrangianPlanner(step=0.01, max_iter=20, pool=pool).prepare(sim)
    assert (pool.fleets[0].used >> 3 & 1).any()  # a policy that rehabilitates a bridge
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    planner = LagrangianPlanner(step=0.01, max_iter=20, pool=pool, certify_step=0.01)
    bound = planner.prepare(sim)
    assert not planner.mdps.feasible[:, 3:].any()
    exact = _exact_optimum(cfg, [0, 1, 2])
    assert bound.certified[0] >= exact - 1e-6 * abs(exact), (bound.certified, exact)
    assert bound.values[0] >= exact - 1e-3 * abs(exact), (bound.values, exact)


def test_a_policys_counted_return_is_its_value_plus_what_its_prices_took():
    # exp_utility − λ × discounted spend (how the least budget's policies are valued) against value0 + the
    # priced spend, treatments and poor years (how the bound values its own), at random prices.
    cfg = FleetConfig()
    sim = FleetSimulator(cfg, 2)
    sim.reset(None, [3, 4])
    mdps, _ = fleet_mdps(cfg, sim.profile, sim.state, sim.weight, sim.fleet_annual_budget, step=0.2, max_poor=0.1)
    rng = np.random.default_rng(0)
    shape = (mdps.n, mdps.horizon)
    pc, pn = rng.uniform(0, 1e-5, shape), rng.uniform(0, 1, shape)
    pp = rng.uniform(0, 1e-3, shape) * mdps.deck[:, None]
    sol = solve(mdps, pc, pn, price_poor=pp)
    disc = mdps.gamma ** np.arange(mdps.horizon)
    priced = ((pc * sol.exp_cost + pn * sol.exp_count + pp * sol.exp_poor) * disc).sum(1)
    counted = sol.exp_utility - mdps.cost_lambda * (sol.exp_cost * disc).sum(1)
    np.testing.assert_allclose(counted, sol.value0 + priced, rtol=1e-10, atol=1e-9)
    assert (sol.used != 0).any() and not (sol.used & 1).any()  # bit 0 (do nothing) is never a treatment


def test_the_planner_prices_a_fleet_once_and_again_for_another_budget():
    cfg = FleetConfig(n_urban=3, n_rural=3, horizon_years=5, fixed_fleet=True, fleet_seed=2)
    planner = LagrangianPlanner(step=0.1, max_iter=10, max_poor_deck_area=0.1)
    first = evaluate_policy(planner, cfg, 2, 0, "lagrangian")
    priced = planner.bound
    planner.aim = 0.04  # the same fleet at a tighter year-by-year aim: the same prices
    tighter = evaluate_policy(planner, cfg, 2, 0, "lagrangian")
    assert planner.bound is priced
    assert tighter.deck_by_year[:, 0, 2].mean() <= first.deck_by_year[:, 0, 2].mean() + 1e-12
    evaluate_policy(planner, set_budget(cfg, scale=2.0), 2, 0, "lagrangian")
    assert planner.bound is not priced  # another budget: priced again


def test_a_pool_handing_the_same_policy_twice_starts_the_same_search():
    # Equal columns of one bridge must reach the master LP once (with the better reward) whichever way they come:
    # a pool whose columns were repeated (the second copy a worse reward) starts the same search as the pool.
    cfg = FleetConfig(n_urban=3, n_rural=3, horizon_years=8, fixed_fleet=True, fleet_seed=2)
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    mdps, rows = fleet_mdps(cfg, sim.profile, sim.state, sim.weight, sim.fleet_annual_budget, step=0.2,
                            max_poor=0.1)
    pool = ColumnPool()
    lagrangian_bound(mdps, rows, max_iter=8, pool=pool)
    cols = pool.fleets[0]
    twice = ColumnPool(shape=pool.shape, fleets={0: cols + Columns(cols.bridge, cols.reward - 1.0, cols.spend,
                                                                       cols.count, cols.poor, cols.used,
                                                                       cols.found_at)})
    a = lagrangian_bound(mdps, rows, max_iter=8, pool=ColumnPool(shape=pool.shape, fleets={0: cols}))
    b = lagrangian_bound(mdps, rows, max_iter=8, pool=twice)
    assert a.iterations == b.iterations and a.values[0] == b.values[0]
    # the fingerprint of a column does not depend on where it sits among others
    assert np.array_equal(cols.fingerprint()[::-1], cols.take(np.arange(len(cols.reward))[::-1]).fingerprint())
