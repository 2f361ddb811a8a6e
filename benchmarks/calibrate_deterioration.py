"""Deterioration of the fleet model against Ontario's inspection histories: observed vs modelled two-year
transition shares between condition bands, and the band rates fitted to them.

    python benchmarks/calibrate_deterioration.py [--data ../shared/data/ontario/bridge_data.csv]

Data: Ontario Ministry of Transportation "Bridge conditions" open data (2,780 provincial bridges, Bridge
Condition Index 0–100 for each year 2000–2013 where inspected, mostly every two years; Open Government
Licence – Ontario). Method:

- Pairs: consecutive inspections two years apart with no work between them: the BCI did not rise by more
  than 1 point and neither the last minor nor the last major rehabilitation year falls in between.
- Bands: MTO's BCI bands, good ≥ 70, fair 60–70, poor < 60, mapped onto the NBI scale piecewise-linearly
  (BCI 100 → rating 9, 70 → 7, 60 → 5, 0 → 0), so that the bands coincide with FHWA's good ≥ 7, fair 5–6,
  poor ≤ 4 (an approximation: the BCI is a weighted element condition, not an NBI rating).
- Model: each pair's start (rating, years since the last rehabilitation or construction, capped at 15) is
  deteriorated for two years by the simulator's law, drop = rate × (1 + a × ysm) × Gamma(mean 1, cv 0.3),
  with the rate of its band (``RATE_BY_BAND``) and a = ``ysm_acceleration``; 64 noise draws per pair.
- Fit: the good and fair rates (and a) that maximise the multinomial likelihood of the observed end bands,
  by grid search; the poor rate matches the mean two-year drop (a poor bridge cannot leave its band without
  work, so band shares cannot inform it). The fit's error is the mean absolute difference of the nine
  transition shares (percentage points); the mean drops are printed beside it.
"""

from __future__ import annotations

import argparse
import csv
import itertools
from pathlib import Path

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.fleet.inventory_model import RATE_BY_BAND, YSM_CAP

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ontario" / "bridge_data.csv"
BANDS = ("good", "fair", "poor")
BCI_POINTS = np.array([0.0, 60.0, 70.0, 100.0])
RATING_POINTS = np.array([0.0, 5.0, 7.0, 9.0])


def bci_to_rating(bci: np.ndarray) -> np.ndarray:
    """NBI-scale rating of a BCI, piecewise linear through (0, 0), (60, 5), (70, 7), (100, 9)."""
    return np.interp(bci, BCI_POINTS, RATING_POINTS)


def band(rating: np.ndarray) -> np.ndarray:
    """0 good (≥ 7), 1 fair (5–7), 2 poor (< 5), int (N,)."""
    return np.where(rating >= 7.0, 0, np.where(rating >= 5.0, 1, 2))


def read_pairs(path: Path) -> dict[str, np.ndarray]:
    """Two-year do-nothing pairs: start BCI, end BCI, years since work at the start (float64 (N,))."""
    with path.open(encoding="latin-1", newline="") as f:
        rows = list(csv.reader(f))
    header = rows[1]
    years = [int(h) for h in header[13:27]]
    built_col, major_col, minor_col = 5, 6, 7
    b0, b1, ysm = [], [], []
    for r in rows[2:]:
        if len(r) < 27:
            continue
        seen = sorted((y, float(r[13 + i])) for i, y in enumerate(years) if r[13 + i].strip())
        work = [int(float(r[c])) for c in (major_col, minor_col) if r[c].strip()]
        built = int(float(r[built_col])) if r[built_col].strip() else None
        for (y0, v0), (y1, v1) in itertools.pairwise(seen):
            if y1 - y0 != 2 or v1 > v0 + 1.0 or any(y0 < w <= y1 for w in work):
                continue
            last = max([w for w in work if w <= y0] + ([built] if built and built <= y0 else []), default=None)
            b0.append(v0)
            b1.append(v1)
            ysm.append(min(y0 - last, YSM_CAP) if last is not None else YSM_CAP)
    return {"bci0": np.array(b0), "bci1": np.array(b1), "ysm": np.array(ysm, dtype=float)}


