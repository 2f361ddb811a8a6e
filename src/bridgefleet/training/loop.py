"""The off-policy training skeleton both agents run: one loop, top to bottom.

config → agent's collection (one vector episode: every fleet's years) → replay → learner updates (an update
credit per simulated year) → weight average → episode log → evaluation (best model kept) → checkpoint → final.pt +
summary.json.

An agent is a subclass that supplies what differs (:class:`Trainer`'s abstract methods): its learners (named,
as their checkpoint sections are), its replays, how it collects one vector episode, how it samples a batch, its
greedy policy and the batch its hardware probe times. Everything else — run state, ε and learning-rate
schedules, update timing, evaluation and checkpoint timing, the best model, ``stop_at_target``, resume,
finish — is here once (the layout follows CleanRL's one loop and SB3's ``OffPolicyAlgorithm``; see
../docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from bridgefleet.agents.learner import DQNLearner, resolve_device
from bridgefleet.config import FleetConfig
from bridgefleet.config.training import TrainConfig
from bridgefleet.evaluation.evaluate import best_heuristic, evaluate_heuristics, evaluate_policy
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.replay import PrioritizedReplayBuffer, ReplayBuffer
from bridgefleet.runs.checkpoints import atomic_torch_save, rng_state, save_rolling, set_rng_state
from bridgefleet.runs.log import Metrics, progress_bar, tensorboard, write_summary
from bridgefleet.sim.simulator import FleetSimulator
from bridgefleet.training.hardware import HardwareChoice, choose, cpu_model, time_updates

OnEval = Callable[[int, float, float], Any]
"""``on_eval(episodes, seconds, mean evaluation return)``, called after each evaluation (a sweep reports it)."""


def fleet_reward_scale(fleet_cfg: FleetConfig, fleet: Any, seed: int, num_envs: int) -> float:
    """1 / the standard deviation of one bridge's yearly reward (reward units) when nothing is done, over every
    bridge and year of ``num_envs`` fleets seeded ``seed``, ``seed + 1``, … (the run's first training fleets):
    the scale of what a bridge's Q-value must represent, so rewards × it are of order 1 on any fleet. 1.0 when
    the rewards do not vary."""
    sim = FleetSimulator(fleet_cfg, num_envs, fleet)
    sim.reset(None, [seed + i for i in range(num_envs)])
    none = np.zeros((num_envs, sim.n_bridges), dtype=np.int64)
    rewards = [sim.step_requests(none).bridge_reward for _ in range(fleet_cfg.horizon_years)]
    std = float(np.std(np.stack(rewards), dtype=np.float64))
    return 1.0 / std if std > 0 else 1.0


def write_final(run: Any, weights: dict[str, dict[str, torch.Tensor]], device: str, hardware: HardwareChoice,
                **extra: Any) -> dict[str, Any]:
    """final.pt (each learner's deciding weights by name, as ``{name: {"online": weights}}``, the config, the best
    evaluation and the updates) and summary.json (the fields every trainer writes, then ``extra``) of a finished
    ``run`` (a :class:`Trainer` or a :class:`bridgefleet.training.distill_run.DistillTrainer`); returns the summary."""
    wall = run.elapsed()
    atomic_torch_save({**{name: {"online": w} for name, w in weights.items()}, "config": run.cfg.to_dict(),
                       "best_eval_return": run.best_eval, "updates": run.update_step}, run.run_dir / "final.pt")
    summary = {
        "episodes": run.episodes_done, "wall_seconds": wall,
        "seconds_per_episode": wall / max(run.episodes_done, 1), "final_eval_return": run.last_eval,
        "best_eval_return": run.best_eval,
        "target_return": run.target_return, "target_policy": run.target_policy,
        "episodes_to_target": run.episodes_to_target, "seconds_to_target": run.seconds_to_target,
        "device": device, "torch_version": torch.__version__, "preset": run.cfg.preset,
        "agent": run.agent, "num_envs": run.cfg.num_envs, "updates": run.update_step,
        "updates_per_second": run.update_step / wall, "threads": hardware.threads,
        "amp": hardware.amp, "hardware": hardware.to_dict(), "machine": cpu_model(), **extra,
    }
    write_summary(run.run_dir, summary)
    return summary


class Run(Protocol):
    """What resume, logging and sweeps need from a trainer."""

    cfg: TrainConfig
    run_dir: Path
    episodes_done: int
    on_eval: OnEval | None
    purge_step: int | None

    def run(self) -> dict[str, Any]: ...

    def save_checkpoint(self) -> Path: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...

    def load_replay_state(self, states: dict[str, dict[str, Any]]) -> None: ...

    @property
    def update_step(self) -> int: ...


class Trainer(ABC):
    """One training run writing into ``run_dir`` (see :func:`bridgefleet.training.runner.train`).

    Subclasses set :attr:`agent` (the name in summary.json and evaluation tables) and implement the abstract
    methods; :meth:`run` is the loop.
    """

    agent = ""
    """The agent's name: summary.json's ``agent`` and the evaluation row's label."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, progress: bool = True, reprobe: bool = False):
        self.cfg = cfg
        self.run_dir = run_dir
        self.progress = progress
        (run_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        self.fleet_cfg, self.fleet = resolve_fleet(cfg.fleet)
        self.reward_scale = (fleet_reward_scale(self.fleet_cfg, self.fleet, cfg.seed, cfg.num_envs)
                             if cfg.reward_scale == "auto" else float(cfg.reward_scale))
        """Rewards are multiplied by this before learning (``reward_scale`` as resolved)."""
        self.updates_per_step = float(cfg.updates_per_step)
        """Learner updates per simulated year (``updates_per_step``, raised by an agent's ``setup`` where the
        config asks for a least replay ratio)."""
        self.setup()
        self.hardware = self.choose_hardware(reprobe)
        torch.set_num_threads(self.hardware.threads)
        self.learners: dict[str, DQNLearner] = self.build_learners(self.hardware.amp != "off")
        self.replays: dict[str, ReplayBuffer] = self.build_replays()
        self.rng = np.random.default_rng(cfg.seed)
        # run state: everything state_dict keeps
        self.episodes_done = 0
        self.env_steps = 0
        self.wall_before = 0.0
        self.update_credit = 0.0
        self.last_eval: float | None = None
        self.best_eval: float | None = None
        self.lr_scale = 1.0  # the learning rate's cuts so far (lr_drop_factor), × the schedule's
        self.best_state: dict[str, dict[str, torch.Tensor]] | None = None
        self.average: dict[str, dict[str, torch.Tensor]] | None = None  # cfg.weight_average's, by learner
        self.episodes_to_target: int | None = None
        self.seconds_to_target: float | None = None
        self.target_return: float | None = None
        self.target_policy = ""
        # this process only
        self.losses: deque[float] = deque(maxlen=50)  # recent losses of the first learner, for logging
        self.metrics: Metrics | None = None
        self.purge_step: int | None = None  # set by a resume: TensorBoard steps after the checkpoint go
        self.on_eval: OnEval | None = None
        self.t0 = time.perf_counter()

    # what an agent supplies -------------------------------------------------------------------------------
    @abstractmethod
    def setup(self) -> None:
        """Build what collection needs (simulator, environments), before the hardware probe and the learners."""

    @abstractmethod
    def build_learners(self, amp: bool) -> dict[str, DQNLearner]:
        """The run's learners by name (their checkpoint sections), seeded by ``cfg.seed``."""

    @abstractmethod
    def build_replays(self) -> dict[str, ReplayBuffer]:
        """One replay per learner, by the same names."""

    @abstractmethod
    def run_episode(self, epsilon: float) -> np.ndarray:
        """Collect one vector episode (every fleet's years) with exploration ``epsilon``, calling
        :meth:`learn_step` after each simulated year, and add its transitions to the replays; returns each
        fleet's discounted return, float64 (num_envs,)."""

    @abstractmethod
    def policy(self) -> Callable:
        """The greedy policy of the learners now, for :func:`bridgefleet.evaluation.evaluate.evaluate_policy`."""

    @abstractmethod
    def probe(self) -> tuple[Callable[[bool], DQNLearner], dict[str, np.ndarray], str]:
        """For the hardware probe: a builder of the largest learner (amp on/off), a batch of the run's size
        and the probe's cache key (see :mod:`bridgefleet.training.hardware`)."""

    def sample(self, name: str, batch_size: int | None = None) -> dict[str, np.ndarray]:
        """A replay batch for learner ``name`` (``batch_size`` transitions, default the run's)."""
        return self.replays[name].sample(batch_size or self.cfg.batch_size, self.rng)

    def summary_extra(self) -> dict[str, Any]:
        """Agent-specific fields of summary.json."""
        return {}

    # the pieces -------------------------------------------------------------------------------------------
    def choose_hardware(self, reprobe: bool) -> HardwareChoice:
        """Precision and threads for this run on this machine, probed on its largest learner update."""
        build, batch, key = self.probe()

        def timed(amp: str, threads: int) -> float:
            learner = build(amp != "off")  # "bf16" on CPU, "fp16" on CUDA
            return time_updates(lambda: learner.update(batch), threads)

        return choose(self.cfg.amp, self.cfg.threads, resolve_device(self.cfg.device), timed, key, reprobe)

    @property
    def first(self) -> DQNLearner:
        return next(iter(self.learners.values()))

    @property
    def update_step(self) -> int:
        """Learner updates so far (of the first learner; every learner updates together)."""
        return self.first.step

    def epsilon(self) -> float:
        return self.cfg.epsilon(self.episodes_done)

    def learning_rate(self) -> float:
        """The schedule's learning rate now (``lr_end_fraction``) × the cuts so far (``lr_drop_factor``)."""
        return self.cfg.lr_at(self.episodes_done) * self.lr_scale

    def elapsed(self) -> float:
        return self.wall_before + (time.perf_counter() - self.t0)

    def replay_ready(self) -> bool:
        need = max(self.cfg.learning_starts, self.cfg.batch_size)
        return all(len(r) >= need for r in self.replays.values())

    def learn_step(self) -> None:
        """After a simulated year: :attr:`updates_per_step` more update credit; one update of every learner per
        whole credit once the replays hold ``learning_starts`` transitions (credit held before that is capped
        at max(1, updates_per_step), so learning starts with at most that many extra updates)."""
        self.update_credit += self.updates_per_step
        while self.update_credit >= 1.0 and self.replay_ready():
            self.update_credit -= 1.0
            for i, (name, learner) in enumerate(self.learners.items()):
                batch = self.sample(name)
                out = learner.update(batch)
                replay = self.replays[name]
                if isinstance(replay, PrioritizedReplayBuffer):
                    replay.update_priorities(batch["indices"], out["td_error"])
                if i == 0:
                    self.losses.append(out["loss"])
        self.update_credit = min(self.update_credit, max(1.0, self.updates_per_step))

    def evaluate(self) -> float:
        with self.decided_by():
            res = evaluate_policy(self.policy(), self.fleet_cfg, self.cfg.eval_episodes, self.cfg.eval_seed,
                                  self.agent)
        return res.mean_return

    def update_average(self) -> None:
        """After a vector episode: θ̄ ← d θ̄ + (1 − d) θ for each learner's acting weights θ (``weight_average`` d),
        from the first vector episode after which the learners have updated (their first weights before); the
        same in-place lerp as the learner's Polyak target."""
        d = self.cfg.weight_average
        if d is None or self.update_step == 0:
            return
        if self.average is None:
            self.average = self._acting_weights()
            return
        for name, learner in self.learners.items():
            avg, now = self.average[name], learner.acting.state_dict()
            floats = [k for k, v in now.items() if v.is_floating_point()]
            torch._foreach_lerp_([avg[k] for k in floats], [now[k] for k in floats], 1.0 - d)
            for k in now.keys() - set(floats):  # integer buffers (none in these networks) are not averaged
                avg[k].copy_(now[k])

    def _acting_weights(self) -> dict[str, dict[str, torch.Tensor]]:
        """A copy of each learner's acting weights, by learner."""
        return {name: {k: v.detach().clone() for k, v in learner.acting.state_dict().items()}
                for name, learner in self.learners.items()}

    def decided_weights(self) -> dict[str, dict[str, torch.Tensor]]:
        """The weights that decide, by learner (copies): the average (``weight_average``) once there is one, else
        the acting network's."""
        if self.average is None:
            return self._acting_weights()
        return {name: {k: v.clone() for k, v in avg.items()} for name, avg in self.average.items()}

    @contextlib.contextmanager
    def decided_by(self) -> Iterator[None]:
        """Within it the learners' acting networks hold :meth:`decided_weights` (the average), put back after."""
        if self.average is None:
            yield
            return
        kept = self._acting_weights()
        try:
            for name, learner in self.learners.items():
                learner.acting.load_state_dict(self.average[name])
            yield
        finally:
            for name, learner in self.learners.items():
                learner.acting.load_state_dict(kept[name])

    def record_evaluation(self, writer: Any) -> None:
        """After an evaluation (``last_eval``): the best model, TensorBoard, metrics.csv, ``on_eval`` (checkpointed
        first, since a sweep's scheduler may stop the run there) and the first episode and second at which the
        target was reached."""
        ep = self.episodes_done
        self.lr_scale = self.cfg.lr_scale_after(self.lr_scale, self.best_eval, self.last_eval, ep)
        writer.add_scalar("train/lr", self.learning_rate(), ep)
        if self.best_eval is None or self.last_eval > self.best_eval:
            self.best_eval = self.last_eval
            self.best_state = self.decided_weights()
        writer.add_scalar("eval/return", self.last_eval, ep)
        writer.add_scalar("eval/target_return", self.target_return, ep)
        self.metrics.eval(ep, self.elapsed(), self.last_eval, self.target_return)
        if self.on_eval is not None:
            self.save_checkpoint()
            self.on_eval(ep, self.elapsed(), self.last_eval)
        if self.episodes_to_target is None and self.last_eval >= self.target_return:
            self.episodes_to_target, self.seconds_to_target = ep, self.elapsed()

    # the loop ---------------------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        cfg = self.cfg
        self.t0 = time.perf_counter()
        if self.target_return is None:
            best = best_heuristic(evaluate_heuristics(self.fleet_cfg, episodes=cfg.eval_episodes, seed=cfg.eval_seed))
            self.target_return, self.target_policy = best.mean_return, best.policy
        writer = tensorboard(self.run_dir, self.purge_step)
        self.metrics = metrics = Metrics(self.run_dir / "metrics.csv")
        # Fleets finish episodes together, so a run ends at the next multiple of num_envs.
        total = -(-cfg.episodes // cfg.num_envs) * cfg.num_envs
        bar = progress_bar(total, self.episodes_done, self.progress)
        next_eval = (self.episodes_done // cfg.eval_every + 1) * cfg.eval_every
        next_ckpt = (self.episodes_done // cfg.checkpoint_every + 1) * cfg.checkpoint_every
        t_upd, upd0 = time.perf_counter(), self.update_step
        while self.episodes_done < cfg.episodes:
            for learner in self.learners.values():
                for group in learner.optimizer.param_groups:
                    group["lr"] = self.learning_rate()
            eps = self.epsilon()
            returns = self.run_episode(eps)
            self.update_average()
            for r in returns:
                self.episodes_done += 1
                metrics.train(self.episodes_done, self.elapsed(), float(r), eps)
            ups = (self.update_step - upd0) / max(time.perf_counter() - t_upd, 1e-9)
            writer.add_scalar("train/return", float(returns.mean()), self.episodes_done)
            writer.add_scalar("train/epsilon", eps, self.episodes_done)
            if self.losses:
                writer.add_scalar("train/loss", float(np.mean(self.losses)), self.episodes_done)
            writer.add_scalar("perf/updates_per_second", ups, self.episodes_done)
            if self.episodes_done >= next_eval or self.episodes_done >= cfg.episodes:
                next_eval += cfg.eval_every
                self.last_eval = self.evaluate()
                self.record_evaluation(writer)
                if cfg.stop_at_target and self.episodes_to_target == self.episodes_done:
                    break
            if self.episodes_done >= next_ckpt:
                next_ckpt += cfg.checkpoint_every
                self.save_checkpoint()
            if bar is not None:
                bar.update(len(returns))
                bar.set_postfix(ret=f"{returns.mean():.0f}",
                                eval=f"{self.last_eval:.0f}" if self.last_eval is not None else "-",
                                target=f"{self.target_return:.0f}", upd_s=f"{ups:.0f}",
                                s_ep=f"{self.elapsed() / max(self.episodes_done, 1):.3f}")
        if bar is not None:
            bar.close()
        self.save_checkpoint()
        writer.close()
        metrics.close()
        return self.finish()

    # state ------------------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """A checkpoint: each learner's state under its name, the run state, the config."""
        return {
            **{name: learner.state_dict() for name, learner in self.learners.items()},
            "episodes_done": self.episodes_done, "env_steps": self.env_steps, "wall_seconds": self.elapsed(),
            "update_credit": self.update_credit, "rng": rng_state(self.rng), "torch_rng": torch.get_rng_state(),
            "per_step": {name: getattr(r, "step", 0) for name, r in self.replays.items()},
            "episodes_to_target": self.episodes_to_target, "seconds_to_target": self.seconds_to_target,
            "target_return": self.target_return, "target_policy": self.target_policy,
            "last_eval": self.last_eval, "best_eval": self.best_eval, "lr_scale": self.lr_scale,
            "best_state": self.best_state if self.best_state is not None else {},
            "average": self.average if self.average is not None else {},
            "config": self.cfg.to_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` output, also of checkpoints written before the two trainers were one (the
        fleet run's ``per_step`` list and no best model; the per-bridge run's scalar ``per_step``, flat
        ``best_state`` and no ``env_steps``)."""
        names = list(self.learners)
        for name, learner in self.learners.items():
            learner.load_state_dict(state[name])
        self.episodes_done = int(state["episodes_done"])
        self.env_steps = int(state.get("env_steps", 0))
        self.wall_before = float(state["wall_seconds"])
        self.update_credit = float(state["update_credit"])
        set_rng_state(self.rng, state["rng"])
        torch.set_rng_state(state["torch_rng"])
        per_step = state.get("per_step", 0)
        if not isinstance(per_step, dict):
            per_step = dict(zip(names, per_step if isinstance(per_step, list | tuple) else [per_step], strict=False))
        for name, replay in self.replays.items():
            if isinstance(replay, PrioritizedReplayBuffer):
                replay.step = int(per_step.get(name, 0))
        for k in ("episodes_to_target", "seconds_to_target", "target_return", "target_policy", "last_eval"):
            setattr(self, k, state[k])
        self.best_eval = state.get("best_eval")
        self.lr_scale = float(state.get("lr_scale", 1.0))  # a checkpoint before lr_drop_factor: never cut
        best = state.get("best_state") or None
        if best is not None and not all(isinstance(v, dict) for v in best.values()):
            best = {names[0]: best}  # a per-bridge checkpoint before format 2: one network's weights
        self.best_state = best
        average = state.get("average") or {}  # a checkpoint before weight_average: the average starts again
        self.average = {name: {k: v.to(self.learners[name].device) for k, v in avg.items()}  # loaded onto the CPU
                        for name, avg in average.items()} or None

    def replay_state(self) -> dict[str, dict[str, Any]]:
        return {name: r.state_dict() for name, r in self.replays.items()}

    def load_replay_state(self, states: dict[str, dict[str, Any]]) -> None:
        for name, r in self.replays.items():
            r.load_state_dict(states[name])

    def save_checkpoint(self) -> Path:
        if self.metrics is not None:
            self.metrics.flush()
        replay = self.replay_state() if self.cfg.checkpoint_replay else None
        return save_rolling(self.run_dir, self.episodes_done, self.state_dict(), replay=replay)

    def finish(self) -> dict[str, Any]:
        """final.pt (each learner's deciding weights, :meth:`decided_weights`, at its best evaluation, as SB3's
        EvalCallback keeps best_model: a greedy policy on a still-learning Q can dip) and summary.json."""
        per = [r for r in self.replays.values() if isinstance(r, PrioritizedReplayBuffer)]
        return write_final(self, self.best_state or self.decided_weights(), str(self.first.device), self.hardware,
                           per_beta_end=per[0].beta() if per else None,
                           **({"reward_scale": self.reward_scale} if self.cfg.reward_scale == "auto" else {}),
                           **self.summary_extra())
