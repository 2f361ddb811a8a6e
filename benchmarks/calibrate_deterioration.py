"""Deterioration of the fleet model against Ontario's inspection histories: observed vs modelled two-year
transition shares between condition bands, and the fit behind the default model's band rate factors.

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
  deteriorated for two years by the simulator's own kernel (``model.maintain_and_deteriorate``: drop = rate ×
  band factor × (1 + a × ysm) × Gamma(mean 1, cv 0.3), the band that of the rating at the start of each
  year), with rates drawn as for a synthetic fleet (U(0.03, 0.05)); 64 draws per pair.
- Fit: the good and fair band factors (and a) that maximise the multinomial likelihood of the observed end
  bands, by grid search (coordinate-wise, twice); the poor factor matches the mean two-year drop (a poor
  bridge cannot leave its band without work, so band shares cannot inform it). The fit's error is the mean
  absolute difference of the nine transition shares (percentage points); the mean drops are printed beside.
"""

from __future__ import annotations

import argparse
import csv
import itertools
from pathlib import Path

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.fleet import model
from bridgefleet.fleet.inventory_model import YSM_CAP

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ontario" / "bridge_data.csv"
INDIANA = Path(__file__).resolve().parents[2] / "shared" / "data" / "indiana" / "INDIANA2019.csv"
AGE_BINS = (0, 10, 20, 30, 40, 50, 60, 70, 80)
BANDS = ("good", "fair", "poor")
BCI_POINTS = np.array([0.0, 60.0, 70.0, 100.0])
RATING_POINTS = np.array([0.0, 5.0, 7.0, 9.0])


def bci_to_rating(bci: np.ndarray) -> np.ndarray:
    """NBI-scale rating of a BCI, piecewise linear through (0, 0), (60, 5), (70, 7), (100, 9)."""
    return np.interp(bci, BCI_POINTS, RATING_POINTS)


band = model.band_index
"""0 good (≥ 7), 1 fair (5–7), 2 poor (< 5), int (N,): the simulator's own bands."""


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


