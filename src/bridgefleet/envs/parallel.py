"""FleetParallelEnv: the two agencies as a PettingZoo ParallelEnv (agents "urban" and "rural")."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium.spaces import Box
from pettingzoo import ParallelEnv

from bridgefleet.config import FleetConfig
from bridgefleet.envs import spaces as sp
from bridgefleet.envs.fleet_env import FleetEnv


class FleetParallelEnv(ParallelEnv):
    """Urban agent (per-bridge actions) and rural agent (fleet strategy) acting simultaneously each year.

    Args:
        config: FleetConfig.
        reward: "own" (default) gives each agent its agency's reward part (independent learners);
            "shared" gives both the municipality total.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "name": "bridgefleet_parallel_v0"}

    def __init__(self, config: FleetConfig | None = None, reward: str = "own", render_mode: str | None = None):
        if reward not in ("own", "shared"):
            raise ValueError(f"reward = {reward!r}: must be 'own' or 'shared'")
        self.env = FleetEnv(config, render_mode=render_mode)
        self.config = self.env.config
        self.reward_mode = reward
        self.render_mode = render_mode
        self.possible_agents = ["urban", "rural"]
        self.agents: list[str] = []
        u, r = sp.urban_observation_space(self.config), sp.rural_observation_space()
        self.state_space = Box(np.concatenate([u.low, r.low]), np.concatenate([u.high, r.high]), dtype=np.float32)
        """Box (n_urban*4 + 11,), float32: the space :meth:`state` lies in (PettingZoo's state API)."""

    @functools.cache  # noqa: B019 - spaces must be the same object every call
    def observation_space(self, agent: str):
        return sp.urban_observation_space(self.config) if agent == "urban" else sp.rural_observation_space()

    @functools.cache  # noqa: B019
    def action_space(self, agent: str):
        return sp.urban_action_space(self.config) if agent == "urban" else sp.rural_action_space()

    def reset(self, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        return dict(obs), {a: dict(info) for a in self.agents}

    def step(self, actions: dict[str, Any]):
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"actions missing for agent(s) {missing}")
        obs, reward, terminated, truncated, info = self.env.step(
            {"urban": actions["urban"], "rural": actions["rural"]})
        if self.reward_mode == "own":
            rewards = {"urban": float(info["urban_reward"]), "rural": float(info["rural_reward"])}
        else:
            rewards = {a: float(reward) for a in self.agents}
        terms = {a: bool(terminated) for a in self.agents}
        truncs = {a: bool(truncated) for a in self.agents}
        infos = {a: dict(info) for a in self.agents}
        if terminated or truncated:
            self.agents = []
        return dict(obs), rewards, terms, truncs, infos

    def render(self):
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def state(self) -> np.ndarray:
        """Global state: the concatenated urban and rural observations, float32 (n_urban*4 + 11,)."""
        urban, rural = self.env.sim.observe()
        return np.concatenate([urban[0], rural[0]]).astype(np.float32)
