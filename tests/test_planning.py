"""Planning: deterioration kernels, the single-bridge DP against simulation, the bound against an exact joint
optimum and against every policy, the lagrangian planner."""

import itertools
import json

import numpy as np
import pytest

from bridgefleet.cli import main
from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_policy, evaluate_with_bound
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.planning.transitions import deterioration_weights, grid_points
from bridgefleet.sim.model import band_shares
from bridgefleet.sim.simulator import FleetSimulator


def test_grid_has_whole_steps_per_rating_point():
    assert grid_points(0.05) == (181, 0.05)
    g, h = grid_points(0.03)  # not a divisor of 1: the next finer one
    assert (g, h) == (9 * 34 + 1, 1 / 34)
    with pytest.raises(ValueError, match="grid step 0"):
        grid_points(0)


def test_deterministic_drop_splits_between_the_two_neighbouring_grid_points():
    # A drop of 0.075 rating points on a 0.05 grid is 1.5 steps: half the mass one step down, half two.
    w = deterioration_weights(np.array([0.075]), 0.0, 0.05)
    np.testing.assert_allclose(w[0, :3], [0.0, 0.5, 0.5])


@pytest.mark.parametrize("n_cases", [3, 5000])  # exact, and the interpolated table for many cases
def test_gamma_weights_sum_to_one_and_keep_the_mean_drop(n_cases):
    drop = np.linspace(0.03, 0.3, n_cases)
    w = deterioration_weights(drop, 0.3, 0.05)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    # Hat functions reproduce linear functions, so Σ_k k h w_k is the mean drop (no clamp here).
    np.testing.assert_allclose((w * np.arange(w.shape[-1])).sum(-1) * 0.05, drop, rtol=2e-6)
    # and the variance is the Gamma's (cv × mean)² plus the hat functions' own spread (≤ h²/4)
    var = (w * (np.arange(w.shape[-1]) * 0.05) ** 2).sum(-1) - drop**2
    assert np.all(var >= (0.3 * drop) ** 2 - 1e-9) and np.all(var <= (0.3 * drop) ** 2 + 0.05**2 / 4)


def test_without_a_budget_the_dp_value_is_the_simulated_return_of_its_policy():
    cfg = FleetConfig(n_urban=1, n_rural=1, annual_budget_usd=1e9, fixed_fleet=True, fleet_seed=3, horizon_years=15)
    planner = LagrangianPlanner(step=0.01, max_iter=2)
    res = evaluate_policy(planner, cfg, episodes=2000, seed=0, name="dp")
    value = planner.bound.values[0]
    assert planner.bound.price_cost.max() == 0.0 and planner.bound.price_count.max() == 0.0
    half_width = 2.576 / 1.9611514 * res.ci95  # 99 % CI (t(1999) 1.9612 for 95 %)
    assert abs(res.mean_return - value) < half_width, (res.mean_return, value, half_width)


def _exact_optimum(cfg: FleetConfig, actions: list[int], max_poor: float | None = None) -> float:
    """Best return over every action sequence (deterministic deterioration: open loop is optimal); with
    ``max_poor``, over the sequences that keep at most that share of deck area poor at the end of every year."""
    sim0 = FleetSimulator(cfg, 1)
    b = sim0.n_bridges
    per_year = list(itertools.product(actions, repeat=b))
    seqs = list(itertools.product(range(len(per_year)), repeat=cfg.horizon_years))
    sim = FleetSimulator(cfg, len(seqs))
    sim.reset(None, [0] * len(seqs))
    table = np.array(per_year)
    idx = np.array(seqs)
    ret = np.zeros(len(seqs))
    ok = np.ones(len(seqs), dtype=bool)
    for t in range(cfg.horizon_years):
        ret += cfg.discount**t * sim.step_requests(table[idx[:, t]]).reward
        if max_poor is not None:
            ok &= band_shares(sim.state.condition, sim.fhwa_weight())[:, 2] <= max_poor + 1e-12
    return float(ret[ok].max()) if ok.any() else -np.inf


