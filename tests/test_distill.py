"""The per-bridge network fitted to the lagrangian planner (``teacher: lagrangian``): the benefit scaling by hand,
the teacher's margin, the planner's benefits as its own decisions read them, a short run that beats doing nothing
and serves evaluate, and the options such a run refuses."""

import csv
import json
import math

import numpy as np
import pytest
import torch

from bridgefleet.agents.bridge import (
    N_FEATURES,
    BridgePolicy,
    BridgeQNetwork,
    action_costs,
    agency_of,
    bridge_features,
    decide,
    scaled_benefit,
    unscaled_benefit,
)
from bridgefleet.cli import main
from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.config.presets import resolve_config
from bridgefleet.config.seeds import VALIDATION_SEED
from bridgefleet.config.training import TrainConfig
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.runs.folder import RunInterrupted
from bridgefleet.runs.load import load_policy
from bridgefleet.sim.simulator import FleetSimulator
from bridgefleet.training.distill_run import DistillTrainer, teacher_margin, teacher_paths, warmup_cosine
from bridgefleet.training.runner import resume, train

# 2 levels × 2 fleets of 12 bridges, 8 years, one DAgger round: a few seconds.
TINY = {"agent": "bridge", "teacher": "lagrangian", "bridge_hidden": [32, 32], "batch_size": 64, "num_envs": 2,
        "teacher_levels": [0.5, 1.0], "dagger_rounds": 1, "fit_epochs": 60, "refit_epochs": 20, "lr": 3e-3,
        "eval_episodes": 4, "threads": 1, "amp": False, "user_cost_feature": True, "rating_ramps": True,
        "input_scaling": True, "fleet": {"horizon_years": 8, "n_urban": 4, "n_rural": 8}}


def test_benefits_scale_to_asinh_per_cost_equivalent_usd_and_back():
    lam = 1e-5
    cost = np.array([[[0.0, 1e5, 2e5, 4e5, 1e6]]])
    ben = np.array([[[0.0, np.sinh(1.0), -2.0 * np.sinh(0.5), 0.0, -np.inf]]])  # λ·cost of action 1 is 1.0
    z = scaled_benefit(ben, cost, lam)
    np.testing.assert_allclose(z[0, 0, :4], [0.0, 1.0, -0.5, 0.0], atol=1e-6)
    assert np.isnan(z[0, 0, 4]) and z.dtype == np.float32
    back = unscaled_benefit(np.where(np.isnan(z), 0.0, z) + 7.0, cost, lam)  # a common offset is no benefit
    np.testing.assert_allclose(back[0, 0, :4], ben[0, 0, :4], rtol=1e-5, atol=1e-9)


def test_the_teachers_margin_is_the_least_funded_benefit_per_fleet_and_agency():
    nan = np.nan
    y = np.array([[[0, 2.0, 1.0, nan, nan], [0, 0.5, 3.0, nan, nan], [0, 0.4, -1, nan, nan], [0, nan, nan, nan, 0.9]],
                  [[0, -1, -2, nan, nan], [0, -3, -4, nan, nan], [0, nan, nan, nan, nan], [0, 0.7, 0.2, nan, nan]]],
                 dtype=np.float32)
    actions = np.array([[1, 2, 0, 4], [0, 0, 0, 2]])
    agency = np.array([0, 0, 1, 1])
    m = teacher_margin(y, actions, agency)
    # fleet 0: urban funds 2.0 and 3.0 → 2.0; rural funds 0.9 → 0.9. fleet 1: urban funds nothing → the largest
    # available, −1; rural funds 0.2 → 0.2
    np.testing.assert_allclose(m, [[2.0, 2.0, 0.9, 0.9], [-1.0, -1.0, 0.2, 0.2]])


