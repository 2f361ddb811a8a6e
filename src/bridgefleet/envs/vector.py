"""FleetVectorEnv: E fleets stepped as NumPy arrays (E, B), no Python loop over bridges or fleets."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from bridgefleet.config import FleetConfig
from bridgefleet.envs import spaces as sp
from bridgefleet.envs.fleet_env import render_ansi, render_heatmap, step_info
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.sim.simulator import FleetSimulator, check_actions


class FleetVectorEnv(VectorEnv):
    """``num_envs`` independent fleets in one batched simulator.

    Seeding: ``reset(seed=s)`` seeds sub-env i with ``s + i``; sub-env i then reproduces a single
    :class:`~bridgefleet.FleetEnv` reset with seed ``s + i`` exactly, across autoresets.

    Autoreset mode: ``AutoresetMode.SAME_STEP`` (gymnasium ≥ 1.1). When a fleet reaches the horizon, the
    observation returned for it is already the first observation of its next episode; the final
    observation is in ``info["final_obs"]`` (object array of per-env dicts, masked by
    ``info["_final_obs"]``, as gymnasium's SyncVectorEnv does) and, batched, in
    ``info["final_obs_batch"]`` (dict of arrays (E, ...), rows valid where ``_final_obs``). The next
    episode continues the fleet's own random stream (no reseed).

    Observations ``Dict(urban=(E, n_urban*4+1), rural=(E, 10))`` float32; actions
    ``Dict(urban=int (E, n_urban), rural=int (E,))``; rewards float64 (E,). ``info`` holds arrays (E, ...)
    of the reward parts, costs in USD, deferrals and per-bridge rewards (E, B).
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["ansi", "rgb_array"]}

    def __init__(self, num_envs: int, config: FleetConfig | None = None, render_mode: str | None = None):
        # the plan's urban and rural agents: their observations hold the urban and the rural agency's budgets
        config, fleet = resolve_fleet((config or FleetConfig.default_model()).replace(agencies="urban_rural"))
        self.config = config
        self.num_envs = num_envs
        self.sim = FleetSimulator(config, num_envs, fleet)
        self.render_mode = render_mode
        self.single_observation_space = sp.observation_space(config)
        self.single_action_space = sp.action_space(config)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._last = None

    def _obs(self) -> dict[str, np.ndarray]:
        urban, rural = self.sim.observe()
        return {"urban": urban, "rural": rural}

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, int | np.integer):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"reset: {len(seeds)} seeds given for {self.num_envs} environments")
        self.sim.reset(None, seeds)
        self._last = None
        return self._obs(), {"year": self.sim.t.copy()}

    def step(self, actions: dict[str, Any]):
        if not isinstance(actions, dict) or set(actions) != {"urban", "rural"}:
            raise ValueError(f"actions must be a dict with keys 'urban' and 'rural', got {type(actions)}")
        urban, rural = check_actions(actions["urban"], actions["rural"], self.num_envs, self.sim.n_urban)
        result = self.sim.step(urban, rural)
        self._last = result
        obs = self._obs()
        info = step_info(result, self.sim, slice(None))
        done = result.truncated
        if done.any():
            ids = np.flatnonzero(done)
            info["final_obs_batch"] = obs
            info["_final_obs"] = done.copy()
            final = np.full(self.num_envs, None, dtype=object)
            for i in ids:  # once per episode per fleet: keeps gymnasium's per-env final_obs layout
                final[i] = {"urban": obs["urban"][i], "rural": obs["rural"][i]}
            info["final_obs"] = final
            self.sim.reset(ids, None)
            obs = self._obs()
        terminated = np.zeros(self.num_envs, dtype=bool)
        return obs, result.reward, terminated, done.copy(), info

    def render(self):
        if self.render_mode == "ansi":
            return "".join(render_ansi(self.sim, i, self._last) for i in range(self.num_envs))
        if self.render_mode == "rgb_array":
            return [render_heatmap(c) for c in self.sim.state.condition]
        return None
