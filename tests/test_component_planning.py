"""The component model end to end: the exact DP against the simulator, the planner against its bound, the CLI."""

import json

import numpy as np
import pytest

from bridgefleet.cli import main
from bridgefleet.config import FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_policy
from bridgefleet.evaluation.scenario_tables import format_markdown
from bridgefleet.evaluation.scenarios import run_scenarios
from bridgefleet.planning.exact_dp import policy_value
from bridgefleet.planning.exact_planner import ExactPlanner, fleet_model
from bridgefleet.sim.simulator import FleetSimulator

SMALL = {"n_urban": 3, "n_rural": 3, "horizon_years": 6}


def test_the_exact_dp_gives_the_simulators_expected_return_of_a_fixed_policy():
    # Do nothing on one fixed fleet: the DP's exact expected discounted return against 4,000 simulated paths of
    # the simulator's own draws (components moving together in w of years, protection lapsing): two independent
    # implementations of the model.
    cfg = FleetConfig.named("components-2026", fixed_fleet=True, fleet_seed=3, **SMALL)
    n = 4000
    sim = FleetSimulator(cfg, n)
    sim.reset(None, list(range(n)))
    model, _, _ = fleet_model(sim, np.array([0]))
    exact = policy_value(model, 0, horizon=cfg.horizon_years).reward.sum()
    ret = np.zeros(n)
    for t in range(cfg.horizon_years):
        ret += cfg.discount**t * sim.step_requests(np.zeros((n, sim.n_bridges), np.int64)).reward
    assert abs(ret.mean() - exact) < 3 * ret.std() / np.sqrt(n)
    # and replacing every bridge in year 0 (a budget that pays it)
    sim = FleetSimulator(cfg.replace(annual_budget_usd=1e9), n)
    sim.reset(None, list(range(n)))
    model, _, _ = fleet_model(sim, np.array([0]))
    policy = np.zeros((cfg.horizon_years, model.states), np.int64)
    policy[0] = 4
    exact = policy_value(model, policy[:, None, :], horizon=cfg.horizon_years).reward.sum()
    ret = np.zeros(n)
    for t in range(cfg.horizon_years):
        ret += cfg.discount**t * sim.step_requests(np.full((n, sim.n_bridges), 4 if t == 0 else 0)).reward
    assert abs(ret.mean() - exact) < 3 * ret.std() / np.sqrt(n)


def test_the_planner_stays_below_its_bound_and_reaches_it_when_money_is_no_object():
    cfg = FleetConfig.named("components-2026", **SMALL)
    for budget, slack in ((None, None), (1e9, 0.02)):
        planner = ExactPlanner(tol=1e-6)
        res = evaluate_policy(planner, cfg.replace(annual_budget_usd=budget), 64, 7, "lagrangian")
        bound = planner.bound.values
        assert res.mean_return <= bound.mean() + res.ci95
        if slack is not None:  # no budget binds: the bound is the bridges' exact optimum, which the planner follows
            assert res.mean_return >= bound.mean() - slack * abs(bound.mean()) - res.ci95


@pytest.mark.parametrize(("argv", "message"), [
    (["bound", "--fleet-model", "components-2026", "--grid-step", "0.05"],
     "--grid-step: the component model's bound is exact"),
    (["evaluate", "--fleet-model", "components-2026", "--episodes", "2", "--grid-step", "0.1"],
     "--grid-step: the component model's bound is exact"),
])
def test_grid_options_are_refused_on_the_component_model_in_one_line(tmp_path, capsys, argv, message):
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not any(tmp_path.iterdir())


