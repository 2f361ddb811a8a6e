"""What Ontario's recorded rehabilitations did to the condition: the rating change across each bridge's last
minor and major rehabilitation, by the band it started in (docs/fleet-model.md, "What still makes these plans
optimistic").

For every bridge of the Ontario file whose last minor (or major) rehabilitation year W has an inspection
before W and one after W at most 3 years apart, the Bridge Condition Index of both is converted to the rating
scale of the deterioration fit (MTO's bands onto FHWA's: BCI 60 → 5, 70 → 7, 100 → 9) and their difference is
averaged by the band of the first. The model's treatments add +1 (preventive), +2 (repair), +4 (rehabilitation)
points whatever the rating (`RATING_GAIN`).

Run: python benchmarks/treatment_effects.py   (needs ../shared/data/ontario/bridge_data.csv)
"""

from __future__ import annotations

import contextlib
import csv
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ontario" / "bridge_data.csv"
YEARS = list(range(2013, 1999, -1))  # the file's BCI columns, newest first
BANDS = (("poor (< 5)", 0.0, 5.0), ("fair (5 to < 7)", 5.0, 7.0), ("good (≥ 7)", 7.0, 9.01))


def rating(bci: float) -> float:
    return float(np.interp(bci, [0, 60, 70, 100], [0, 5, 7, 9]))


def changes(path: Path, column: int, max_gap: int = 3) -> np.ndarray:
    """(N, 2) ratings before and after the rehabilitation year in ``column`` (6 major, 7 minor)."""
    out = []
    with path.open(encoding="latin-1", newline="") as f:
        rows = list(csv.reader(f))[2:]
    for r in rows:
        bci = {}
        for i, y in enumerate(YEARS):
            with contextlib.suppress(ValueError, IndexError):  # blank: not inspected that year
                bci[y] = float(r[13 + i])
        try:
            work = int(float(r[column]))
        except ValueError:
            continue
        before = [y for y in bci if y < work]
        after = [y for y in bci if y > work]
        if before and after and min(after) - max(before) <= max_gap:
            out.append((rating(bci[max(before)]), rating(bci[min(after)])))
    return np.array(out).reshape(-1, 2)


def main() -> None:
    if not DATA.is_file():
        raise SystemExit(f"{DATA} not found")
    print("| work | from | bridges | mean change, rating points |\n|---|---|---:|---:|")
    for name, column in (("minor rehabilitation", 7), ("major rehabilitation", 6)):
        pairs = changes(DATA, column)
        for band, lo, hi in BANDS:
            m = (pairs[:, 0] >= lo) & (pairs[:, 0] < hi)
            if m.any():
                print(f"| {name} | {band} | {int(m.sum())} | {(pairs[m, 1] - pairs[m, 0]).mean():+.2f} |")


if __name__ == "__main__":
    main()