def transitions(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """3 × 3 shares P[from band, to band] (rows sum to 1)."""
    m = np.zeros((3, 3))
    np.add.at(m, (start, end), 1.0)
    return m / np.maximum(m.sum(1, keepdims=True), 1e-12)


class TwoYears:
    """Two years of the simulator's deterioration from each pair's start, for D draws (fixed noise and rates)."""

    def __init__(self, rating0: np.ndarray, ysm0: np.ndarray, cv: float, draws: int, seed: int = 0):
        rng = np.random.default_rng(seed)
        n = len(rating0)
        self.rating0 = np.broadcast_to(rating0.astype(np.float32), (draws, n))
        self.ysm0 = np.broadcast_to(ysm0.astype(np.float32), (draws, n))
        self.noise = [model.standard_gamma_noise(rng, cv, (draws, n)) for _ in range(2)]
        lo, hi = model.RATE_RANGE
        self.rate = (lo + (hi - lo) * rng.random((draws, n))).astype(np.float32)

    def end_ratings(self, factors: tuple[float, float, float], accel: float, sel: np.ndarray | None = None
                    ) -> np.ndarray:
        """Ratings after two years, float32 (D, N) (or (D, n_sel) for the pairs ``sel``)."""
        cols = slice(None) if sel is None else sel
        state = model.FleetState(self.rating0[:, cols].copy(), np.zeros_like(self.rating0[:, cols]),
                                 self.ysm0[:, cols].copy(), self.rate[:, cols].copy())
        nothing = np.zeros(state.condition.shape, dtype=np.int64)
        for noise in self.noise:
            model.maintain_and_deteriorate(state, nothing, noise[:, cols], 0.035, accel, factors)
        return state.condition

    def end_bands(self, factors: tuple[float, float, float], accel: float, sel: np.ndarray | None = None
                  ) -> np.ndarray:
        """End band shares per pair, float (N, 3), averaged over the draws."""
        return band_shares(self.end_ratings(factors, accel, sel))


def band_shares(ratings: np.ndarray) -> np.ndarray:
    """Share of the draws in each band per pair, float (N, 3), from ratings (D, N)."""
    end = band(ratings)
    return np.stack([(end == k).mean(0) for k in range(3)], axis=1)


def log_likelihood(p_end: np.ndarray, observed_end: np.ndarray) -> float:
    return float(np.log(np.maximum(p_end[np.arange(len(observed_end)), observed_end], 1e-6)).sum())


FACTOR_GRID = np.round(np.arange(0.1, 6.01, 0.1), 2)


def fit(sim: TwoYears, start: np.ndarray, end: np.ndarray, drop: np.ndarray,
        grid: np.ndarray = FACTOR_GRID) -> tuple[float, tuple[float, ...], float]:
    """(log-likelihood, band factors, a) of the best fit (see the module's docstring)."""
    best: tuple[float, tuple[float, ...], float] = (-np.inf, (1.0, 1.0, 1.0), 0.0)
    poor = start == 2
    for accel in (0.0, 0.05, 0.1, 0.2):
        f = [1.0, 1.0, 1.0]
        for _ in range(2):
            for k in (0, 1):
                sel = start == k
                lls = [log_likelihood(sim.end_bands(tuple([*f[:k], g, *f[k + 1:]]), accel, sel), end[sel])
                       for g in grid]
                f[k] = float(grid[int(np.argmax(lls))])
        mean_rate = sum(model.RATE_RANGE) / 2
        f[2] = round(float(drop[poor].mean() / np.mean(mean_rate * (2 + accel * (2 * sim.ysm0[0, poor] + 1)))), 1)
        ll = log_likelihood(sim.end_bands(tuple(f), accel), end)
        if ll > best[0]:
            best = (ll, tuple(f), accel)
    return best


def modelled_age_profile(cfg: FleetConfig, n: int = 4000, years: int = AGE_BINS[-1], seed: int = 0
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Ratings by age of ``n`` bridges built new (rating 9) and kept by the condition-based threshold rule with no
    budget limit (an agency's reactive practice): (ages int (years·n,), ratings float32 (years·n,))."""
    from bridgefleet.fleet.strategies import condition_based_actions

    rng = np.random.default_rng(seed)
    lo, hi = model.RATE_RANGE
    state = model.FleetState(np.full((1, n), 9.0, np.float32), np.zeros((1, n), np.float32),
                             np.zeros((1, n), np.float32), (lo + (hi - lo) * rng.random((1, n))).astype(np.float32))
    ages, ratings = [], []
    for _ in range(years):
        ages.append(state.age[0].copy())
        ratings.append(state.condition[0].copy())
        actions = condition_based_actions(state.condition)
        actions[actions == 4] = 3  # a replaced bridge would restart at age 0: rehabilitate instead, keep the age
        noise = model.standard_gamma_noise(rng, cfg.deterioration_cv, (1, n))
        model.maintain_and_deteriorate(state, actions, noise, cfg.new_structure_rate, cfg.ysm_acceleration,
                                       cfg.band_rate_factors)
    return np.concatenate(ages).astype(np.int64), np.concatenate(ratings)


def age_table(path: Path, models: dict[str, FleetConfig]) -> None:
    """Mean rating and share poor by age band: Indiana's inventory beside each model's profile."""
    from bridgefleet.fleet.inventory import load_inventory

    inv = load_inventory(str(path), mapping="indiana")
    profiles = {name: modelled_age_profile(cfg) for name, cfg in models.items()}
    print(f"\nage–condition profile: {path.name} ({len(inv.age):,} bridges) vs bridges built new and kept by the "
          "condition-based rule (no budget limit) in each model")
    print(f"{'age, years':<12}{'Indiana n':>10}{'mean':>7}{'poor':>7}" + "".join(f"{name + ' mean':>16}{'poor':>7}"
                                                                            for name in profiles))
    for a0, a1 in itertools.pairwise(AGE_BINS):
        sel = (inv.age >= a0) & (inv.age < a1)
        c = inv.condition[sel]
        line = f"{f'{a0}–{a1 - 1}':<12}{sel.sum():>10,}{c.mean():>7.2f}{(c < 5).mean():>6.1%}"
        for ages, ratings in profiles.values():
            m = (ages >= a0) & (ages < a1)
            line += f"{ratings[m].mean():>16.2f}{(ratings[m] < 5).mean():>6.1%}"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--draws", type=int, default=64, help="draws of noise and rate per pair")
    ap.add_argument("--no-fit", action="store_true", help="only compare the named fleet models")
    ap.add_argument("--indiana", type=Path, default=INDIANA, help="NBI table for the age–condition check")
    args = ap.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: not found (the Ontario histories of ../shared/data/ontario/)")
    pairs = read_pairs(args.data)
    rating0, rating1 = bci_to_rating(pairs["bci0"]), bci_to_rating(pairs["bci1"])
    start, end = band(rating0), band(rating1)
    drop = rating0 - rating1
    sim = TwoYears(rating0, pairs["ysm"], FleetConfig().deterioration_cv, args.draws)
    observed = transitions(start, end)
    counts = np.bincount(start, minlength=3)
    print(f"{len(start):,} two-year do-nothing pairs from {args.data.name} (start bands: "
          + ", ".join(f"{b} {c:,}" for b, c in zip(BANDS, counts, strict=True)) + ")")

    def row(factors: tuple[float, ...], accel: float) -> tuple[np.ndarray, float, list[float]]:
        ratings = sim.end_ratings(tuple(factors), accel)
        p_end = band_shares(ratings)
        drops = [float((sim.rating0[:, start == k] - ratings[:, start == k]).mean()) for k in range(3)]
        return np.stack([p_end[start == k].mean(0) for k in range(3)]), log_likelihood(p_end, end), drops

    models = {name: FleetConfig.named(name) for name in ("plan-2025", "default")}
    if not args.no_fit:
        ll, factors, accel = fit(sim, start, end, drop)
        print(f"fit: band_rate_factors {list(factors)}, ysm_acceleration {accel} (log-likelihood {ll:,.1f})")
        models["fit"] = FleetConfig(band_rate_factors=factors, ysm_acceleration=accel)
    rows = {name: row(cfg.band_rate_factors, cfg.ysm_acceleration) for name, cfg in models.items()}
    print(f"\n{'from → to':<14}{'observed':>10}" + "".join(f"{name:>12}" for name in rows))
    for i, j in itertools.product(range(3), range(3)):
        print(f"{BANDS[i] + ' → ' + BANDS[j]:<14}{100 * observed[i, j]:>9.1f}%"
              + "".join(f"{100 * r[0][i, j]:>11.1f}%" for r in rows.values()))
    print(f"{'MAE (points)':<24}" + "".join(f"{100 * np.abs(observed - r[0]).mean():>12.2f}" for r in rows.values()))
    print(f"{'log-likelihood':<24}" + "".join(f"{r[1]:>12,.1f}" for r in rows.values()))
    for k, b in enumerate(BANDS):
        print(f"{'drop ' + b + ' (rating pts)':<14}{drop[start == k].mean():>10.3f}"
              + "".join(f"{r[2][k]:>12.3f}" for r in rows.values()))
    for name, cfg in models.items():
        print(f"{name}: band_rate_factors {list(cfg.band_rate_factors)}, ysm_acceleration {cfg.ysm_acceleration}")
    if args.indiana.is_file():
        age_table(args.indiana, {k: v for k, v in models.items() if k != "fit"})
    else:
        print(f"skipped the age–condition check: {args.indiana} not found")


if __name__ == "__main__":
    main()
