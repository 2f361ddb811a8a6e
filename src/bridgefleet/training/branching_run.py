"""The plan's urban and rural agents' part of the training loop (``agent: fleet``; the loop is
:mod:`bridgefleet.training.loop`).

vector env (native batched simulator, or gymnasium Sync/Async over FleetEnv) → (act, step) → n-step
accumulator per agent → replay per agent → both learners update (independent DQN learners on the same fleets).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from bridgefleet.agents.branching import agent_policy, build_learners
from bridgefleet.agents.learner import DQNLearner
from bridgefleet.config.seeds import TRAINING_STRIDE
from bridgefleet.config.training import TrainConfig
from bridgefleet.envs.fleet_env import FleetEnv
from bridgefleet.envs.vector import FleetVectorEnv
from bridgefleet.replay import NStepAccumulator, PrioritizedReplayBuffer, ReplayBuffer
from bridgefleet.sim.simulator import RURAL_OBS_DIM, urban_obs_dim
from bridgefleet.training.loop import Trainer


def make_vector_env(cfg: TrainConfig):
    """The training vector env: native batched simulator or gymnasium Sync/Async over FleetEnv (SAME_STEP)."""
    if cfg.vector == "native":
        return FleetVectorEnv(cfg.num_envs, cfg.fleet)
    from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv

    fleet = cfg.fleet
    cls = SyncVectorEnv if cfg.vector == "sync" else AsyncVectorEnv
    return cls([lambda: FleetEnv(fleet)] * cfg.num_envs, autoreset_mode=AutoresetMode.SAME_STEP)


def _final_obs(next_obs: dict[str, np.ndarray], info: dict[str, Any], done: np.ndarray) -> dict[str, np.ndarray]:
    """Observations to bootstrap from: the true final observation where an episode ended."""
    if not done.any():
        return next_obs
    if "final_obs_batch" in info:
        return info["final_obs_batch"]
    out = {k: v.copy() for k, v in next_obs.items()}
    for i in np.flatnonzero(done):
        for k in out:
            out[k][i] = info["final_obs"][i][k]
    return out


def _info_field(info: dict[str, Any], key: str, done: np.ndarray) -> np.ndarray:
    """A step-info array; gymnasium's Sync/Async envs move a finished episode's info to final_info."""
    value = np.asarray(info[key]) if key in info else None
    if "final_info" in info and done.any():
        fin = info["final_info"]
        final = np.asarray(fin[key])
        value = final.copy() if value is None else value.copy()
        mask = fin.get(f"_{key}", done)
        value[mask] = final[mask]
    return value


def _make_replay(cfg: TrainConfig, obs_dim: int, n_branches: int, reward_shape: tuple[int, ...],
                 sampling_updates: int) -> ReplayBuffer:
    # The smallest types that hold the values (actions < 8, done 0/1); the learner casts on the device. An
    # urban transition of the default fleet is 753 bytes (896 with int64 actions and float32 done).
    spec = {"obs": ((obs_dim,), np.float32), "action": ((n_branches,), np.int8),
            "reward": (reward_shape, np.float32), "next_obs": ((obs_dim,), np.float32),
            "done": ((), np.uint8), "discount": ((), np.float32)}
    if cfg.per:
        return PrioritizedReplayBuffer(cfg.buffer_capacity, spec, alpha=cfg.per_alpha,
                                       beta_start=cfg.per_beta_start, beta_end=1.0,
                                       beta_steps=max(1, sampling_updates))
    return ReplayBuffer(cfg.buffer_capacity, spec)


class BranchingTrainer(Trainer):
    """One run of the urban ("urban": n_urban × 5 branches) and rural ("rural": 1 × 8 strategies) learners."""

    agent = "fleet"

    def setup(self) -> None:
        self.env = make_vector_env(self.cfg)
        self.n_urban = self.fleet_cfg.n_urban
        e, gamma = self.cfg.num_envs, self.fleet_cfg.discount
        self.accumulators = {"urban": NStepAccumulator(e, self.cfg.n_step, gamma),
                             "rural": NStepAccumulator(e, self.cfg.n_step, gamma)}

    def build_learners(self, amp: bool) -> dict[str, DQNLearner]:
        urban, rural = build_learners(self.cfg, self.n_urban, amp)
        return {"urban": urban, "rural": rural}

    def probe(self) -> tuple[Callable[[bool], DQNLearner], dict[str, np.ndarray], str]:
        cfg, n = self.cfg, self.n_urban
        d, b = urban_obs_dim(n), cfg.batch_size
        rng = np.random.default_rng(0)
        batch = {"obs": rng.random((b, d), dtype=np.float32), "action": rng.integers(0, 5, (b, n)),
                 "reward": rng.random((b, n) if cfg.urban_reward == "per_bridge" else (b,), dtype=np.float32),
                 "next_obs": rng.random((b, d), dtype=np.float32), "done": np.zeros(b, dtype=np.float32),
                 "discount": np.full(b, 0.9, dtype=np.float32)}
        eager = dataclasses.replace(cfg, compile="off")  # compiling for a probe would cost more than it measures
        key = f"urban {d}-{'-'.join(map(str, cfg.urban_hidden))}-{n}x5 batch {b}"
        return (lambda amp: build_learners(eager, n, amp)[0]), batch, key

    def build_replays(self) -> dict[str, ReplayBuffer]:
        cfg, e = self.cfg, self.cfg.num_envs
        # PER's β is annealed over the updates that sample, which start once the replay holds
        # learning_starts transitions (num_envs a step, after the n-step delay), so it reaches 1 by the end.
        total_updates = int(cfg.schedule_total * self.fleet_cfg.horizon_years / e * cfg.updates_per_step)
        steps_before = -(-max(cfg.learning_starts, cfg.batch_size) // e) + cfg.n_step
        sampling = max(1, total_updates - int(steps_before * cfg.updates_per_step))
        u_reward = (self.n_urban,) if cfg.urban_reward == "per_bridge" else ()
        return {"urban": _make_replay(cfg, urban_obs_dim(self.n_urban), self.n_urban, u_reward, sampling),
                "rural": _make_replay(cfg, RURAL_OBS_DIM, 1, (), sampling)}

    def policy(self) -> Callable:
        return agent_policy(self.learners["urban"], self.learners["rural"])

    def run_episode(self, epsilon: float) -> np.ndarray:
        cfg = self.cfg
        urban, rural = self.learners["urban"], self.learners["rural"]
        acc_u, acc_r = self.accumulators["urban"], self.accumulators["rural"]
        # Episodes start at the same time in every fleet, each seeded by the episodes done before it, so a
        # run resumed from a checkpoint (taken between episodes) meets the same fleets as one never stopped.
        obs, _ = self.env.reset(seed=cfg.seed + self.episodes_done * TRAINING_STRIDE)
        ep_return = np.zeros(cfg.num_envs)
        gamma = self.fleet_cfg.discount
        year, done = 0, np.zeros(cfg.num_envs, dtype=bool)
        while not done.any():  # every fleet has the same horizon, so all end together
            ua = urban.act(obs["urban"], epsilon, self.rng)
            ra = rural.act(obs["rural"], epsilon, self.rng)
            next_obs, reward, term, trunc, info = self.env.step({"urban": ua, "rural": ra[:, 0]})
            done = term | trunc
            last = _final_obs(next_obs, info, done)
            if cfg.reward_mode == "shared":
                r_u = r_r = reward
            else:
                r_u, r_r = _info_field(info, "urban_reward", done), _info_field(info, "rural_reward", done)
            if cfg.urban_reward == "per_bridge":
                r_u = _info_field(info, "bridge_reward", done)[:, : self.n_urban]
            tu = acc_u.add(obs["urban"], ua, np.asarray(r_u) * self.reward_scale, last["urban"], term, trunc)
            tr = acc_r.add(obs["rural"], ra, np.asarray(r_r) * self.reward_scale, last["rural"], term, trunc)
            if len(tu["done"]):
                self.replays["urban"].add(tu)
                self.replays["rural"].add(tr)
            self.env_steps += cfg.num_envs
            ep_return += gamma**year * reward
            year += 1
            obs = next_obs
            self.learn_step()
        return ep_return

    def summary_extra(self) -> dict[str, Any]:
        return {"env_steps": self.env_steps}