def test_the_plan_names_the_treatments_with_their_snbi_work_codes(tmp_path):
    out = tmp_path / "plan.csv"
    assert main(["plan", "--policy", "condition_based", "--fleet-model", "components-2026", "--years", "5",
                 "--budget-scale", "4", "--out", str(out)]) == 0
    rows = [line.split(",") for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["year", "bridge_id", "cluster", "deck_area_m2", "nhs", "ratings_today", "action",
                       "snbi_work_code", "action_share", "cost_usd", "expected_condition"]  # a rule: no reasons
    assert all(r[5].count("/") == 2 and r[4] in ("yes", "no") and float(r[3]) > 0 for r in rows[1:])
    pairs = {(r[6], r[7]) for r in rows[1:]}
    assert ("do_nothing", "") in pairs
    codes = {"deck_preservation": {"DK4"}, "component_rehabilitation": {"DK2", "SP2", "SB2"},
             "major_rehabilitation": {"DK1+SP2+SB2"}, "replacement": {"BR01"}}
    assert len(pairs) > 2 and all(code in codes[name] for name, code in pairs if name != "do_nothing")


def test_scenarios_on_the_component_model_give_the_exact_least_budget_and_the_planner_above_it():
    # Six bridges, eight years: the least budget is exact (its two ends meet), the planner at a level meets the rule
    # only at or above it, and a plan at twice the least budget meets the rule (5 % of deck area poor: binding).
    cfg = FleetConfig.named("components-2026", **{**SMALL, "horizon_years": 8})
    sc = run_scenarios(cfg, scales=[0.25, 4.0], rule=0.05, years=8, episodes=8, bisect=2, progress=False)
    assert sc.exact and sc.relaxation[1] - sc.relaxation[0] <= 2e-3 * sc.relaxation[1]
    assert 0.0 < sc.certified < 4.0
    for level in sc.levels:
        met = bool((level.deck[..., 2].mean(0) <= 0.05 + 1e-12).all())
        assert not met or level.scale >= sc.certified - 1e-9  # nothing meets the rule below the least budget
        if level.rule_met_by_bound:  # else no policy meets the rule there and the bound bounds none
            assert level.result.mean_return <= level.bound + level.result.ci95
    assert not sc.levels[0].rule_met_by_bound and sc.levels[1].rule_met_by_bound  # 0.25 × is below the least budget
    assert sc.planner_least is not None and sc.planner_least >= sc.certified
    text = format_markdown(sc)
    assert "Least budget: **" in text and "exact on the component model's finite states" in text


def test_the_planner_prices_the_rule_on_the_component_model():
    # Six bridges at USD 1 million a year (seeded, 16 paths): a 1 % rule binds (the bound falls from -52.02 to
    # -61.38, measured) and the planner lets fewer bridges go poor, in no year more; 0.5 % no policy can meet.
    cfg = FleetConfig.named("components-2026", fixed_fleet=True, fleet_seed=5, **SMALL).replace(annual_budget_usd=1e6)
    free, ruled = ExactPlanner(tol=1e-6), ExactPlanner(tol=1e-6, max_poor_deck_area=0.01)
    a = evaluate_policy(free, cfg, 16, 3, "lagrangian").deck_by_year[..., 2].mean(0)
    b = evaluate_policy(ruled, cfg, 16, 3, "lagrangian").deck_by_year[..., 2].mean(0)
    assert ruled.bound.meets_rule and ruled.bound.mean < free.bound.mean - 5.0
    assert (b <= a + 1e-12).all() and (b < a - 1e-3).any()
    tight = ExactPlanner(tol=1e-6, max_poor_deck_area=0.005)
    evaluate_policy(tight, cfg, 2, 3, "lagrangian")
    assert not tight.bound.meets_rule


def test_a_search_from_the_policies_found_before_ends_at_the_same_bound_and_one_asked_again_is_not_solved_again():
    # One fixed fleet, the rule priced: the bound at 1.5 × the budget started from the policies of the search at
    # 1 × equals the cold search's (tolerance 1e-6) in fewer DP solves; asked again, it is the first answer.
    from bridgefleet.planning.exact_planner import SearchColumns

    cfg = FleetConfig.named("components-2026", fixed_fleet=True, fleet_seed=5, **SMALL).replace(annual_budget_usd=1e6)

    def bound(budget: float, columns):
        sim = FleetSimulator(cfg.replace(annual_budget_usd=budget), 1, None)
        sim.reset(None, [3])
        return ExactPlanner(tol=1e-6, max_poor_deck_area=0.05, columns=columns).prepare(sim)

    kept = SearchColumns()
    bound(1e6, kept)
    warm, cold = bound(1.5e6, kept), bound(1.5e6, None)
    assert warm.meets_rule and cold.meets_rule
    assert warm.mean == pytest.approx(cold.mean, rel=2e-6)
    assert warm.parts[0].iterations < cold.parts[0].iterations
    again = bound(1.5e6, kept)
    assert again.parts[0] in kept.found.values() and len(kept.found) == 2  # kept without its columns: not solved
    assert again.parts[0].bound == warm.parts[0].bound and again.parts[0].mixture.bridge.size == 0


@pytest.mark.parametrize("budget", ["0", "1.0e-9"])
def test_bound_with_no_money_is_do_nothings_exact_value(tmp_path, budget):
    # Issue 79's instance: 3 urban + 3 rural bridges, 5 years, no budget (or a billionth of a USD, which once
    # scaled the master's rows past what HiGHS holds): `bound` prints do nothing's exact expected return.
    cfg_file = tmp_path / "fleet.yaml"
    cfg_file.write_text(f"model: components-2026\nn_urban: 3\nn_rural: 3\nhorizon_years: 5\n"
                        f"annual_budget_usd: {budget}\nfixed_fleet: true\n")
    out = tmp_path / "bound.json"
    assert main(["bound", "--config", str(cfg_file), "--episodes", "1", "--quiet", "--json", str(out)]) == 0
    cfg = FleetConfig.named("components-2026", fixed_fleet=True, n_urban=3, n_rural=3, horizon_years=5,
                            annual_budget_usd=float(budget))
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    model, _, _ = fleet_model(sim, np.array([0]))
    nothing = policy_value(model, 0, horizon=5).reward.sum()
    assert json.loads(out.read_text())["bound"]["mean"] == pytest.approx(nothing, abs=1e-9)
