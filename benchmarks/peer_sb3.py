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
  and :class:`bridgefleet.agents.learner.DQNLearner` (network :class:`bridgefleet.agents.RuralQNetwork`).
* ``matched``: :class:`bridgefleet.envs.vector.FleetVectorEnv` with N fleets (urban actions from
  :func:`bridgefleet.sim.heuristics.condition_based`), same total env steps and the same ratio of updates to
  env steps (N/4 updates per vector step), so the same number of updates of the same batch.
* ``fast``: the same vector env, one update per vector step (N× fewer updates per env step than SB3's
  train_freq 4 with N = 16: 4× fewer) — the schedule vectorized collection is for; everything else as above.

Each seed runs every row in turn (A B C A B C …) so drift on a shared machine does not favour a row.
Reported per row: wall seconds for the same number of env steps (training only: model construction and
evaluation excluded on both sides), median and range over seeds; speed-up over SB3 as the ratio of the
medians; the greedy evaluation return on the same evaluation fleets (``RuralEnv`` seeded 1_000_000 + i),
**discounted with γ = 0.95** over the 30-year horizon, in the env's unscaled reward units, mean ± sd over
seeds; and the paired difference from SB3's return (same seed), mean ± standard error.

Verdict of a row against the issue's target (≥ 5× faster at an equal or better return), given from 3 seeds
on: speed-up ≥ 5 and a return not worse than SB3's — the ≈95 % lower bound of the paired difference (mean −
2 standard errors) above −1 % of SB3's mean return (a non-inferiority test: a row that is noisy or has one
collapsed seed fails it).

Usage::

    pip install -e '.[bench]'               # from the repository; or: pip install stable-baselines3
    python benchmarks/peer_sb3.py [--steps 30000] [--num-envs 16] [--seeds 5] [--threads N] [--out peer.md]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from bridgefleet import RuralEnv
from bridgefleet.agents.learner import DQNLearner
from bridgefleet.agents.networks import RuralQNetwork
from bridgefleet.bench.results_page import provenance
from bridgefleet.config import FleetConfig
from bridgefleet.config.learner import LearnerConfig
from bridgefleet.envs.vector import FleetVectorEnv
from bridgefleet.replay import ReplayBuffer
from bridgefleet.sim.heuristics import condition_based

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
    eval_episodes: int = 100
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
        sys.exit("peer_sb3.py needs Stable-Baselines3, an optional extra: pip install -e '.[bench]' "
                 "from the repository (or pip install stable-baselines3)")
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


class Run(NamedTuple):
    """One training run of one row: training wall seconds, evaluation return, gradient updates done."""

    wall: float
    ret: float
    updates: int


def run_sb3(s: PeerSettings, fleet: FleetConfig) -> Run:
    """Train SB3 DQN on one RuralEnv."""
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
    return Run(wall, ret, int(model._n_updates))


def run_ours_1env(s: PeerSettings, fleet: FleetConfig) -> Run:
    """This project's learner on the same single RuralEnv, SB3's schedule."""
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
    return Run(wall, ret, learner.step)


def run_ours_vec(s: PeerSettings, fleet: FleetConfig, num_envs: int,
                 updates_per_vector_step: float | None = None) -> Run:
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
    return Run(wall, ret, learner.step)


def heuristic_return(s: PeerSettings, fleet: FleetConfig) -> float:
    """Evaluation return of the rural condition-based strategy (index 4), for scale."""
    return evaluate(lambda o: 4, s, fleet)


NONINFERIORITY_MARGIN = 0.01
"""A row's return counts as equal or better when the ≈95 % lower bound of its paired difference from SB3
(mean − 2 standard errors) is above −1 % of SB3's mean return: a non-inferiority test, which a noisy
row with few seeds fails instead of passing."""
MIN_SEEDS_FOR_VERDICT = 3