def transitions(start: np.ndarray, end: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """3 × 3 shares P[from band, to band] (rows sum to 1)."""
    m = np.zeros((3, 3))
    np.add.at(m, (start, end), 1.0 if weights is None else weights)
    return m / np.maximum(m.sum(1, keepdims=True), 1e-12)


def model_end_bands(rating0: np.ndarray, ysm0: np.ndarray, rates: np.ndarray, accel: float, cv: float,
                    noise: np.ndarray) -> np.ndarray:
    """End band shares per pair after two years, float (N, 3), averaged over the noise draws (D, 2, N)."""
    r = rates[band(rating0)]
    drop = r * (1 + accel * ysm0) * noise[:, 0] + r * (1 + accel * (ysm0 + 1)) * noise[:, 1]  # (D, N)
    end = band(np.maximum(rating0 - drop, 0.0))
    return np.stack([(end == k).mean(0) for k in range(3)], axis=1)


def log_likelihood(p_end: np.ndarray, observed_end: np.ndarray) -> float:
    return float(np.log(np.maximum(p_end[np.arange(len(observed_end)), observed_end], 1e-6)).sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--draws", type=int, default=64, help="noise draws per pair")
    args = ap.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: not found (the Ontario histories of ../shared/data/ontario/)")
    pairs = read_pairs(args.data)
    rating0, rating1 = bci_to_rating(pairs["bci0"]), bci_to_rating(pairs["bci1"])
    start, end = band(rating0), band(rating1)
    cfg = FleetConfig()
    cv = cfg.deterioration_cv
    rng = np.random.default_rng(0)
    noise = rng.gamma(1 / cv**2, cv**2, size=(args.draws, 2, len(rating0))) if cv > 0 else np.ones((1, 2, len(rating0)))
    observed = transitions(start, end)
    counts = np.bincount(start, minlength=3)
    print(f"{len(start):,} two-year do-nothing pairs from {args.data.name} (start bands: "
          + ", ".join(f"{b} {c:,}" for b, c in zip(BANDS, counts, strict=True)) + ")")
    print("mean two-year BCI drop: " + ", ".join(
        f"{b} {np.mean(pairs['bci0'][start == k] - pairs['bci1'][start == k]):.2f}" for k, b in enumerate(BANDS)))

    def shares(rates: np.ndarray, accel: float) -> tuple[np.ndarray, float]:
        p_end = model_end_bands(rating0, pairs["ysm"], rates, accel, cv, noise)
        modelled = np.stack([p_end[start == k].mean(0) for k in range(3)])
        return modelled, log_likelihood(p_end, end)

    current = np.array([RATE_BY_BAND[b] for b in BANDS])
    cur, cur_ll = shares(current, cfg.ysm_acceleration)
    grid = np.round(np.arange(0.01, 0.301, 0.01), 3)
    best = (-np.inf, None, None)
    for accel in (0.0, 0.05, 0.1, 0.2):
        # the end band of a pair depends only on its own start band's rate: fit each band on its own
        rates = np.zeros(3)
        for k in range(3):
            lls = []
            for g in grid:
                trial = current.copy()
                trial[k] = g
                p_end = model_end_bands(rating0[start == k], pairs["ysm"][start == k], trial, accel, cv,
                                        noise[:, :, start == k])
                lls.append(log_likelihood(p_end, end[start == k]))
            rates[k] = grid[int(np.argmax(lls))]
        # A poor bridge cannot leave its band without work, so band shares say nothing of the poor rate: match
        # the mean two-year drop (rating points) instead.
        k = 2
        obs_drop = np.mean(rating0[start == k] - rating1[start == k])
        rates[k] = obs_drop / np.mean(2 + accel * (2 * pairs["ysm"][start == k] + 1))
        _, ll = shares(rates, accel)
        if ll > best[0]:
            best = (ll, rates, accel)
    ll, rates, accel = best
    fit, _ = shares(rates, accel)

    def drops(rates: np.ndarray, a: float) -> list[float]:
        r = rates[start]
        mean = r * (2 + a * (2 * pairs["ysm"] + 1))
        return [float(mean[start == k].mean()) for k in range(3)]

    obs_drops = [float(np.mean(rating0[start == k] - rating1[start == k])) for k in range(3)]

    def table(title: str, model: np.ndarray, model_drops: list[float]) -> None:
        print(f"\n{title}")
        print(f"{'from → to':<14}" + "".join(f"{'observed':>10}{'model':>8}" for _ in range(1)))
        for i, j in itertools.product(range(3), range(3)):
            print(f"{BANDS[i] + ' → ' + BANDS[j]:<14}{100 * observed[i, j]:>9.1f}%{100 * model[i, j]:>7.1f}%")
        print(f"mean absolute error {100 * np.abs(observed - model).mean():.2f} percentage points")
        print("mean two-year drop, rating points (observed / model): " + ", ".join(
            f"{b} {o:.3f} / {m:.3f}" for b, o, m in zip(BANDS, obs_drops, model_drops, strict=True)))

    table(f"today's model: rates good/fair/poor {current.tolist()} rating points/yr, ysm_acceleration "
          f"{cfg.ysm_acceleration} (log-likelihood {cur_ll:,.1f})", cur, drops(current, cfg.ysm_acceleration))
    table(f"fitted: rates {np.round(rates, 3).tolist()} rating points/yr, ysm_acceleration {accel} "
          f"(log-likelihood {ll:,.1f})", fit, drops(rates, accel))


if __name__ == "__main__":
    main()
