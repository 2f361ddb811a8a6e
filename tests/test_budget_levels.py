"""Training across budget levels and at a fleet's own reward scale: the simulator's per-fleet budget scale, the
per-bridge trainer's draw of a level per episode, `evaluate --budget-scale`, `reward_scale: auto`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bridgefleet.cli import main
from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.config.training import TrainConfig
from bridgefleet.sim.heuristics import HEURISTICS
from bridgefleet.sim.simulator import FleetSimulator
from bridgefleet.training.bridge_run import BridgeTrainer
from bridgefleet.training.loop import fleet_reward_scale

TINY = {"agent": "bridge", "bridge_hidden": [8], "batch_size": 64, "learning_starts": 100, "buffer_capacity": 5000,
        "num_envs": 3, "episodes": 6, "eval_every": 6, "eval_episodes": 2, "checkpoint_every": 6, "threads": 1,
        "device": "cpu", "amp": False, "fleet": {"n_urban": 3, "n_rural": 3, "horizon_years": 4}}


def test_a_fleets_budget_scale_sets_its_budgets_and_what_the_agent_sees():
    cfg = FleetConfig(n_urban=2, n_rural=2, horizon_years=3)
    sim = FleetSimulator(cfg, 3)
    sim.set_budget_scale(np.array([0.5, 1.0, 2.0]))
    sim.reset(None, [0, 1, 2])
    annual = np.array([cfg.urban_budget_usd, cfg.rural_budget_usd])
    np.testing.assert_allclose(sim.budget, [0.5 * annual, annual, 2 * annual])
    np.testing.assert_allclose(sim.budget_fraction(), 1.0)  # each fleet's budget over its own annual budget
    none = np.zeros((3, 4), dtype=np.int64)
    sim.step_requests(none)
    if cfg.carry_over_budget:  # nothing spent: one more year's budget, at each fleet's level
        np.testing.assert_allclose(sim.budget, [annual, 2 * annual, 4 * annual])
    with pytest.raises(ValueError, match="must be 3 finite numbers ≥ 0"):
        sim.set_budget_scale(np.array([1.0, -1.0, 1.0]))


def test_the_trainer_draws_a_level_per_fleet_and_episode_from_the_range(tmp_path):
    cfg = TrainConfig.from_dict({**TINY, "budget_scale_range": [0.25, 2.0]})
    tr = BridgeTrainer(cfg, tmp_path / "r", progress=False)
    levels = []
    for _ in range(3):
        tr.run_episode(0.5)
        levels.append(tr.sim.budget_scale.copy())
    levels = np.array(levels)
    assert levels.shape == (3, 3) and (levels >= 0.25).all() and (levels <= 2.0).all()
    assert len(np.unique(levels)) == 9  # a fresh level for every fleet and episode
    with pytest.raises(ConfigError, match="budget_scale_range = \\[2, 1\\]: must be two numbers"):
        TrainConfig.from_dict({**TINY, "budget_scale_range": [2, 1]})


def test_evaluate_at_a_budget_scale_spends_within_it(tmp_path, capsys):
    out = tmp_path / "e.json"
    assert main(["evaluate", "--policy", "lagrangian", "--episodes", "2", "--bound-iters", "4", "--quiet",
                 "--budget-scale", "0.5", "--json", str(out)]) == 0
    half = json.loads(out.read_text())
    assert main(["evaluate", "--policy", "lagrangian", "--episodes", "2", "--bound-iters", "4", "--quiet",
                 "--json", str(out)]) == 0
    full = json.loads(out.read_text())
    sized = sum(FleetConfig().budgets_usd)
    assert half["policies"]["lagrangian"]["annual_cost_usd"] <= 0.5 * sized * (1 + 1e-9)
    assert half["policies"]["lagrangian"]["mean"] < full["policies"]["lagrangian"]["mean"] < full["bound"]["mean"]
    assert half["policies"]["lagrangian"]["mean"] < half["bound"]["mean"]
    assert half["policies"]["do_nothing"]["mean"] == full["policies"]["do_nothing"]["mean"]


def test_the_fleets_own_reward_scale_is_one_over_the_spread_of_do_nothing_rewards(tmp_path):
    cfg = FleetConfig(n_urban=3, n_rural=3, horizon_years=4)
    sim = FleetSimulator(cfg, 2)
    sim.reset(None, [5, 6])
    rewards = [sim.step(*HEURISTICS["do_nothing"](sim, None)).bridge_reward for _ in range(4)]  # the other path
    assert fleet_reward_scale(cfg, None, 5, 2) == pytest.approx(1.0 / np.std(np.stack(rewards), dtype=np.float64))
    run_cfg = TrainConfig.from_dict({**TINY, "reward_scale": "auto"})
    tr = BridgeTrainer(run_cfg, tmp_path / "r", progress=False)
    assert tr.reward_scale == fleet_reward_scale(tr.fleet_cfg, None, 0, 3)
    with pytest.raises(ConfigError, match="reward_scale = 'big': must be a number > 0 or auto"):
        TrainConfig.from_dict({**TINY, "reward_scale": "big"})


def test_scenarios_of_a_run_put_its_agent_beside_the_planner_at_every_level(tmp_path, capsys):
    from bridgefleet.training.runner import train

    run, _ = train(TrainConfig.from_dict({**TINY, "budget_scale_range": [0.25, 2.0]}), tmp_path / "run",
                   progress=False)
    out = tmp_path / "scn"
    assert main(["scenarios", str(run), "--budgets", "0.5,1", "--episodes", "2", "--bisect", "0", "--years", "4",
                 "--certify-step", "0.1", "--out", str(out), "--quiet"]) == 0
    data = json.loads((out / "scenarios.json").read_text())
    assert [lv["scale"] for lv in data["levels"]] == [0.5, 1.0]
    for lv in data["levels"]:
        gap = lv["agent"]["below_bound"]["per_bridge"]
        assert gap == pytest.approx((lv["bound"] - lv["agent"]["return"]) / 6)  # 3 + 3 bridges
        assert len(lv["agent"]["deck_poor_by_year"]) == 4
    assert "The trained agent at each level" in (out / "scenarios.md").read_text()
    assert main(["scenarios", str(run), "--inventory", "dc-2019", "--out", str(out), "--quiet"]) == 2
    assert "runs on the run's own fleet; --inventory cannot change it" in capsys.readouterr().err