def test_the_fits_learning_rate_warms_up_linearly_then_follows_a_cosine_to_zero():
    # 10 steps, 2 of warm-up: 1/2, 1, then 0.5 (1 + cos(π k / 8)) for k = 0 … 7 steps after it
    got = [warmup_cosine(k, 10, 2) for k in range(10)]
    want = [0.5, 1.0] + [0.5 * (1 + math.cos(math.pi * k / 8)) for k in range(8)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got[6] == pytest.approx(0.5) and got[9] == pytest.approx(0.5 * (1 - math.cos(math.pi / 8)))
    # no warm-up: the cosine from the first step (step 5 of 10 at half the rate)
    assert warmup_cosine(0, 10, 0) == 1.0 and warmup_cosine(5, 10, 0) == pytest.approx(0.5)
    with pytest.raises(ConfigError, match="fit_warmup"):
        TrainConfig(fit_warmup=1.0)


def test_the_planners_benefits_through_the_knapsack_are_its_decisions():
    sim = FleetSimulator(FleetConfig(horizon_years=6, n_urban=5, n_rural=10), 2)
    sim.reset(None, [3, 4])
    a, b = LagrangianPlanner(max_iter=10), LagrangianPlanner(max_iter=10)
    cost = action_costs(sim)
    for _ in range(6):
        ben = a.benefits(sim)
        assert ben.shape == (2, 15, 5) and (ben[..., 0] == 0).all()
        acts = b(sim)
        np.testing.assert_array_equal(decide(ben, cost, sim), acts)
        sim.step_requests(acts)


def test_a_short_run_fitted_to_the_planner_beats_doing_nothing_and_serves_evaluate(tmp_path):
    run = tmp_path / "run"
    _, summary = train(TrainConfig.from_dict(json.loads(json.dumps(TINY))), run, progress=False)
    assert summary["teacher"] == "lagrangian" and summary["episodes"] == 2 * 2 * 2 and summary["updates"] > 0
    state = torch.load(run / "final.pt", weights_only=True)
    assert state["best_eval_return"] == summary["best_eval_return"] >= summary["final_eval_return"]
    cfg, policy = load_policy(run)
    assert policy.distilled and policy.net.input_scaling
    # the inputs' scale set on the first round's rows is saved and read back: the rating's s.d. on 8 years of
    # 2 fleets, neither the 1 of an unset scale nor the floor
    assert 0.05 < float(policy.net.input_std[0]) < 0.5
    assert torch.equal(policy.net.input_std, state["bridge"]["online"]["input_std"])
    # on the fleets it was fitted on, the network's benefits per USD follow the teacher's
    sim = FleetSimulator(cfg.fleet, 2)
    sim.reset(None, [cfg.seed, cfg.seed + 1])
    sim.set_budget_scale(np.full(2, 0.5))
    teacher = LagrangianPlanner(max_iter=20, tol=0.01)
    cost = action_costs(sim)
    untrained = BridgePolicy(BridgeQNetwork((32, 32), False, N_FEATURES, True), distilled=True)
    mine, before, taught = [], [], []
    for _ in range(cfg.fleet.horizon_years):
        y = scaled_benefit(teacher.benefits(sim), cost, cfg.fleet.cost_lambda)
        ok = ~np.isnan(y[..., 1:])
        for out, pol in ((mine, policy), (before, untrained)):
            z = pol.q_values(bridge_features(sim, cost))
            out.append((z[..., 1:] - z[..., :1])[ok])
        taught.append(y[..., 1:][ok])
        sim.step_requests(teacher(sim))
    taught = np.concatenate(taught)
    r2 = [1 - ((np.concatenate(z) - taught) ** 2).mean() / taught.var() for z in (mine, before)]
    assert r2[0] > 0.8 and r2[1] < 0.2
    assert main(["evaluate", str(run), "--episodes", "6", "--no-bound", "--json", str(tmp_path / "e.json")]) == 0
    data = json.loads((tmp_path / "e.json").read_text())
    assert data["policies"]["trained"]["mean"] > data["policies"]["do_nothing"]["mean"]
    with pytest.raises(ValueError, match="not resumed"):
        resume(run, progress=False)


def test_options_a_run_with_a_teacher_never_reads_are_refused():
    with pytest.raises(ConfigError, match="n_step = 3: no effect in a run with teacher"):
        resolve_config("distill", overrides={"n_step": 3})
    # a flag is refused even at the value a teacher's run would carry unread (--episodes 2000, the default's)
    with pytest.raises(ConfigError, match=r"episodes = 2000: no effect in a run with teacher: lagrangian .*leave it "
                       r"out \(the sarsa preset learns episode by episode: --preset sarsa\)"):
        resolve_config("default", overrides={"episodes": 2000})
    with pytest.raises(ConfigError, match="fit_epochs = 3: no effect in a run with no teacher"):
        resolve_config("sarsa", overrides={"fit_epochs": 3})
    with pytest.raises(ConfigError, match="teacher"):
        resolve_config("fleet", overrides={"teacher": "lagrangian"})
    with pytest.raises(ConfigError, match="teacher_levels"):
        resolve_config("distill", overrides={"teacher_levels": [1.0, -0.5]})
    cfg = resolve_config("distill", overrides={"dagger_rounds": 2})
    assert cfg.training_fleets == 3 * 4 and cfg.to_dict()["teacher_levels"] == [0.25, 0.5, 1.0, 2.0]
    assert agency_of(FleetSimulator(cfg.fleet, 1)).sum() == cfg.fleet.n_rural
    # the teacher's fleets are checked against the validation fleets as a SARSA run's are
    with pytest.raises(ConfigError, match="one of the validation fleets"):
        resolve_config("distill", overrides={"seed": VALIDATION_SEED - 2})


def test_a_round_keeps_at_most_teacher_rows_kept_bridge_years_drawn_from_all(tmp_path):
    cfg = TrainConfig.from_dict({**json.loads(json.dumps(TINY)), "teacher_rows_kept": 100})
    trainer = DistillTrainer(cfg, tmp_path, progress=False)
    rows = trainer.collect(student=False)
    assert len(rows) == 100 and rows.x.shape == (100, N_FEATURES) and rows.y.shape == (100, 5)
    # drawn from every year of the round's 2 levels × 2 fleets × 12 bridges × 8 years, not its first 100
    years_left = np.unique(np.round(rows.x[:, 7] * 8))
    assert len(years_left) >= 6 and trainer.episodes_done == 4
    assert (rows.y[~rows.available] == 0).all() and rows.available[:, 0].all()


def test_an_inventory_is_labelled_on_as_many_paths_as_teacher_rows_needs():
    cfg = TrainConfig.from_dict({**json.loads(json.dumps(TINY)), "teacher_rows": 1000})
    fleet = FleetConfig(horizon_years=8, n_urban=4, n_rural=8)
    # a fixed fleet: 2 levels × 12 bridges × 8 years = 192 bridge-years a path, so ⌈1000 / 192⌉ = 6 paths
    assert teacher_paths(cfg, fleet, fixed=True) == 6
    # a fleet model's fleets each cost a price search: num_envs of them
    assert teacher_paths(cfg, fleet, fixed=False) == 2
    assert teacher_paths(TrainConfig.from_dict({**cfg.to_dict(), "teacher_rows": 10}), fleet, fixed=True) == 2


def test_ctrl_c_leaves_a_checkpoint_evaluate_reads_and_says_train_again(tmp_path, monkeypatch):
    real = DistillTrainer.fit

    def stop_at_the_refit(self, rows, epochs, writer):
        if self.rounds_done > 1:  # the DAgger round's rows are in: Ctrl-C
            raise KeyboardInterrupt
        return real(self, rows, epochs, writer)

    monkeypatch.setattr(DistillTrainer, "fit", stop_at_the_refit)
    cfg = TrainConfig.from_dict({**json.loads(json.dumps(TINY)), "fit_epochs": 2})
    with pytest.raises(RunInterrupted, match=r"interrupted at episode 8; .*a run fitted to a teacher is not resumed"):
        train(cfg, tmp_path / "run", progress=False)
    assert not (tmp_path / "run" / "final.pt").exists()
    _, policy = load_policy(tmp_path / "run")  # the checkpoint, with a note
    assert policy.distilled


def test_a_finished_run_fitted_to_a_teacher_is_not_offered_a_resume(tmp_path):
    run = tmp_path / "run"
    cfg = TrainConfig.from_dict({**json.loads(json.dumps(TINY)), "fit_epochs": 2, "refit_epochs": 1})
    _, summary = train(cfg, run, progress=False)
    # the first evaluation at or above the target return (the best heuristic's) names its episode: 4 after the first
    # fit (2 levels × 2 fleets), 8 after the DAgger round
    evals = [(int(r["episode"]), float(r["eval_return"])) for r in csv.DictReader((run / "metrics.csv").open())
             if r["kind"] == "eval"]
    reached = [ep for ep, ret in evals if ret >= summary["target_return"]]
    assert [ep for ep, _ in evals] == [4, 8] and summary["episodes_to_target"] == (reached[0] if reached else None)
    with pytest.raises(FileExistsError, match="already holds a training run fitted to a teacher, which is not "
                       "resumed: choose another --out"):
        train(cfg, run, progress=False)


def test_ctrl_c_before_the_first_fit_keeps_nothing_and_the_same_out_starts_over(tmp_path, monkeypatch):
    real = DistillTrainer.fit

    def stop(self, rows, epochs, writer):
        raise KeyboardInterrupt

    monkeypatch.setattr(DistillTrainer, "fit", stop)
    cfg = TrainConfig.from_dict({**json.loads(json.dumps(TINY)), "fit_epochs": 2, "refit_epochs": 1})
    with pytest.raises(RunInterrupted, match=r"interrupted at episode 4, before the network's first fit: nothing to "
                       r"keep; train it again \(--out .* starts it over\)"):
        train(cfg, tmp_path / "run", progress=False)
    assert not list((tmp_path / "run" / "checkpoints").iterdir()) and not (tmp_path / "run" / "final.pt").exists()
    monkeypatch.setattr(DistillTrainer, "fit", real)
    _, summary = train(cfg, tmp_path / "run", progress=False)  # the same --out: started over, not refused
    assert summary["episodes"] == 8 and (tmp_path / "run" / "final.pt").is_file()


def test_a_dagger_round_revisits_the_same_fleets_on_new_paths_without_a_new_price_search(tmp_path, monkeypatch):
    cfg = TrainConfig.from_dict({**json.loads(json.dumps(TINY)), "teacher_levels": [1.0, 2.0]})
    trainer = DistillTrainer(cfg, tmp_path, progress=False)
    searches = []
    prepare = LagrangianPlanner.prepare
    monkeypatch.setattr(LagrangianPlanner, "prepare", lambda self, sim: searches.append(1) or prepare(self, sim))
    first = trainer.collect(student=False)
    profile = trainer.sim.profile.deck_area.copy()
    noise = trainer.sim.noise.copy()
    assert len(searches) == 2  # one price search a level
    again = trainer.collect(student=True)
    assert len(searches) == 2  # the prices of round 1, kept
    np.testing.assert_array_equal(trainer.sim.profile.deck_area, profile)  # the same fleets
    assert not np.array_equal(trainer.sim.noise, noise)  # on other sample paths
    with pytest.raises(ValueError, match="redraw_noise needs 2 seeds and every fleet at year 0"):
        trainer.sim.redraw_noise([1])  # past year 0 and one seed short
    # year 0's rows (every bridge in its year-0 state) are the same in both rounds; later years differ
    np.testing.assert_array_equal(first.x[:24], again.x[:24])
    assert not np.array_equal(first.x, again.x)
    # the level after the first reused its MDPs (shared deterioration weights), at its own budget
    low, high = (trainer.teachers[v].mdps for v in (1.0, 2.0))
    assert high.weights is low.weights and high.cost is low.cost
