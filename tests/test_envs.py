"""Gymnasium, vector, PettingZoo and single-agent environments."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from pettingzoo.test import parallel_api_test

import bridgefleet
from bridgefleet import FleetConfig, FleetEnv, FleetParallelEnv, FleetVectorEnv, RuralEnv, UrbanEnv

SMALL = FleetConfig(n_urban=4, n_rural=6, horizon_years=5)


def test_fleet_env_passes_gymnasium_check_env():
    check_env(FleetEnv(), skip_render_check=False)


def test_registered_id_makes_a_fleet_env_with_the_documented_spaces():
    env = gym.make("bridgefleet/Fleet-v0")
    obs, _ = env.reset(seed=0)
    assert obs["urban"].shape == (81,) and obs["rural"].shape == (10,)
    assert env.action_space["urban"].nvec.tolist() == [5] * 20 and env.action_space["rural"].n == 8


def test_parallel_env_passes_pettingzoo_api_test():
    parallel_api_test(FleetParallelEnv(SMALL), num_cycles=12)


def test_parallel_env_state_lies_in_its_state_space_pettingzoo_state_test():
    from pettingzoo.test import state_test
    from pettingzoo.utils.conversions import parallel_to_aec

    env = FleetParallelEnv(SMALL)
    assert env.state_space.shape == (SMALL.n_urban * 4 + 11,)
    state_test(parallel_to_aec(FleetParallelEnv(SMALL)), env, num_cycles=12)


@pytest.mark.parametrize("cls", [UrbanEnv, RuralEnv])
def test_single_agent_views_pass_check_env(cls):
    check_env(cls(SMALL))


def test_episode_ends_by_truncation_at_the_horizon():
    env = FleetEnv(SMALL)
    env.reset(seed=1)
    flags = [env.step(env.action_space.sample())[2:4] for _ in range(5)]
    assert flags == [(False, False)] * 4 + [(False, True)]


def test_vector_env_reproduces_single_envs_across_autoresets():
    n, seed = 3, 40
    venv = FleetVectorEnv(n, SMALL)
    singles = [FleetEnv(SMALL) for _ in range(n)]
    vobs, _ = venv.reset(seed=seed)
    sobs = [e.reset(seed=seed + i)[0] for i, e in enumerate(singles)]
    rng = np.random.default_rng(0)
    for step in range(3 * SMALL.horizon_years):  # three episodes, two autoresets
        for i in range(n):
            np.testing.assert_array_equal(vobs["urban"][i], sobs[i]["urban"])
            np.testing.assert_array_equal(vobs["rural"][i], sobs[i]["rural"])
        urban = rng.integers(0, 5, size=(n, 4))
        rural = rng.integers(0, 8, size=n)
        vobs, vrew, _, vtrunc, vinfo = venv.step({"urban": urban, "rural": rural})
        for i, env in enumerate(singles):
            o, r, _, trunc, info = env.step({"urban": urban[i], "rural": int(rural[i])})
            assert vrew[i] == pytest.approx(r, rel=1e-12)
            assert vtrunc[i] == trunc
            np.testing.assert_array_equal(vinfo["bridge_reward"][i], info["bridge_reward"])
            if trunc:
                np.testing.assert_array_equal(vinfo["final_obs"][i]["urban"], o["urban"])
                np.testing.assert_array_equal(vinfo["final_obs_batch"]["rural"][i], o["rural"])
                o, _ = env.reset()
            sobs[i] = o
        assert vtrunc.all() == ((step + 1) % SMALL.horizon_years == 0)


def test_native_vector_env_matches_gymnasium_sync_vector_env():
    venv = FleetVectorEnv(2, SMALL)
    sync = SyncVectorEnv([lambda: FleetEnv(SMALL)] * 2, autoreset_mode=AutoresetMode.SAME_STEP)
    a, _ = venv.reset(seed=3)
    b, _ = sync.reset(seed=3)
    for _ in range(7):
        np.testing.assert_array_equal(a["urban"], b["urban"])
        act = {"urban": np.ones((2, 4), np.int64), "rural": np.array([4, 2])}
        a, ra, _, ta, _ = venv.step(act)
        b, rb, _, tb, _ = sync.step(act)
        np.testing.assert_allclose(ra, rb)
        assert ta.tolist() == tb.tolist()


def test_info_carries_reward_parts_cost_and_deferred_actions():
    env = FleetEnv()
    env.reset(seed=2)
    _, reward, _, _, info = env.step({"urban": np.full(20, 4), "rural": 4})
    assert reward == pytest.approx(info["urban_reward"] + info["rural_reward"])
    assert info["bridge_reward"].shape == (100,)
    assert info["bridge_reward"].sum() == pytest.approx(reward, rel=1e-5)
    # 20 urban replacements (~2.5 M USD each) cannot fit a 95,880 USD urban budget: all deferred.
    assert info["deferred_urban"] == 20
    assert info["urban_cost_usd"] == 0.0


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"urban": np.zeros(19, np.int64), "rural": 0}, r"'urban' has shape \(19,\)"),
        ({"urban": np.full(20, 5), "rural": 0}, r"'urban' value 5 out of range"),
        ({"urban": np.zeros(20, np.int64), "rural": 8}, r"'rural' value 8 out of range"),
        ({"urban": np.full(20, 0.5), "rural": 0}, r"'urban' must be integers"),
        ({"urban": np.zeros(20, np.int64)}, r"keys 'urban' and 'rural'"),
    ],
)
def test_bad_actions_raise_clear_errors(action, message):
    env = FleetEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=message):
        env.step(action)


def test_render_modes():
    env = FleetEnv(render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    env = FleetEnv(render_mode="ansi")
    env.reset(seed=0)
    env.step(env.action_space.sample())
    assert "year 1/30" in env.render()


def test_fixed_fleet_is_the_same_every_episode_and_noise_is_not():
    env = FleetEnv(FleetConfig(fixed_fleet=True, fleet_seed=7))
    a, _ = env.reset(seed=1)
    b, _ = env.reset(seed=2)
    np.testing.assert_array_equal(a["urban"], b["urban"])
    noise2 = env.sim.noise[0].copy()
    env.reset(seed=1)
    assert not np.array_equal(env.sim.noise[0], noise2)


def test_package_exports_the_public_names():
    for name in ("FleetConfig", "FleetEnv", "FleetVectorEnv", "FleetParallelEnv", "UrbanEnv", "RuralEnv"):
        assert hasattr(bridgefleet, name)


def test_step_before_reset_is_refused():
    with pytest.raises(RuntimeError, match="reset"):
        FleetEnv().step({"urban": np.zeros(20, np.int64), "rural": 0})
