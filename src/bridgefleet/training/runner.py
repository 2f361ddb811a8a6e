"""Start a training run in a new folder (:func:`train`) or continue one (:func:`resume`): the folder, its lock
and config are checked and written here; the loop is the agent's :class:`~bridgefleet.training.loop.Trainer`."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from bridgefleet.config import ConfigError, read_yaml
from bridgefleet.config.training import TrainConfig
from bridgefleet.inventory.fleet import absolute_files
from bridgefleet.runs import inputs
from bridgefleet.runs.checkpoints import checkpoints, load_replay, newest_intact, note, replay_path
from bridgefleet.runs.folder import (
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
from bridgefleet.training.loop import OnEval, Run

__all__ = ["resume", "train"]


def train(cfg: TrainConfig, out: str | Path | None = None, progress: bool = True,
          reprobe: bool = False, on_eval: OnEval | None = None, config_file: str | Path | None = None
          ) -> tuple[Path, dict[str, Any]]:
    """Train from scratch into ``out`` (default runs/<preset>-<time>); returns (run dir, summary).
    The SHA-256 of each file the run reads (its inventory, mapping, component model, and ``config_file``, the
    ``--config`` its options came from) is recorded in the folder's inputs.json (:mod:`bridgefleet.runs.inputs`).
    ``reprobe``: measure precision and threads again instead of using this machine's cached choice;
    ``on_eval(episodes, seconds, mean evaluation return)`` is called after each evaluation (a sweep reports it).
    The device, inventory and agent split are checked before the folder is made; a run that fails before
    its first checkpoint removes what it wrote; Ctrl-C writes a checkpoint (:class:`RunInterrupted`).

    Raises:
        FileExistsError: ``out`` already holds a run with a checkpoint (nothing written is overwritten).
        ValueError: the device, inventory or split is unusable (nothing is written).
    """
    preflight(cfg)
    cfg = dataclasses.replace(cfg, fleet=absolute_files(cfg.fleet))  # config.yaml reads the same files anywhere
    run_dir = Path(out) if out else Path("runs") / f"{cfg.preset}-{time.strftime('%Y%m%d-%H%M%S')}"
    check_run_path(run_dir)
    made = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with hold(run_dir):  # one writer per folder: a second train, resume or trial is refused here
            start(run_dir, cfg)
            inputs.record(run_dir, cfg.fleet, config_file)
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
    if cfg.teacher is None and cfg.episodes % cfg.num_envs:
        note(f"note: {cfg.episodes} episodes run as {-(-cfg.episodes // cfg.num_envs) * cfg.num_envs}, the next "
             f"multiple of the {cfg.num_envs} fleets simulated at once (num_envs)")


def _run(trainer: Run) -> dict[str, Any]:
    """The trainer's loop; on Ctrl-C a checkpoint is written first, then :class:`RunInterrupted` is raised."""
    try:
        summary = trainer.run()
    except KeyboardInterrupt:
        path = trainer.save_checkpoint()
        raise RunInterrupted(trainer.run_dir, trainer.episodes_done, path, trainer.cfg.teacher is None) from None
    if summary["updates"] == 0 and trainer.cfg.teacher is None:
        need = max(trainer.cfg.learning_starts, trainer.cfg.batch_size)
        note(f"warning: no learner update happened: the replay never held {need} transitions (learning_starts "
             f"{trainer.cfg.learning_starts}, batch_size {trainer.cfg.batch_size}), so the policy is untrained; "
             "train more episodes or lower learning_starts")
    return summary


def _trainer(cfg: TrainConfig, run_dir: Path, progress: bool, reprobe: bool) -> Run:
    """The agent's trainer (imported here, so a run of one agent does not import the other's modules)."""
    if cfg.teacher is not None:
        from bridgefleet.training.distill_run import DistillTrainer

        return DistillTrainer(cfg, run_dir, progress, reprobe)
    if cfg.agent == "bridge":
        from bridgefleet.training.bridge_run import BridgeTrainer

        return BridgeTrainer(cfg, run_dir, progress, reprobe)
    from bridgefleet.training.branching_run import BranchingTrainer

    return BranchingTrainer(cfg, run_dir, progress, reprobe)


