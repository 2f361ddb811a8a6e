"""A training run's folder: checked before it is made, never left a dead end, its logs rolled back to the
checkpoint a resume starts from.

Rules (docs/learner.md, "Runs, checkpoints and resume"):

- everything a run needs (device, inventory, agent split) is checked before its folder is made;
- a run that fails before its first checkpoint removes what it wrote; Ctrl-C writes a checkpoint first;
- a folder holding a config but no checkpoint (a run killed before its first one) is started again from
  episode 0, by ``train --out`` or ``train --resume``, with a note saying so;
- a resume truncates metrics.csv to the checkpoint's episode and purges later TensorBoard steps.
"""

from __future__ import annotations

import csv
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

from bridgefleet.checkpoints import checkpoints
from bridgefleet.config import ConfigError
from bridgefleet.runlog import Metrics

RUN_FILES = ("config.yaml", "metrics.csv", "summary.json", "training_curve.png", "final.pt")
RUN_DIRS = ("checkpoints", "tb")


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during training, after the trainer wrote a checkpoint (``path``) at ``episodes`` episodes."""

    def __init__(self, run_dir: Path, episodes: int, path: Path):
        super().__init__(f"interrupted at episode {episodes}; checkpoint written ({path}); continue with: "
                         f"bridgefleet train --resume {run_dir}")
        self.run_dir, self.episodes, self.path = run_dir, episodes, path


def preflight(cfg: Any) -> None:
    """Check what a run needs before anything is written: the device, the inventory and the agent split.

    Raises:
        ValueError (InventoryError, ConfigError): naming the problem and the option that fixes it.
    """
    from bridgefleet.fleet.simulator import resolve_fleet
    from bridgefleet.learner import resolve_device

    try:
        resolve_device(cfg.device)  # CUDA asked for where there is none: its message says so
    except RuntimeError:  # torch's "Invalid device string"
        raise ConfigError(f"--device {cfg.device!r}: use cpu, cuda or auto") from None
    resolve_fleet(cfg.fleet)  # reads and splits the inventory: its errors name file, row, column


def has_progress(run_dir: Path) -> bool:
    """True when the folder holds something a resume or evaluation can start from (final.pt or a checkpoint)."""
    return (run_dir / "final.pt").exists() or bool(checkpoints(run_dir))


def start(run_dir: Path, cfg_dict: dict[str, Any]) -> bool:
    """Make (or reuse) ``run_dir`` for a new run and write its config.yaml atomically; returns True when the
    folder was made here (so a failure before the first checkpoint may remove it).

    Raises:
        FileExistsError: the folder holds a run with a checkpoint or final model, or ``run_dir`` is a file.
    """
    if run_dir.exists() and not run_dir.is_dir():
        raise FileExistsError(f"--out {run_dir} is a file, not a run directory: choose a folder name")
    for part in run_dir.parents:
        if part.exists() and not part.is_dir():
            raise NotADirectoryError(f"--out {run_dir}: {part} is a file, not a folder")
    if (run_dir / "config.yaml").exists():
        if has_progress(run_dir):
            raise FileExistsError(f"{run_dir} already holds a training run: continue it with --resume "
                                  f"{run_dir}, or choose another --out")
        print(f"note: {run_dir} holds a run stopped before its first checkpoint; it is started again from "
              "episode 0", file=sys.stderr)
        clear(run_dir)
    made = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    write_config(run_dir, cfg_dict)
    return made


def write_config(run_dir: Path, cfg_dict: dict[str, Any]) -> None:
    tmp = run_dir / ".config.yaml.tmp"
    tmp.write_text(yaml.safe_dump(cfg_dict, sort_keys=False))
    os.replace(tmp, run_dir / "config.yaml")


def clear(run_dir: Path) -> None:
    """Remove what a run writes (only those names: a user's own files in the folder stay)."""
    for name in RUN_FILES:
        (run_dir / name).unlink(missing_ok=True)
    for name in RUN_DIRS:
        shutil.rmtree(run_dir / name, ignore_errors=True)


def abandon(run_dir: Path, made: bool) -> None:
    """After a failure before the first checkpoint: leave no trace (the folder too, if made by this run)."""
    if has_progress(run_dir):
        return
    clear(run_dir)
    if made:
        shutil.rmtree(run_dir, ignore_errors=True)


def rollback_metrics(run_dir: Path, episodes_done: int) -> int:
    """Keep only metrics.csv rows up to ``episodes_done`` (a resume repeats what came after its checkpoint);
    rewritten atomically. Returns the rows dropped."""
    path = run_dir / "metrics.csv"
    if not path.exists():
        return 0
    with path.open(newline="", errors="replace") as f:
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
    tmp = path.with_name(".metrics.csv.tmp")
    with tmp.open("w", newline="") as f:
        csv.writer(f).writerows(keep)
    os.replace(tmp, path)
    return len(rows) - len(keep)
