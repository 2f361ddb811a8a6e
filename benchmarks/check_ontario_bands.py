"""Held-out check of the component model on Ontario: two-year band moves of bridges left alone.

    python benchmarks/check_ontario_bands.py [--data ../shared/data/ontario/bridge_data.csv]

Ontario's Bridge Condition Index is one index a bridge (BCI 100 → 9, 70 → 7, 60 → 5, 0 → 0; a BCI of 0.0 read as
missing), so the check is at the bridge level: Ontario's two-year do-nothing pairs (``calibrate_deterioration.
ontario_pairs``) give the share of bridges in each FHWA band two years later; the model (fitted on Massachusetts,
never on Ontario) starts bridges in each band from Indiana's 2019 component ratings of that band (``data/initial-
components.csv``: a bridge's three ratings), weighted to Ontario's start ratings, and leaves them alone for two
years. Printed: the 3 × 3 band-move shares, model beside data.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from calibrate_deterioration import DATA, ontario_pairs

from bridgefleet.sim import components
from bridgefleet.sim.components import INITIAL_TABLE, ComponentModel

BANDS = ("good", "fair", "poor")


def band(rating: np.ndarray) -> np.ndarray:
    """FHWA band of ratings: 0 good (≥ 7), 1 fair (5–6), 2 poor (≤ 4); whole ratings."""
    return np.where(rating >= 7, 0, np.where(rating >= 5, 1, 2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--draws", type=int, default=200_000)
    args = ap.parse_args()
    pairs = ontario_pairs(args.data)
    r0 = np.floor(pairs.rating0).astype(int)
    r1 = np.floor(pairs.rating1).astype(int)
    obs = np.zeros((3, 3))
    np.add.at(obs, (band(r0), band(r1)), 1)
    n_obs = obs.sum(1)
    obs /= n_obs[:, None]
    # Model: Indiana's triples, each start rating (the lowest) weighted by Ontario's share of that start rating.
    t = np.loadtxt(INITIAL_TABLE, delimiter=",", skiprows=1, dtype=np.int64)
    triples, count = t[:, 1:4], t[:, 4].astype(float)
    low = triples.min(1)
    want = np.bincount(r0, minlength=10) / len(r0)
    w = np.zeros(len(t))
    for r in range(10):
        m = low == r
        if m.any() and want[r] > 0:
            w[m] = count[m] / count[m].sum() * want[r]
    w /= w.sum()
    rng = np.random.default_rng(0)
    pick = rng.choice(len(t), size=args.draws, p=w)
    model = ComponentModel.load("massachusetts-2026")
    c = triples[pick][None].astype(np.int8)
    kind = np.zeros(args.draws, np.int64)
    prot = np.zeros((1, args.draws), bool)
    start = components.lowest(c[0]).astype(int)
    for _ in range(2):
        components.deteriorate(model, c, prot, kind, rng.random((1, args.draws, 5)), rng.random((1, args.draws)))
    end = components.lowest(c[0]).astype(int)
    sim = np.zeros((3, 3))
    np.add.at(sim, (band(start), band(end)), 1)
    sim /= np.maximum(sim.sum(1), 1)[:, None]
    print("two-year band moves of bridges left alone: Ontario (BCI, 0.0 read as missing; "
          f"{len(r0):,} pairs) beside the component model (fitted on Massachusetts), % of the start band\n")
    print("| from → to | Ontario n | Ontario | model |\n|---|---:|---:|---:|")
    for i in range(3):
        for j in range(3):
            print(f"| {BANDS[i]} → {BANDS[j]} | {int(n_obs[i]):,} | {100 * obs[i, j]:.1f} % | "
                  f"{100 * sim[i, j]:.1f} % |")


if __name__ == "__main__":
    main()
