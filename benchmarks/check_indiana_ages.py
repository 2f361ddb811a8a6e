"""Held-out check of the component model on Indiana: the share of bridges good / fair / poor by age decade.

    python benchmarks/check_indiana_ages.py [--data ../shared/data/indiana/INDIANA2019.csv] [--bridges 4000]

The model was fitted on Massachusetts (``component_model.py``); Indiana's 2019 NBI never entered it (its ratings by
age only seed a synthetic fleet's year 0, not used here). New bridges (every component drawn from the model's
replacement distribution) are simulated for 80 years under a stated rule — do nothing, or the rehabilitation of
the lowest component (action 2) whenever the bridge turns poor (lowest rating ≤ 4), or the major rehabilitation
(action 3) then — with no budget limit, and their shares good (lowest ≥ 7) / fair / poor by age decade are printed
beside Indiana's (lowest of items 58–60 by the table's ``Age``).
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from bridgefleet.sim import components
from bridgefleet.sim.components import ComponentModel

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "indiana" / "INDIANA2019.csv"
DECADES = 6
RULES = {"do nothing": 0, "lowest component rehabilitated when poor": 2, "major rehabilitation when poor": 3}


def indiana(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(age years, lowest of items 58–60) of Indiana's bridges, int (N,)."""
    ages, low = [], []
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            try:
                r = [int(row[k]) for k in ("DECK_COND_058", "SUPERSTRUCTURE_COND_059", "SUBSTRUCTURE_COND_060")]
                ages.append(int(float(row["Age"])))
            except ValueError:
                continue
            low.append(min(r))
    return np.array(ages), np.array(low)


def shares(low: np.ndarray) -> tuple[float, float, float]:
    return float((low >= 7).mean()), float(((low >= 5) & (low <= 6)).mean()), float((low <= 4).mean())


def simulate(model: ComponentModel, action: int, n: int, years: int, seed: int) -> np.ndarray:
    """Lowest rating int8 (years, n) of n new bridges under the rule (``action`` when poor; 0: never)."""
    rng = np.random.default_rng(seed)
    c = np.full((1, n, 3), 9, np.int8)
    prot = np.zeros((1, n), bool)
    kind = np.zeros(n, np.int64)
    components.treat(model, c, prot, kind, np.full((1, n), 4), rng.random((1, n, 3)))  # new: replacement's draw
    out = np.empty((years, n), np.int8)
    for t in range(years):
        out[t] = components.lowest(c[0])
        act = np.where(components.lowest(c) <= 4, action, 0)
        components.treat(model, c, prot, kind, act, rng.random((1, n, 3)))
        components.deteriorate(model, c, prot, kind, rng.random((1, n, 5)), rng.random((1, n)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--bridges", type=int, default=4000)
    ap.add_argument("--model", default="massachusetts-2026")
    args = ap.parse_args()
    model = ComponentModel.load(args.model)
    age, low = indiana(args.data)
    sims = {name: simulate(model, a, args.bridges, 10 * DECADES, 1) for name, a in RULES.items()}
    head = "| age | Indiana n | Indiana good / fair / poor | " + " | ".join(RULES) + " |"
    print(head + "\n|---|---:|---|" + "---|" * len(RULES))
    for d in range(DECADES):
        m = (age >= 10 * d) & (age < 10 * d + 10)
        obs = shares(low[m])
        cells = ["{:.0f} / {:.0f} / {:.0f} %".format(*(100 * x for x in shares(s[10 * d: 10 * d + 10].ravel())))
                 for s in sims.values()]
        print(f"| {10 * d}–{10 * d + 9} | {int(m.sum()):,} | " + "{:.0f} / {:.0f} / {:.0f} %".format(
            *(100 * x for x in obs)) + " | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
