"""Deterioration of the fleet model against Ontario's inspection histories and Indiana's age–condition profile.

    python benchmarks/calibrate_deterioration.py [--data ../shared/data/ontario/bridge_data.csv] [--no-fit]

1. Ontario (MTO "Bridge conditions" open data, 2,780 bridges, Bridge Condition Index 0–100 for 2000–2013, Open
   Government Licence – Ontario): the histories are written as a long table (one row per inspection; a row
   whose bridge had a recorded rehabilitation since its previous inspection is flagged as work) and fitted by
   ``bridgefleet calibrate`` (``bridgefleet.calibration.fit``) on the two-year pairs, the inspection interval of
   most bridges; the printed table compares the two-year band transitions and the mean drops from each band and
   each rating point with ``bands-2026`` (the previous default) and the fit.
2. Indiana (2019 NBI, 4,794 bridges, GIAMS): the initial rating of a synthetic bridge (a line through Indiana's
   mean lowest rating by age, + 0.5 for the continuous scale) and the new-structure rating (new bridges
   deteriorated by the fitted model match Indiana's bridges aged 2–9 on the NBI's whole ratings), then the
   held-out check: bridges built new and kept under a stated maintenance assumption, mean NBI rating (the whole
   rating an inspector codes: floor of the model's rating) and share poor per decade, beside Indiana's.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import tempfile
from pathlib import Path

import numpy as np

from bridgefleet.calibration.fit import check_table, draw_rates, fit_pairs, format_table
from bridgefleet.calibration.histories import HistoryMapping, Pairs, read_history
from bridgefleet.config import FleetConfig
from bridgefleet.sim import model

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ontario" / "bridge_data.csv"
INDIANA = Path(__file__).resolve().parents[2] / "shared" / "data" / "indiana" / "INDIANA2019.csv"
AGE_BINS = (0, 10, 20, 30, 40, 50, 60, 70)


def ontario_history(src: Path, dst: Path) -> None:
    """Ontario's wide table (one row per bridge, a BCI column per year) → a long history CSV (ID, YEAR, BCI,
    YEAR_BUILT, WORK) for ``bridgefleet calibrate --mapping ontario-bci``; each row of the source is a bridge."""
    with src.open(encoding="latin-1", newline="") as f:
        rows = list(csv.reader(f))
    years = [int(h) for h in rows[1][13:27]]
    with dst.open("w", encoding="utf-8", newline="") as f:
        out = csv.writer(f)
        out.writerow(["ID", "YEAR", "BCI", "YEAR_BUILT", "WORK"])
        for n, r in enumerate(rows[2:]):
            if len(r) < 27:
                continue
            seen = sorted((y, r[13 + i].strip()) for i, y in enumerate(years) if r[13 + i].strip())
            work = [int(float(r[c])) for c in (6, 7) if r[c].strip()]  # last major, last minor rehabilitation
            prev = None
            for y, v in seen:
                out.writerow([f"{r[0].strip()}#{n}", y, v, r[5].strip(),
                              int(prev is not None and any(prev < w <= y for w in work))])
                prev = y


def ontario_pairs(path: Path, gap: int | None = 2) -> Pairs:
    """Do-nothing pairs of Ontario's histories (of ``gap`` years; None: every gap)."""
    with tempfile.TemporaryDirectory() as tmp:
        long = Path(tmp) / "ontario.csv"
        ontario_history(path, long)
        pairs = read_history(long, HistoryMapping.load("ontario-bci"))
    return pairs if gap is None else pairs.select(pairs.years == gap)


