"""The per-bridge agent: features, n-step SARSA transitions, budget-feasible decisions, a short run that beats
doing nothing, evaluate/plan on its run."""

import csv
import json
import warnings

import numpy as np
import pytest
import torch

from bridgefleet.agents.bridge import (
    BASE_FEATURES,
    COMPONENT_FEATURES,
    LEVEL_FEATURES,
    N_FEATURES,
    BridgeQNetwork,
    action_costs,
    bridge_features,
    decide,
    n_features,
)
from bridgefleet.cli import main
from bridgefleet.config import ConfigError, FleetConfig
from bridgefleet.config.presets import resolve_config
from bridgefleet.config.training import TrainConfig
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.runs.checkpoints import checkpoints, load_checkpoint
from bridgefleet.runs.load import load_policy, warn_untrained_budget
from bridgefleet.sim.simulator import FleetSimulator
from bridgefleet.training.bridge_run import BridgeTrainer, spec
from bridgefleet.training.runner import resume, train

# 96 episodes of 10 years on 8 fleets: about 3 s on 2 cores, and the agent already beats doing nothing.
TINY = {"agent": "bridge", "bridge_hidden": [32, 32], "batch_size": 256, "learning_starts": 500,
        "user_cost_feature": True, "buffer_capacity": 20_000, "num_envs": 8, "episodes": 96, "eval_every": 48,
        "eval_episodes": 4,
        "checkpoint_every": 48, "n_step": 3, "reward_scale": 1.0, "lr": 3e-3, "target_sync_every": 50,
        "threads": 1, "fleet": {"horizon_years": 10}}


def test_features_and_costs_have_the_documented_shapes_and_values():
    sim = FleetSimulator(FleetConfig(), 3)
    sim.reset(None, [0, 1, 2])
    cost = action_costs(sim)
    f = bridge_features(sim, cost)
    assert f.shape == (3, sim.n_bridges, N_FEATURES) and f.dtype == np.float32
    np.testing.assert_allclose(f[..., 0], sim.state.condition / 9.0, rtol=1e-6)
    assert (f[:, : sim.n_urban, 6] == 0).all() and (f[:, sim.n_urban :, 6] == 1).all()
    np.testing.assert_allclose(f[..., 7], 1.0)  # all 30 years left at the start
    np.testing.assert_allclose(cost[..., 0], 0.0)
    np.testing.assert_allclose(cost[0, 0, 2], sim.unit_costs[2] * sim.profile.deck_area[0, 0]
                               * sim.profile.cost_factor[0, 0])
    # the user cost of a poor year over the agency's annual budget per bridge, log(1 + x): by hand for bridge 0
    # (urban: n_urban bridges share its budget) and the last (rural)
    x = sim.user_cost[0, 0] / (sim.fleet_annual_budget[0, 0] / sim.n_urban)
    y = sim.user_cost[0, -1] / (sim.fleet_annual_budget[0, 1] / (sim.n_bridges - sim.n_urban))
    assert x > 0 and abs(f[0, 0, 13] - np.log1p(x)) < 1e-5 and abs(f[0, -1, 13] - np.log1p(y)) < 1e-5


def test_the_budget_level_input_is_the_agency_replacement_cost_in_annual_budgets():
    sim = FleetSimulator(FleetConfig(), 2)
    sim.reset(None, [0, 1])
    cost = action_costs(sim)
    f = bridge_features(sim, cost, LEVEL_FEATURES)
    assert f.shape == (2, sim.n_bridges, LEVEL_FEATURES)
    np.testing.assert_array_equal(f[..., :N_FEATURES], bridge_features(sim, cost))  # the same inputs before it
    u = sim.n_urban  # by hand: log(USD to replace every bridge of the agency / its annual budget) / 5
    urban = np.log(cost[1, :u, 4].sum() / sim.fleet_annual_budget[1, 0]) / 5
    rural = np.log(cost[1, u:, 4].sum() / sim.fleet_annual_budget[1, 1]) / 5
    assert abs(f[1, 0, 14] - urban) < 1e-6 and abs(f[1, -1, 14] - rural) < 1e-6
    assert (f[1, :u, 14] == f[1, 0, 14]).all() and (f[1, u:, 14] == f[1, -1, 14]).all()  # one value an agency
    sim.set_budget_scale(np.array([0.5, 2.0]))  # half the budget: log 2 / 5 higher; twice: log 2 / 5 lower
    g = bridge_features(sim, cost, LEVEL_FEATURES)
    step = np.log(2) / 5 * np.array([[1.0], [-1.0]]).repeat(sim.n_bridges, 1)
    np.testing.assert_allclose(g[..., 14] - f[..., 14], step, atol=1e-6)
    assert n_features(resolve_config("default", None, {"component_features": False})) == LEVEL_FEATURES
    assert n_features(TrainConfig(budget_level_feature=True)) == LEVEL_FEATURES  # the user cost comes with it
    with pytest.raises(ConfigError, match="budget_level_feature = 1: must be true or false"):
        TrainConfig(budget_level_feature=1)


