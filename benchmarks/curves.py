"""Validation curves of training runs side by side: each run's evaluation return (greedy, on its validation fleets)
by episode, runs grouped by a label (e.g. a preset before and after a change), one colour a group, every run shown.

Prints per run the best validation return, the episode it was reached, the final one and how far the final one
fell below the best (a collapse when more than 2 %, issue 27), and draws them to one PNG.

    python benchmarks/curves.py --group before=RUN1,RUN2 --group after=RUN3,RUN4 --title "dc-2019" --out curves.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bridgefleet.outputs import save_figure
from bridgefleet.report.data import training_curve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--group", action="append", required=True, metavar="LABEL=RUN,RUN",
                    help="a label and the run folders drawn in its colour (repeat for each group)")
    ap.add_argument("--title", default="validation return by episode")
    ap.add_argument("--out", type=Path, required=True, help="PNG to write")
    args = ap.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    print("| group | run | best val | at episode | final val | final below best |")
    print("|---|---|---:|---:|---:|---:|")
    for i, spec in enumerate(args.group):
        label, _, runs = spec.partition("=")
        if not runs:
            raise SystemExit(f"--group {spec!r}: expected LABEL=RUN[,RUN...]")
        for j, run in enumerate(runs.split(",")):
            rows = training_curve(Path(run))  # (episode, seconds, validation return, target) of each evaluation
            if not rows:
                raise SystemExit(f"{Path(run) / 'metrics.csv'}: missing, or no evaluation rows")
            ep, _, ret, _ = (np.array(c) for c in zip(*rows, strict=True))
            best = int(np.argmax(ret))
            below = (ret[best] - ret[-1]) / abs(ret[best])
            print(f"| {label} | {Path(run).name} | {ret[best]:.2f} | {ep[best]} | {ret[-1]:.2f} | {below:.1%} |")
            ax.plot(ep, ret, "o-", ms=3, lw=1, color=f"C{i}", label=label if j == 0 else None)
    ax.set_xlabel("episode")
    ax.set_ylabel("validation return (discounted)")
    ax.set_title(args.title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    save_figure(fig, args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
