"""Peer comparison: Stable-Baselines3's DQN vs this project's learner on the rural single-agent view.

Environment: ``bridgefleet.RuralEnv(FleetConfig(), other_policy="condition_based")`` — the rural agency
learns (obs Box(10), Discrete(8) strategies, reward = the rural agency's own part), the urban bridges
follow the condition-based heuristic. Rewards are multiplied by 0.01 for learning on both sides (as in
``bridgefleet train``); evaluations use the unscaled reward.

Matched settings on every row (SB3 names): MLP (256, 256) ReLU, buffer_size, batch_size, learning_rate
(Adam), gamma 0.95, 1-step targets, Huber loss, max_grad_norm 10, train_freq 4 env steps with
gradient_steps 1 (one update per 4 environment steps), target_update_interval in env steps (a hard copy;
this project counts it in updates: interval / 4), learning_starts, linear ε from 1.0 to 0.05 over
``exploration_fraction`` of the env steps, time-limit truncation bootstrapped, torch's default threads,
CPU. Rows:

* ``sb3``: ``stable_baselines3.DQN("MlpPolicy", RuralEnv)``.
* ``bridgefleet, 1 env``: the same RuralEnv object, a plain loop with :class:`bridgefleet.replay.ReplayBuffer`
  and :class:`bridgefleet.learner.DQNLearner` (network :class:`bridgefleet.agents.RuralQNetwork`).
* ``bridgefleet, N envs``: :class:`bridgefleet.envs.vector.FleetVectorEnv` with N fleets (urban actions
  from :func:`bridgefleet.policies.condition_based`), same total env steps and the same ratio of
  updates to env steps (N/4 updates per vector step), so the same number of updates of the same batch.

Reported: wall seconds for the same number of env steps (training only, evaluation excluded), and the final
greedy evaluation return of each on the same 50 evaluation fleets (``RuralEnv`` seeded 1_000_000 + i),
**discounted with γ = 0.95** over the 30-year horizon, in the env's (unscaled) reward units.

Usage::

    pip install "bridgefleet[bench]"        # or: pip install stable-baselines3
    python benchmarks/peer_sb3.py [--steps 30000] [--num-envs 16] [--seed 0] [--threads N] [--out peer.md]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from bridgefleet import RuralEnv
from bridgefleet.agents.networks import RuralQNetwork
from bridgefleet.config import FleetConfig
from bridgefleet.envs.vector import FleetVectorEnv
from bridgefleet.learner import DQNLearner, LearnerConfig
from bridgefleet.policies import condition_based
from bridgefleet.replay import ReplayBuffer

EVAL_SEED = 1_000_000
"""First evaluation seed (episode i uses EVAL_SEED + i)."""


@dataclass(frozen=True)
class PeerSettings:
    """Settings shared by every row (SB3 names; steps are environment steps)."""

    steps: int = 30_000
    """Environment steps of training (30 per episode: 1,000 episodes)."""
    hidden: tuple[int, ...] = (256, 256)
    buffer_size: int = 50_000
    batch_size: int = 64
    learning_rate: float = 5e-4
    gamma: float = 0.95
    train_freq: int = 4
    """Env steps per gradient step."""
    target_update_interval: int = 1_000
    """Env steps between hard target copies."""
    learning_starts: int = 1_000
    """Transitions collected before the first update."""
    exploration_fraction: float = 0.5
    exploration_initial_eps: float = 1.0
    exploration_final_eps: float = 0.05
    max_grad_norm: float = 10.0
    reward_scale: float = 0.01
    eval_episodes: int = 50
    seed: int = 0

    def epsilon(self, step: int) -> float:
        """Linear ε at env step ``step`` (SB3's schedule)."""
        frac = min(1.0, step / max(1.0, self.exploration_fraction * self.steps))
        return self.exploration_initial_eps + frac * (self.exploration_final_eps - self.exploration_initial_eps)


def require_sb3():
    """Import stable_baselines3, or exit with a clear message."""
    try:
        import stable_baselines3
    except ImportError:
        sys.exit("peer_sb3.py needs Stable-Baselines3, an optional extra: pip install 'bridgefleet[bench]' "
                 "(or pip install stable-baselines3)")
    return stable_baselines3


def evaluate(act: Callable[[np.ndarray], int], s: PeerSettings, fleet: FleetConfig) -> float:
    """Mean discounted (γ = s.gamma) return of greedy ``act`` over RuralEnv seeded EVAL_SEED + i, unscaled reward."""
    env = RuralEnv(fleet, other_policy="condition_based")
    returns = []
    for i in range(s.eval_episodes):
        obs, _ = env.reset(seed=EVAL_SEED + i)
        total, disc, done = 0.0, 1.0, False
        while not done:
            obs, r, term, trunc, _ = env.step(act(obs))
            total += disc * r
            disc *= s.gamma
            done = term or trunc
        returns.append(total)
    return float(np.mean(returns))


def _spec() -> dict:
    return {"obs": ((10,), np.float32), "action": ((1,), np.int64), "reward": ((), np.float32),
            "next_obs": ((10,), np.float32), "done": ((), np.float32), "discount": ((), np.float32)}


def make_learner(s: PeerSettings) -> DQNLearner:
    torch.manual_seed(s.seed)
    cfg = LearnerConfig(lr=s.learning_rate, gamma=s.gamma, loss="huber", grad_clip=s.max_grad_norm,
                        target_sync_every=max(1, s.target_update_interval // s.train_freq), device="cpu",
                        hidden=s.hidden)
    return DQNLearner(lambda: RuralQNetwork(10, 8, hidden=s.hidden), cfg)


def run_sb3(s: PeerSettings, fleet: FleetConfig) -> tuple[float, float]:
    """Train SB3 DQN; return (training wall seconds, evaluation return)."""
    import gymnasium as gym

    sb3 = require_sb3()

    class Scaled(gym.RewardWrapper):
        def reward(self, reward: float) -> float:
            return reward * s.reward_scale

    env = Scaled(RuralEnv(fleet, other_policy="condition_based"))
    model = sb3.DQN("MlpPolicy", env, learning_rate=s.learning_rate, buffer_size=s.buffer_size,
                    learning_starts=s.learning_starts, batch_size=s.batch_size, tau=1.0, gamma=s.gamma,
                    train_freq=s.train_freq, gradient_steps=1, target_update_interval=s.target_update_interval,
                    exploration_fraction=s.exploration_fraction,
                    exploration_initial_eps=s.exploration_initial_eps,
                    exploration_final_eps=s.exploration_final_eps, max_grad_norm=s.max_grad_norm,
                    policy_kwargs={"net_arch": list(s.hidden)}, seed=s.seed, device="cpu", verbose=0)
    t0 = time.perf_counter()
    model.learn(total_timesteps=s.steps)
    wall = time.perf_counter() - t0
    ret = evaluate(lambda o: int(model.predict(o, deterministic=True)[0]), s, fleet)
    return wall, ret


def run_ours_1env(s: PeerSettings, fleet: FleetConfig) -> tuple[float, float]:
    """This project's learner on the same single RuralEnv; return (training wall seconds, evaluation return)."""
    env = RuralEnv(fleet, other_policy="condition_based")
    learner = make_learner(s)
    replay = ReplayBuffer(s.buffer_size, _spec())
    rng = np.random.default_rng(s.seed)
    t0 = time.perf_counter()
    obs, _ = env.reset(seed=s.seed)
    for step in range(s.steps):
        a = learner.act(obs[None], s.epsilon(step), rng)
        nxt, r, term, trunc, _ = env.step(int(a[0, 0]))
        replay.add({"obs": obs[None], "action": a, "reward": np.array([r * s.reward_scale], np.float32),
                    "next_obs": nxt[None], "done": np.array([float(term)], np.float32),
                    "discount": np.array([s.gamma], np.float32)})
        obs = nxt
        if term or trunc:
            obs, _ = env.reset()
        if (step + 1) % s.train_freq == 0 and len(replay) >= max(s.learning_starts, s.batch_size):
            learner.update(replay.sample(s.batch_size, rng))
    wall = time.perf_counter() - t0
    ret = evaluate(lambda o: int(learner.greedy(o[None])[0, 0]), s, fleet)
    return wall, ret


def run_ours_vec(s: PeerSettings, fleet: FleetConfig, num_envs: int,
                 updates_per_vector_step: float | None = None) -> tuple[float, float]:
    """This project's learner on FleetVectorEnv(num_envs), same env steps; by default the same updates per env
    step as SB3 (num_envs / train_freq per vector step), else ``updates_per_vector_step``."""
    env = FleetVectorEnv(num_envs, fleet)
    learner = make_learner(s)
    replay = ReplayBuffer(s.buffer_size, _spec())
    rng = np.random.default_rng(s.seed)
    credit = 0.0
    per_vec_step = num_envs / s.train_freq if updates_per_vector_step is None else updates_per_vector_step
    t0 = time.perf_counter()
    obs, _ = env.reset(seed=[s.seed * 10_007 + i for i in range(num_envs)])
    for vstep in range(s.steps // num_envs):
        step = vstep * num_envs
        ra = learner.act(obs["rural"], s.epsilon(step), rng)
        ua, _ = condition_based(env.sim, rng)
        nxt, _, term, trunc, info = env.step({"urban": ua, "rural": ra[:, 0]})
        last = info["final_obs_batch"]["rural"] if trunc.any() else nxt["rural"]  # true final obs where ended
        replay.add({"obs": obs["rural"], "action": ra,
                    "reward": (np.asarray(info["rural_reward"]) * s.reward_scale).astype(np.float32),
                    "next_obs": last, "done": term.astype(np.float32),
                    "discount": np.full(num_envs, s.gamma, np.float32)})
        obs = nxt
        credit += per_vec_step
        while credit >= 1.0:
            credit -= 1.0
            if len(replay) >= max(s.learning_starts, s.batch_size):
                learner.update(replay.sample(s.batch_size, rng))
    wall = time.perf_counter() - t0
    ret = evaluate(lambda o: int(learner.greedy(o[None])[0, 0]), s, fleet)
    return wall, ret


def heuristic_return(s: PeerSettings, fleet: FleetConfig) -> float:
    """Evaluation return of the rural condition-based strategy (index 4), for scale."""
    return evaluate(lambda o: 4, s, fleet)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30_000, help="training env steps (30 per episode; default 30000)")
    p.add_argument("--num-envs", type=int, default=16, help="fleets of the vectorized row (default 16)")
    p.add_argument("--seed", type=int, default=0, help="training seed")
    p.add_argument("--rows", default="sb3,ours1,oursvec,oursfast",
                   help="rows to run: sb3, ours1, oursvec (same updates), oursfast (1 update per vector step)")
    p.add_argument("--out", help="also write the Markdown table to this file")
    p.add_argument("--threads", type=int, help="torch intra-op threads for every row (default: torch's default)")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = [r.strip() for r in args.rows.split(",")]
    if "sb3" in rows:
        sb3 = require_sb3()
    s = PeerSettings(steps=args.steps, seed=args.seed)
    fleet = FleetConfig()
    results: list[tuple[str, float, float]] = []
    if "sb3" in rows:
        results.append((f"Stable-Baselines3 {sb3.__version__} DQN, 1 env", *run_sb3(s, fleet)))
        print(results[-1], flush=True)
    if "ours1" in rows:
        results.append(("bridgefleet DQNLearner, 1 env (same RuralEnv)", *run_ours_1env(s, fleet)))
        print(results[-1], flush=True)
    if "oursvec" in rows:
        results.append((f"bridgefleet DQNLearner, FleetVectorEnv {args.num_envs} envs",
                        *run_ours_vec(s, fleet, args.num_envs)))
        print(results[-1], flush=True)
    if "oursfast" in rows:
        n_upd = (s.steps // args.num_envs) * 1
        results.append((f"bridgefleet DQNLearner, FleetVectorEnv {args.num_envs} envs, 1 update per vector step "
                        f"({n_upd} updates instead of {s.steps // s.train_freq})",
                        *run_ours_vec(s, fleet, args.num_envs, updates_per_vector_step=1.0)))
        print(results[-1], flush=True)
    ref = results[0][1] if results and results[0][0].startswith("Stable") else None
    heur = heuristic_return(s, fleet)
    lines = [
        f"Machine: {platform.processor() or platform.machine()}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, CPU. {s.steps} env steps ({s.steps // 30} episodes), seed {s.seed}; "
        f"MLP {s.hidden}, buffer {s.buffer_size}, batch {s.batch_size}, lr {s.learning_rate}, γ {s.gamma}, "
        f"1 update per {s.train_freq} env steps, target copy every {s.target_update_interval} env steps, "
        f"learning starts {s.learning_starts}, ε 1.0→0.05 over {s.exploration_fraction:.0%} of the steps, Huber, "
        f"grad-norm clip {s.max_grad_norm}.",
        f"Evaluation: greedy, {s.eval_episodes} RuralEnv fleets seeded {EVAL_SEED}+i, discounted (γ {s.gamma}) "
        f"rural return; the rural condition-based heuristic scores {heur:.1f}.",
        "",
        "| trainer | wall s (training) | speed-up vs SB3 | eval return (discounted) |",
        "|---|---|---|---|",
    ]
    for name, wall, ret in results:
        sp = f"{ref / wall:.2f}×" if ref else "—"
        lines.append(f"| {name} | {wall:.1f} | {sp} | {ret:.1f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
