"""Tests for n-step first-last transitions (NStepAccumulator, ExperienceSourceFirstLast)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from bridgefleet.replay import (
    ExperienceFirstLast,
    ExperienceSourceFirstLast,
    NStepAccumulator,
    PrioritizedReplayBuffer,
)

F = np.float32


def _step(acc: NStepAccumulator, obs, act, rew, next_obs, term=None, trunc=None, **kw):
    e = acc.num_envs
    term = np.zeros(e, bool) if term is None else np.asarray(term)
    trunc = np.zeros(e, bool) if trunc is None else np.asarray(trunc)
    return acc.add(
        np.asarray(obs, F).reshape(e, 1),
        np.asarray(act),
        np.asarray(rew, F),
        np.asarray(next_obs, F).reshape(e, 1),
        term,
        trunc,
        **kw,
    )


def test_nstep_termination_sums_three_rewards_then_shorter_tails() -> None:
    acc = NStepAccumulator(1, n=3, gamma=0.5)
    assert _step(acc, [0], [0], [1.0], [1])["reward"].shape == (0,)
    assert _step(acc, [1], [1], [2.0], [2])["reward"].shape == (0,)
    out = _step(acc, [2], [2], [3.0], [3], term=[True])
    # start 0: 1 + .5·2 + .25·3 = 2.75; start 1: 2 + .5·3 = 3.5; start 2: 3.
    np.testing.assert_allclose(out["reward"], [2.75, 3.5, 3.0])
    np.testing.assert_array_equal(out["obs"][:, 0], [0, 1, 2])
    np.testing.assert_array_equal(out["action"], [0, 1, 2])
    np.testing.assert_array_equal(out["next_obs"][:, 0], [3, 3, 3])
    np.testing.assert_array_equal(out["done"], [1.0, 1.0, 1.0])
    np.testing.assert_allclose(out["discount"], [0.125, 0.25, 0.5])
    assert out["reward"].dtype == out["done"].dtype == out["discount"].dtype == np.float32
    assert acc.pending.tolist() == [0]


def test_nstep_full_window_emitted_mid_episode_then_tails_at_termination() -> None:
    acc = NStepAccumulator(1, n=3, gamma=0.5)
    _step(acc, [0], [0], [1.0], [1])
    _step(acc, [1], [0], [2.0], [2])
    out = _step(acc, [2], [0], [3.0], [3])
    np.testing.assert_allclose(out["reward"], [2.75])
    np.testing.assert_array_equal(out["obs"][:, 0], [0])
    np.testing.assert_array_equal(out["next_obs"][:, 0], [3])
    np.testing.assert_array_equal(out["done"], [0.0])
    np.testing.assert_allclose(out["discount"], [0.125])
    out = _step(acc, [3], [0], [4.0], [4], term=[True])
    # start 1: 2 + 1.5 + 1 = 4.5; start 2: 3 + 2 = 5; start 3: 4.
    np.testing.assert_allclose(out["reward"], [4.5, 5.0, 4.0])
    np.testing.assert_array_equal(out["obs"][:, 0], [1, 2, 3])
    np.testing.assert_array_equal(out["done"], [1.0, 1.0, 1.0])


def test_nstep_truncation_bootstraps_with_gamma_power_of_steps() -> None:
    acc = NStepAccumulator(1, n=3, gamma=0.9)
    _step(acc, [0], [0], [1.0], [1])
    out = _step(acc, [1], [0], [1.0], [2], trunc=[True])
    np.testing.assert_allclose(out["reward"], [1.9, 1.0])
    np.testing.assert_array_equal(out["next_obs"][:, 0], [2, 2])
    np.testing.assert_array_equal(out["done"], [0.0, 0.0])
    np.testing.assert_allclose(out["discount"], [0.81, 0.9], rtol=1e-6)


def test_nstep_terminated_and_truncated_together_counts_as_terminated() -> None:
    acc = NStepAccumulator(1, n=2, gamma=0.5)
    out = _step(acc, [0], [0], [1.0], [1], term=[True], trunc=[True])
    np.testing.assert_array_equal(out["done"], [1.0])


def test_nstep_n1_gives_plain_one_step_transitions() -> None:
    acc = NStepAccumulator(2, n=1, gamma=0.99)
    out = _step(acc, [0, 10], [0, 1], [1.0, 2.0], [1, 11])
    np.testing.assert_array_equal(out["obs"][:, 0], [0, 10])
    np.testing.assert_array_equal(out["next_obs"][:, 0], [1, 11])
    np.testing.assert_array_equal(out["reward"], [1.0, 2.0])
    np.testing.assert_allclose(out["discount"], [0.99, 0.99])
    out = _step(acc, [1, 11], [1, 0], [3.0, 4.0], [2, 12], term=[False, True])
    np.testing.assert_array_equal(out["action"], [1, 0])
    np.testing.assert_array_equal(out["done"], [0.0, 1.0])


def test_nstep_two_envs_sums_separate_and_nothing_crosses_episodes() -> None:
    # Env 0 rewards 1 per step and terminates after 2 steps; env 1 rewards 10 and never ends.
    # obs encode 100·env + step so that obs/next_obs pairing can be checked.
    acc = NStepAccumulator(2, n=3, gamma=0.5)
    o = np.array([0, 100])
    out = _step(acc, o, [0, 0], [1, 10], o + 1, with_meta=True)
    assert out["env"].size == 0
    out = _step(acc, o + 1, [0, 0], [1, 10], o + 2, term=[True, False], with_meta=True)
    np.testing.assert_array_equal(out["env"], [0, 0])
    np.testing.assert_allclose(out["reward"], [1.5, 1.0])
    np.testing.assert_array_equal(out["steps"], [2, 1])
    np.testing.assert_array_equal(out["next_obs"][:, 0], [2, 2])
    # SAME_STEP autoreset: env 0's obs is now its new episode's first obs (50).
    out = _step(acc, [50, 102], [0, 0], [1, 10], [51, 103], with_meta=True)
    np.testing.assert_array_equal(out["env"], [1])
    np.testing.assert_allclose(out["reward"], [10 + 5 + 2.5])
    np.testing.assert_array_equal(out["obs"][:, 0], [100])
    np.testing.assert_array_equal(out["next_obs"][:, 0], [103])
    out = _step(acc, [51, 103], [0, 0], [1, 10], [52, 104], trunc=[False, True], with_meta=True)
    # Env 1 truncates: tails 101→104, 102→104, 103→104 bootstrap; env 0 (2 pending) emits nothing.
    np.testing.assert_array_equal(out["env"], [1, 1, 1])
    np.testing.assert_array_equal(out["obs"][:, 0], [101, 102, 103])
    np.testing.assert_allclose(out["reward"], [17.5, 15.0, 10.0])
    np.testing.assert_array_equal(out["done"], [0.0, 0.0, 0.0])
    assert acc.pending.tolist() == [2, 0]
    out = _step(acc, [52, 200], [0, 0], [1, 10], [53, 201], with_meta=True)
    np.testing.assert_array_equal(out["env"], [0])
    np.testing.assert_array_equal(out["obs"][:, 0], [50])  # never the previous episode's obs
    np.testing.assert_allclose(out["reward"], [1.75])


def test_nstep_per_branch_reward_vector_keeps_trailing_shape() -> None:
    acc = NStepAccumulator(2, n=2, gamma=0.5)
    obs = np.zeros((2, 3), F)
    r1 = np.array([[1.0, 2.0, 0.0, 4.0], [0.0, 0.0, 0.0, 8.0]])
    r2 = np.array([[2.0, 2.0, 2.0, 2.0], [4.0, 0.0, 0.0, 0.0]])
    none = np.zeros(2, bool)
    out = acc.add(obs, np.zeros(2, np.int64), r1, obs, none, none)
    assert out["reward"].shape == (0, 4)
    out = acc.add(obs, np.zeros(2, np.int64), r2, obs, np.array([False, True]), none)
    assert out["reward"].shape == (3, 4)
    np.testing.assert_allclose(out["reward"], [r1[0] + 0.5 * r2[0], r1[1] + 0.5 * r2[1], r2[1]])


def test_nstep_dict_observations_are_mirrored() -> None:
    acc = NStepAccumulator(2, n=2, gamma=1.0)

    def obs(t: int) -> dict[str, np.ndarray]:
        return {"state": np.full((2, 3), t, np.int8), "mask": np.full((2, 5), t % 2 == 0)}

    none = np.zeros(2, bool)
    acc.add(obs(0), np.array([1, 2]), np.ones(2), obs(1), none, none)
    out = acc.add(obs(1), np.array([3, 4]), np.ones(2), obs(2), none, none)
    assert set(out["obs"]) == {"state", "mask"}
    assert out["obs"]["state"].shape == (2, 3) and out["obs"]["state"].dtype == np.int8
    np.testing.assert_array_equal(out["obs"]["state"], 0)
    np.testing.assert_array_equal(out["next_obs"]["state"], 2)
    np.testing.assert_array_equal(out["obs"]["mask"], True)
    np.testing.assert_array_equal(out["action"], [1, 2])
    np.testing.assert_array_equal(out["reward"], [2.0, 2.0])


def test_nstep_output_feeds_prioritized_buffer_directly() -> None:
    spec = {
        "obs": ((1,), np.float32),
        "action": ((), np.int64),
        "reward": ((), np.float32),
        "next_obs": ((1,), np.float32),
        "done": ((), np.float32),
        "discount": ((), np.float32),
    }
    buf = PrioritizedReplayBuffer(16, spec)
    acc = NStepAccumulator(2, n=2, gamma=0.9)
    for t in range(5):
        buf.add(_step(acc, [t, t], [0, 1], [1.0, 1.0], [t + 1, t + 1], term=[t == 3, False]))
    # env 0: windows ending at t=1, 2 plus two tails at its termination (t=3); env 1: t=1..4.
    assert len(buf) == 8
    out = buf.sample(4, np.random.default_rng(0))
    assert out["obs"].shape == (4, 1)


def test_nstep_rejects_wrong_leading_dim() -> None:
    acc = NStepAccumulator(2, n=2, gamma=0.9)
    with pytest.raises(ValueError, match="obs"):
        acc.add(np.zeros((3, 1)), np.zeros(2), np.zeros(2), np.zeros((2, 1)), np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="reward"):
        acc.add(np.zeros((2, 1)), np.zeros(2), np.zeros(3), np.zeros((2, 1)), np.zeros(2), np.zeros(2))


# ---------------------------------------------------------------- ExperienceSourceFirstLast
class CountEnv(gym.Env):
    """obs = [t], reward = t after the t-th step; terminates after `length` steps."""

    def __init__(self, length: int) -> None:
        self.length = length
        self.observation_space = gym.spaces.Box(0, 1000, shape=(1,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.t = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0], F), {}

    def step(self, action):
        self.t += 1
        return np.array([self.t], F), float(self.t), self.t >= self.length, False, {}


def _vec(*makers) -> SyncVectorEnv:
    return SyncVectorEnv(list(makers), autoreset_mode=AutoresetMode.SAME_STEP)


def test_experience_source_terminated_episode_matches_hand_computed() -> None:
    env = _vec(lambda: CountEnv(3))
    src = ExperienceSourceFirstLast(env, lambda o: np.zeros(len(o), np.int64), gamma=0.5, steps_count=2)
    items = []
    for exp in src:
        items.append(exp)
        if len(items) == 6:
            break
    assert isinstance(items[0], ExperienceFirstLast)
    # Rewards 1, 2, 3 then terminate: (s=0, 1+.5·2=2, last=2), (s=1, 2+1.5=3.5, None), (s=2, 3, None).
    first = items[:3]
    assert [float(x.state[0]) for x in first] == [0.0, 1.0, 2.0]
    assert [x.reward for x in first] == [2.0, 3.5, 3.0]
    assert float(first[0].last_state[0]) == 2.0
    assert first[1].last_state is None and first[2].last_state is None
    assert [x.steps for x in first] == [2, 2, 1]
    assert not any(x.truncated for x in first)
    assert [float(x.state[0]) for x in items[3:]] == [0.0, 1.0, 2.0]  # next episode, nothing crossed
    assert src.pop_total_rewards() == [6.0, 6.0]
    assert src.pop_total_rewards() == []


def test_experience_source_truncation_uses_final_obs_from_info() -> None:
    env = _vec(lambda: gym.wrappers.TimeLimit(CountEnv(100), 2), lambda: CountEnv(1))
    src = ExperienceSourceFirstLast(env, lambda o: np.zeros(len(o), np.int64), gamma=0.5, steps_count=3)
    it = iter(src)
    items = [next(it) for _ in range(4)]
    # Step 1: env 1 terminates (one item); step 2: env 0 truncated (two tails, bootstrapped
    # from the true final obs [2], not the reset obs [0]) and env 1 terminates again.
    trunc_items = [x for x in items if x.truncated]
    assert len(trunc_items) == 2
    assert [float(x.last_state[0]) for x in trunc_items] == [2.0, 2.0]
    assert [x.reward for x in trunc_items] == [1.0 + 0.5 * 2.0, 2.0]
    assert [x.steps for x in trunc_items] == [2, 1]
    term_items = [x for x in items if not x.truncated]
    assert all(x.last_state is None and x.reward == 1.0 for x in term_items)
    assert src.pop_rewards_steps() == [(1.0, 1), (3.0, 2), (1.0, 1)]


def test_experience_source_runs_cartpole_with_time_limit() -> None:
    env = SyncVectorEnv(
        [lambda: gym.make("CartPole-v1", max_episode_steps=7) for _ in range(3)],
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    rng = np.random.default_rng(0)
    src = ExperienceSourceFirstLast(
        env, lambda o: rng.integers(0, 2, len(o)), gamma=0.9, steps_count=3, seed=0
    )
    items = []
    for exp in src:
        items.append(exp)
        if len(items) >= 200:
            break
    assert all(x.state.shape == (4,) for x in items)
    for x in items:
        assert 1 <= x.steps <= 3
        if x.last_state is None:
            assert not x.truncated
        else:
            assert x.last_state.shape == (4,)
        assert x.reward == pytest.approx(sum(0.9**k for k in range(x.steps)))  # CartPole reward is 1
    assert any(x.truncated for x in items)
    rs = src.pop_rewards_steps()
    assert rs and all(r == s and s <= 7 for r, s in rs)


def test_experience_source_rejects_next_step_autoreset() -> None:
    env = SyncVectorEnv([lambda: CountEnv(3)])
    with pytest.raises(ValueError, match="SAME_STEP"):
        ExperienceSourceFirstLast(env, lambda o: np.zeros(len(o), np.int64), gamma=0.9)