def test_the_component_inputs_are_the_three_ratings_the_protection_and_the_kind():
    sim = FleetSimulator(FleetConfig.named("components-2026"), 2)
    sim.reset(None, [0, 1])
    sim.components[0, 0] = (7, 4, 6)  # by hand: deck 7, superstructure 4, substructure 6, the deck protected
    sim.protected[0, 0] = True
    sim.protected[0, 1] = False
    cost = action_costs(sim)
    f = bridge_features(sim, cost, COMPONENT_FEATURES)
    assert f.shape == (2, sim.n_bridges, LEVEL_FEATURES + 5)
    np.testing.assert_array_equal(f[..., :LEVEL_FEATURES], bridge_features(sim, cost, LEVEL_FEATURES))
    np.testing.assert_allclose(f[0, 0, 15:], [7 / 9, 4 / 9, 6 / 9, 1.0, 0.0], rtol=1e-6)
    assert f[0, 1, 18] == 0.0
    np.testing.assert_allclose(f[..., 19], np.broadcast_to(sim.kind, (2, sim.n_bridges)))
    cont = FleetSimulator(FleetConfig(), 1)  # no components: the condition three times
    cont.reset(None, [0])
    g = bridge_features(cont, action_costs(cont), COMPONENT_FEATURES)
    np.testing.assert_allclose(g[..., 15:18], np.repeat(cont.state.condition[..., None] / 9, 3, -1), rtol=1e-6)
    assert (g[..., 18:] == 0).all()
    assert n_features(TrainConfig(component_features=True)) == COMPONENT_FEATURES
    assert n_features(resolve_config("default", None, {})) == COMPONENT_FEATURES  # on in the default preset
    with pytest.raises(ConfigError, match="component_features = 1: must be true or false"):
        TrainConfig(component_features=1)


def test_the_rating_ramps_are_a_soft_thermometer_of_half_a_rating_point():
    net = BridgeQNetwork((8,), rating_ramps=True)
    x = torch.zeros(4, N_FEATURES)
    x[:, 0] = torch.tensor([5.3, 9.0, 1.2, 2.25]) / 9.0  # the rating input, rating / 9
    r = net.ramps(x)
    # ramps start at 2.0, 2.5, …, 8.5: (rating − start) / 0.5 within [0, 1]
    torch.testing.assert_close(r[0], torch.tensor([1.0] * 6 + [0.6] + [0.0] * 7), atol=1e-5, rtol=0)
    torch.testing.assert_close(r[1], torch.ones(14))  # rating 9: every ramp full
    torch.testing.assert_close(r[2], torch.zeros(14))  # below 2.0: none
    torch.testing.assert_close(r[3], torch.tensor([0.5] + [0.0] * 13), atol=1e-5, rtol=0)
    assert net.torso[0].in_features == N_FEATURES + 14 and BridgeQNetwork((8,)).torso[0].in_features == N_FEATURES
    # the ramps are computed, not stored: the weights' names are those of a network without them
    assert net.state_dict().keys() == BridgeQNetwork((8,)).state_dict().keys()