@dataclass(frozen=True)
class RowSummary:
    """A row aggregated over seeds; speed-up and return difference are against the reference row (SB3)."""

    key: str
    wall_median: float
    wall_min: float
    wall_max: float
    updates_median: float
    ret_mean: float
    ret_sd: float
    returns: tuple[float, ...]
    speedup: float | None
    """Median reference wall / median wall of this row; None without a reference row."""
    diff_mean: float | None
    """Mean over seeds of (this row's return − the reference's return of the same seed)."""
    diff_se: float | None
    """Standard error of that mean (sample sd / √n; 0 with one seed)."""
    ref_mean: float | None
    """Mean return of the reference row over the same seeds."""

    @property
    def meets_target(self) -> bool | None:
        """≥ 5× faster and a return not worse than the reference's (non-inferiority, see NONINFERIORITY_MARGIN).

        None without a reference row or with fewer than MIN_SEEDS_FOR_VERDICT seeds.
        """
        if (self.speedup is None or self.diff_mean is None or self.diff_se is None or self.ref_mean is None
                or len(self.returns) < MIN_SEEDS_FOR_VERDICT):
            return None
        lower = self.diff_mean - 2.0 * self.diff_se  # ≈ 95 % lower confidence bound of the paired difference
        return self.speedup >= 5.0 and lower >= -NONINFERIORITY_MARGIN * abs(self.ref_mean)


def summarize(results: dict[str, list[Run]], ref: str = "sb3") -> list[RowSummary]:
    """Aggregate runs (one list per row, in seed order, same seeds for every row) into one summary per row.

    Raises:
        ValueError: if rows have different numbers of seeds.
    """
    lengths = {len(v) for v in results.values()}
    if len(lengths) > 1:
        raise ValueError(f"every row needs the same seeds, got run counts {sorted(lengths)}")
    def sd(x: np.ndarray) -> float:
        return float(x.std(ddof=1)) if len(x) > 1 else 0.0

    base = results.get(ref)
    base_walls = np.array([r.wall for r in base]) if base is not None else None
    base_rets = np.array([r.ret for r in base]) if base is not None else None
    out = []
    for key, runs in results.items():
        walls = np.array([r.wall for r in runs])
        rets = np.array([r.ret for r in runs])
        speedup = diff_mean = diff_se = ref_mean = None
        if base_walls is not None and base_rets is not None:
            ref_mean = float(base_rets.mean())
            speedup = float(np.median(base_walls) / np.median(walls))
            diff = rets - base_rets
            diff_mean, diff_se = float(diff.mean()), sd(diff) / float(np.sqrt(len(diff)))
        out.append(RowSummary(key, float(np.median(walls)), float(walls.min()), float(walls.max()),
                              float(np.median([r.updates for r in runs])), float(rets.mean()), sd(rets),
                              tuple(float(x) for x in rets), speedup, diff_mean, diff_se, ref_mean))
    return out


