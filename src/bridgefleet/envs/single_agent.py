"""Single-agent views: one agency learns while the other follows a heuristic (for SB3 and friends)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.envs import spaces as sp
from bridgefleet.envs.fleet_env import FleetEnv
from bridgefleet.sim.heuristics import get_policy


class _View(gym.Env):
    metadata = {"render_modes": ["ansi", "rgb_array"]}
    agent = ""

    def __init__(self, config: FleetConfig | None = None, other_policy: str = "condition_based",
                 reward: str = "own", render_mode: str | None = None):
        if reward not in ("own", "total"):
            raise ValueError(f"reward = {reward!r}: must be 'own' or 'total'")
        self.env = FleetEnv(config, render_mode=render_mode)
        self.config = self.env.config
        self.other = get_policy(other_policy)
        self.reward_mode = reward
        self.render_mode = render_mode

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        obs, info = self.env.reset(seed=seed, options=options)
        return obs[self.agent], info

    def step(self, action: Any):
        urban, rural = self.other(self.env.sim, self.np_random)
        joint = {"urban": urban[0], "rural": int(rural.reshape(-1)[0])}
        joint[self.agent] = action
        obs, reward, terminated, truncated, info = self.env.step(joint)
        r = float(info[f"{self.agent}_reward"]) if self.reward_mode == "own" else reward
        return obs[self.agent], r, terminated, truncated, info

    def render(self):
        return self.env.render()


class UrbanEnv(_View):
    """The urban agent alone: obs Box(n_urban*4+1), action MultiDiscrete([5]*n_urban).

    The rural agency follows ``other_policy`` (a heuristic name from :mod:`bridgefleet.sim.heuristics`).
    Reward: the urban part ("own", default) or the municipality total ("total").
    """

    agent = "urban"

    def __init__(self, config: FleetConfig | None = None, other_policy: str = "condition_based",
                 reward: str = "own", render_mode: str | None = None):
        super().__init__(config, other_policy, reward, render_mode)
        self.observation_space = sp.urban_observation_space(self.config)
        self.action_space = sp.urban_action_space(self.config)


class RuralEnv(_View):
    """The rural agent alone: obs Box(10), action Discrete(8); urban bridges follow ``other_policy``."""

    agent = "rural"

    def __init__(self, config: FleetConfig | None = None, other_policy: str = "condition_based",
                 reward: str = "own", render_mode: str | None = None):
        super().__init__(config, other_policy, reward, render_mode)
        self.observation_space = sp.rural_observation_space()
        self.action_space = sp.rural_action_space()

    def step(self, action: Any):
        return super().step(int(np.asarray(action).reshape(-1)[0]) if np.ndim(action) else action)