def resume(run_dir: str | Path, progress: bool = True, episodes: int | None = None,
           reprobe: bool = False, device: str | None = None,
           on_eval: OnEval | None = None) -> tuple[Path, dict[str, Any]]:
    """Continue the run in ``run_dir`` from its newest intact checkpoint, as if it had never stopped: ε and
    PER β continue on the run's first schedule (``schedule_episodes``) when ``episodes`` changes the total,
    metrics.csv and TensorBoard are rolled back to the checkpoint, and the replay buffers are restored when
    the run saved them (``checkpoint_replay``). A folder whose run stopped before its first checkpoint is
    started again from episode 0.

    Raises:
        FileNotFoundError: no config.yaml, or checkpoints exist but none is intact.
        ValueError: the run has already trained ``episodes``.
        ConfigError: an input file of its fleet changed since the run started (one line naming it).
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"--resume {run_dir}: " + ("not a folder (give the run's folder)" if run_dir.exists()
                                                           else "no such folder"))
    if not (run_dir / "config.yaml").exists():
        raise FileNotFoundError(f"{run_dir}: no config.yaml (not a bridgefleet run directory)")
    with hold(run_dir):  # one writer per folder
        return _resume(run_dir, progress, episodes, reprobe, device, on_eval)


def _resume(run_dir: Path, progress: bool, episodes: int | None, reprobe: bool, device: str | None,
            on_eval: OnEval | None) -> tuple[Path, dict[str, Any]]:
    data = read_yaml(run_dir / "config.yaml")
    if not isinstance(data, dict):
        raise ConfigError(f"{run_dir / 'config.yaml'}: expected a mapping of training options")
    if episodes is not None and episodes != data.get("episodes"):
        data["schedule_episodes"] = data.get("schedule_episodes") or data.get("episodes")
        data["episodes"] = episodes
    if device is not None:
        data["device"] = device
    cfg = TrainConfig.from_dict(data, str(run_dir / "config.yaml"))
    if cfg.teacher is not None:
        raise ValueError(f"{run_dir}: a run fitted to a teacher (teacher: {cfg.teacher}) is not resumed; it takes "
                         "minutes: train it again with --out into a new folder")
    # lines the run does not read but someone set (not an older run's full list, which holds their defaults)
    now, plain = cfg.to_dict(), TrainConfig().to_dict()
    unread = sorted(k for k in set(data) & cfg.unread_options() if now[k] != plain[k])
    if unread:  # config.yaml is written again below with the options the run reads
        note(f"note: {run_dir / 'config.yaml'}: {', '.join(unread)} {'has' if len(unread) == 1 else 'have'} no "
             f"effect in this run (agent: {cfg.agent}, no teacher) and {'is' if len(unread) == 1 else 'are'} left "
             "out of it")
    if checkpoints(run_dir):  # its fleet files edited since it started: refused, not resumed on another fleet
        inputs.check_resume(run_dir)
    preflight(cfg)
    found = newest_intact(checkpoints(run_dir)[::-1])  # onto the CPU; the learners move it
    if found is None and checkpoints(run_dir):
        raise FileNotFoundError(f"{run_dir}: no intact checkpoint to resume from (each is named above); start "
                                "again with train --out into a new folder")
    if found is not None:  # the run's config.yaml edited since the checkpoint: refused, not resumed wrongly
        trained = TrainConfig.from_dict(dict(found[1]["config"]), str(found[0])).to_dict(unread=False)
        diff = changed_fields(trained, cfg.to_dict(unread=False))  # options the run never reads do not count
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
    kept = None
    if found is None:
        note(f"note: {run_dir} stopped before its first checkpoint; training starts again from episode 0")
        kept = inputs.recorded(run_dir)  # its --config entry: the file config.yaml was written from
        clear(run_dir)
    write_config(run_dir, cfg)
    if kept is not None:  # started again: the files as they are now
        inputs.record(run_dir, cfg.fleet, keep=kept)
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
    note(f"resuming {run_dir} at episode {done} (update {trainer.update_step}, {ckpt.name}); {how}"
         + (f"; {dropped} metrics rows after the checkpoint dropped" if dropped else ""))
    return run_dir, _run(trainer)