def indiana(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(age years, lowest of items 58–60) of Indiana's bridges, float64 (N,)."""
    from bridgefleet.inventory.load import load_inventory

    inv = load_inventory(str(path), mapping="indiana")
    return inv.age.astype(np.float64), inv.condition.astype(np.float64)


def fit_initial_rating(age: np.ndarray, rating: np.ndarray, max_age: float = 70.0) -> tuple[float, float, float]:
    """(intercept, loss per year, sd) of the continuous initial rating: least squares of the whole ratings on age
    (ages < ``max_age``), + 0.5 (a whole rating r stands for [r, r + 1)), sd without the rounding's 1/12."""
    sel = age < max_age
    slope, intercept = np.polyfit(age[sel], rating[sel], 1)
    resid = rating[sel] - (intercept + slope * age[sel])
    return float(intercept + 0.5), float(-slope), float(np.sqrt(max(resid.var() - 1.0 / 12.0, 0.0)))


def profile(cfg: FleetConfig, rule: str, n: int = 4000, years: int = AGE_BINS[-1], seed: int = 0
            ) -> tuple[np.ndarray, np.ndarray]:
    """Ratings by age of ``n`` bridges built new and kept by ``rule`` with no budget limit:
    (ages int (years·n,), ratings float32 (years·n,)).

    Rules: ``do_nothing``; ``condition_based`` (< 3 replace, < 5 rehabilitate, < 6 repair); ``reactive``
    (rehabilitation when poor, < 5); ``repair_poor`` (a repair, + 2 points, when poor). A replacement is done
    as a rehabilitation so that ages keep counting.
    """
    from bridgefleet.sim.strategies import condition_based_actions

    rng = np.random.default_rng(seed)
    state = model.FleetState(np.full((1, n), cfg.new_structure_rating, np.float32), np.zeros((1, n), np.float32),
                             np.zeros((1, n), np.float32), draw_rates(rng, (1, n)))
    ages, ratings = [], []
    for _ in range(years):
        ages.append(state.age[0].copy())
        ratings.append(state.condition[0].copy())
        if rule == "do_nothing":
            actions = np.zeros((1, n), np.int64)
        elif rule == "reactive":
            actions = np.where(state.condition < model.POOR_BELOW, 3, 0).astype(np.int64)
        elif rule == "repair_poor":
            actions = np.where(state.condition < model.POOR_BELOW, 2, 0).astype(np.int64)
        else:
            actions = condition_based_actions(state.condition)
            actions[actions == 4] = 3
        noise = model.standard_gamma_noise(rng, cfg.deterioration_cv, (1, n))
        model.maintain_and_deteriorate(state, actions, noise, cfg, model.draw_shocks(rng, cfg, (1, n)))
    return np.concatenate(ages).astype(np.int64), np.concatenate(ratings)


def fit_new_structure_rating(cfg: FleetConfig, target: float, ages: tuple[int, int] = (2, 10)) -> float:
    """The new-structure rating (on the 0.05 grid) whose bridges, left alone, have mean whole rating ``target``
    at ``ages`` [lo, hi)."""
    best = (np.inf, 9.0)
    for r in np.round(np.arange(6.5, 9.0001, 0.05), 2):
        a, c = profile(cfg.replace(new_structure_rating=float(r)), "do_nothing", n=2000, years=ages[1])
        sel = (a >= ages[0]) & (a < ages[1])
        best = min(best, (abs(float(np.floor(c[sel]).mean()) - target), float(r)))
    return best[1]


def age_table(age: np.ndarray, rating: np.ndarray, cfg: FleetConfig, rules: tuple[str, ...]) -> None:
    """Mean whole rating and share poor per decade: Indiana beside the model under each rule."""
    runs = {rule: profile(cfg, rule) for rule in rules}
    print(f"\n{'age, years':<12}{'Indiana n':>10}{'mean':>7}{'poor':>7}"
          + "".join(f"{rule + ' mean':>22}{'poor':>7}" for rule in rules))
    for a0, a1 in itertools.pairwise(AGE_BINS):
        sel = (age >= a0) & (age < a1)
        if sel.sum() < 30:
            continue
        line = f"{f'{a0}–{a1 - 1}':<12}{sel.sum():>10,}{rating[sel].mean():>7.2f}{(rating[sel] <= 4).mean():>6.1%}"
        for a, c in runs.values():
            m = (a >= a0) & (a < a1)
            whole = np.floor(c[m])
            line += f"{whole.mean():>22.2f}{(whole <= 4).mean():>6.1%}"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--indiana", type=Path, default=INDIANA)
    ap.add_argument("--no-fit", action="store_true", help="only compare the named fleet models")
    args = ap.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data}: not found (the Ontario histories of ../shared/data/ontario/)")
    pairs = ontario_pairs(args.data)
    print(f"{len(pairs.rating0):,} two-year do-nothing pairs of {pairs.n_bridges:,} bridges from {args.data.name}")
    models = {"bands-2026": FleetConfig.named("bands-2026"), "default": FleetConfig()}
    if not args.no_fit:
        fit = fit_pairs(pairs)
        print("fit:", fit.fields(), f"(rating points pooled: {fit.groups})")
        models["fit"] = FleetConfig().replace(**fit.fields())
    print()
    print(format_table(check_table(pairs, models)))
    if not args.indiana.is_file():
        print(f"skipped the Indiana check: {args.indiana} not found")
        return
    age, rating = indiana(args.indiana)
    cfg = models.get("fit", models["default"])
    young = (age >= 2) & (age < 10)
    initial = tuple(round(v, 3) for v in fit_initial_rating(age, rating))
    new = fit_new_structure_rating(cfg, float(rating[young].mean()))
    print(f"\nIndiana: initial rating (intercept, loss a year, sd) = {initial}; bridges aged 2–9: {young.sum():,}, "
          f"mean whole rating {rating[young].mean():.2f} → new-structure rating {new} "
          f"(default {FleetConfig().new_structure_rating})")
    print(f"age–condition profile: {args.indiana.name} ({len(age):,} bridges) vs bridges built new (rating "
          f"{FleetConfig().new_structure_rating}) under the default model, no budget limit")
    age_table(age, rating, FleetConfig(), ("do_nothing", "repair_poor", "reactive", "condition_based"))


if __name__ == "__main__":
    main()
