"""A training run's folder: checked before it is made, never left a dead end, its logs rolled back to the
checkpoint a resume starts from.

Rules (docs/learner.md, "Runs, checkpoints and resume"):

- everything a run needs (device, inventory, agent split) is checked before its folder is made;
- a run that fails before its first checkpoint removes what it wrote; Ctrl-C writes a checkpoint first;
- a folder holding a config but no checkpoint (a run killed before its first one) is started again from
  episode 0, by ``train --out`` or ``train --resume``, with a note saying so;
- a resume truncates metrics.csv to the checkpoint's episode and purges later TensorBoard steps;
- one writer per folder: a live run holds an OS file lock on it (``.bridgefleet.lock``, released by the system
  when the process ends, however it ends), and a second ``train``, ``--resume`` or sweep trial into it is
  refused in one line naming the holder's PID;
- a resume refuses a config.yaml edited since the checkpoint (only ``episodes`` and ``device`` may change);
- inputs.json records the SHA-256 of each file the run read (inventory, mapping, component model, --config): a
  resume on a changed fleet file is refused, evaluate, plan and report warn (:mod:`bridgefleet.runs.inputs`).
"""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from bridgefleet.config import FleetConfig
from bridgefleet.config.training import TrainConfig
from bridgefleet.outputs import write_csv, write_text
from bridgefleet.runs.checkpoints import checkpoints
from bridgefleet.runs.log import Metrics

RUN_FILES = ("config.yaml", "metrics.csv", "summary.json", "training_curve.png", "final.pt", "inputs.json")
RUN_DIRS = ("checkpoints", "tb")
LOCK = ".bridgefleet.lock"
"""The run folder's lock file (an OS lock on it, held while a run writes); its holder's PID is in LOCK.pid."""
RESUMABLE = ("episodes", "schedule_episodes", "device")
"""Config fields a resume may change (--episodes, which keeps the first total in schedule_episodes, and
--device); every other field must be what the checkpoint was trained with."""


class RunLocked(FileExistsError):
    """Another live process writes this run folder."""


@contextlib.contextmanager
def hold(run_dir: Path) -> Iterator[None]:
    """Hold the run folder's lock while the block runs (the folder must exist).

    The lock is an OS file lock (``flock``, by :mod:`filelock`): it dies with its process, so a lock left by a
    killed run never blocks; the holder's PID is written beside it so a refusal can name it.

    Raises:
        RunLocked: another process holds it (one line naming its PID).
    """
    import filelock

    # flock on POSIX (never a "soft" lock file, which would outlive a killed process); the platform's own lock
    # elsewhere
    lock = (filelock.UnixFileLock if os.name == "posix" else filelock.FileLock)(run_dir / LOCK, timeout=0)
    pid_file = run_dir / f"{LOCK}.pid"
    try:
        lock.acquire()
    except filelock.Timeout:
        try:
            pid = pid_file.read_text(encoding="utf-8").strip() or "unknown"
        except OSError:
            pid = "unknown"
        raise RunLocked(f"{run_dir} is in use by another bridgefleet run (PID {pid}); one process writes a run "
                        "folder at a time: wait for it to end or stop it, or choose another --out") from None
    try:
        pid_file.write_text(str(os.getpid()), encoding="utf-8")
        yield
    finally:
        pid_file.unlink(missing_ok=True)
        lock.release()


def release_traces(run_dir: Path) -> None:
    """Remove the lock file of a folder this process no longer holds (after a failed run left nothing)."""
    for name in (LOCK, f"{LOCK}.pid"):
        (run_dir / name).unlink(missing_ok=True)