def test_input_scaling_reads_the_costs_as_logs_and_standardises_on_the_rows_it_is_given():
    net = BridgeQNetwork((8,), n_features=N_FEATURES, rating_ramps=True, input_scaling=True)
    assert net.torso[0].in_features == N_FEATURES + 14 + 4
    x = torch.zeros(3, N_FEATURES)
    x[:, 0] = torch.tensor([4.0, 6.0, 8.0]) / 9.0
    x[:, 9] = torch.tensor([0.0, 0.009, 0.099])  # log(x + 0.001): log 0.001, log 0.01, log 0.1
    x[:, 13] = 2.0  # constant on the rows
    z = net.inputs(x)
    torch.testing.assert_close(z[:, N_FEATURES + 14], torch.log(torch.tensor([1e-3, 1e-2, 1e-1])))
    # before the scale is set the network reads its inputs as they are; set_input_scale makes each input's mean 0
    # and s.d. 1 on those rows, and an input constant there is centred, its s.d. taken as 0.05
    net.set_input_scale(x)
    torch.testing.assert_close(net.input_mean[9], torch.tensor(0.036), rtol=0, atol=1e-6)
    torch.testing.assert_close(net.input_std[N_FEATURES + 14], torch.tensor(float(np.log(10.0))), rtol=1e-5,
                               atol=0)  # logs −6.91, −4.61, −2.30, ln 10 apart: s.d. ln 10
    assert float(net.input_mean[13]) == 2.0 and float(net.input_std[13]) == pytest.approx(0.05)
    scaled = (net.inputs(x) - net.input_mean) / net.input_std
    torch.testing.assert_close(scaled[:, 0], torch.tensor([-1.0, 0.0, 1.0]))
    # saved with the weights; a network without it keeps the names it had
    assert {"input_mean", "input_std"} <= net.state_dict().keys()
    assert "input_mean" not in BridgeQNetwork((8,), rating_ramps=True).state_dict()
    with pytest.raises(ValueError, match="without input_scaling"):
        BridgeQNetwork((8,)).set_input_scale(x)


def test_a_run_with_rating_ramps_reloads_the_same_policy(tmp_path):
    cfg = TrainConfig.from_dict({**TINY, "rating_ramps": True, "episodes": 48})
    run, _ = train(cfg, tmp_path / "r", progress=False)
    _, policy = load_policy(run, "cpu")
    assert policy.net.rating_ramps and policy.net.torso[0].in_features == N_FEATURES + 14
    sim = FleetSimulator(cfg.fleet, 2)
    sim.reset(None, [5, 6])
    feats = bridge_features(sim, action_costs(sim))
    state = torch.load(run / "final.pt", weights_only=False)["bridge"]["online"]
    moved = feats.copy()
    moved[..., 0] += 0.25 / 9.0  # a quarter rating point: the ramps (and so Q) move
    assert not np.allclose(policy.q_values(feats), policy.q_values(moved))
    assert all(torch.equal(v, state[k]) for k, v in policy.net.state_dict().items())


def test_a_network_without_the_user_cost_input_reads_the_first_thirteen_features(tmp_path):
    cfg = TrainConfig.from_dict({**TINY, "user_cost_feature": False})
    tr = BridgeTrainer(cfg, tmp_path / "r", progress=False)
    assert tr.learners["bridge"].online.torso[0].in_features == BASE_FEATURES == N_FEATURES - 1
    sim = FleetSimulator(cfg.fleet, 2)
    sim.reset(None, [3, 4])
    feats = bridge_features(sim, action_costs(sim))
    policy = tr.policy()
    changed = feats.copy()
    changed[..., BASE_FEATURES:] += 5.0  # what this network does not read cannot move its Q-values
    np.testing.assert_array_equal(policy.q_values(feats), policy.q_values(changed))
    on = BridgeTrainer(TrainConfig.from_dict(dict(TINY)), tmp_path / "s", progress=False)
    assert on.learners["bridge"].online.torso[0].in_features == N_FEATURES
    assert on.policy().q_values(feats).shape == (2, sim.n_bridges, 5)


def test_decisions_fit_each_agency_budget_and_exploration_forces_actions():
    sim = FleetSimulator(FleetConfig(), 2)
    sim.reset(None, [5, 6])
    cost = action_costs(sim)
    q = np.tile(np.array([0.0, 5.0, 6.0, 7.0, 8.0]), (2, sim.n_bridges, 1))
    a = decide(q, cost, sim)
    spend = np.take_along_axis(cost, a[..., None], -1)[..., 0]
    assert (spend[:, : sim.n_urban].sum(1) <= sim.budget[:, 0] + 0.01).all()
    assert (spend[:, sim.n_urban :].sum(1) <= sim.budget[:, 1] + 0.01).all()
    res = sim.step_requests(a)
    assert not res.deferred.any()  # every decision was funded
    explore = np.zeros(a.shape, dtype=bool)
    explore[:, 0] = True
    forced = decide(q * 0, cost, sim, explore, np.ones(a.shape, dtype=np.int64))
    assert (forced[:, 0] == 1).all() and (forced[:, 1:] == 0).all()


