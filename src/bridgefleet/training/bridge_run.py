"""The per-bridge agent's part of the training loop (``agent: bridge``; the loop is :mod:`bridgefleet.training.loop`).

config → batched simulator (E fleets) → per-bridge features → shared Q-network → knapsack per agency
(:func:`bridgefleet.agents.bridge.decide`) → simulator step → per-bridge transitions (E × B per year) →
replay → SARSA updates → eval / logs / checkpoints. Every bridge of every fleet is one sample, so a batch is
bridges × fleets and a fleet of any size trains with the same network.

Target of a transition: the n-step return y = Σ_{k<m} γ^k r_{t+k} + γ^m (1 − done) Q_target(s_{t+m},
a_{t+m}), m = min(n, years left). a_{t+m} is, per sampled transition, the action the allocation funded for that
bridge then (SARSA: on-policy, so Q knows how often a deferred bridge is funded later; Sutton & Barto 2018,
§7.2), or with probability ``greedy_bootstrap`` the action the knapsack would have funded without exploration
(so exploration's forced treatments do not lower the value of the policy that is evaluated and kept). The end
of the horizon is terminal (the year is an input, as the return is scored over a finite horizon). Fleets run
their years together, so an episode's transitions are built at its end, all years at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bridgefleet.agents import bridge as bridge_agent
from bridgefleet.agents.bridge import BridgePolicy, action_costs, bridge_features, build_learner, decide
from bridgefleet.agents.learner import DQNLearner
from bridgefleet.config.seeds import TRAINING_STRIDE
from bridgefleet.replay import PrioritizedReplayBuffer, ReplayBuffer
from bridgefleet.sim.simulator import FleetSimulator
from bridgefleet.training.loop import Trainer


def spec(n_in: int, greedy: bool = False) -> dict[str, tuple[tuple[int, ...], type]]:
    """One transition in the replay: n_in × 4 + 1 + 4 + 4 + 1 + 4 bytes (70 with 14 features), one more with
    ``greedy`` (the knapsack's action without exploration, int8). The bootstrap state and action are not stored
    twice: ``next_index`` is the replay slot of the transition n years later of the same bridge, written in the
    same episode batch (so overwritten after this one, never before)."""
    fields = {"obs": ((n_in,), np.float32), "action": ((), np.int8), "reward": ((), np.float32),
              "next_index": ((), np.int32), "done": ((), np.uint8), "discount": ((), np.float32)}
    return {**fields, "greedy": ((), np.int8)} if greedy else fields


def trajectories_kept(capacity: int, years: int, episodes: int = 1) -> int:
    """The bridges' whole trajectories (``years`` transitions each) an episode may store in a replay of
    ``capacity`` that holds at least ``episodes`` episodes (``replay_episodes``): as many as fit in that share, at
    least one."""
    return max(1, capacity // (episodes * years))


class BridgeTrainer(Trainer):
    """One per-bridge training run: one learner ("bridge") over every bridge of ``num_envs`` fleets."""

    agent = "bridge"

    def setup(self) -> None:
        cfg, fc = self.cfg, self.fleet_cfg
        self.n_in = bridge_agent.n_features(cfg)
        self.sim = FleetSimulator(fc, cfg.num_envs, self.fleet)
        # The replay stores the knapsack's greedy action (and batches mix it in) only when some targets use it.
        self.stores_greedy = cfg.greedy_bootstrap > 0
        # Whole trajectories an episode may store (its share of the replay; _add_episode draws them when it brings
        # more), and so the bridge-years a simulated year adds to the replay.
        self.trajectories_per_episode = trajectories_kept(cfg.buffer_capacity, fc.horizon_years, cfg.replay_episodes)
        self.stored_per_year = min(cfg.num_envs * fc.n_bridges, self.trajectories_per_episode)
        if cfg.min_samples_per_transition > 0:
            self.updates_per_step = max(self.updates_per_step,
                                        cfg.min_samples_per_transition * self.stored_per_year / cfg.batch_size)

    def build_learners(self, amp: bool) -> dict[str, DQNLearner]:
        return {"bridge": build_learner(self.cfg, amp)}

    def probe(self) -> tuple[Callable[[bool], DQNLearner], dict[str, np.ndarray], str]:
        cfg = self.cfg
        rng = np.random.default_rng(0)
        b = cfg.batch_size
        batch = {"obs": rng.random((b, self.n_in), dtype=np.float32),
                 "action": rng.integers(0, 5, b).astype(np.int8), "reward": rng.random(b, dtype=np.float32),
                 "next_obs": rng.random((b, self.n_in), dtype=np.float32),
                 "next_action": rng.integers(0, 5, b).astype(np.int8), "done": np.zeros(b, dtype=np.uint8),
                 "discount": np.full(b, 0.9, dtype=np.float32)}
        key = f"bridge {self.n_in}-{'-'.join(map(str, cfg.bridge_hidden))}-5 batch {b}"
        return (lambda amp: build_learner(cfg, amp)), batch, key

    def build_replays(self) -> dict[str, ReplayBuffer]:
        cfg, fc = self.cfg, self.fleet_cfg
        fields = spec(self.n_in, self.stores_greedy)
        if not cfg.per:
            return {"bridge": ReplayBuffer(cfg.buffer_capacity, fields)}
        # β is annealed over the updates that sample: they start after the first episode that brings the
        # replay to learning_starts transitions (episodes are added whole), so β reaches 1 by the end.
        vec_eps = -(-cfg.schedule_total // cfg.num_envs)
        per_ep = self.stored_per_year * fc.horizon_years
        first = -(-max(cfg.learning_starts, cfg.batch_size) // per_ep)
        steps = int((vec_eps - first) * fc.horizon_years * self.updates_per_step)
        return {"bridge": PrioritizedReplayBuffer(cfg.buffer_capacity, fields, alpha=cfg.per_alpha,
                                                  beta_start=cfg.per_beta_start, beta_end=1.0,
                                                  beta_steps=max(1, steps))}

    def policy(self) -> BridgePolicy:
        learner = self.learners["bridge"]
        return BridgePolicy(learner.acting, learner.device)

    def q_values(self, feats: np.ndarray) -> np.ndarray:
        """Q float32 (E, B, 5) of the network's features float32 (E, B, n_in), from the acting network."""
        q = self.learners["bridge"].q_values(feats.reshape(-1, self.n_in))
        return q.cpu().numpy().reshape(*feats.shape[:2], 5)

    def run_episode(self, epsilon: float) -> np.ndarray:
        cfg, sim = self.cfg, self.sim
        if cfg.budget_scale_range is not None:
            sim.set_budget_scale(self.rng.uniform(*cfg.budget_scale_range, cfg.num_envs))
        sim.reset(None, [cfg.seed + self.episodes_done * TRAINING_STRIDE + i for i in range(cfg.num_envs)])
        cost = action_costs(sim)
        ep_return = np.zeros(cfg.num_envs)
        gamma = self.fleet_cfg.discount
        episode: dict[str, list[np.ndarray]] = {"feats": [], "actions": [], "rewards": []}
        if self.stores_greedy:
            episode["greedy"] = []
        for year in range(self.fleet_cfg.horizon_years):
            feats = bridge_features(sim, cost, self.n_in)
            q = self.q_values(feats)
            explore = self.rng.random(q.shape[:2]) < epsilon
            actions = decide(q, cost, sim, explore, self.rng.integers(0, 5, q.shape[:2]))
            # Without exploration the knapsack's requests fit the budgets, so they are what it funds.
            greedy = decide(q, cost, sim) if self.stores_greedy and explore.any() else None
            res = sim.step_requests(actions)
            ep_return += gamma**year * res.reward
            episode["feats"].append(feats)
            episode["actions"].append(res.actions)
            episode["rewards"].append(res.bridge_reward * self.reward_scale)
            if self.stores_greedy:
                episode["greedy"].append(res.actions if greedy is None else greedy)
            self.env_steps += cfg.num_envs
            self.learn_step()
        self._add_episode(**{k: np.stack(v) for k, v in episode.items()})
        return ep_return

    def sample(self, name: str, batch_size: int | None = None) -> dict[str, np.ndarray]:
        """A replay batch with the bootstrap state and action gathered through ``next_index``: each transition's
        bootstrap action is the funded one, or with probability ``greedy_bootstrap`` the greedy one."""
        replay = self.replays[name]
        batch = replay.sample(batch_size or self.cfg.batch_size, self.rng)
        boot = replay.gather(batch["next_index"], ("obs", "action", "greedy") if self.stores_greedy
                             else ("obs", "action"))
        batch["next_obs"], batch["next_action"] = boot["obs"], boot["action"]
        if self.stores_greedy:
            on_greedy = self.rng.random(len(boot["action"])) < self.cfg.greedy_bootstrap
            batch["next_action"] = np.where(on_greedy, boot["greedy"], boot["action"])
        return batch

    def _add_episode(self, feats: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
                     greedy: np.ndarray | None = None) -> None:
        """n-step transitions of every bridge and year of an episode: feats (T, E, B, F); funded actions, rewards
        and greedy actions (T, E, B) (the greedy ones stored only with ``greedy_bootstrap``, and then required).
        More of them than the replay's share for an episode (its capacity / ``replay_episodes``): every year of
        bridges drawn at random (uniformly over fleets and bridges) as many as fit in it, so each year keeps its
        share of the replay and each stored transition's n-step bootstrap is stored with it (a ring buffer keeping
        the last items would keep the last years only: on Indiana, 16 fleets × 4,794 bridges, the preset's 400,000
        hold 5.2 of 30 years)."""
        replay = self.replays["bridge"]
        t_n, n_envs, n_bridges = actions.shape
        keep = self.trajectories_per_episode
        if keep < n_envs * n_bridges:
            pick = np.sort(self.rng.choice(n_envs * n_bridges, keep, replace=False))

            def kept(x: np.ndarray) -> np.ndarray:
                return x.reshape(t_n, n_envs * n_bridges, *x.shape[3:])[:, pick][:, None]

            feats, actions, rewards = kept(feats), kept(actions), kept(rewards)
            greedy = kept(greedy) if greedy is not None else None
        gamma = self.fleet_cfg.discount
        n = self.cfg.n_step
        ret = np.zeros_like(rewards, dtype=np.float64)
        for k in range(n):  # ret[t] = Σ_{k < min(n, T − t)} γ^k r[t + k]
            ret[: t_n - k] += gamma**k * rewards[k:]
        ahead = np.minimum(np.arange(t_n) + n, t_n)  # year of the bootstrap state (T: terminal)
        m = ahead - np.arange(t_n)
        nxt = np.minimum(ahead, t_n - 1)

        def per_year(x: np.ndarray) -> np.ndarray:
            return np.broadcast_to(x[:, None, None], actions.shape).reshape(-1)

        n_items = actions.size
        items = {"obs": feats.reshape(-1, self.n_in), "action": actions.reshape(-1), "reward": ret.reshape(-1),
                 "next_index": np.zeros(n_items, np.int32), "done": per_year((ahead >= t_n).astype(np.uint8)),
                 "discount": per_year(gamma**m)}
        if self.stores_greedy:
            items["greedy"] = greedy.reshape(-1)
        slots = replay.add(items)
        # Item k = t·E·B + e·B + b bootstraps from item k[nxt[t], e, b] of the same bridge, later in the batch. Only
        # a replay shorter than the horizon still gets more items than it holds; it keeps the last ones, so a kept
        # item's bootstrap is kept too.
        skip = n_items - len(slots)
        k = np.arange(n_items).reshape(actions.shape)
        replay.data["next_index"][slots] = slots[k[nxt].reshape(-1)[skip:] - skip]

    def summary_extra(self) -> dict[str, Any]:
        return {"bytes_per_transition": int(sum(np.dtype(d).itemsize * int(np.prod(s))
                                                for s, d in spec(self.n_in, self.stores_greedy).values())),
                **({"updates_per_step": self.updates_per_step}
                   if self.cfg.min_samples_per_transition > 0 else {})}