def test_bound_is_above_the_exact_joint_optimum_which_is_above_the_planner():
    # 1 urban + 2 rural bridges; the rural budget (USD 75,000) pays for both preventive treatments but never
    # for a repair together with any treatment of the other bridge; rehabilitation and replacement never fit.
    # Deterministic deterioration, 3 years: 9^3 joint sequences of (urban, rural, rural) actions per year.
    cfg = FleetConfig(n_urban=1, n_rural=2, horizon_years=3, deterioration_cv=0.0, fixed_fleet=True, fleet_seed=7,
                      annual_budget_usd=150_000.0, urban_budget_share=0.5)
    exact = _exact_optimum(cfg, [0, 1, 2])
    planner = LagrangianPlanner(step=0.01, max_iter=20)
    lagr = evaluate_policy(planner, cfg, episodes=1, seed=0, name="lagrangian").mean_return
    assert not planner.mdps.feasible[:, 3:].any()  # the enumeration above covers every affordable action
    bound = planner.bound.values[0]
    assert bound >= exact - 1e-3 * abs(exact), (bound, exact)
    assert exact >= lagr - 1e-9, (exact, lagr)


def test_with_the_poor_deck_area_rule_the_bound_is_above_the_exact_best_policy_that_meets_it():
    # Ratings 5.7, 5.55, 5.04 on decks of 939, 486, 306 m², no user cost: the best policy lets the third bridge
    # fall poor; keeping every bridge out of poor costs return (enumerated: −0.869 free, −1.147 with the rule).
    cfg = FleetConfig(n_urban=1, n_rural=2, horizon_years=3, deterioration_cv=0.0, fixed_fleet=True, fleet_seed=16,
                      annual_budget_usd=150_000.0, urban_budget_share=0.5, shock_probability=0.0,
                      poor_user_cost_usd_per_aadt=0.0, initial_rating=(5.6, 0.0, 0.3))
    free = _exact_optimum(cfg, [0, 1, 2])
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    unruled = LagrangianPlanner(step=0.01, max_iter=30).prepare(sim).values[0]
    for rule in (0.0, 0.4):
        exact = _exact_optimum(cfg, [0, 1, 2], max_poor=rule)
        planner = LagrangianPlanner(step=0.01, max_iter=30, max_poor_deck_area=rule, certify_step=0.01)
        result = planner.prepare(sim)
        bound = result.values[0]
        assert bound >= exact - 1e-3 * abs(exact), (rule, bound, exact)
        assert result.certified[0] >= exact - 1e-6 * abs(exact), (rule, result.certified[0], exact)
        if rule == 0.0:
            assert exact < free  # the rule binds: the best policy without it lets a bridge sit poor
        assert bound <= unruled + 1e-3 * abs(unruled)  # one more row can only tighten the relaxation


def test_bound_is_above_every_policy_and_the_planner_beats_worst_first():
    cfg = FleetConfig()
    results, bound = evaluate_with_bound(cfg, episodes=6, seed=1_000_000, max_iter=12)
    means = {r.policy: r.mean_return for r in results}
    assert all(bound[0] >= m for m in means.values()), (bound, means)
    assert means["lagrangian"] > means["worst_first"]


def test_the_bound_of_a_fixed_fleet_is_its_one_bound_on_every_episode():
    cfg = FleetConfig(inventory="dc-2019", max_urban=8, horizon_years=5)
    results, bound = evaluate_with_bound(cfg, ["do_nothing"], episodes=3, seed=7, max_iter=4)
    assert bound.values.shape == (3,) and (bound.values == bound.mean).all() and bound.ci95 == 0.0
    assert all(bound.mean >= r.mean_return for r in results)