def test_n_step_sarsa_transitions_by_hand(tmp_path):
    cfg = TrainConfig.from_dict({**TINY, "n_step": 2, "fleet": {"horizon_years": 3}})
    tr = BridgeTrainer(cfg, tmp_path / "r", progress=False)
    t_n, e, b = 3, 1, 1
    feats = np.arange(t_n, dtype=np.float32)[:, None, None, None] * np.ones((t_n, e, b, N_FEATURES), np.float32)
    actions = np.array([1, 2, 3]).reshape(t_n, e, b)
    rewards = np.array([1.0, 10.0, 100.0]).reshape(t_n, e, b)
    tr._add_episode(feats, actions, rewards, actions)
    d = tr.replays["bridge"].gather(np.arange(3))
    g = cfg.fleet.discount
    np.testing.assert_allclose(d["reward"], [1 + g * 10, 10 + g * 100, 100], rtol=1e-6)
    np.testing.assert_allclose(d["discount"], [g**2, g**2, g], rtol=1e-6)
    assert list(d["done"]) == [0, 1, 1]
    # the bootstrap state and action are read through next_index (year 2 for all three), not stored twice
    assert list(d["next_index"]) == [2, 2, 2]
    batch = tr.sample("bridge", 64)
    np.testing.assert_allclose(batch["next_obs"][:, 0], np.minimum(batch["obs"][:, 0] + 2, 2))
    assert (batch["next_action"] == 3).all()
    assert sum(np.dtype(dt).itemsize * int(np.prod(s)) for s, dt in spec(13).values()) == 66
    assert sum(np.dtype(dt).itemsize * int(np.prod(s)) for s, dt in spec(14).values()) == 70


def test_greedy_bootstrap_mixes_the_funded_and_the_greedy_action(tmp_path):
    """Each sampled transition bootstraps on the greedy action with probability greedy_bootstrap, else on the
    funded one; the greedy action is stored (one byte more) only when the share is above 0."""
    feats = np.arange(3, dtype=np.float32)[:, None, None, None] * np.ones((3, 1, 1, N_FEATURES), np.float32)
    funded, greedy = np.array([1, 2, 3]).reshape(3, 1, 1), np.array([4, 0, 4]).reshape(3, 1, 1)
    drawn = {}
    for share in (0.0, 0.5, 1.0):
        cfg = TrainConfig.from_dict({**TINY, "n_step": 2, "greedy_bootstrap": share, "fleet": {"horizon_years": 3}})
        tr = BridgeTrainer(cfg, tmp_path / f"r{share}", progress=False)
        tr._add_episode(feats, funded, np.zeros((3, 1, 1)), greedy)
        assert ("greedy" in tr.replays["bridge"].data) == (share > 0)
        drawn[share] = tr.sample("bridge", 4000)["next_action"]  # every transition bootstraps on year 2
    assert (drawn[0.0] == 3).all() and (drawn[1.0] == 4).all()
    assert set(np.unique(drawn[0.5])) == {3, 4} and abs((drawn[0.5] == 4).mean() - 0.5) < 0.03
    assert sum(np.dtype(dt).itemsize * int(np.prod(s)) for s, dt in spec(14, greedy=True).values()) == 71


def test_collection_stores_the_knapsacks_action_without_exploration(tmp_path):
    cfg = TrainConfig.from_dict({**TINY, "greedy_bootstrap": 0.5, "learning_starts": 10**6})
    tr = BridgeTrainer(cfg, tmp_path / "r", progress=False)
    data, n = tr.replays["bridge"].data, 8 * cfg.fleet.horizon_years * tr.sim.n_bridges
    tr.run_episode(0.0)  # no exploration: the greedy action is the funded one
    assert (data["greedy"][:n] == data["action"][:n]).all()
    tr.run_episode(1.0)  # every bridge explores: random treatments are funded, the greedy ones stay in budget
    explored, kept = data["action"][n : 2 * n], data["greedy"][n : 2 * n]
    assert (explored != kept).mean() > 0.3 and (kept == 0).mean() > (explored == 0).mean()


