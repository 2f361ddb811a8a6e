"""Checkpoint files of a run: atomic writes, generator states that load with ``weights_only``, the newest
intact one (a damaged file is named in one line and skipped), replay buffers beside them."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bridgefleet.outputs import atomic_write


def atomic_torch_save(obj: Any, path: Path) -> None:
    """Write to a temporary file in the same folder, then rename: a crash never leaves a torn file."""
    atomic_write(path, lambda f: torch.save(obj, f), binary=True)


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """A NumPy generator's state in types ``torch.load(weights_only=True)`` accepts (big ints as text)."""
    s = rng.bit_generator.state
    return {"bit_generator": s["bit_generator"], "state": str(s["state"]["state"]),
            "inc": str(s["state"]["inc"]), "has_uint32": int(s["has_uint32"]), "uinteger": int(s["uinteger"])}


def set_rng_state(rng: np.random.Generator, d: dict[str, Any]) -> None:
    rng.bit_generator.state = {"bit_generator": d["bit_generator"],
                               "state": {"state": int(d["state"]), "inc": int(d["inc"])},
                               "has_uint32": d["has_uint32"], "uinteger": d["uinteger"]}


class DamagedCheckpoint(RuntimeError):
    """A checkpoint file that cannot be read (truncated, not a torch file, or written by foreign code)."""


def load_checkpoint(path: Path, map_location: str | Any = "cpu") -> dict[str, Any]:
    """``torch.load(path, map_location, weights_only=True)``: storages saved on another device (a GPU run opened
    on a CPU-only machine) are moved to ``map_location``.

    Raises:
        DamagedCheckpoint: the file cannot be read; the message is one line naming it and the reason.
    """
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as e:  # torch raises RuntimeError, EOFError, UnpicklingError, zipfile errors
        text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        reason = text.split(". ")[0].rstrip(".")  # torch's first sentence says what failed
        reason = reason if len(reason) <= 100 else reason[:99] + "…"
        raise DamagedCheckpoint(f"{path}: damaged checkpoint ({reason})") from None
    if not isinstance(state, dict) or "config" not in state:
        raise DamagedCheckpoint(f"{path}: not a bridgefleet checkpoint (no config inside)")
    return state


def checkpoints(run_dir: Path) -> list[Path]:
    """checkpoints/ckpt_*.pt of a run, oldest first."""
    return sorted((run_dir / "checkpoints").glob("ckpt_*.pt"))


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The newest checkpoints/ckpt_*.pt of a run (intact or not), or None."""
    ckpts = checkpoints(run_dir)
    return ckpts[-1] if ckpts else None


def note(msg: str) -> None:
    print(msg, file=sys.stderr)


def newest_intact(paths: list[Path], map_location: str | Any = "cpu",
                  warn: Callable[[str], None] = note) -> tuple[Path, dict[str, Any]] | None:
    """The first of ``paths`` that loads, with its state; each damaged one is reported by ``warn`` in one line."""
    for path in paths:
        try:
            return path, load_checkpoint(path, map_location)
        except DamagedCheckpoint as e:
            warn(f"warning: {e}; skipped")
    return None


def save_rolling(run_dir: Path, episodes_done: int, state: dict[str, Any], keep: int = 2,
                 replay: Mapping[str, Mapping[str, Any]] | None = None) -> Path:
    """Write checkpoints/ckpt_<episodes>.pt atomically (and, if given, its replay buffers' states beside it as
    ckpt_<episodes>.replay.npz) and delete all but the newest ``keep``."""
    path = run_dir / "checkpoints" / f"ckpt_{episodes_done:08d}.pt"
    if replay is not None:
        save_replay(replay_path(path), replay)
    atomic_torch_save(state, path)
    for old in checkpoints(run_dir)[:-keep]:
        old.unlink()
        replay_path(old).unlink(missing_ok=True)
    return path


def replay_path(ckpt: Path) -> Path:
    return ckpt.with_name(ckpt.name.removesuffix(".pt") + ".replay.npz")


def save_replay(path: Path, buffers: Mapping[str, Mapping[str, Any]]) -> None:
    """Replay buffers' ``state_dict()`` as one .npz (keys ``<buffer>/<key>``), written atomically."""
    atomic_write(path, lambda f: np.savez(f, **{f"{b}/{k}": np.asarray(v) for b, st in buffers.items()
                                                for k, v in st.items()}), binary=True)


def load_replay(path: Path) -> dict[str, dict[str, Any]]:
    """The buffers' states written by :func:`save_replay`, {buffer: state}.

    Raises:
        DamagedCheckpoint: the file cannot be read.
    """
    out: dict[str, dict[str, Any]] = {}
    try:
        with np.load(path) as z:
            for key in z.files:
                b, k = key.split("/", 1)
                v = z[key]
                out.setdefault(b, {})[k] = v.item() if v.ndim == 0 else v
    except Exception as e:
        raise DamagedCheckpoint(f"{path}: damaged replay file ({type(e).__name__}: {e})") from None
    return out
