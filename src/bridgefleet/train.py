"""Training of the urban and rural agents: one loop, top to bottom.

config → vector env → (act, step) → n-step accumulator → replay → learner updates → eval / logs /
checkpoints. Both agents learn at once from the same fleets as independent DQN learners.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bridgefleet.agents.networks import RuralQNetwork, UrbanQNetwork
from bridgefleet.checkpoints import (
    atomic_torch_save,
    checkpoints,
    latest_checkpoint,
    load_replay,
    newest_intact,
    note,
    replay_path,
    rng_state,
    save_rolling,
    set_rng_state,
)
from bridgefleet.config import ConfigError, read_yaml
from bridgefleet.envs.fleet_env import FleetEnv
from bridgefleet.envs.vector import FleetVectorEnv
from bridgefleet.evaluate import best_heuristic, evaluate_heuristics, evaluate_policy
from bridgefleet.fleet.simulator import FleetSimulator, resolve_fleet
from bridgefleet.hardware import HardwareChoice, choose, cpu_model, time_updates
from bridgefleet.learner import DQNLearner, resolve_device
from bridgefleet.replay import NStepAccumulator, PrioritizedReplayBuffer, ReplayBuffer
from bridgefleet.rundir import (
    RunInterrupted,
    RunLocked,
    abandon,
    changed_fields,
    check_run_path,
    clear,
    hold,
    preflight,
    rollback_metrics,
    start,
    write_config,
)
from bridgefleet.runlog import Metrics, progress_bar, record_evaluation, tensorboard, write_summary
from bridgefleet.train_config import PRESETS, TrainConfig, resolve_config

__all__ = [
    "PRESETS",
    "TrainConfig",
    "agent_policy",
    "build_learners",
    "choose_hardware",
    "latest_checkpoint",
    "load_agents",
    "load_policy",
    "make_vector_env",
    "resolve_config",
    "resume",
    "train",
]


# -- environments ----------------------------------------------------------------------------------------
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


# -- agents ----------------------------------------------------------------------------------------------
def build_learners(cfg: TrainConfig, n_urban: int, amp: bool | None = None) -> tuple[DQNLearner, DQNLearner]:
    """The urban (branching, n_urban × 5) and rural (1 × 8) learners of a run (``amp`` as resolved)."""
    torch.manual_seed(cfg.seed)
    urban = DQNLearner(lambda: UrbanQNetwork(n_urban * 4 + 1, n_urban, hidden=cfg.urban_hidden,
                                             dueling=cfg.dueling, noisy=cfg.noisy),
                       cfg.learner_config(cfg.urban_hidden, amp))
    rural = DQNLearner(lambda: RuralQNetwork(10, 8, hidden=cfg.rural_hidden, dueling=cfg.dueling,
                                             noisy=cfg.noisy),
                       cfg.learner_config(cfg.rural_hidden, amp))
    return urban, rural


def choose_hardware(cfg: TrainConfig, n_urban: int, reprobe: bool = False) -> HardwareChoice:
    """Precision and threads for this run on this machine, probed on the run's urban network and batch size
    (the largest learner update of a step; see :mod:`bridgefleet.hardware`)."""
    d = n_urban * 4 + 1
    b = cfg.batch_size
    rng = np.random.default_rng(0)
    batch = {"obs": rng.random((b, d), dtype=np.float32), "action": rng.integers(0, 5, (b, n_urban)),
             "reward": rng.random((b, n_urban) if cfg.urban_reward == "per_bridge" else (b,), dtype=np.float32),
             "next_obs": rng.random((b, d), dtype=np.float32), "done": np.zeros(b, dtype=np.float32),
             "discount": np.full(b, 0.9, dtype=np.float32)}
    eager = dataclasses.replace(cfg, compile="off")  # compiling for a probe would cost more than it measures

    def probe(amp: str, threads: int) -> float:
        learner = build_learners(eager, n_urban, amp != "off")[0]  # "bf16" on CPU, "fp16" on CUDA
        return time_updates(lambda: learner.update(batch), threads)

    key = f"urban {d}-{'-'.join(map(str, cfg.urban_hidden))}-{n_urban}x5 batch {b}"
    return choose(cfg.amp, cfg.threads, resolve_device(cfg.device), probe, key, reprobe)


def agent_policy(urban: DQNLearner, rural: DQNLearner) -> Callable:
    """The trained agents as a policy for :func:`bridgefleet.evaluate.evaluate_policy` (greedy)."""

    def policy(sim: FleetSimulator, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        u, r = sim.observe()
        return urban.greedy(u), rural.greedy(r)[:, 0]

    return policy


def _make_replay(cfg: TrainConfig, obs_dim: int, n_branches: int, reward_shape: tuple[int, ...], total_updates: int):
    # The smallest types that hold the values (actions < 8, done 0/1); the learner casts on the device. An
    # urban transition of the default fleet is 753 bytes (896 with int64 actions and float32 done).
    spec = {"obs": ((obs_dim,), np.float32), "action": ((n_branches,), np.int8),
            "reward": (reward_shape, np.float32), "next_obs": ((obs_dim,), np.float32),
            "done": ((), np.uint8), "discount": ((), np.float32)}
    if cfg.per:
        return PrioritizedReplayBuffer(cfg.buffer_capacity, spec, alpha=cfg.per_alpha,
                                       beta_start=cfg.per_beta_start, beta_end=1.0,
                                       beta_steps=max(1, total_updates))
    return ReplayBuffer(cfg.buffer_capacity, spec)


# -- the loop --------------------------------------------------------------------------------------------
class Trainer:
    """One training run writing into ``run_dir`` (see :func:`train`)."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, progress: bool = True, reprobe: bool = False):
        self.cfg = cfg
        self.run_dir = run_dir
        self.progress = progress
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        fleet_cfg, _ = resolve_fleet(cfg.fleet)
        self.fleet_cfg = fleet_cfg
        self.env = make_vector_env(cfg)
        self.n_urban = fleet_cfg.n_urban
        self.hardware = choose_hardware(cfg, self.n_urban, reprobe)
        torch.set_num_threads(self.hardware.threads)
        self.urban, self.rural = build_learners(cfg, self.n_urban, self.hardware.amp != "off")
        e = cfg.num_envs
        steps_total = cfg.schedule_total * fleet_cfg.horizon_years / e  # β spans the schedule
        self.total_updates = int(steps_total * cfg.updates_per_step)
        # PER's β is annealed over the updates that sample, which start once the replay holds
        # learning_starts transitions (num_envs a step, after the n-step delay), so it reaches 1 by the end.
        steps_before = -(-max(cfg.learning_starts, cfg.batch_size) // e) + cfg.n_step
        sampling_updates = max(1, self.total_updates - int(steps_before * cfg.updates_per_step))
        gamma = fleet_cfg.discount
        u_reward = (self.n_urban,) if cfg.urban_reward == "per_bridge" else ()
        self.replay_u = _make_replay(cfg, self.n_urban * 4 + 1, self.n_urban, u_reward, sampling_updates)
        self.replay_r = _make_replay(cfg, 10, 1, (), sampling_updates)
        self.acc_u = NStepAccumulator(e, cfg.n_step, gamma)
        self.acc_r = NStepAccumulator(e, cfg.n_step, gamma)
        self.rng = np.random.default_rng(cfg.seed)
        self.episodes_done = 0
        self.env_steps = 0
        self.wall_before = 0.0
        self.update_credit = 0.0
        self.best_eval: float | None = None
        self.episodes_to_target: int | None = None
        self.seconds_to_target: float | None = None
        self.last_eval: float | None = None
        self.losses: deque[float] = deque(maxlen=50)  # recent losses for logging only
        self.target_return: float | None = None
        self.target_policy = ""
        self.metrics: Metrics | None = None
        self.purge_step: int | None = None  # set by a resume: TensorBoard steps after the checkpoint go
        self.on_eval: Callable[[int, float, float], Any] | None = None  # (episodes, seconds, return), e.g. Tune

    # state ---------------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "urban": self.urban.state_dict(), "rural": self.rural.state_dict(),
            "episodes_done": self.episodes_done, "env_steps": self.env_steps,
            "wall_seconds": self.wall_before + (time.perf_counter() - self.t0),
            "update_credit": self.update_credit, "rng": rng_state(self.rng),
            "torch_rng": torch.get_rng_state(),
            "per_step": [getattr(b, "step", 0) for b in (self.replay_u, self.replay_r)],
            "episodes_to_target": self.episodes_to_target, "seconds_to_target": self.seconds_to_target,
            "last_eval": self.last_eval, "target_return": self.target_return, "target_policy": self.target_policy,
            "config": self.cfg.to_dict(),
        }

    def load_state_dict(self, s: dict[str, Any]) -> None:
        self.urban.load_state_dict(s["urban"])
        self.rural.load_state_dict(s["rural"])
        self.episodes_done, self.env_steps = int(s["episodes_done"]), int(s["env_steps"])
        self.wall_before = float(s["wall_seconds"])
        self.update_credit = float(s["update_credit"])
        set_rng_state(self.rng, s["rng"])
        torch.set_rng_state(s["torch_rng"])
        for buf, step in zip((self.replay_u, self.replay_r), s["per_step"], strict=True):
            if hasattr(buf, "step"):
                buf.step = int(step)
        self.episodes_to_target, self.seconds_to_target = s["episodes_to_target"], s["seconds_to_target"]
        self.last_eval, self.target_return = s["last_eval"], s["target_return"]
        self.target_policy = s["target_policy"]

    def replay_state(self) -> dict[str, dict[str, Any]]:
        return {"urban": self.replay_u.state_dict(), "rural": self.replay_r.state_dict()}

    def load_replay_state(self, states: dict[str, dict[str, Any]]) -> None:
        self.replay_u.load_state_dict(states["urban"])
        self.replay_r.load_state_dict(states["rural"])

    def save_checkpoint(self) -> Path:
        if self.metrics is not None:
            self.metrics.flush()
        replay = self.replay_state() if self.cfg.checkpoint_replay else None
        return save_rolling(self.run_dir, self.episodes_done, self.state_dict(), replay=replay)

    # pieces --------------------------------------------------------------------------------------------
    def epsilon(self) -> float:
        return self.cfg.epsilon(self.episodes_done)

    def evaluate(self) -> float:
        res = evaluate_policy(agent_policy(self.urban, self.rural), self.fleet_cfg, self.cfg.eval_episodes,
                              self.cfg.eval_seed, "agents")
        return res.mean_return

    def _learn(self, learner: DQNLearner, replay: ReplayBuffer) -> float | None:
        if len(replay) < max(self.cfg.learning_starts, self.cfg.batch_size):
            return None
        batch = replay.sample(self.cfg.batch_size, self.rng)
        out = learner.update(batch)
        if isinstance(replay, PrioritizedReplayBuffer):
            replay.update_priorities(batch["indices"], out["td_error"])
        return out["loss"]

    def run(self) -> dict[str, Any]:
        cfg = self.cfg
        scale = cfg.reward_scale
        self.t0 = time.perf_counter()
        if self.target_return is None:
            results = evaluate_heuristics(self.fleet_cfg, episodes=cfg.eval_episodes, seed=cfg.eval_seed)
            best = best_heuristic(results)
            self.target_return, self.target_policy = best.mean_return, best.policy
        writer = tensorboard(self.run_dir, self.purge_step)
        self.metrics = metrics = Metrics(self.run_dir / "metrics.csv")
        # Fleets finish episodes together, so a run ends at the next multiple of num_envs.
        total = -(-cfg.episodes // cfg.num_envs) * cfg.num_envs
        bar = progress_bar(total, self.episodes_done, self.progress)
        # Episodes start at the same time in every fleet, each seeded by the episodes done before it, so a
        # run resumed from a checkpoint (taken between episodes) meets the same fleets as one never stopped.
        obs, _ = self.env.reset(seed=cfg.seed + self.episodes_done * 7919)
        ep_return = np.zeros(cfg.num_envs)
        t_disc = 0
        gamma = self.fleet_cfg.discount
        updates = 0
        t_upd = time.perf_counter()
        next_eval = (self.episodes_done // cfg.eval_every + 1) * cfg.eval_every
        next_ckpt = (self.episodes_done // cfg.checkpoint_every + 1) * cfg.checkpoint_every
        while self.episodes_done < cfg.episodes:
            eps = self.epsilon()
            ua = self.urban.act(obs["urban"], eps, self.rng)
            ra = self.rural.act(obs["rural"], eps, self.rng)
            next_obs, reward, term, trunc, info = self.env.step({"urban": ua, "rural": ra[:, 0]})
            done = term | trunc
            last = _final_obs(next_obs, info, done)
            if cfg.reward_mode == "shared":
                r_u = r_r = reward
            else:
                r_u, r_r = _info_field(info, "urban_reward", done), _info_field(info, "rural_reward", done)
            if cfg.urban_reward == "per_bridge":
                r_u = _info_field(info, "bridge_reward", done)[:, : self.n_urban]
            tu = self.acc_u.add(obs["urban"], ua, np.asarray(r_u) * scale, last["urban"], term, trunc)
            tr = self.acc_r.add(obs["rural"], ra, np.asarray(r_r) * scale, last["rural"], term, trunc)
            if len(tu["done"]):
                self.replay_u.add(tu)
                self.replay_r.add(tr)
            self.env_steps += cfg.num_envs
            ep_return += gamma**t_disc * reward
            t_disc += 1
            obs = next_obs
            self.update_credit += cfg.updates_per_step
            while self.update_credit >= 1.0:
                self.update_credit -= 1.0
                lu = self._learn(self.urban, self.replay_u)
                self._learn(self.rural, self.replay_r)
                if lu is not None:
                    self.losses.append(float(lu))
                    updates += 1
            if done.any():
                n_done = int(done.sum())
                finished = ep_return[done]
                ep_return[done] = 0.0
                t_disc = 0
                for r in finished:
                    self.episodes_done += 1
                    metrics.train(self.episodes_done, self.elapsed(), float(r), eps)
                writer.add_scalar("train/return", float(finished.mean()), self.episodes_done)
                if self.losses:
                    writer.add_scalar("train/loss", float(np.mean(self.losses)), self.episodes_done)
                writer.add_scalar("train/epsilon", eps, self.episodes_done)
                now = time.perf_counter()
                ups = updates / max(now - t_upd, 1e-9)
                writer.add_scalar("perf/updates_per_second", ups, self.episodes_done)
                if self.episodes_done >= next_eval or self.episodes_done >= cfg.episodes:
                    next_eval += cfg.eval_every
                    self.last_eval = self.evaluate()
                    record_evaluation(self, writer, metrics)
                    if cfg.stop_at_target and self.episodes_to_target == self.episodes_done:
                        break
                if self.episodes_done >= next_ckpt:
                    next_ckpt += cfg.checkpoint_every
                    self.save_checkpoint()
                if bar is not None:
                    bar.update(n_done)
                    bar.set_postfix(ret=f"{finished.mean():.0f}",
                                    eval=f"{self.last_eval:.0f}" if self.last_eval is not None else "-",
                                    target=f"{self.target_return:.0f}", upd_s=f"{ups:.0f}",
                                    s_ep=f"{self.elapsed() / max(self.episodes_done, 1):.3f}")
                obs, _ = self.env.reset(seed=cfg.seed + self.episodes_done * 7919)
        if bar is not None:
            bar.close()
        self.save_checkpoint()
        writer.close()
        metrics.close()
        return self.finish()

    def elapsed(self) -> float:
        return self.wall_before + (time.perf_counter() - self.t0)

    def finish(self) -> dict[str, Any]:
        wall = self.elapsed()
        atomic_torch_save({"urban": self.urban.state_dict(), "rural": self.rural.state_dict(),
                           "config": self.cfg.to_dict()}, self.run_dir / "final.pt")
        summary = {
            "episodes": self.episodes_done, "wall_seconds": wall,
            "seconds_per_episode": wall / max(self.episodes_done, 1),
            "final_eval_return": self.last_eval, "target_return": self.target_return,
            "target_policy": self.target_policy, "episodes_to_target": self.episodes_to_target,
            "seconds_to_target": self.seconds_to_target, "device": str(self.urban.device),
            "torch_version": torch.__version__, "preset": self.cfg.preset, "num_envs": self.cfg.num_envs,
            "env_steps": self.env_steps, "updates": self.urban.step, "updates_per_second": self.urban.step / wall,
            "threads": self.hardware.threads, "amp": self.hardware.amp, "hardware": self.hardware.to_dict(),
            "per_beta_end": self.replay_u.beta() if isinstance(self.replay_u, PrioritizedReplayBuffer) else None,
            "machine": cpu_model(),
        }
        write_summary(self.run_dir, summary)
        return summary


def train(cfg: TrainConfig, out: str | Path | None = None, progress: bool = True,
          reprobe: bool = False, on_eval: Callable[[int, float, float], Any] | None = None
          ) -> tuple[Path, dict[str, Any]]:
    """Train from scratch into ``out`` (default runs/<preset>-<time>); returns (run dir, summary).
    ``reprobe``: measure precision and threads again instead of using this machine's cached choice;
    ``on_eval(episodes, seconds, mean evaluation return)`` is called after each evaluation (a sweep reports it).
    The device, inventory and agent split are checked before the folder is made; a run that fails before
    its first checkpoint removes what it wrote; Ctrl-C writes a checkpoint (:class:`RunInterrupted`).

    Raises:
        FileExistsError: ``out`` already holds a run with a checkpoint (nothing written is overwritten).
        ValueError: the device, inventory or split is unusable (nothing is written).
    """
    preflight(cfg)
    run_dir = Path(out) if out else Path("runs") / f"{cfg.preset}-{time.strftime('%Y%m%d-%H%M%S')}"
    check_run_path(run_dir)
    made = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with hold(run_dir):  # one writer per folder: a second train, resume or trial is refused here
            start(run_dir, cfg.to_dict())
            _note_rounding(cfg)
            trainer = _trainer(cfg, run_dir, progress, reprobe)
            trainer.on_eval = on_eval
            return run_dir, _run(trainer)
    except (RunInterrupted, RunLocked):
        raise
    except BaseException:
        abandon(run_dir, made)
        raise


def _note_rounding(cfg: TrainConfig) -> None:
    if cfg.episodes % cfg.num_envs:
        note(f"note: {cfg.episodes} episodes run as {-(-cfg.episodes // cfg.num_envs) * cfg.num_envs}, the next "
             f"multiple of the {cfg.num_envs} fleets simulated at once (num_envs)")


def _run(trainer) -> dict[str, Any]:
    """The trainer's loop; on Ctrl-C a checkpoint is written first, then :class:`RunInterrupted` is raised."""
    try:
        summary = trainer.run()
    except KeyboardInterrupt:
        path = trainer.save_checkpoint()
        raise RunInterrupted(trainer.run_dir, trainer.episodes_done, path) from None
    if summary["updates"] == 0:
        need = max(trainer.cfg.learning_starts, trainer.cfg.batch_size)
        note(f"warning: no learner update happened: the replay never held {need} transitions (learning_starts "
             f"{trainer.cfg.learning_starts}, batch_size {trainer.cfg.batch_size}), so the policy is untrained; "
             "train more episodes or lower learning_starts")
    return summary


def _trainer(cfg: TrainConfig, run_dir: Path, progress: bool, reprobe: bool):
    if cfg.agent == "bridge":
        from bridgefleet.train_bridge import BridgeTrainer

        return BridgeTrainer(cfg, run_dir, progress, reprobe)
    return Trainer(cfg, run_dir, progress, reprobe)


def resume(run_dir: str | Path, progress: bool = True, episodes: int | None = None,
           reprobe: bool = False, device: str | None = None,
           on_eval: Callable[[int, float, float], Any] | None = None) -> tuple[Path, dict[str, Any]]:
    """Continue the run in ``run_dir`` from its newest intact checkpoint, as if it had never stopped: ε and
    PER β continue on the run's first schedule (``schedule_episodes``) when ``episodes`` changes the total,
    metrics.csv and TensorBoard are rolled back to the checkpoint, and the replay buffers are restored when
    the run saved them (``checkpoint_replay``). A folder whose run stopped before its first checkpoint is
    started again from episode 0.

    Raises:
        FileNotFoundError: no config.yaml, or checkpoints exist but none is intact.
        ValueError: the run has already trained ``episodes``.
    """
    run_dir = Path(run_dir)
    if not (run_dir / "config.yaml").exists():
        raise FileNotFoundError(f"{run_dir}: no config.yaml (not a bridgefleet run directory)")
    with hold(run_dir):  # one writer per folder
        return _resume(run_dir, progress, episodes, reprobe, device, on_eval)


def _resume(run_dir: Path, progress: bool, episodes: int | None, reprobe: bool, device: str | None,
            on_eval: Callable[[int, float, float], Any] | None) -> tuple[Path, dict[str, Any]]:
    data = read_yaml(run_dir / "config.yaml")
    if not isinstance(data, dict):
        raise ConfigError(f"{run_dir / 'config.yaml'}: expected a mapping of training options")
    if episodes is not None and episodes != data.get("episodes"):
        data["schedule_episodes"] = data.get("schedule_episodes") or data.get("episodes")
        data["episodes"] = episodes
    if device is not None:
        data["device"] = device
    cfg = TrainConfig.from_dict(data, str(run_dir / "config.yaml"))
    preflight(cfg)
    found = newest_intact(checkpoints(run_dir)[::-1])  # onto the CPU; the learners move it
    if found is None and checkpoints(run_dir):
        raise FileNotFoundError(f"{run_dir}: no intact checkpoint to resume from (each is named above); start "
                                "again with train --out into a new folder")
    if found is not None:  # the run's config.yaml edited since the checkpoint: refused, not resumed wrongly
        trained = TrainConfig.from_dict(dict(found[1]["config"]), str(found[0])).to_dict()
        diff = changed_fields(trained, cfg.to_dict())
        if diff:
            name, was, now = diff[0]
            more = f" (and {len(diff) - 1} more field(s))" if len(diff) > 1 else ""
            raise ConfigError(f"{run_dir / 'config.yaml'}: {name} is {now!r} but the checkpoint {found[0].name} "
                              f"was trained with {was!r}{more}; a resume changes only episodes (--episodes) and "
                              f"device (--device): put {name}: {was!r} back, or train the new config with --out")
    if found is not None and found[1]["episodes_done"] >= cfg.episodes:
        done = found[1]["episodes_done"]
        asked = f"--episodes {episodes} would add none" if episodes is not None else f"its total is {cfg.episodes}"
        raise ValueError(f"{run_dir} has already trained {done} episodes and {asked}: pass --episodes N "
                         f"(N > {done}) to train further")
    _note_rounding(cfg)
    if found is None:
        note(f"note: {run_dir} stopped before its first checkpoint; training starts again from episode 0")
        clear(run_dir)
    write_config(run_dir, cfg.to_dict())
    trainer = _trainer(cfg, run_dir, progress, reprobe)
    trainer.on_eval = on_eval
    if found is None:
        return run_dir, _run(trainer)
    ckpt, state = found
    trainer.load_state_dict(state)
    done = trainer.episodes_done
    dropped = rollback_metrics(run_dir, done)
    trainer.purge_step = done + 1
    replay = replay_path(ckpt)
    if replay.exists():
        trainer.load_replay_state(load_replay(replay))
        how = "replay buffers restored"
    else:
        how = (f"replay buffers are not checkpointed (checkpoint_replay: false), so learning resumes after "
               f"{cfg.learning_starts} new transitions")
    step = (state.get("urban") or state["bridge"])["step"]
    note(f"resuming {run_dir} at episode {done} (update {step}, {ckpt.name}); {how}"
         + (f"; {dropped} metrics rows after the checkpoint dropped" if dropped else ""))
    return run_dir, _run(trainer)


def _load_run(run_dir: str | Path, device: str) -> tuple[TrainConfig, dict[str, Any]]:
    """The run's config and model state: final.pt, else (missing or damaged) its newest intact checkpoint,
    with a note naming the file used. Storages are mapped to the CPU, so a run trained on a GPU opens anywhere."""
    run_dir = Path(run_dir)
    final = run_dir / "final.pt"
    paths = ([final] if final.exists() else []) + checkpoints(run_dir)[::-1]
    if not paths:
        raise FileNotFoundError(f"{run_dir}: no final.pt or checkpoint (is it a bridgefleet run directory?)")
    resolve_device(device)  # an unusable --device is named before any file is read
    found = newest_intact(paths)  # onto the CPU (a GPU run opens anywhere); the learners move it
    if found is None:
        raise FileNotFoundError(f"{run_dir}: no intact final.pt or checkpoint (each is named above)")
    path, state = found
    if path != final:
        note(f"note: {run_dir}: no {'intact ' if final.exists() else ''}final.pt; using {path.name} "
             f"(episode {state['episodes_done']})")
    data = dict(state["config"])
    data["device"] = device
    data["compile"] = "off"
    return TrainConfig.from_dict(data, str(path)), state


def load_agents(run_dir: str | Path, device: str = "auto") -> tuple[TrainConfig, DQNLearner, DQNLearner]:
    """The trained urban and rural agents of a finished run (final.pt, else the latest checkpoint).

    Raises:
        FileNotFoundError: if the folder holds neither. ValueError: a per-bridge run (use :func:`load_policy`).
    """
    cfg, state = _load_run(run_dir, device)
    if cfg.agent != "fleet":
        raise ValueError(f"{run_dir} holds a per-bridge agent (agent: {cfg.agent}), not urban and rural agents")
    fleet_cfg, _ = resolve_fleet(cfg.fleet)
    urban, rural = build_learners(cfg, fleet_cfg.n_urban)
    urban.load_state_dict(state["urban"])
    rural.load_state_dict(state["rural"])
    return cfg, urban, rural


def load_policy(run_dir: str | Path, device: str = "auto") -> tuple[TrainConfig, Callable]:
    """The greedy policy of a trained run of either agent, for :func:`bridgefleet.evaluate.evaluate_policy`.

    Raises:
        FileNotFoundError: if the folder holds no final.pt or checkpoint.
    """
    cfg, state = _load_run(run_dir, device)
    if cfg.agent == "bridge":
        from bridgefleet.train_bridge import load_bridge_policy

        return cfg, load_bridge_policy(state, cfg, device)
    _, urban, rural = load_agents(run_dir, device)
    return cfg, agent_policy(urban, rural)