def test_next_index_follows_the_ring_across_a_wrap(tmp_path):
    cfg = TrainConfig.from_dict({**TINY, "n_step": 1, "buffer_capacity": 4, "batch_size": 2,
                                 "fleet": {"horizon_years": 3}})
    tr = BridgeTrainer(cfg, tmp_path / "r", progress=False)
    feats = np.arange(3, dtype=np.float32)[:, None, None, None] * np.ones((3, 1, 1, N_FEATURES), np.float32)
    for offset in (0, 10):  # two episodes of 3 years in a ring of 4: the second wraps around
        acts = np.array([1, 2, 3]).reshape(3, 1, 1)
        tr._add_episode(feats + offset, acts, np.zeros((3, 1, 1)), acts)
    data = tr.replays["bridge"].data
    # slots 3, 0, 1 hold the second episode's years 0, 1, 2: each bootstraps from the next year's slot
    assert data["obs"][[3, 0, 1], 0].tolist() == [10, 11, 12]
    assert data["next_index"][[3, 0, 1]].tolist() == [0, 1, 1]
    # an episode larger than the replay keeps its last 4 years, each pointing at a kept slot
    years = np.arange(5, dtype=np.float32)[:, None, None, None] * np.ones((5, 1, 1, N_FEATURES), np.float32)
    tr._add_episode(years, np.arange(5).reshape(5, 1, 1), np.zeros((5, 1, 1)), np.arange(5).reshape(5, 1, 1))
    assert sorted(data["obs"][:, 0].tolist()) == [1, 2, 3, 4]
    for slot in range(4):
        year = data["obs"][slot, 0]
        assert data["obs"][data["next_index"][slot], 0] == min(year + 1, 4)


def test_an_episode_larger_than_the_replay_keeps_whole_trajectories_of_random_bridges(tmp_path):
    """2 fleets × 3 bridges × 4 years into a replay of 12 (then 6; 16 holding two episodes): 3 (then 1; 2) of the 6
    bridges are kept with all 4 years, each year's n-step return and bootstrap slot those of the same bridge; a
    replay of 24 keeps all 6."""
    t_n, e, b = 4, 2, 3
    year, env, bridge = np.meshgrid(np.arange(t_n), np.arange(e), np.arange(b), indexing="ij")
    feats = np.zeros((t_n, e, b, N_FEATURES), np.float32)
    feats[..., 0], feats[..., 1], feats[..., 2] = year, env, bridge
    rewards = (10.0 ** year) * (1 + env * b + bridge)  # bridge k's reward in year t: 10^t (k + 1)
    g = FleetConfig(horizon_years=t_n).discount
    for capacity, episodes, kept in ((12, 1, 3), (6, 1, 1), (16, 2, 2), (24, 1, 6)):
        cfg = TrainConfig.from_dict({**TINY, "n_step": 2, "buffer_capacity": capacity, "batch_size": 2,
                                     "replay_episodes": episodes, "fleet": {"horizon_years": t_n}})
        tr = BridgeTrainer(cfg, tmp_path / f"r{capacity}-{episodes}", progress=False)
        tr._add_episode(feats, year % 5, rewards, None)
        replay = tr.replays["bridge"]
        assert len(replay) == kept * t_n
        d = replay.gather(np.arange(len(replay)))
        ids = {(int(f[1]), int(f[2])) for f in d["obs"]}
        assert len(ids) == kept
        for slot, f in enumerate(d["obs"]):
            t, k = int(f[0]), int(f[1]) * b + int(f[2])
            assert sum((d["obs"][:, 1:3] == f[1:3]).all(1)) == t_n  # every year of a kept bridge
            nxt = d["obs"][d["next_index"][slot]]
            assert (nxt[1:3] == f[1:3]).all() and nxt[0] == min(t + 2, t_n - 1)
            want = sum(g**j * 10.0 ** (t + j) * (k + 1) for j in range(min(2, t_n - t)))
            assert d["reward"][slot] == pytest.approx(want, rel=1e-6)
            assert d["action"][slot] == t