def changed_fields(trained: dict[str, Any], now: dict[str, Any], prefix: str = "") -> list[tuple[str, Any, Any]]:
    """(field, checkpoint's value, config.yaml's value) of every field that differs, fleet fields as
    ``fleet.NAME``; fields in :data:`RESUMABLE` are not compared."""
    out = []
    for key in sorted(set(trained) | set(now)):
        if not prefix and key in RESUMABLE:
            continue
        a, b = trained.get(key), now.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += changed_fields(a, b, f"{prefix}{key}.")
        elif _plain(a) != _plain(b):
            out.append((f"{prefix}{key}", a, b))
    return out


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during training, after the trainer wrote a checkpoint (``path``) at ``episodes`` episodes (None: a run
    fitted to a teacher stopped before its first fit, which keeps nothing)."""

    def __init__(self, run_dir: Path, episodes: int, path: Path | None, resumable: bool = True):
        if path is None:
            msg = (f"interrupted at episode {episodes}, before the network's first fit: nothing to keep; train it "
                   f"again (--out {run_dir} starts it over)")
        else:
            then = (f"continue with: bridgefleet train --resume {run_dir}" if resumable else
                    "evaluate and plan read it; a run fitted to a teacher is not resumed: train it again")
            msg = f"interrupted at episode {episodes}; checkpoint written ({path}); {then}"
        super().__init__(msg)
        self.run_dir, self.episodes, self.path = run_dir, episodes, path


def preflight(cfg: Any) -> None:
    """Check what a run needs before anything is written: the device, the inventory and the agent split (the plan's
    fleet agents, ``agent: fleet``, need urban and rural bridges:
    :func:`bridgefleet.sim.simulator.plan_agents_problem`).

    Raises:
        ValueError (InventoryError, ConfigError): naming the problem and the option that fixes it.
    """
    from bridgefleet.agents.learner import resolve_device
    from bridgefleet.inventory.fleet import resolve_fleet
    from bridgefleet.sim.simulator import plan_agents_problem

    resolve_device(cfg.device)  # an unknown device, or CUDA where there is none: its message says so
    fleet_cfg, _ = resolve_fleet(cfg.fleet)  # reads and splits the inventory: its errors name file, row, column
    problem = plan_agents_problem(fleet_cfg.n_urban, fleet_cfg.n_rural) if cfg.agent == "fleet" else None
    if problem is not None:  # a city's or a county's inventory: the plan's two agents need both clusters
        raise ValueError(f"{fleet_cfg.inventory}: preset {cfg.preset}: {problem}")


def has_progress(run_dir: Path) -> bool:
    """True when the folder holds something a resume or evaluation can start from (final.pt or a checkpoint)."""
    return (run_dir / "final.pt").exists() or bool(checkpoints(run_dir))


def check_run_path(run_dir: Path) -> None:
    """Refuse a run folder path that is a file or lies under a file.

    Raises:
        FileExistsError: ``run_dir`` is a file. NotADirectoryError: a folder above it is a file.
    """
    if run_dir.exists() and not run_dir.is_dir():
        raise FileExistsError(f"--out {run_dir} is a file, not a run directory: choose a folder name")
    for part in run_dir.parents:
        if part.exists() and not part.is_dir():
            raise NotADirectoryError(f"--out {run_dir}: {part} is a file, not a folder")


def _taught(run_dir: Path) -> bool:
    """Whether the run in ``run_dir`` was fitted to a teacher (its config.yaml names one; False if unreadable)."""
    try:
        data = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and data.get("teacher") is not None


def start(run_dir: Path, cfg: TrainConfig) -> bool:
    """Make (or reuse) ``run_dir`` for a new run and write its config.yaml atomically; returns True when the
    folder was made here (so a failure before the first checkpoint may remove it).

    Raises:
        FileExistsError: the folder holds a run with a checkpoint or final model, or ``run_dir`` is a file.
    """
    check_run_path(run_dir)
    if (run_dir / "config.yaml").exists():
        if has_progress(run_dir):
            then = ("fitted to a teacher, which is not resumed: choose another --out (or delete the folder to "
                    "train it again)" if _taught(run_dir)
                    else f"continue it with --resume {run_dir}, or choose another --out")
            raise FileExistsError(f"{run_dir} already holds a training run {then}")
        print(f"note: {run_dir} holds a run stopped before its first checkpoint; it is started again from "
              "episode 0", file=sys.stderr)
        clear(run_dir)
    made = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    write_config(run_dir, cfg)
    return made


CONFIG_HEADER = ("# bridgefleet training options of this run (options it never reads are left out; "
                 "`bridgefleet train --config` this file trains it again)\n")


def write_config(run_dir: Path, cfg: TrainConfig) -> None:
    """The run's config.yaml (atomically): the options it reads (:meth:`TrainConfig.to_dict`), under
    :data:`CONFIG_HEADER`."""
    text = yaml.safe_dump(cfg.to_dict(unread=False), sort_keys=False, allow_unicode=True)
    write_text(run_dir / "config.yaml", CONFIG_HEADER + text)


def clear(run_dir: Path) -> None:
    """Remove what a run writes (only those names: a user's own files in the folder stay)."""
    for name in RUN_FILES:
        (run_dir / name).unlink(missing_ok=True)
    for name in RUN_DIRS:
        shutil.rmtree(run_dir / name, ignore_errors=True)


def run_inputs(run_dir: str | Path) -> list[tuple[Path, str]]:
    """(path, what it is) of the files a command reads from a run folder, which its outputs must not replace
    (:func:`bridgefleet.paths.check_writable_file`'s ``reads``): the run's own files, its checkpoints, and the
    inventory and column mapping its config.yaml names."""
    run_dir = Path(run_dir)
    files = [(run_dir / name, f"the run's {name}") for name in RUN_FILES]
    files += [(path, "a checkpoint of the run") for path in checkpoints(run_dir)]
    from bridgefleet.inventory.fleet import input_files

    try:
        fleet = (yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8")) or {}).get("fleet") or {}
        fleet_files = input_files(FleetConfig(inventory=fleet.get("inventory"),
                                              inventory_mapping=fleet.get("inventory_mapping")), "the run's")
    except (OSError, ValueError, TypeError, AttributeError, yaml.YAMLError):  # none or damaged: its commands say so
        fleet_files = []
    return files + [(Path(path), what) for path, what in fleet_files]


def abandon(run_dir: Path, made: bool) -> None:
    """After a failure before the first checkpoint: leave no trace (the folder too, if made by this run).
    Called after the lock is released."""
    if has_progress(run_dir):
        return
    clear(run_dir)
    release_traces(run_dir)
    if made:
        shutil.rmtree(run_dir, ignore_errors=True)


def rollback_metrics(run_dir: Path, episodes_done: int) -> int:
    """Keep only metrics.csv rows up to ``episodes_done`` (a resume repeats what came after its checkpoint);
    rewritten atomically. Returns the rows dropped."""
    path = run_dir / "metrics.csv"
    if not path.exists():
        return 0
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        rows = list(csv.reader(f))
    if not rows or tuple(rows[0]) != Metrics.FIELDS:  # not ours (overwritten, damaged): keep it aside, start anew
        aside = path.with_name("metrics.csv.damaged")
        os.replace(path, aside)
        print(f"warning: {path} is not a bridgefleet metrics file; kept as {aside.name}, a new one is started",
              file=sys.stderr)
        return len(rows)
    # a row torn by a kill (fewer fields) goes too
    keep = [rows[0]] + [r for r in rows[1:]
                        if len(r) == len(rows[0]) and r[1].isdigit() and int(r[1]) <= episodes_done]
    write_csv(path, keep)
    return len(rows) - len(keep)
