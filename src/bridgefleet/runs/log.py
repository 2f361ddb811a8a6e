"""What a training run leaves to read: metrics.csv, TensorBoard events, the progress bar, training_curve.png."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np

from bridgefleet.outputs import SafeWriter, save_figure, write_json


class Metrics:
    """metrics.csv: one row per training episode (kind=train) and per evaluation (kind=eval); appends on resume."""

    FIELDS = ("kind", "episode", "wall_seconds", "train_return", "epsilon", "eval_return", "target_return")

    def __init__(self, path: Path):
        new = not path.exists()
        self.f = path.open("a", newline="", encoding="utf-8")
        self.w = SafeWriter(self.f)
        if new:
            self.w.writerow(self.FIELDS)

    def train(self, episode: int, wall: float, ret: float, eps: float) -> None:
        self.w.writerow(("train", episode, f"{wall:.3f}", f"{ret:.4f}", f"{eps:.4f}", "", ""))

    def eval(self, episode: int, wall: float, ret: float, target: float) -> None:
        self.w.writerow(("eval", episode, f"{wall:.3f}", "", "", f"{ret:.4f}", f"{target:.4f}"))
        self.f.flush()

    def flush(self) -> None:
        """Before a checkpoint: every row up to it is on disk (a kill after it loses none)."""
        self.f.flush()

    def close(self) -> None:
        self.f.close()


def tensorboard(run_dir: Path, purge_step: int | None = None):
    """The run's SummaryWriter (tb/); a resume passes its checkpoint's episode + 1 as ``purge_step`` so the
    steps logged after the checkpoint by the stopped run are dropped, not repeated."""
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(str(run_dir / "tb"), purge_step=purge_step)


def progress_bar(total: int, initial: int, enabled: bool, unit: str = "ep"):
    """A tqdm bar on stderr counting ``unit`` (episodes by default), or None when not ``enabled``."""
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit=unit, desc="train", dynamic_ncols=True)


def plot_training_curve(run_dir: Path) -> Path:
    """training_curve.png from metrics.csv: training returns, evaluation returns and the target."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with (run_dir / "metrics.csv").open(newline="", encoding="utf-8", errors="replace") as f:
        rows = list(csv.DictReader(f))
    tr = [(int(r["episode"]), float(r["train_return"])) for r in rows if r["kind"] == "train"]
    ev = [(int(r["episode"]), float(r["eval_return"]), float(r["target_return"])) for r in rows if r["kind"] == "eval"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if tr:
        x, y = np.array(tr).T
        k = max(1, len(y) // 50)  # a running mean over 2 % of the episodes, where that is more than one
        ax.plot(x, y, color="0.6" if k == 1 else "0.8", lw=0.8, marker="." if len(y) <= 50 else None,
                label="training episode return")
        if 1 < k <= len(y):  # a mean of one episode is the line itself: drawn over it, it hid it
            ax.plot(x[k - 1:], np.convolve(y, np.ones(k) / k, mode="valid"), color="0.35",
                    label=f"running mean of {k} episodes")
    if ev:
        x, y, t = np.array(ev).T
        ax.plot(x, y, "o-", color="tab:blue", label="evaluation return, validation fleets")
        ax.axhline(t[-1], color="tab:red", ls="--", label="target: the best rule of thumb there")
    ax.set_xlabel("episode")
    ax.set_ylabel("discounted return")
    ax.legend(loc="lower right")
    ax.set_title("bridgefleet training")
    fig.tight_layout()
    out = run_dir / "training_curve.png"
    save_figure(fig, out, dpi=100)
    return out


def write_summary(run_dir: Path, summary: dict[str, Any]) -> None:
    """summary.json (written to a temporary file, then renamed) and training_curve.png."""
    write_json(run_dir / "summary.json", summary)
    try:
        plot_training_curve(run_dir)
    except (KeyError, ValueError) as exc:  # a metrics.csv edited by hand must not cost the finished run
        print(f"warning: training_curve.png not drawn: {run_dir / 'metrics.csv'} is not readable ({exc!r})")
