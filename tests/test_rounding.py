"""The relaxation's mixture as a policy: weights on the master LP's columns, drawn per sample path (randomized
rounding), each column solvable again from the prices it was found at (issue 28: the planner's least budget)."""

from types import SimpleNamespace

import numpy as np
import pytest

from bridgefleet.config import FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_policy
from bridgefleet.inventory.fleet import set_budget
from bridgefleet.planning import planner as planner_module
from bridgefleet.planning.bound import fleet_mdps, lagrangian_bound
from bridgefleet.planning.columns import ColumnPool, Columns
from bridgefleet.planning.dp import solve
from bridgefleet.planning.least_budget import least_budget
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.planning.rounding import assign, mixture_weights
from bridgefleet.planning.rows import CouplingRows
from bridgefleet.planning.transitions import prices_only
from bridgefleet.sim.simulator import FleetSimulator


def _two_units(reward_treat: tuple[float, float]) -> Columns:
    """Unit 0 (100 m² poor unless treated) and unit 1 (50 m²): do nothing, or treat for USD 10 in the one year."""
    spend = np.array([[0.0], [10.0], [0.0], [10.0]])
    poor = np.array([[100.0], [0.0], [50.0], [0.0]])
    return Columns(np.array([0, 0, 1, 1]), np.array([0.0, reward_treat[0], 0.0, reward_treat[1]]), spend,
                   np.zeros((4, 1)), poor, np.array([0, 2, 0, 2]), np.zeros((4, 4, 1)))


def _weights(cols: Columns, poor_b, budget_share: float = 1.0) -> np.ndarray:
    rows = CouplingRows(np.eye(1), np.array([[[10.0], [0.0]]]), None, None)  # USD 10 for the urban agency's one year
    keep, w = mixture_weights(cols, np.array([0.5, 0.5, 0.5, 0.5]), np.array([0, 0]), rows, 0, poor_b, budget_share)
    out = np.zeros(len(cols.bridge))
    out[keep] = w
    return out


def test_the_mixture_treats_the_bridge_the_rule_needs_not_the_one_the_return_prefers():
    # Columns: unit 0 do nothing / treat (return 3), unit 1 do nothing / treat (return 5); USD 10 buys one treatment.
    cols = _two_units((3.0, 5.0))
    np.testing.assert_allclose(_weights(cols, None), [1, 0, 0, 1], atol=1e-9)  # no rule: treat unit 1
    # ≤ 60 m² poor: 100 (1 − a) + 50 (1 − b) ≤ 60 and a + b ≤ 1, max 3a + 5b → a = 0.8, b = 0.2
    np.testing.assert_allclose(_weights(cols, np.array([60.0])), [0.2, 0.8, 0.8, 0.2], atol=1e-9)
    # ≤ 10 m²: no mixture meets it; the least excess (treat unit 0 alone: 50 m² poor) wins over the return
    np.testing.assert_allclose(_weights(cols, np.array([10.0])), [0, 1, 1, 0], atol=1e-9)
    # half the budget in expectation (a + b ≤ 0.5): the least excess treats unit 0 on half the paths (100 m² poor)
    np.testing.assert_allclose(_weights(cols, np.array([60.0]), budget_share=0.5), [0.5, 0.5, 1, 0], atol=1e-9)


def test_each_policy_is_followed_on_its_share_of_the_paths_and_each_path_draws_with_the_weights():
    unit = np.array([0, 0, 1, 2, 2, 2])
    weight = np.array([0.25, 0.75, 1.0, 0.5, 0.3, 0.2])
    pick = assign(unit, weight, 3, 16, np.random.default_rng(1))
    assert pick.shape == (16, 3) and (unit[pick] == np.arange(3)).all()
    np.testing.assert_array_equal(np.bincount(pick[:, 0], minlength=6)[:2], [4, 12])  # 16 × weight exactly
    assert (pick[:, 1] == 2).all()
    counts = np.bincount(pick[:, 2], minlength=6)[3:]
    assert counts.sum() == 16 and (np.abs(counts - 16 * weight[3:]) < 1).all()  # ⌊16 w⌋ or ⌈16 w⌉: 8, 4–5, 3–4
    freq = np.zeros((16, 6))  # over many draws every path follows each policy with its weight
    for seed in range(2000):
        p = assign(unit, weight, 3, 16, np.random.default_rng(seed))
        np.add.at(freq, (np.repeat(np.arange(16), 3), p.ravel()), 1.0)
    np.testing.assert_allclose(freq / 2000, np.tile(weight, (16, 1)), atol=0.04)


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


