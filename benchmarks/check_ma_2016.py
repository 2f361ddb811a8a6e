"""Held-out check of the component model on Massachusetts: 2016 simulated from 2011 against the 2016 NBI.

    python benchmarks/check_ma_2016.py [--data ../shared/data] [--draws 200]

The model is fitted on 2000–2010 only (inspection pairs that end by 2010, MassDOT projects that end by 2010:
``component_model.fit_model(last_year=2010)``). Each bridge with ratings in 2011 and 2016 starts from its 2011
ratings and is simulated to 2016 with its recorded projects applied in the year they end. Which treatment a
project is, is decided without its ratings after (that would read the answer): a project during which the bridge's
year built changes is a replacement; otherwise one that cost at least half the median replacement project per m²
(MassDOT, 2000–2010) is a major rehabilitation, any other a rehabilitation of the lowest component. Printed: the
share of deck area good (lowest rating ≥ 7) and poor (≤ 4) in 2016, simulated (mean and 95 % range over draws)
against the NBI, for all bridges and NHS bridges.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from component_model import DATA, fit_model

from bridgefleet.calibration import treatment_fit as tf
from bridgefleet.calibration.panel import read_panel, read_works
from bridgefleet.sim import components
from bridgefleet.sim.components import from_mapping

FIRST, LAST = 2011, 2016


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rises", choices=("drop", "up", "all"), default="all",
                    help="rises without a recorded project: kept (all, the shipped model), one level only (up), "
                         "left out (drop) (component_model.fit_model)")
    args = ap.parse_args()
    mapping, _ = fit_model(args.data, last_year=2010, rises=args.rises)
    model = from_mapping(mapping, "fit to 2010")
    ma = args.data / "massachusetts"
    panel = read_panel(ma / "ma_bridge_timeseries_2000_2016.csv")
    works = read_works(ma / "ma_massdot_bridge_projects.csv", panel)
    events, _ = tf.treatment_events(panel, works)
    rep = [e.usd / e.area_m2 for e in events if e.kind == "replacement" and e.post_year <= 2010
           and e.area_m2 > 0 and np.isfinite(e.usd)]
    major_from = 0.5 * float(np.median(rep))

    # Each bridge's 2011 and 2016 rows.
    rows = {}
    for y in (FIRST, LAST):
        sel = np.flatnonzero(panel.year == y)
        rows[y] = dict(zip(panel.bridge_id[sel].tolist(), sel.tolist(), strict=True))
    ids = [b for b in rows[FIRST] if b in rows[LAST]]
    i0 = np.array([rows[FIRST][b] for b in ids])
    i1 = np.array([rows[LAST][b] for b in ids])
    r0, r1 = panel.ratings[i0], panel.ratings[i1]
    culvert = (r0[:, 3] >= 0) & (r0[:, :3] < 0).all(axis=1)
    whole0 = culvert | (r0[:, :3] >= 0).all(axis=1)
    whole1 = np.where(culvert, r1[:, 3] >= 0, (r1[:, :3] >= 0).all(axis=1))
    area = panel.deck_area_m2[i1]
    keep = whole0 & whole1 & np.isfinite(area)
    ids = [b for b, k in zip(ids, keep, strict=True) if k]
    r0, r1, culvert, area = r0[keep], r1[keep], culvert[keep], area[keep]
    nhs = panel.nhs[i1][keep]
    b_n = len(ids)
    start = np.where(culvert[:, None], np.array([0, 9, 9]) * 0 + np.stack([r0[:, 3], np.full(b_n, 9),
                                                                          np.full(b_n, 9)], 1), r0[:, :3])
    kind = culvert.astype(np.int64)
    low1 = np.where(culvert, r1[:, 3], r1[:, :3].min(axis=1))

    # Recorded projects ending 2012–2016: the action in the year they end.
    index = {b: j for j, b in enumerate(ids)}
    act = np.zeros((LAST - FIRST, b_n), np.int64)
    n_applied = np.zeros(5, int)
    for b, s, e, usd in tf.merge_windows(works):
        j = index.get(b)
        if j is None or not FIRST < e <= LAST:
            continue
        sl = np.flatnonzero(panel.bridge_id == b)
        built = panel.year_built[sl]
        yrs = panel.year[sl]
        before = built[(yrs < s) & (built > 0)]
        during = built[(yrs >= s) & (yrs <= e) & (built > 0)]
        rebuilt = before.size and during.size and during[-1] != before[-1]
        a = 4 if rebuilt else (3 if np.isfinite(usd) and usd / area[j] >= major_from else 2)
        act[e - FIRST - 1, j] = max(act[e - FIRST - 1, j], a)
        n_applied[a] += 1

    rng = np.random.default_rng(args.seed)
    comp = np.broadcast_to(start.astype(np.int8), (args.draws, b_n, 3)).copy()
    prot = np.zeros((args.draws, b_n), bool)
    for t in range(LAST - FIRST):
        a = np.broadcast_to(act[t], (args.draws, b_n))
        components.treat(model, comp, prot, kind, a, rng.random((args.draws, b_n, 3)))
        components.deteriorate(model, comp, prot, kind, rng.random((args.draws, b_n, 5)),
                               rng.random((args.draws, b_n)))
    low = components.lowest(comp)

    print(f"fitted on 2000–2010; {b_n:,} bridges with ratings in {FIRST} and {LAST} ({int(culvert.sum())} culverts); "
          f"projects ending {FIRST + 1}–{LAST} applied: rehabilitation of the lowest component {n_applied[2]}, major "
          f"rehabilitation {n_applied[3]}, replacement {n_applied[4]} (major from USD {major_from:,.0f}/m²)\n")
    print("| bridges | deck area good: NBI 2016 | simulated (95 % range) | deck area poor: NBI 2016 | simulated (95 % "
          "range) |\n|---|---:|---:|---:|---:|")
    for name, m in (("all", np.ones(b_n, bool)), ("NHS", nhs)):
        w = area * m
        obs = [(w * (low1 >= 7)).sum() / w.sum(), (w * (low1 <= 4)).sum() / w.sum()]
        sim = [((low >= 7) * w).sum(1) / w.sum(), ((low <= 4) * w).sum(1) / w.sum()]
        cells = []
        for o, s in zip(obs, sim, strict=True):
            lo, hi = np.percentile(s, [2.5, 97.5])
            cells += [f"{100 * o:.1f} %", f"{100 * s.mean():.1f} % ({100 * lo:.1f}–{100 * hi:.1f})"]
        print(f"| {name} ({int(m.sum()):,}) | " + " | ".join(cells) + " |")
    w = area
    print(f"\n2011 (the start, NBI): good {100 * (w * (start.min(1) >= 7)).sum() / w.sum():.1f} %, poor "
          f"{100 * (w * (start.min(1) <= 4)).sum() / w.sum():.1f} % of deck area")


if __name__ == "__main__":
    main()