def test_the_planner_on_fleets_in_groups_gives_what_it_gives_on_all_at_once(monkeypatch):
    from bridgefleet.evaluation import evaluate

    cfg = FleetConfig(n_urban=3, n_rural=3, horizon_years=5)
    whole, whole_bound = evaluate_with_bound(cfg, ["do_nothing"], episodes=5, seed=7, max_iter=6)
    monkeypatch.setattr(evaluate, "PLANNER_BRIDGES", 12)  # 2 fleets of 6 bridges a group: 2, 2 and 1
    grouped, grouped_bound = evaluate_with_bound(cfg, ["do_nothing"], episodes=5, seed=7, max_iter=6)
    a, b = whole[-1], grouped[-1]
    assert a.policy == b.policy == "lagrangian" and b.episodes == 5
    np.testing.assert_array_equal(a.returns, b.returns)
    np.testing.assert_array_equal(a.deck_by_year, b.deck_by_year)
    np.testing.assert_array_equal(a.agency_usd, b.agency_usd)
    np.testing.assert_allclose([a.mean_return, a.ci95, a.mean_annual_cost_usd, a.share_poor_end],
                               [b.mean_return, b.ci95, b.mean_annual_cost_usd, b.share_poor_end], rtol=1e-12)
    np.testing.assert_allclose(a.treatments_per_year, b.treatments_per_year, rtol=1e-12)
    np.testing.assert_allclose(whole_bound.values, grouped_bound.values, rtol=1e-12)
    np.testing.assert_allclose(whole_bound[:2], grouped_bound[:2], rtol=1e-12)
    # one bound per fleet, each fleet's own: their mean and its 95 % CI are the pair the tables print
    assert whole_bound.values.shape == (5,) and len(np.unique(whole_bound.values)) == 5
    assert whole_bound.mean == pytest.approx(whole_bound.values.mean(), rel=1e-12)
    assert whole_bound.ci95 == pytest.approx(2.7764451 * whole_bound.values.std(ddof=1) / np.sqrt(5), rel=1e-7)  # t(4)


def test_a_bound_on_a_finer_grid_is_that_grids_bound_of_the_same_fleets_and_leaves_the_planner_alone(monkeypatch):
    from bridgefleet.evaluation import evaluate

    cfg = FleetConfig(n_urban=3, n_rural=3, horizon_years=5)
    coarse_res, coarse = evaluate_with_bound(cfg, [], episodes=3, seed=7, max_iter=6)
    monkeypatch.setattr(evaluate, "PLANNER_BRIDGES", 12)  # groups of 2 fleets: each group's own fine bound
    fine_res, fine = evaluate_with_bound(cfg, [], episodes=3, seed=7, max_iter=6, bound_step=0.02)
    np.testing.assert_array_equal(coarse_res[-1].returns, fine_res[-1].returns)  # the planner on its own grid
    sim = FleetSimulator(cfg, 3)
    sim.reset(None, [7, 8, 9])
    want = LagrangianPlanner(step=0.02, max_iter=6).prepare(sim).values
    np.testing.assert_allclose(fine.values, want, rtol=1e-9)
    assert not np.allclose(fine.values, coarse.values, rtol=1e-6)
    with pytest.raises(ValueError, match="bound step 0: must be in"):
        evaluate_with_bound(cfg, [], episodes=1, bound_step=0)


