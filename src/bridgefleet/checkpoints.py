"""Checkpoint files of a run: atomic writes, generator states that load with ``weights_only``, the newest."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import torch


def atomic_torch_save(obj: Any, path: Path) -> None:
    """Write to a temporary file in the same folder, then rename: a crash never leaves a torn file."""
    tmp = path.with_name(f".{path.name}.tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """A NumPy generator's state in types ``torch.load(weights_only=True)`` accepts (big ints as text)."""
    s = rng.bit_generator.state
    return {"bit_generator": s["bit_generator"], "state": str(s["state"]["state"]),
            "inc": str(s["state"]["inc"]), "has_uint32": int(s["has_uint32"]), "uinteger": int(s["uinteger"])}


def set_rng_state(rng: np.random.Generator, d: dict[str, Any]) -> None:
    rng.bit_generator.state = {"bit_generator": d["bit_generator"],
                               "state": {"state": int(d["state"]), "inc": int(d["inc"])},
                               "has_uint32": d["has_uint32"], "uinteger": d["uinteger"]}


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest checkpoints/ckpt_*.pt of a run, or None."""
    ckpts = sorted((run_dir / "checkpoints").glob("ckpt_*.pt"))
    return ckpts[-1] if ckpts else None


def save_rolling(run_dir: Path, episodes_done: int, state: dict[str, Any], keep: int = 2) -> Path:
    """Write checkpoints/ckpt_<episodes>.pt atomically and delete all but the newest ``keep``."""
    path = run_dir / "checkpoints" / f"ckpt_{episodes_done:08d}.pt"
    atomic_torch_save(state, path)
    for old in sorted((run_dir / "checkpoints").glob("ckpt_*.pt"))[:-keep]:
        old.unlink()
    return path
