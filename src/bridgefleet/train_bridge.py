"""Training of the per-bridge agent (``agent: bridge``): one loop, top to bottom.

config → batched simulator (E fleets) → per-bridge features → shared Q-network → knapsack per agency
(:func:`bridgefleet.agents.bridge.decide`) → simulator step → per-bridge transitions (E × B per year) →
replay → SARSA updates → eval / logs / checkpoints. Every bridge of every fleet is one sample, so a batch is
bridges × fleets and a fleet of any size trains with the same network.

Target of a transition: the n-step SARSA return y = Σ_{k<m} γ^k r_{t+k} + γ^m (1 − done) Q_target(s_{t+m},
a_{t+m}), m = min(n, years left), with a_{t+m} the action the allocation funded for that bridge then
(on-policy, so Q knows how often a deferred bridge is funded later; Sutton & Barto 2018, §7.2). The end of
the horizon is terminal (the year is an input, as the return is scored over a finite horizon). Fleets run
their years together, so an episode's transitions are built at its end, all years at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from bridgefleet.agents.bridge import N_FEATURES, BridgePolicy, BridgeQNetwork, action_costs, bridge_features, decide
from bridgefleet.checkpoints import atomic_torch_save, rng_state, save_rolling, set_rng_state
from bridgefleet.evaluate import best_heuristic, evaluate_heuristics, evaluate_policy
from bridgefleet.fleet.simulator import FleetSimulator, resolve_fleet
from bridgefleet.hardware import choose, cpu_model, time_updates
from bridgefleet.learner import resolve_device
from bridgefleet.replay import PrioritizedReplayBuffer, ReplayBuffer
from bridgefleet.runlog import Metrics, progress_bar, record_evaluation, tensorboard, write_summary

SPEC = {"obs": ((N_FEATURES,), np.float32), "action": ((), np.int8), "reward": ((), np.float32),
        "next_index": ((), np.int32), "done": ((), np.uint8), "discount": ((), np.float32)}
"""One transition in the replay: 13 × 4 + 1 + 4 + 4 + 1 + 4 = 66 bytes. The bootstrap state and action are
not stored twice: ``next_index`` is the replay slot of the transition n years later of the same bridge, written
in the same episode batch (so overwritten after this one, never before)."""
BATCH = ("obs", "action", "reward", "next_obs", "next_action", "done", "discount")
"""What one learner update reads (next_obs and next_action gathered through next_index)."""


class BridgeLearner:
    """Online and target :class:`BridgeQNetwork`, Adam, SARSA targets, optional bf16 autocast (CPU) / fp16 +
    GradScaler (CUDA) for the matmuls with Q, targets and the loss in fp32."""

    def __init__(self, cfg, device: torch.device, amp: str):
        torch.manual_seed(cfg.seed)
        self.cfg = cfg
        self.device = device
        self.online = BridgeQNetwork(cfg.bridge_hidden, cfg.dueling).to(device)
        self.target = BridgeQNetwork(cfg.bridge_hidden, cfg.dueling).to(device)
        self.target.load_state_dict(self.online.state_dict())
        self.target.requires_grad_(False)
        # Fused Adam and foreach clip / Polyak kernels: one call per step instead of one per tensor (measured:
        # 6.2 -> 5.6 ms per 2,048-batch update in fp32 on one AVX2 thread, docs/benchmarks.md).
        self.opt = torch.optim.Adam(self.online.parameters(), lr=cfg.lr, fused=True)
        self.online_params = list(self.online.parameters())
        self.target_params = list(self.target.parameters())
        self.amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(amp)
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp == "fp16")
        self.gamma = cfg.fleet.discount
        self.step = 0
        self.td_error: np.ndarray | None = None

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=self.amp_dtype, enabled=self.amp_dtype is not None)

    @torch.inference_mode()
    def q_values(self, feats: np.ndarray) -> np.ndarray:
        """Q float32 (E, B, 5) of features float32 (E, B, N_FEATURES)."""
        x = torch.from_numpy(feats.reshape(-1, N_FEATURES)).to(self.device)
        with self._autocast():
            q = self.acting(x)
        return q.float().cpu().numpy().reshape(*feats.shape[:2], 5)

    def update(self, batch: dict[str, np.ndarray]) -> float:
        """One gradient step on a batch (see :data:`BATCH`); returns the loss. With PER the batch's
        ``weights`` (importance-sampling weights, float32 (N,)) weight each sample's loss and the TD errors
        float32 (N,) are left in :attr:`td_error` for the priorities (Schaul et al., ICLR 2016)."""
        t = {k: torch.from_numpy(v).to(self.device) for k, v in batch.items() if k in BATCH}
        with torch.no_grad(), self._autocast():
            q_next = self.target(t["next_obs"]).float().gather(1, t["next_action"].long()[:, None])[:, 0]
        y = t["reward"] + t["discount"] * (1.0 - t["done"].float()) * q_next
        with self._autocast():
            q = self.online(t["obs"]).float().gather(1, t["action"].long()[:, None])[:, 0]
        kind = F.mse_loss if self.cfg.loss == "mse" else F.huber_loss
        if "weights" in batch and self.cfg.per:
            w = torch.from_numpy(batch["weights"]).to(self.device)
            loss = (w * kind(q, y, reduction="none")).mean()
            self.td_error = (y - q).detach().cpu().numpy()
        else:
            loss = kind(q, y)
        self.opt.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()  # scaler calls are no-ops unless fp16 on CUDA
        self.scaler.unscale_(self.opt)
        torch.nn.utils.clip_grad_norm_(self.online_params, self.cfg.grad_clip, foreach=True)
        self.scaler.step(self.opt)
        self.scaler.update()
        self.step += 1
        tau = self.cfg.polyak_tau
        if tau is not None:
            with torch.no_grad():
                torch._foreach_lerp_(self.target_params, self.online_params, float(tau))
        elif self.step % self.cfg.target_sync_every == 0:
            self.target.load_state_dict(self.online.state_dict())
        return float(loss.detach())

    @property
    def acting(self) -> torch.nn.Module:
        """The network that decides: the Polyak-averaged one when ``polyak_tau`` is set, else the online one
        (measured on the default fleet's validation fleets: best −504.4 with it, −511 with hard syncs)."""
        return self.target if self.cfg.polyak_tau is not None else self.online

    def state_dict(self) -> dict[str, Any]:
        return {"online": self.online.state_dict(), "target": self.target.state_dict(),
                "opt": self.opt.state_dict(), "step": self.step}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.online.load_state_dict(state["online"])
        self.target.load_state_dict(state["target"])
        if "opt" in state:
            self.opt.load_state_dict(state["opt"])
        self.step = int(state.get("step", 0))


def choose_bridge_hardware(cfg, reprobe: bool = False):
    """Precision and threads for the per-bridge learner's update on this machine (:mod:`bridgefleet.hardware`)."""
    device = resolve_device(cfg.device)
    rng = np.random.default_rng(0)
    b = cfg.batch_size
    batch = {"obs": rng.random((b, N_FEATURES), dtype=np.float32), "action": rng.integers(0, 5, b).astype(np.int8),
             "reward": rng.random(b, dtype=np.float32), "next_obs": rng.random((b, N_FEATURES), dtype=np.float32),
             "next_action": rng.integers(0, 5, b).astype(np.int8), "done": np.zeros(b, dtype=np.uint8),
             "discount": np.full(b, 0.9, dtype=np.float32)}

    def probe(amp: str, threads: int) -> float:
        learner = BridgeLearner(cfg, device, amp)
        return time_updates(lambda: learner.update(batch), threads)

    key = f"bridge {N_FEATURES}-{'-'.join(map(str, cfg.bridge_hidden))}-5 batch {b}"
    return choose(cfg.amp, cfg.threads, device, probe, key, reprobe)


class BridgeTrainer:
    """One per-bridge training run writing into ``run_dir`` (same outputs as the fleet agents' run)."""

    def __init__(self, cfg, run_dir: Path, progress: bool = True, reprobe: bool = False):
        self.cfg = cfg
        self.run_dir = run_dir
        self.progress = progress
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        self.fleet_cfg, self.fleet = resolve_fleet(cfg.fleet)
        self.hardware = choose_bridge_hardware(cfg, reprobe)
        torch.set_num_threads(self.hardware.threads)
        self.device = resolve_device(cfg.device)
        self.learner = BridgeLearner(cfg, self.device, self.hardware.amp)
        self.sim = FleetSimulator(self.fleet_cfg, cfg.num_envs, self.fleet)
        self.replay = self._make_replay()
        self.rng = np.random.default_rng(cfg.seed)
        self.episodes_done = 0
        self.wall_before = 0.0
        self.update_credit = 0.0
        self.last_eval: float | None = None
        self.best_eval: float | None = None
        self.best_state: dict[str, torch.Tensor] | None = None
        self.episodes_to_target: int | None = None
        self.seconds_to_target: float | None = None
        self.target_return: float | None = None
        self.target_policy = ""
        self.metrics: Metrics | None = None
        self.purge_step: int | None = None  # set by a resume: TensorBoard steps after the checkpoint go
        self.on_eval: Callable[[int, float, float], Any] | None = None  # (episodes, seconds, return), e.g. Tune

    def _make_replay(self) -> ReplayBuffer:
        cfg = self.cfg
        if not cfg.per:
            return ReplayBuffer(cfg.buffer_capacity, SPEC)
        # β is annealed over the updates that sample: they start after the first episode that brings the
        # replay to learning_starts transitions (episodes are added whole), so β reaches 1 by the end.
        vec_eps = -(-cfg.schedule_total // cfg.num_envs)
        per_ep = cfg.num_envs * (self.fleet_cfg.n_urban + self.fleet_cfg.n_rural) * self.fleet_cfg.horizon_years
        first = -(-max(cfg.learning_starts, cfg.batch_size) // per_ep)
        steps = int((vec_eps - first) * self.fleet_cfg.horizon_years * cfg.updates_per_step)
        return PrioritizedReplayBuffer(cfg.buffer_capacity, SPEC, alpha=cfg.per_alpha, beta_start=cfg.per_beta_start,
                                       beta_end=1.0, beta_steps=max(1, steps))

    def epsilon(self) -> float:
        return self.cfg.epsilon(self.episodes_done)

    def elapsed(self) -> float:
        return self.wall_before + (time.perf_counter() - self.t0)

    def policy(self) -> BridgePolicy:
        return BridgePolicy(self.learner.acting, self.device)

    def state_dict(self) -> dict[str, Any]:
        return {"bridge": self.learner.state_dict(), "episodes_done": self.episodes_done,
                "wall_seconds": self.elapsed(), "update_credit": self.update_credit,
                "rng": rng_state(self.rng), "torch_rng": torch.get_rng_state(), "config": self.cfg.to_dict(),
                "episodes_to_target": self.episodes_to_target, "seconds_to_target": self.seconds_to_target,
                "target_return": self.target_return, "target_policy": self.target_policy,
                "last_eval": self.last_eval, "best_eval": self.best_eval,
                "per_step": getattr(self.replay, "step", 0),
                "best_state": self.best_state if self.best_state is not None else {}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.learner.load_state_dict(state["bridge"])
        self.episodes_done = int(state["episodes_done"])
        self.wall_before = float(state["wall_seconds"])
        self.update_credit = float(state["update_credit"])
        set_rng_state(self.rng, state["rng"])
        torch.set_rng_state(state["torch_rng"])
        for k in ("episodes_to_target", "seconds_to_target", "target_return", "target_policy", "last_eval",
                  "best_eval"):
            setattr(self, k, state[k])
        self.best_state = state["best_state"] or None
        if isinstance(self.replay, PrioritizedReplayBuffer):
            self.replay.step = int(state.get("per_step", 0))

    def load_replay_state(self, states: dict[str, dict[str, Any]]) -> None:
        self.replay.load_state_dict(states["bridge"])

    def save_checkpoint(self) -> Path:
        if self.metrics is not None:
            self.metrics.flush()
        replay = {"bridge": self.replay.state_dict()} if self.cfg.checkpoint_replay else None
        return save_rolling(self.run_dir, self.episodes_done, self.state_dict(), replay=replay)

    def evaluate(self) -> float:
        res = evaluate_policy(self.policy(), self.fleet_cfg, self.cfg.eval_episodes, self.cfg.eval_seed, "agent")
        return res.mean_return

    def run(self) -> dict[str, Any]:
        cfg, sim = self.cfg, self.sim
        self.t0 = time.perf_counter()
        if self.target_return is None:
            best = best_heuristic(evaluate_heuristics(self.fleet_cfg, episodes=cfg.eval_episodes, seed=cfg.eval_seed))
            self.target_return, self.target_policy = best.mean_return, best.policy
        writer = tensorboard(self.run_dir, self.purge_step)
        self.metrics = metrics = Metrics(self.run_dir / "metrics.csv")
        total = -(-cfg.episodes // cfg.num_envs) * cfg.num_envs
        bar = progress_bar(total, self.episodes_done, self.progress)
        next_eval = (self.episodes_done // cfg.eval_every + 1) * cfg.eval_every
        next_ckpt = (self.episodes_done // cfg.checkpoint_every + 1) * cfg.checkpoint_every
        gamma = self.fleet_cfg.discount
        scale = cfg.reward_scale
        losses: list[float] = []
        while self.episodes_done < cfg.episodes:
            seed0 = cfg.seed + self.episodes_done * 7919
            sim.reset(None, [seed0 + i for i in range(cfg.num_envs)])
            cost = action_costs(sim)
            ep_return = np.zeros(cfg.num_envs)
            eps = self.epsilon()
            for group in self.learner.opt.param_groups:
                group["lr"] = cfg.lr_at(self.episodes_done)
            episode: tuple[list, list, list] = ([], [], [])
            for year in range(self.fleet_cfg.horizon_years):
                feats = bridge_features(sim, cost)
                q = self.learner.q_values(feats)
                explore = self.rng.random(q.shape[:2]) < eps
                actions = decide(q, cost, sim, explore, self.rng.integers(0, 5, q.shape[:2]))
                res = sim.step_requests(actions)
                ep_return += gamma**year * res.reward
                for store, x in zip(episode, (feats, res.actions, res.bridge_reward * scale), strict=True):
                    store.append(x)
                self.update_credit += cfg.updates_per_step
                while self.update_credit >= 1.0 and len(self.replay) >= max(cfg.learning_starts, cfg.batch_size):
                    self.update_credit -= 1.0
                    batch = self.sample(cfg.batch_size)
                    losses.append(self.learner.update(batch))
                    if isinstance(self.replay, PrioritizedReplayBuffer):
                        self.replay.update_priorities(batch["indices"], self.learner.td_error)
                self.update_credit = min(self.update_credit, max(1.0, cfg.updates_per_step))
            self._add_episode(*(np.stack(x) for x in episode))
            for r in ep_return:
                self.episodes_done += 1
                metrics.train(self.episodes_done, self.elapsed(), float(r), eps)
            writer.add_scalar("train/return", float(ep_return.mean()), self.episodes_done)
            writer.add_scalar("train/epsilon", eps, self.episodes_done)
            if losses:
                writer.add_scalar("train/loss", float(np.mean(losses[-50:])), self.episodes_done)
            if self.episodes_done >= next_eval or self.episodes_done >= cfg.episodes:
                next_eval += cfg.eval_every
                self.last_eval = self.evaluate()
                if self.best_eval is None or self.last_eval > self.best_eval:
                    self.best_eval = self.last_eval
                    self.best_state = {k: v.detach().clone() for k, v in self.learner.acting.state_dict().items()}
                record_evaluation(self, writer, metrics)
            if self.episodes_done >= next_ckpt:
                next_ckpt += cfg.checkpoint_every
                self.save_checkpoint()
            if bar is not None:
                bar.update(cfg.num_envs)
                bar.set_postfix(ret=f"{ep_return.mean():.0f}",
                                eval=f"{self.last_eval:.0f}" if self.last_eval is not None else "-",
                                target=f"{self.target_return:.0f}")
        if bar is not None:
            bar.close()
        self.save_checkpoint()
        writer.close()
        metrics.close()
        return self.finish()

    def sample(self, batch_size: int) -> dict[str, np.ndarray]:
        """A replay batch with the bootstrap state and action gathered through ``next_index``."""
        batch = self.replay.sample(batch_size, self.rng)
        boot = self.replay.gather(batch["next_index"], ("obs", "action"))
        batch["next_obs"], batch["next_action"] = boot["obs"], boot["action"]
        return batch

    def _add_episode(self, feats: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> None:
        """n-step transitions of every bridge and year of an episode: feats (T, E, B, F), actions and rewards
        (T, E, B)."""
        t_n = feats.shape[0]
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
        slots = self.replay.add({"obs": feats.reshape(-1, N_FEATURES), "action": actions.reshape(-1),
                                 "reward": ret.reshape(-1), "next_index": np.zeros(n_items, np.int32),
                                 "done": per_year((ahead >= t_n).astype(np.uint8)), "discount": per_year(gamma**m)})
        # Item k = t·E·B + e·B + b bootstraps from item k[nxt[t], e, b] of the same bridge, later in the batch; a
        # batch larger than the replay keeps its last items, so a kept item's bootstrap is kept too.
        skip = n_items - len(slots)
        k = np.arange(n_items).reshape(actions.shape)
        self.replay.data["next_index"][slots] = slots[k[nxt].reshape(-1)[skip:] - skip]

    def finish(self) -> dict[str, Any]:
        wall = self.elapsed()
        # The network of the best evaluation is the run's result (as SB3's EvalCallback keeps best_model):
        # greedy allocation on a still-learning Q can dip; the preset evaluates on validation fleets
        # (eval_seed 2,000,000 …), disjoint from the fleets the decision-quality tables use.
        best = self.best_state if self.best_state is not None else self.learner.acting.state_dict()
        atomic_torch_save({"bridge": {"online": best}, "config": self.cfg.to_dict(),
                           "best_eval_return": self.best_eval}, self.run_dir / "final.pt")
        summary = {
            "episodes": self.episodes_done, "wall_seconds": wall,
            "seconds_per_episode": wall / max(self.episodes_done, 1), "final_eval_return": self.last_eval,
            "best_eval_return": self.best_eval,
            "target_return": self.target_return, "target_policy": self.target_policy,
            "episodes_to_target": self.episodes_to_target, "seconds_to_target": self.seconds_to_target,
            "device": str(self.device), "torch_version": torch.__version__, "preset": self.cfg.preset,
            "agent": "bridge", "num_envs": self.cfg.num_envs, "updates": self.learner.step,
            "updates_per_second": self.learner.step / wall, "threads": self.hardware.threads,
            "amp": self.hardware.amp, "hardware": self.hardware.to_dict(), "machine": cpu_model(),
            "bytes_per_transition": int(sum(np.dtype(d).itemsize * int(np.prod(s)) for s, d in SPEC.values())),
            "per_beta_end": self.replay.beta() if isinstance(self.replay, PrioritizedReplayBuffer) else None,
        }
        write_summary(self.run_dir, summary)
        return summary


def load_bridge_policy(state: dict[str, Any], cfg, device: str = "auto") -> BridgePolicy:
    """The greedy policy of a saved per-bridge run (final.pt or a checkpoint's state)."""
    dev = resolve_device(device)
    net = BridgeQNetwork(cfg.bridge_hidden, cfg.dueling).to(dev)
    net.load_state_dict(state["bridge"]["online"])
    net.eval()
    return BridgePolicy(net, dev)