def test_updates_a_year_sample_each_stored_transition_min_samples_per_transition_times(tmp_path):
    """8 fleets × 100 bridges × 10 years, batch 256, 1 update a year by updates_per_step: a replay of 20,000 stores
    all 800 bridge-years of a year, one of 2,000 the 200 bridges whose trajectories fit (8,000 a year > 2,000)."""
    assert FleetConfig().n_urban + FleetConfig().n_rural == 100
    want = {(0, 20_000): 1.0, (1.0, 20_000): 800 / 256, (1.0, 2_000): 1.0, (2.0, 2_000): 2 * 200 / 256}
    for (rho, capacity), updates in want.items():
        cfg = TrainConfig.from_dict({**TINY, "min_samples_per_transition": rho, "buffer_capacity": capacity,
                                     "learning_starts": 256})
        tr = BridgeTrainer(cfg, tmp_path / f"r{rho}-{capacity}", progress=False)
        assert tr.updates_per_step == pytest.approx(updates)
    tr.run_episode(0.0)  # the first episode fills the replay (at its end), with credit for ≤ 1.5625 updates kept
    tr.run_episode(0.0)  # 10 years of 1.5625 updates each (1 each would give 10 or 11)
    assert 15 <= tr.update_step <= 17
    # the default preset, ρ = 2 over updates_per_step 1, an episode in a quarter of the replay (replay_episodes 4:
    # 400,000 / (4 × 30) = 3,333 bridges): 2 × 16 × 100 bridge-years a year / 2,048 = 1.5625 updates a year on the
    # default fleet, 2 × 3,333 / 2,048 on dc-2019 (16 × 244 bridges, more than fit) and Indiana alike
    for fleet, updates in (({}, 2 * 16 * 100 / 2048), ({"inventory": "dc-2019"}, 2 * 3333 / 2048)):
        cfg = resolve_config("sarsa", None, {**fleet, "threads": 1})
        trainer = BridgeTrainer(cfg, tmp_path / f"p{len(fleet)}", progress=False)
        assert trainer.updates_per_step == pytest.approx(updates)
    with pytest.raises(ValueError, match=r"min_samples_per_transition = -1: must be in \[0, 1,000\]"):
        TrainConfig.from_dict({**TINY, "min_samples_per_transition": -1})
    for bad in (0, 2_001):  # TINY: a replay of 20,000 and episodes of 10 years hold at most 2,000 episodes
        with pytest.raises(ValueError, match=rf"replay_episodes = {bad}: must be >= 1 and at most buffer_capacity / "
                                             r"horizon_years \(2,000\)"):
            TrainConfig.from_dict({**TINY, "replay_episodes": bad})
    assert TrainConfig.from_dict({**TINY, "replay_episodes": 2_000}).replay_episodes == 2_000