ROWS = ("sb3", "ours1", "matched", "fast")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30_000, help="training env steps (30 per episode; default 30000)")
    p.add_argument("--num-envs", type=int, default=16, help="fleets of the vectorized rows (default 16)")
    p.add_argument("--seeds", type=int, default=5, help="training seeds 0..N-1, every row on each (default 5)")
    p.add_argument("--rows", default="sb3,matched,fast",
                   help="rows to run, in this order for each seed: sb3, ours1 (1 env, SB3's loop), matched "
                        "(vector env, same updates), fast (vector env, 1 update per vector step); "
                        "default sb3,matched,fast")
    p.add_argument("--eval-episodes", type=int, default=100, help="evaluation fleets per run (default 100)")
    p.add_argument("--out", help="also write the Markdown table to this file")
    p.add_argument("--threads", type=int, help="torch intra-op threads for every row (default: torch's default)")
    args = p.parse_args(argv)
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    bad = [r for r in rows if r not in ROWS]
    if bad or not rows:
        p.error(f"--rows: unknown row(s) {bad}; choose from {', '.join(ROWS)}")
    for name in ("steps", "num_envs", "seeds", "eval_episodes"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if len(set(rows)) < len(rows):
        p.error(f"--rows: each row once, got {args.rows!r}")
    if args.steps <= PeerSettings.learning_starts:
        p.error(f"--steps {args.steps}: must exceed learning_starts = {PeerSettings.learning_starts} env steps, "
                "or no update runs")
    if args.threads is not None and args.threads < 1:
        p.error(f"--threads must be >= 1, got {args.threads}")
    if args.out and not Path(args.out).resolve().parent.is_dir():
        p.error(f"--out {args.out}: folder {Path(args.out).resolve().parent} does not exist")
    if args.threads:
        torch.set_num_threads(args.threads)
    sb3_version = require_sb3().__version__ if "sb3" in rows else ""
    s0 = PeerSettings(steps=args.steps, eval_episodes=args.eval_episodes)
    fleet = FleetConfig()
    runners: dict[str, Callable[[PeerSettings], Run]] = {
        "sb3": lambda s: run_sb3(s, fleet),
        "ours1": lambda s: run_ours_1env(s, fleet),
        "matched": lambda s: run_ours_vec(s, fleet, args.num_envs),
        "fast": lambda s: run_ours_vec(s, fleet, args.num_envs, updates_per_vector_step=1.0),
    }
    labels = {
        "sb3": f"Stable-Baselines3 {sb3_version} DQN, 1 env",
        "ours1": "bridgefleet DQNLearner, 1 env (same RuralEnv, SB3's loop)",
        "matched": f"bridgefleet DQNLearner, FleetVectorEnv {args.num_envs} envs, same updates",
        "fast": f"bridgefleet DQNLearner, FleetVectorEnv {args.num_envs} envs, 1 update per vector step",
    }
    results: dict[str, list[Run]] = {r: [] for r in rows}
    for seed in range(args.seeds):
        for row in rows:  # interleaved: every row once per seed
            run = runners[row](replace(s0, seed=seed))
            results[row].append(run)
            print(f"seed {seed} {row}: {run.wall:.1f} s, {run.updates} updates, return {run.ret:.2f}", flush=True)
    summary = summarize(results)
    heur = heuristic_return(s0, fleet)
    lines = [
        "### Peer comparison: Stable-Baselines3's DQN", "", provenance(), "",
        f"{torch.get_num_threads()} torch threads, CPU. {s0.steps} env steps ({s0.steps // 30} episodes) per run, "
        f"seeds 0..{args.seeds - 1}, rows interleaved per seed; MLP {s0.hidden}, buffer {s0.buffer_size}, "
        f"batch {s0.batch_size}, lr {s0.learning_rate}, γ {s0.gamma}, SB3 schedule 1 update per {s0.train_freq} env "
        f"steps, target copy every {s0.target_update_interval} env steps, learning starts {s0.learning_starts}, "
        f"ε 1.0→0.05 over {s0.exploration_fraction:.0%} of the steps, Huber, grad-norm clip {s0.max_grad_norm}.",
        f"Evaluation: greedy, {s0.eval_episodes} RuralEnv fleets seeded {EVAL_SEED}+i, discounted (γ {s0.gamma}) "
        f"rural return; the rural condition-based heuristic scores {heur:.1f}.",
        "",
        "| trainer | updates | wall s, median (range) | speed-up vs SB3 | eval return, mean ± sd | "
        "return − SB3, mean ± se | ≥ 5× at equal or better return |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in summary:
        sp = f"{r.speedup:.2f}×" if r.speedup is not None else "—"
        diff = f"{r.diff_mean:+.2f} ± {r.diff_se:.2f}" if r.diff_mean is not None and r.key != "sb3" else "—"
        verdict = "—" if r.meets_target is None or r.key == "sb3" else ("yes" if r.meets_target else "no")
        lines.append(f"| {labels[r.key]} | {r.updates_median:.0f} | {r.wall_median:.1f} ({r.wall_min:.1f}–"
                     f"{r.wall_max:.1f}) | {sp} | {r.ret_mean:.2f} ± {r.ret_sd:.2f} | {diff} | {verdict} |")
    lines += ["", f"Verdict (from {MIN_SEEDS_FOR_VERDICT} seeds): speed-up ≥ 5 and mean − 2 se of the paired "
              f"return difference ≥ −{NONINFERIORITY_MARGIN:.0%} of SB3's mean return.",
              "", "Per-seed returns: " + "; ".join(
        f"{r.key} " + ", ".join(f"{x:.2f}" for x in r.returns) for r in summary)]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