def test_evaluate_json_and_bound_cli(tmp_path, capsys):
    out = tmp_path / "ev.json"
    assert main(["evaluate", "--policy", "lagrangian", "--episodes", "3", "--bound-iters", "4", "--quiet",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| upper bound (budget relaxed) |" in text and "do-nothing → bound covered" in text
    data = json.loads(out.read_text())
    assert set(data["policies"]) == {"do_nothing", "lagrangian"}
    lagr = data["policies"]["lagrangian"]
    assert set(lagr) == {"mean", "ci95", "annual_cost_usd", "annual_cost_by_agency_usd", "share_poor_end",
                         "deferred_per_year", "share_poor_at_year", "treatments_per_year", "deck_area_share_by_year",
                         "agency_cost_usd", "user_cost_usd", "poor_deck_area_rule", "below_bound"}
    # 100 bridges; one reward unit is 100,000 USD; 30 years at γ = 0.95: annuity (1 − 0.95³⁰) / 0.05 = 15.707
    gap = (data["bound"]["mean"] - lagr["mean"]) / 100
    assert lagr["below_bound"]["per_bridge"] == pytest.approx(gap)
    assert lagr["below_bound"]["usd_per_bridge_year"] == pytest.approx(gap * 100_000 / ((1 - 0.95**30) / 0.05))
    assert "below the bound, per bridge | USD per bridge a year |" in text
    deck = lagr["deck_area_share_by_year"]
    np.testing.assert_allclose(np.add(np.add(deck["good"], deck["fair"]), deck["poor"]), 1.0)
    assert lagr["agency_cost_usd"]["undiscounted"] == pytest.approx(30 * lagr["annual_cost_usd"])
    assert lagr["agency_cost_usd"]["present_value"] < lagr["agency_cost_usd"]["undiscounted"]
    rule = lagr["poor_deck_area_rule"]
    assert rule["rule"] == 0.10 and rule["worst_year_poor"] == pytest.approx(max(deck["poor"]))
    assert rule["three_consecutive"] <= rule["any_year"] and rule["fleet_years"] <= rule["any_year"]
    assert "deck good / poor y10" in text and "one reward unit = 100,000 USD" in text
    assert set(lagr["share_poor_at_year"]) == {"10", "20", "30"}
    assert lagr["share_poor_at_year"]["30"] == pytest.approx(lagr["share_poor_end"])
    by_agency = lagr["annual_cost_by_agency_usd"]
    assert by_agency["urban"] + by_agency["rural"] == pytest.approx(lagr["annual_cost_usd"])
    assert sum(lagr["treatments_per_year"].values()) == pytest.approx(100)  # every bridge, every year
    assert data["bound"]["mean"] >= data["policies"]["lagrangian"]["mean"]
    assert main(["bound", "--episodes", "2", "--bound-iters", "3", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "best expected discounted return of a budget-feasible policy" in text  # the grid's: an estimate
    assert "estimated on a rating grid" in text and "urban /kUSD" in text
    assert main(["bound", "--episodes", "2", "--grid-step", "0", "--quiet"]) == 2
    assert "--grid-step 0.0: must be in (0, 1]" in capsys.readouterr().err
    assert main(["evaluate", "--episodes", "2", "--json", str(tmp_path / "nope" / "x.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["evaluate", "--episodes", "2", "--json", str(tmp_path)]) == 2  # a folder: refused before work
    assert "is a folder" in capsys.readouterr().err and not list(tmp_path.glob("*.tmp"))
    assert main(["evaluate", "--episodes", "2", "--seed", "-1"]) == 2
    assert "--seed -1: must be ≥ 0" in capsys.readouterr().err


def test_fleet_model_option_reproduces_plan_2025_and_names_unknown_models(tmp_path, capsys):
    assert main(["evaluate", "--policy", "worst_first", "--no-bound", "--fleet-model", "plan-2025", "--quiet",
                 "--seed", "1000000"]) == 0
    assert "| worst_first | -735.70 |" in capsys.readouterr().out  # the published figure (100 fleets)
    cfg = tmp_path / "fleet.yaml"
    cfg.write_text("model: plan-2025\nn_urban: 10\n")
    loaded = FleetConfig.from_yaml(cfg)
    assert loaded.n_urban == 10 and loaded.annual_budget_usd == 282_000.0 and not loaded.carry_over_budget
    cfg.write_text("model: plan-2024\n")
    with pytest.raises(ConfigError, match=r"unknown fleet model 'plan-2024' \(did you mean 'plan-2025'\?\); known: "
                       "components-2026, continuous-2026, bands-2026, plan-2025"):
        FleetConfig.from_yaml(cfg)
    assert main(["evaluate", "--config", str(cfg), "--episodes", "2", "--no-bound"]) == 2
    assert "unknown fleet model 'plan-2024'" in capsys.readouterr().err


def test_a_solve_without_its_forward_pass_gives_the_same_values_tables_and_checkpoints():
    from bridgefleet.planning.bound import fleet_mdps
    from bridgefleet.planning.dp import solve
    from bridgefleet.sim.simulator import FleetSimulator

    # The bound's last solve and the planner's tables need value0, EU and V_c, not the policy's expectations:
    # without the forward pass those must be bit for bit the same, and the expectations left at 0.
    cfg = FleetConfig(n_urban=3, n_rural=4, horizon_years=8)
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [3])
    m, _ = fleet_mdps(cfg, sim.profile, sim.state, sim.weight, sim.fleet_annual_budget, step=0.1, max_poor=0.1)
    rng = np.random.default_rng(0)
    pc, pn, pp = (rng.uniform(0, s, (m.n, m.horizon)) for s in (1e-6, 0.5, 2.0))
    full = solve(m, pc, pn, price_poor=pp, store=(0, 4), keep=(5,))
    fast = solve(m, pc, pn, price_poor=pp, store=(0, 4), keep=(5,), forward=False)
    assert np.array_equal(full.value0, fast.value0) and np.array_equal(full.eu, fast.eu)
    assert np.array_equal(full.kept, fast.kept)
    assert full.exp_cost.sum() > 0 and full.exp_poor.sum() > 0 and full.used.any()  # the forward pass ran
    assert not (fast.exp_cost.any() or fast.exp_count.any() or fast.exp_poor.any() or fast.used.any()
                or fast.exp_utility.any())


def test_mdps_at_another_budget_are_the_ones_built_for_it_and_the_planner_reuses_them():
    import dataclasses

    from bridgefleet.planning.bound import fleet_mdps

    cfg = FleetConfig(n_urban=3, n_rural=5, horizon_years=6)
    sim = FleetSimulator(cfg, 2)
    sim.set_budget_scale(np.full(2, 3.0))
    sim.reset(None, [7, 8])
    args = (cfg, sim.profile, sim.state, sim.weight)
    budget = sim.fleet_annual_budget
    base, _ = fleet_mdps(*args, budget, step=0.1)
    assert base.weights.shape[1] == 2  # a replacement fits the budget: two rate kinds
    for scale in (0.8, 3.0):  # fewer actions fit, more fit
        built, rows = fleet_mdps(*args, budget * scale, step=0.1)
        reused, rows2 = fleet_mdps(*args, budget * scale, step=0.1, like=base)
        assert reused.weights is base.weights  # shared, not built again
        for f in dataclasses.fields(built):
            a, b = getattr(built, f.name), getattr(reused, f.name)
            assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, f.name
        assert np.array_equal(rows.spend_b, rows2.spend_b) and np.array_equal(rows.count_b, rows2.count_b)
    assert fleet_mdps(*args, budget * 0.8, step=0.1)[0].feasible.sum() < base.feasible.sum()  # the cap binds
    # no replacement fits: one rate kind, so the MDPs are built again, not reused
    tiny, _ = fleet_mdps(*args, budget / 3, step=0.1, like=base)
    assert tiny.weights.shape[1] == 1 and tiny.weights is not base.weights
    # a planner told of another planner of the same fleets decides as one that builds its own MDPs
    a = LagrangianPlanner(max_iter=6)
    a.benefits(sim)
    sim.set_budget_scale(np.full(2, 4.5))
    sim.reset(None, [7, 8])
    b, c = LagrangianPlanner(max_iter=6, like=a), LagrangianPlanner(max_iter=6)
    np.testing.assert_array_equal(b.benefits(sim), c.benefits(sim))
    assert b.mdps.weights is a.mdps.weights and c.mdps.weights is not a.mdps.weights
    sim.reset(None, [9, 10])  # other fleets: nothing reused
    d = LagrangianPlanner(max_iter=6, like=a)
    d.benefits(sim)
    assert d.mdps.weights is not a.mdps.weights


def _windows(calls: list[dict]) -> list[tuple]:
    """(store, start year, layout base) of each window solve the planner made."""
    return [(k["store"], k.get("start") and k["start"][0], k.get("layout") and k["layout"].base) for k in calls
            if k.get("store")]


def test_the_planner_decides_the_same_whatever_window_of_years_its_memory_holds():
    from bridgefleet.planning.dp import solve

    # A small memory_mb solves the DP in many windows, each down to its first year only and, after the first,
    # with only the rows the fleets' states there can reach; the decisions must be those of one window holding
    # every year. At 0.05 MB every window is one year solved from the horizon; at 1 MB the first window holds
    # years 0–5 and the first solve keeps V at years 7 and 9, from which the next two windows are solved.
    cfg = FleetConfig(n_urban=3, n_rural=5, horizon_years=12)
    whole = evaluate_policy(LagrangianPlanner(max_iter=4, memory_mb=1024), cfg, episodes=3, seed=5)
    one_year = [((0, 1), None, None)] + [((t, t + 1), None, t) for t in range(1, 12)]
    kept = [((0, 6), None, None), ((6, 7), 7, 6), ((7, 9), 9, 7), ((9, 12), None, 9)]
    for mb, keep, windows in ((0.05, (), one_year), (1.0, (7, 9), kept)):
        planner = LagrangianPlanner(max_iter=4, memory_mb=mb)
        calls = []
        planner.solver = lambda *a, calls=calls, **k: calls.append(k) or solve(*a, **k)
        got = evaluate_policy(planner, cfg, episodes=3, seed=5)
        np.testing.assert_array_equal(got.returns, whole.returns)
        assert planner._keep == keep and _windows(calls) == windows


@pytest.mark.parametrize("budget", [None, 5e6])  # 5e6: replacements fit the budget (a second rate kind)
def test_windows_of_a_fixed_fleet_hold_only_the_rows_its_samples_reach_and_decide_the_same(budget):
    from bridgefleet.planning.dp import solve

    # Six samples of one fleet: a bridge's window from year t holds its distinct rows there (up to six) and the
    # rows of the treatments after t, solved back from the rows of a kept V_c that layout reads.
    cfg = FleetConfig(n_urban=3, n_rural=5, horizon_years=12, fixed_fleet=True, fleet_seed=4,
                      **({} if budget is None else {"annual_budget_usd": budget}))
    whole = evaluate_policy(LagrangianPlanner(max_iter=4, memory_mb=1024), cfg, episodes=6, seed=5)
    for mb in (0.01, 0.05, 0.2):
        planner = LagrangianPlanner(max_iter=4, memory_mb=mb)
        calls = []
        planner.solver = lambda *a, calls=calls, **k: calls.append(k) or solve(*a, **k)
        got = evaluate_policy(planner, cfg, episodes=6, seed=5)
        np.testing.assert_array_equal(got.returns, whole.returns)
        windows = _windows(calls)
        assert windows[0][2] is None and all(base == lo for (lo, _), _, base in windows[1:])
        assert any(start is not None for _, start, _ in windows) == (mb > 0.01)
    assert max(k["layout"].diag.shape[2] for k in calls if k.get("layout")) > 1  # several rows a bridge


def test_a_layout_holds_the_triangle_then_each_bridges_rows():
    from bridgefleet.planning.dp import Layout, _layout_row
    from bridgefleet.planning.planner import state_layout

    def rows(lay, t, n, rt):  # the row of each entry of year t's slot, as the DP kernels read it
        s = t - lay.base
        return [_layout_row(k, s, lay.diag[n, rt]) for k in range(s + 1 + lay.diag.shape[2])]

    # Two samples of three bridges at year 4 (one rate kind): bridge 0 at rows 2 and 5 (never maintained),
    # bridge 1 at row 3 twice, bridge 2 at rows 1 and 5.
    row = np.array([[2, 3, 1], [5, 3, 5]])
    lay = state_layout(4, np.zeros_like(row), row, np.array([[0, 1, 2], [0, 1, 2]]), 3, 1)
    assert lay.base == 4 and lay.diag[:, 0].tolist() == [[2, 5], [3, -1], [1, 5]]
    # year 6 (slot 2): rows 0, 1, 2 (treated since year 4), then each diagonal two years on
    assert [rows(lay, 6, n, 0) for n in range(3)] == [[0, 1, 2, 4, 7], [0, 1, 2, 5, -1], [0, 1, 2, 3, 7]]
    assert lay.entries(4, 7) == 3 + 4 + 5 and lay.entries(5, 7) == 4 + 5  # slot s: s + 1 + 2 entries
    full = Layout.full(3, 2)  # every row: 0 … t then the never-maintained t + 1
    assert rows(full, 3, 0, 0) == [0, 1, 2, 3, 4] and rows(full, 3, 0, 1) == [0, 1, 2, 3, -1]
    assert full.entries(0, 3) == 2 + 3 + 4


def test_a_fixed_fleet_simulated_again_starts_from_the_kept_first_window():
    from bridgefleet.planning.dp import solve

    cfg = FleetConfig(n_urban=3, n_rural=5, horizon_years=12, fixed_fleet=True, fleet_seed=4)
    planner = LagrangianPlanner(max_iter=4, memory_mb=0.05)
    first = evaluate_policy(planner, cfg, episodes=3, seed=5)
    windows = []
    planner.solver = lambda *a, **k: windows.append(k["store"]) or solve(*a, **k)  # the window solves it makes
    again = evaluate_policy(planner, cfg, episodes=3, seed=5)
    np.testing.assert_array_equal(again.returns, first.returns)
    assert windows and min(lo for lo, _ in windows) > 0  # the later windows only: the first one was kept


def test_fleet_options_say_what_is_wrong_and_the_command_line_model_wins(tmp_path, capsys):
    cfg = tmp_path / "fleet.yaml"
    for text, wanted in (("carry_over_budget: 'false'\n", "carry_over_budget = 'false': must be true or false"),
                         ("fixed_fleet: 'no'\n", "fixed_fleet = 'no': must be true or false"),
                         ("band_rate_factors: [a, b, c]\n", "band_rate_factors = ['a', 'b', 'c']: must be a list"),
                         ("unit_costs_usd_per_m2: 5\n", "unit_costs_usd_per_m2 = 5: must be a list of numbers")):
        cfg.write_text(text)
        assert main(["evaluate", "--config", str(cfg), "--episodes", "2", "--no-bound"]) == 2
        err = capsys.readouterr().err
        assert wanted in err and str(cfg) in err and "Traceback" not in err
    cfg.write_text("model: plan-2025\nn_urban: 10\n")
    assert main(["evaluate", "--config", str(cfg), "--fleet-model", "continuous-2026", "--policy", "worst_first",
                 "--episodes", "2", "--no-bound", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "fleet model: continuous-2026" in out  # the option's model, the file's 10 urban bridges
    assert main(["evaluate", "--fleet-model", "plan-2025", "--policy", "worst_first", "--episodes", "2",
                 "--no-bound", "--quiet"]) == 0
    assert "fleet model: plan-2025" in capsys.readouterr().out


def test_bridges_with_the_same_rate_and_years_since_maintenance_share_their_weights_and_solve_as_alone():
    from bridgefleet.planning.dp import solve
    from bridgefleet.planning.transitions import bridge_mdps

    cfg = FleetConfig(n_urban=2, n_rural=2, horizon_years=6)
    rate = np.array([[0.10, 0.20, 0.10, 0.20]])
    ysm = np.array([[3.0, 3.0, 3.0, 5.0]])
    args = dict(condition=np.array([[7.3, 6.1, 5.2, 8.0]]), deck_area=np.array([[300.0, 800.0, 120.0, 950.0]]),
                cost_factor=np.ones((1, 4)), weight=np.array([[1.0, 2.0, 0.5, 1.5]]), target=np.full((1, 4), 7.0),
                cap_usd=np.full((1, 4), 1e9), step=0.1)
    fleet = bridge_mdps(cfg, ysm=ysm, rate=rate, **args)
    assert fleet.weights.shape[0] == 3 and fleet.kind.tolist() == [0, 1, 0, 2]  # (0.1, 3), (0.2, 3), (0.2, 5)
    price = np.full((4, 6), 2e-6)
    together = solve(fleet, price, np.zeros((4, 6)))
    for i in range(4):
        one = bridge_mdps(cfg, ysm=ysm[:, i : i + 1], rate=rate[:, i : i + 1],
                          **{k: (v[:, i : i + 1] if isinstance(v, np.ndarray) else v) for k, v in args.items()})
        alone = solve(one, price[i : i + 1], np.zeros((1, 6)))
        w = fleet.weights[fleet.kind[i], ..., : one.weights.shape[-1]]
        np.testing.assert_allclose(w, one.weights[0, ..., : w.shape[-1]], rtol=1e-12, atol=1e-15)  # SIMD's last bits
        assert together.value0[i] == pytest.approx(alone.value0[0], rel=1e-12)
        np.testing.assert_allclose(together.exp_cost[i], alone.exp_cost[0], rtol=1e-10)