def test_short_bridge_run_learns_resumes_and_serves_evaluate_and_plan(tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"
    _, summary = train(TrainConfig.from_dict(dict(TINY)), run, progress=False)
    assert summary["agent"] == "bridge" and summary["episodes"] == 96 and summary["updates"] > 0
    state = torch.load(run / "final.pt", weights_only=True)
    assert state["best_eval_return"] == summary["best_eval_return"]
    _, summary2 = resume(run, progress=False, episodes=104)
    assert summary2["episodes"] == 104
    cfg, policy = load_policy(run)
    sim = FleetSimulator(cfg.fleet, 2)
    sim.reset(None, [1, 2])
    req = policy(sim, None)
    assert req.shape == (2, sim.n_bridges) and not sim.step_requests(req).deferred.any()
    assert main(["evaluate", str(run), "--episodes", "10", "--no-bound", "--json", str(tmp_path / "e.json")]) == 0
    data = json.loads((tmp_path / "e.json").read_text())
    assert data["policies"]["trained"]["mean"] > data["policies"]["do_nothing"]["mean"]
    assert main(["plan", str(run), "--out", str(tmp_path / "plan.csv"), "--years", "3", "--samples", "2"]) == 0
    assert (tmp_path / "plan.csv").read_text().count("\n") == 1 + 3 * sim.n_bridges
    # at another budget: the plan's budget is the scaled one, and a run that learned at the sized budget alone says
    # its decisions there are extrapolated
    with pytest.warns(UserWarning, match=r"the budget is 0.5 × the sized budget; .* learned at the sized budget alone"):
        assert main(["plan", str(run), "--out", str(tmp_path / "half.csv"), "--years", "3", "--samples", "2",
                     "--budget-scale", "0.5"]) == 0
    with pytest.warns(UserWarning, match=r"the budget is 2 × the sized budget"):
        assert main(["evaluate", str(run), "--episodes", "2", "--no-bound", "--budget-scale", "2"]) == 0
    # scenarios warns for its lowest and highest level, given as USD too (its levels' work stubbed out here)
    from bridgefleet.evaluation import scenario_tables, scenarios

    monkeypatch.setattr(scenarios, "run_scenarios", lambda *a, **k: None)
    monkeypatch.setattr(scenario_tables, "write_scenarios", lambda *a, **k: "")
    sized = sum(resolve_fleet(cfg.fleet)[0].budgets_usd)
    with pytest.warns(UserWarning) as seen:
        assert main(["scenarios", str(run), "--budgets-usd", f"{sized},{3 * sized}", "--out",
                     str(tmp_path / "sc")]) == 0
    assert [str(w.message).split(";")[0] for w in seen] == ["the budget is 3 × the sized budget"]
    half = list(csv.DictReader((tmp_path / "half_summary.csv").open(encoding="utf-8")))
    urban, rural = cfg.fleet.budgets_usd
    assert float(half[0]["urban_budget_usd"]) + float(half[0]["rural_budget_usd"]) == pytest.approx(
        (urban + rural) / 2, abs=1.0)


def test_polyak_target_is_the_acting_network_and_moves_by_tau(tmp_path):
    from bridgefleet.agents.bridge import build_learner

    cfg = TrainConfig.from_dict({**TINY, "polyak_tau": 0.25})
    learner = build_learner(cfg, False)
    with torch.no_grad():
        for p in learner.target.parameters():
            p.zero_()
    rng = np.random.default_rng(0)
    n = 64
    batch = {"obs": rng.random((n, N_FEATURES), dtype=np.float32), "action": rng.integers(0, 5, n).astype(np.int8),
             "reward": rng.random(n, dtype=np.float32), "next_obs": rng.random((n, N_FEATURES), dtype=np.float32),
             "next_action": rng.integers(0, 5, n).astype(np.int8), "done": np.zeros(n, dtype=np.uint8),
             "discount": np.full(n, 0.9, dtype=np.float32)}
    learner.update(batch)
    for t_p, o_p in zip(learner.target.parameters(), learner.online.parameters(), strict=True):
        torch.testing.assert_close(t_p, 0.25 * o_p)  # θ⁻ = 0.75 × 0 + 0.25 × θ after the step
    assert learner.acting is learner.target
    hard = build_learner(TrainConfig.from_dict(dict(TINY)), False)  # no τ: hard syncs
    assert hard.acting is hard.online


def test_per_on_the_bridge_agent_weights_the_loss_and_beta_reaches_one(tmp_path):
    from bridgefleet.replay import PrioritizedReplayBuffer

    cfg = TrainConfig.from_dict({**TINY, "per": True, "loss": "mse"})
    trainer = BridgeTrainer(cfg, tmp_path / "run", progress=False)
    replay = trainer.replays["bridge"]
    assert isinstance(replay, PrioritizedReplayBuffer)
    summary = trainer.run()
    assert summary["updates"] > 0 and summary["per_beta_end"] == pytest.approx(1.0)
    # priorities moved off the initial maximum: the TD errors of sampled transitions were written back
    leaves = replay.tree.leaves[: len(replay)]
    assert len(np.unique(leaves)) > 10
    # the learner's loss is the importance-weighted mean of the per-sample losses (hand check on one batch)
    learner = trainer.learners["bridge"]
    batch = trainer.sample("bridge", 8)
    batch["weights"] = np.array([1, 0, 0, 0, 0, 0, 0, 0], dtype=np.float32)
    out = learner.update(batch)
    assert out["loss"] == pytest.approx(float(out["td_error"][0]) ** 2 / 8, rel=1e-4)


def test_weight_average_decides_evaluations_and_the_kept_model(tmp_path):
    """θ̄ ← d θ̄ + (1 − d) θ after each vector episode with updates; evaluations and final.pt use θ̄, the acting
    network keeps its own weights, and a checkpoint carries θ̄ on."""
    cfg = TrainConfig.from_dict({**TINY, "weight_average": 0.75})
    trainer = BridgeTrainer(cfg, tmp_path / "run", progress=False)
    net = trainer.learners["bridge"].acting
    trainer.update_average()
    assert trainer.average is None  # no update yet: nothing to average
    trainer.learners["bridge"]._step = 1
    torch.manual_seed(0)
    first = {k: torch.randn_like(v) for k, v in net.state_dict().items()}
    second = {k: torch.randn_like(v) for k, v in net.state_dict().items()}
    net.load_state_dict(first)
    trainer.update_average()  # the first: the weights themselves
    net.load_state_dict(second)
    trainer.update_average()  # θ̄ = 0.75 θ1 + 0.25 θ2
    for k, v in trainer.average["bridge"].items():
        torch.testing.assert_close(v, 0.75 * first[k] + 0.25 * second[k])
    with trainer.decided_by():
        for k, v in net.state_dict().items():
            torch.testing.assert_close(v, trainer.average["bridge"][k])
    for k, v in net.state_dict().items():
        torch.testing.assert_close(v, second[k])  # put back
    other = BridgeTrainer(TrainConfig.from_dict(dict(TINY)), tmp_path / "plain", progress=False)
    other.learners["bridge"].acting.load_state_dict(trainer.average["bridge"])
    with_average = other.evaluate()
    other.learners["bridge"].acting.load_state_dict(second)
    assert other.evaluate() != pytest.approx(with_average)  # the two weights decide differently here
    assert trainer.evaluate() == pytest.approx(with_average)  # evaluated with θ̄, not θ

    run = tmp_path / "avg"
    train(cfg, run, progress=False)
    final = torch.load(run / "final.pt", weights_only=True)["bridge"]["online"]
    ckpt = load_checkpoint(checkpoints(run)[-1])
    assert ckpt["average"]["bridge"].keys() == final.keys()
    for k, v in ckpt["best_state"]["bridge"].items():
        torch.testing.assert_close(final[k], v)  # final.pt: θ̄ at the best evaluation
    moved = [k for k, v in ckpt["average"]["bridge"].items() if v.is_floating_point()
             and not torch.equal(v, ckpt["bridge"]["online"][k])]
    assert moved  # θ̄ lags the acting network (here the online one: no polyak_tau)
    resumed = BridgeTrainer(cfg, tmp_path / "resumed", progress=False)
    resumed.load_state_dict(ckpt)
    for k, v in ckpt["average"]["bridge"].items():
        torch.testing.assert_close(resumed.average["bridge"][k], v)  # a resume averages on from θ̄


def test_a_resumed_run_averages_on_as_if_never_stopped(tmp_path):
    """48 episodes, then a resume to 96 (replay checkpointed, the same schedules): the same θ̄ in final.pt, bit for
    bit, as one run of 96."""
    base = {**TINY, "weight_average": 0.75, "checkpoint_replay": True, "schedule_episodes": 96}
    whole, _ = train(TrainConfig.from_dict({**base, "episodes": 96}), tmp_path / "whole", progress=False)
    part, _ = train(TrainConfig.from_dict({**base, "episodes": 48}), tmp_path / "part", progress=False)
    resume(part, progress=False, episodes=96)
    a = torch.load(whole / "final.pt", weights_only=True)["bridge"]["online"]
    b = torch.load(part / "final.pt", weights_only=True)["bridge"]["online"]
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_the_budgets_a_run_learned_at():
    assert resolve_config("default", None, {}).trained_budget_scales == (0.25, 2.0)  # the teacher's levels
    assert resolve_config("sarsa", None, {}).trained_budget_scales == (0.25, 2.0)  # budget_scale_range
    assert TrainConfig.from_dict(dict(TINY)).trained_budget_scales == (1.0, 1.0)
    assert TrainConfig.from_dict({**TINY, "teacher": "lagrangian", "teacher_levels": [0.5, 3]}).trained_budget_scales \
        == (0.5, 3.0)
    default = resolve_config("default", None, {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of these warns
        for scale in (0.25, 1.0, 2.0, -1.0, float("nan")):  # within; or bad, which set_budget refuses
            warn_untrained_budget(default, scale, "RUN")
    with pytest.warns(UserWarning, match=r"the budget is 2.0001 × the sized budget; RUN learned at 0.25 to 2 × the "
                                         r"sized budget, so its decisions here are extrapolated$"):
        warn_untrained_budget(default, 2.0001, "RUN")  # digits enough to show it lies outside
