"""The synthetic fleet's initial component ratings: Indiana's 2019 NBI, bridges counted by age decade and
(deck, superstructure, substructure) ratings → ``src/bridgefleet/data/initial-components.csv``.

    python benchmarks/initial_components.py [--data ../shared/data/indiana/INDIANA2019.csv]

A synthetic bridge of age a draws its three ratings from the bridges of a's decade (70 years and more pooled).
Source: the GIAMS table of Indiana's 2019 NBI (vd1371/GIAMS, MIT licence; items 58–60 and its ``Age``, which
may count from reconstruction).
"""

from __future__ import annotations

import argparse
import collections
import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "indiana" / "INDIANA2019.csv"
OUT = ROOT / "src" / "bridgefleet" / "data" / "initial-components.csv"
DECADES = 8  # 0–9, …, 60–69, 70 and over


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()
    counts: collections.Counter = collections.Counter()
    with args.data.open(newline="") as f:
        for row in csv.DictReader(f):
            try:
                r = tuple(int(row[k]) for k in ("DECK_COND_058", "SUPERSTRUCTURE_COND_059", "SUBSTRUCTURE_COND_060"))
                age = int(float(row["Age"]))
            except ValueError:
                continue
            if all(0 <= x <= 9 for x in r) and age >= 0:
                counts[(min(age // 10, DECADES - 1), *r)] += 1
    with OUT.open("w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["age_decade", "deck", "superstructure", "substructure", "bridges"])
        for key in sorted(counts):
            out.writerow([*key, counts[key]])
    print(f"{OUT}: {sum(counts.values())} bridges in {len(counts)} cells")


if __name__ == "__main__":
    main()
