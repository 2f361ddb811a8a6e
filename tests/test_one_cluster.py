"""A city's inventory (every bridge urban) or a county's (every bridge rural): the budgets are the owners', so
plan, evaluate and the rules of thumb take it; only the plan's fleet agents, which need both clusters, refuse it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_inventory import HEADER, nbi_text, write

from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_policy, evaluate_with_bound
from bridgefleet.evaluation.work_plan import policy_plan
from bridgefleet.inventory.fleet import resolve_fleet, set_budget
from bridgefleet.inventory.load import load_inventory, state_cost_factor
from bridgefleet.sim.heuristics import HEURISTICS, SAME_WITHOUT_RURAL, SAME_WITHOUT_URBAN
from bridgefleet.sim.simulator import FleetSimulator
from bridgefleet.sim.strategies import rural_actions

# Three Indiana (state 18) bridges of one owner: deck / superstructure / substructure ratings 5 6 7, 7 6 7 and 7 6 4
# (lowest 5 fair, 6 fair, 4 poor), deck areas 400, 200 and 150 m², AADT 12,000, 3,000 and 800.
ROWS = [{"ADT_029": "12000", "DECK_COND_058": "5", "DECK_AREA": "400"}, {"ADT_029": "3000"},
        {"ADT_029": "800", "SUBSTRUCTURE_COND_060": "4", "DECK_AREA": "150"}]
CITY, COUNTY = "04 city or municipal highway agency", "02 county highway agency"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("one_cluster")
    header = [*HEADER, "OWNER_022"]
    city = [{**r, "OWNER_022": "04"} for r in ROWS]  # functional class 14: urban
    county = [{**r, "OWNER_022": "02", "FUNCTIONAL_CLASS_026": "07"} for r in ROWS]  # 07: rural
    return {"urban": write(d, nbi_text(city, header), name="XU19.txt"),
            "rural": write(d, nbi_text(county, header), name="XR19.txt")}


def config(path: Path, **changes) -> FleetConfig:
    return FleetConfig.named("components-2026", inventory=str(path), **changes)


def test_one_cluster_inventories_become_fleets(files: dict[str, Path]) -> None:
    n_u, n_r, (profile, state) = load_inventory(str(files["urban"])).to_fleet()
    assert (n_u, n_r) == (3, 0)
    np.testing.assert_array_equal(profile["aadt"], [12000, 3000, 800])  # urban columns by decreasing AADT
    assert profile["cluster"].tolist() == ["urban"] * 3 and profile["owner"].tolist() == [CITY] * 3
    np.testing.assert_array_equal(state["components"].min(axis=1), [5, 6, 4])
    n_u, n_r, (profile, _) = load_inventory(str(files["rural"])).to_fleet()
    assert (n_u, n_r) == (0, 3) and profile["cluster"].tolist() == ["rural"] * 3
    # --max-urban still hands the lower-traffic urban bridges to the rural agent
    assert load_inventory(str(files["urban"])).to_fleet(max_urban=1)[:2] == (1, 2)
    # resolved with its owner's budget: 1/75 × USD 2,497/m² × 750 m² × Indiana's cost factor
    cfg, _ = resolve_fleet(config(files["urban"]))
    assert (cfg.n_urban, cfg.n_rural, cfg.agency_labels) == (3, 0, (CITY,))
    assert cfg.budgets_usd[0] == pytest.approx(750 * 2497 / 75 * state_cost_factor(18), rel=1e-6)
    assert cfg.budgets_usd[0] == pytest.approx(33_257, abs=1)
    # a synthetic fleet still needs a bridge of each cluster
    with pytest.raises(ConfigError, match=r"n_rural = 0: must be a whole number in \[1, 1e7\]"):
        FleetConfig(n_rural=0)


def test_the_planners_plan_of_a_city_and_of_a_county(files: dict[str, Path]) -> None:
    city = policy_plan(config(files["urban"]), "lagrangian", years=3, samples=2, seed=0, budget_usd=200_000.0)
    assert city.agencies == (CITY,) and city.urban.all() and city.cluster.tolist() == ["urban"] * 3
    np.testing.assert_allclose(city.budget_usd, [200_000.0])
    np.testing.assert_allclose(city.deck_today, [0.0, 600 / 750, 150 / 750])  # lowest 5, 6 fair; 4 poor
    np.testing.assert_allclose(city.shares_today, [0.0, 2 / 3, 1 / 3])
    # Year 1 starts from the file's ratings in every sample: the poor bridge (substructure 4) gets action 2 at its
    # unit cost, USD 912/m² × 150 m² × Indiana's cost factor 1.332 = USD 182,203, the others nothing; no money is
    # left for year 2's work of the same kind and little is spent after it.
    unit = config(files["urban"]).unit_costs_usd_per_m2
    assert unit[2] == 912.0 and city.action[0].tolist() == [0, 0, 2] and (city.action_share[0] == 1.0).all()
    np.testing.assert_allclose(city.cost_usd[0], [0.0, 0.0, 912.0 * 150 * state_cost_factor(18)], rtol=1e-6)
    assert city.cost_usd[0, 2] == pytest.approx(182_203, abs=1)
    np.testing.assert_allclose(city.spend_usd[0, 0], city.cost_usd[0].sum(), rtol=1e-6)
    # the money carried over: what was spent by the end of a year is at most the budgets up to it
    assert (np.cumsum(city.spend_usd[:, 0]) <= 200_000.0 * np.arange(1, 4) + 0.01).all()
    # the cluster only splits the plan's agents: the county's same bridges get the same plan
    county = policy_plan(config(files["rural"]), "lagrangian", years=3, samples=2, seed=0, budget_usd=200_000.0)
    assert county.agencies == (COUNTY,) and not county.urban.any()
    np.testing.assert_array_equal(county.action, city.action)
    np.testing.assert_allclose(county.spend_usd, city.spend_usd)
    # no money: nothing is done
    idle = policy_plan(config(files["urban"]), "lagrangian", years=3, samples=2, seed=0, budget_usd=0.0)
    assert (idle.action == 0).all() and (idle.spend_usd == 0).all()


def test_rules_of_thumb_on_one_cluster(files: dict[str, Path]) -> None:
    assert rural_actions(np.zeros(2, np.int64), *(np.zeros((2, 0), np.float32),) * 4).shape == (2, 0)
    cfg, fleet = resolve_fleet(config(files["urban"], horizon_years=5))
    cfg = set_budget(cfg, usd=400_000.0)  # the sized USD 33,257 a year pays for no work in five years
    sim = FleetSimulator(cfg, 4, fleet)
    run = {n: evaluate_policy(HEURISTICS[n], cfg, 4, 7, n, sim) for n in ["condition_based", *SAME_WITHOUT_RURAL]}
    for name in SAME_WITHOUT_RURAL:  # with no rural bridge every rural rule is the condition-based rule
        np.testing.assert_array_equal(run[name].returns, run["condition_based"].returns)
    assert run["condition_based"].mean_annual_cost_usd > 0
    cfg, fleet = resolve_fleet(config(files["rural"], horizon_years=5))
    cfg = set_budget(cfg, usd=400_000.0)
    sim = FleetSimulator(cfg, 4, fleet)
    for name, same in SAME_WITHOUT_URBAN.items():  # with no urban bridge: the named rule's rural strategy
        a, b = (evaluate_policy(HEURISTICS[n], cfg, 4, 7, n, sim) for n in (name, same))
        np.testing.assert_array_equal(a.returns, b.returns)
    idle = evaluate_policy(HEURISTICS["do_nothing"], cfg, 4, 7, "do_nothing", sim)
    assert idle.mean_annual_cost_usd == 0.0
    # `evaluate`'s list shows each once, and says which it left out
    with pytest.warns(UserWarning, match="rural_2_repair_fair = worst_first"):
        results, _ = evaluate_with_bound(config(files["rural"], horizon_years=5), None, 4, 7, planner=False)
    assert [r.policy for r in results] == [n for n in HEURISTICS if n not in SAME_WITHOUT_URBAN]
    with pytest.warns(UserWarning, match="with no rural bridge"):
        results, _ = evaluate_with_bound(config(files["urban"], horizon_years=5), None, 4, 7, planner=False)
    assert [r.policy for r in results] == [n for n in HEURISTICS if not n.startswith("rural_")]


def test_the_plans_fleet_agents_refuse_one_cluster(files: dict[str, Path], tmp_path: Path, capsys) -> None:
    from bridgefleet.cli import main

    cfg, fleet = resolve_fleet(config(files["urban"], agencies="urban_rural"))
    assert (cfg.n_urban, cfg.n_rural, cfg.budgets_usd[1]) == (3, 0, 0.0)
    with pytest.raises(ValueError, match=r"^all 3 bridges are urban .*\(agent: fleet: .*train the default preset"):
        FleetSimulator(cfg, 1, fleet).observe()
    for cluster, fix in (("urban", "--max-urban N with N < 3"), ("rural", "loosen the --county/--owner filter")):
        assert main(["train", "--preset", "fleet", "--inventory", str(files[cluster]), "--out",
                     str(tmp_path / cluster), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"all 3 bridges are {cluster}" in err and "preset fleet" in err
        assert fix in err and not (tmp_path / cluster).exists()