def test_the_rounded_planner_keeps_each_years_budget_and_meets_its_rounded_plan_on_a_deterministic_fleet(
        monkeypatch):
    cfg = set_budget(FleetConfig(n_urban=3, n_rural=3, horizon_years=5, fixed_fleet=True, fleet_seed=3,
                                 deterioration_cv=0.0), scale=0.5)
    planner = LagrangianPlanner(max_poor_deck_area=0.3, rounded=True, max_iter=20)
    sim = FleetSimulator(cfg, 2)
    result = evaluate_policy(planner, cfg, 2, 3, "lagrangian", sim)
    budget = np.asarray(cfg.budgets_usd).sum()
    assert result.agency_usd.shape == (2, 5) and result.agency_usd.sum() > 0
    # carry-over: each sample's spend up to year t within the t + 1 budgets that came in
    assert (np.cumsum(result.agency_usd, axis=1) <= budget * np.arange(1, 6) + 1e-6).all()
    # Each path's bridge j has a row of the mixture's tables that is bridge j's MDP (its policy's prices apart),
    # and the least budget's policies on the planner's grid were found for it (the candidates' pool filled).
    plain = planner._plain["mdps"]
    rows = planner._index  # (paths, B)
    assert rows.shape == (2, 6) and planner.mdps.n >= 6
    np.testing.assert_array_equal(planner.mdps.c0[rows], np.broadcast_to(plain.c0[:6], (2, 6)))
    np.testing.assert_array_equal(planner.mdps.cost[rows], np.broadcast_to(plain.cost[:6], (2, 6, 5)))
    assert planner.candidates.shape is not None and planner.candidates.shape[3] == plain.utility.shape[1]
    # A path ahead of the mixture's expected spend spends its lead on what cuts this year's expected poor deck
    # area most (bridge 2: 0.9 → 0.2 poor by action 2); a path with exactly the plan's money does nothing more
    # (before the horizon's last years: here only the last releases the plan's money).
    monkeypatch.setattr(planner_module, "RELEASE_YEARS", 1)
    annual = np.tile(np.asarray(cfg.budgets_usd), (2, 1))
    ahead = SimpleNamespace(fleet_annual_budget=annual, num_envs=2, config=cfg,
                            budget=annual + np.array([[1e9, 1e9], [0.0, 0.0]]))
    p_poor = np.zeros((2, 6, 5))
    p_poor[:, 2] = [0.9, 0.5, 0.2, 0.6, 0.6]
    out = np.zeros((2, 6), dtype=np.int64)
    planner._spend_lead(ahead, 0, p_poor, out)
    np.testing.assert_array_equal(out, [[0, 0, 2, 0, 0, 0], [0] * 6])
    ahead.budget = annual + planner._cost[:, 2, 1][:, None]  # a lead that buys action 1 only
    out[:] = 0
    planner._spend_lead(ahead, 0, p_poor, out)
    np.testing.assert_array_equal(out[:, 2], [1, 1])
    # In the horizon's last year the money the mixture expects a path to hold buys nothing later: it is spent on
    # the cut it buys (bridge 2, urban: the largest cut among the treatments that money affords); a year earlier
    # the same position spends nothing more. A plan that spent nothing expects a path to hold t + 1 budgets.
    planner._spend_plan[:] = 0.0
    cut = {1: 0.4, 2: 0.7, 3: 0.3, 4: 0.3}
    for t in (3, 4):
        ahead.budget = annual * (t + 1)
        out[:] = 0
        planner._spend_lead(ahead, t, p_poor, out)
        fits = [[a for a in cut if planner._cost[e, 2, a] <= ahead.budget[e, 0] + 1e-9] for e in range(2)]
        expect = [max(f, key=cut.get) if t == 4 and f else 0 for f in fits]
        np.testing.assert_array_equal(out[:, 2], expect)
        assert (np.delete(out, 2, axis=1) == 0).all()
    assert all(expect)  # the test reaches the release
    planner.budget_share = 1.5
    with pytest.raises(ValueError, match=r"budget_share = 1.5: must be in \(0, 1\]"):
        evaluate_policy(planner, cfg, 2, 3, "lagrangian", sim)


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
