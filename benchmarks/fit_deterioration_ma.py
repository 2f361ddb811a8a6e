"""Markov deterioration of NBI component ratings fitted to Massachusetts' 2000–2016 histories, and its held-out check.

    python benchmarks/fit_deterioration_ma.py [--data DIR] [--yaml PATH] [--draws 2000]

Data: ``ma_bridge_timeseries_2000_2016.csv`` and ``ma_massdot_bridge_projects.csv`` (S. Vasserman and
V. Bolotnyy, StanCon 2018, repository shoshievass/bridgeConditions, MIT licence; NBI items 58–60, 62 from
FHWA via MassDOT). Pairs: consecutive valid ratings of a component with no MassDOT project window overlapping
them and no rise of ≥ 2 points (unrecorded work), ``bridgefleet.calibration.panel.inspection_pairs``. Fit: a
continuous-time Markov generator per component, ``bridgefleet.calibration.markov.fit_generator``.

Printed, per component (culvert too when it has ≥ 1,000 pairs):

1. evidence: pair counts, the share of no-work yearly pairs rising by 1 and by ≥ 2, and whether a rise stays;
2. structure: held-out log-likelihood (fit on pairs ending ≤ 2010, scored on pairs starting ≥ 2011) of
   down1 / down1+up / down1+down2 / down1+down2+up;
3. the held-out table (markdown) of the chosen structure: one-year shares of the 2011–2016 yearly pairs
   against the fitted P with its 95 % interval (parametric bootstrap), per from-rating with ≥ 30 held-out pairs;
4. the age-band likelihood-ratio test (< 30, 30–59, ≥ 60 years at the first inspection);
5. the shipped fit on all pairs 2000–2016: rates with 95 % intervals and the 10×10 one-year matrix.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

# 10×10 matrices only: BLAS threads gain nothing and, on a busy machine, make each expm 100× slower
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import yaml
from scipy import stats

from bridgefleet.calibration.component_fit import MASSACHUSETTS_SOURCE, arrays
from bridgefleet.calibration.markov import KINDS, GeneratorFit, age_band_test, fit_generator
from bridgefleet.calibration.panel import COMPONENTS, Pairs, inspection_pairs, read_panel, read_works

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "massachusetts"
PANEL_FILE = "ma_bridge_timeseries_2000_2016.csv"
WORKS_FILE = "ma_massdot_bridge_projects.csv"
TRAIN_LAST = 2010
"""Fit pairs end in or before this year."""
TEST_FIRST = 2011
"""Held-out pairs start in or after this year."""
MIN_ROW = 30
MIN_CULVERT = 1000
SOURCE = MASSACHUSETTS_SOURCE
STRUCTURES = {"down1": (False, False), "down1+up": (True, False), "down1+down2": (False, True),
              "down1+down2+up": (True, True)}


def evidence(panel, works, comp: str, pairs: Pairs) -> None:
    """Rises of no-work yearly pairs (kept and dropped big rises) and whether they stay the next year."""
    allp = inspection_pairs(panel, works, comp, big_rise="keep")
    one = allp.interval_years == 1
    d = allp.to_rating.astype(int) - allp.from_rating
    k = COMPONENTS.index(comp)
    at = {(int(b), int(y)): int(r) for b, y, r in zip(panel.bridge_index, panel.year, panel.ratings[:, k],
                                                      strict=True)}
    stays = {}
    for lab, m in (("rise 1", one & (d == 1)), ("rise >=2", one & (d >= 2))):
        nxt = np.array([at.get((int(b), int(y) + 2), -1) for b, y in zip(allp.bridge_index[m], allp.year_from[m],
                                                                         strict=True)])
        has = nxt >= 0
        stays[lab] = (int((nxt[has] >= allp.to_rating[m][has]).sum()), int(has.sum()))
    print(f"  pairs kept {len(pairs):,} (yearly {int((pairs.interval_years == 1).sum()):,}, longer "
          f"{int((pairs.interval_years > 1).sum())}); left out: project window {pairs.dropped_work:,}, "
          f"rise >= 2 outside windows {pairs.dropped_big_rise}")
    print(f"  no-work yearly pairs {int(one.sum()):,}: rise by 1 {np.mean(d[one] == 1):.2%}, by >= 2 "
          f"{np.mean(d[one] >= 2):.2%}, stay {np.mean(d[one] == 0):.2%}, down 1 {np.mean(d[one] == -1):.2%}, "
          f"down >= 2 {np.mean(d[one] <= -2):.2%}")
    for lab, (s, n) in stays.items():
        print(f"  after a no-work {lab}: next year's rating >= the raised one in {s}/{n} ({s / max(n, 1):.0%})")


def cond_score(fit: GeneratorFit, f: np.ndarray, t: np.ndarray, d: np.ndarray) -> float:
    """Log-likelihood of pairs that do not rise, each conditional on not rising: P[i, j] / Σ_{j' ≤ i} P[i, j']."""
    total = 0.0
    for v in np.unique(d):
        m = d == v
        p = fit.transition(float(v))
        low = np.tril(p).sum(axis=1)
        total += float(np.log(np.maximum(p[f[m], t[m]], 1e-300) / low[f[m]]).sum())
    return total


def choose_structure(train: Pairs, test: Pairs) -> tuple[str, dict[str, tuple[float, float]]]:
    """Held-out log-likelihood of each structure: (all held-out pairs, those that do not rise given no rise);
    a structure without ``up`` is fitted on training pairs that do not rise."""
    f, t, d = arrays(train)
    hf, ht, hd = arrays(test)
    flat = ht <= hf
    out = {}
    for name, (up, down2) in STRUCTURES.items():
        keep = np.ones(len(f), bool) if up else t <= f
        fit = fit_generator(f[keep], t[keep], d[keep], up=up, down2=down2)
        out[name] = (fit.score(hf, ht, hd), cond_score(fit, hf[flat], ht[flat], hd[flat]))
    best = max(out, key=lambda k: (out[k][0], out[k][1]))
    return best, out


def cell(obs: float, fit: float, lo: float, hi: float, n: int) -> tuple[str, bool]:
    """'obs / fit [lo–hi]' and whether obs is inside the 95 % binomial interval of n draws at the fitted share."""
    a, b = stats.binom.ppf(0.025, n, fit) / n, stats.binom.ppf(0.975, n, fit) / n
    inside = bool(a - 1e-12 <= obs <= b + 1e-12)
    return f"{obs:.3f} / {fit:.3f} [{lo:.3f}–{hi:.3f}]{'' if inside else ' ✗'}", inside


def heldout_table(comp: str, fit: GeneratorFit, test: Pairs, draws: int) -> tuple[list[str], int, int]:
    """Markdown rows of the held-out check (yearly pairs), and (inside, total) cells."""
    one = test.interval_years == 1
    f = test.from_rating[one].astype(int)
    t = test.to_rating[one].astype(int)
    sims = fit.draw_transition(draws, 1.0, seed=1)
    p = fit.one_year()
    rows, inside, total = [], 0, 0
    for i in range(9, 0, -1):
        m = f == i
        n = int(m.sum())
        if n < MIN_ROW:
            continue
        d = t[m] - i
        obs = (np.mean(d == 0), np.mean(d == -1), np.mean(d <= -2), np.mean(d >= 1))

        def shares(q: np.ndarray, i: int = i) -> tuple[np.ndarray, ...]:
            return (q[..., i, i], q[..., i, i - 1], q[..., i, : max(i - 1, 0)].sum(-1), q[..., i, i + 1:].sum(-1))

        fitted, drawn = shares(p), shares(sims)
        cells = []
        for o, fv, s in zip(obs, fitted, drawn, strict=True):
            text, ok = cell(float(o), float(fv), float(np.quantile(s, 0.025)), float(np.quantile(s, 0.975)), n)
            cells.append(text)
            inside += ok
            total += 1
        rows.append(f"| {comp} | {i} | {n:,} | " + " | ".join(cells) + " |")
    return rows, inside, total


def print_matrix(p: np.ndarray) -> None:
    """10×10 with 4 decimals, rows = from rating 0–9."""
    print("        " + " ".join(f"{j:>6d}" for j in range(10)))
    for i in range(10):
        print(f"  {i:>4d}  " + " ".join(f"{v:6.4f}" for v in p[i]))


def shipped_entry(comp: str, fit: GeneratorFit, pairs: Pairs, structure: str) -> dict:
    """YAML entry of a component's shipped fit."""
    rates = {}
    for k, kind in enumerate(KINDS):
        rates[kind] = [{"from": i, "rate_per_year": round(float(fit.rates[k, i]), 6),
                        "ci95": [None if np.isnan(x) else round(float(x), 6) for x in fit.rate_ci[k, i]],
                        "identified": bool(fit.identified[i])}
                       for i in range(10) if fit.in_structure[k, i]]
    return {"structure": structure, "fit_years": [int(pairs.year_from.min()),
                                                  int((pairs.year_from + pairs.interval_years).max())],
            "pairs": len(pairs), "pairs_from": fit.n_from.tolist(), "identified": fit.identified.tolist(),
            "loglik": round(fit.loglik, 3), "rates": rates,
            "one_year": [[round(float(v), 6) for v in row] for row in fit.one_year()],
            "notes": fit.notes}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder holding the two Massachusetts CSV files")
    ap.add_argument("--yaml", type=Path, default=None, help="write the shipped one-year matrices here")
    ap.add_argument("--draws", type=int, default=2000, help="parametric-bootstrap draws for the shares' intervals")
    args = ap.parse_args()
    t0 = time.perf_counter()
    panel = read_panel(args.data / PANEL_FILE)
    works = read_works(args.data / WORKS_FILE, panel)
    print(f"panel {len(panel.year):,} rows, {len(panel.bridges):,} bridges; {len(works.bridge_id)} project rows")
    comps = [c for c in COMPONENTS
             if c != "culvert" or len(inspection_pairs(panel, works, c)) >= MIN_CULVERT]
    table = ["| component | from | n | stay: obs / fit [95 %] | down 1 | down ≥ 2 | up |",
             "|---|---|---|---|---|---|---|"]
    shipped, diag, cells = {}, {}, [0, 0]
    for comp in comps:
        pairs = inspection_pairs(panel, works, comp)
        end = pairs.year_from + pairs.interval_years
        train, test = pairs.select(end <= TRAIN_LAST), pairs.select(pairs.year_from >= TEST_FIRST)
        print(f"\n## {comp}")
        evidence(panel, works, comp, pairs)
        print(f"  fit pairs (second year <= {TRAIN_LAST}) {len(train):,}; held-out pairs (first year >= "
              f"{TEST_FIRST}) {len(test):,}")
        best, scores = choose_structure(train, test)
        print("  held-out log-likelihood (nats): structure | all held-out pairs | non-rising pairs given no rise")
        for name, (a, b) in scores.items():
            print(f"    {name:<15} {a:>12.1f} {b:>12.1f}{'   <- chosen' if name == best else ''}")
        up, down2 = STRUCTURES[best]
        f, t, d = arrays(train)
        fit = fit_generator(f, t, d, up=up, down2=down2)
        rows, ins, tot = heldout_table(comp, fit, test, args.draws)
        table += rows
        cells[0] += ins
        cells[1] += tot
        hf, ht, hd = arrays(test)
        own = fit_generator(hf, ht, hd, up=up, down2=down2, prior=fit.rates)
        both = fit_generator(np.r_[f, hf], np.r_[t, ht], np.r_[d, hd], up=up, down2=down2)
        lr = 2 * (fit.loglik + own.loglik - both.loglik)
        print(f"  stationarity: 2011-2016 scored by the 2000-2010 fit {fit.score(hf, ht, hd):.1f}, by its own fit "
              f"{own.loglik:.1f}; LR (two periods vs one) {lr:.1f} on {own.n_params} df, "
              f"p = {stats.chi2.sf(lr, own.n_params):.2g}")
        for label, fit_years in (("2000-2010 fit, 2011-2016 scored", None), ("all 2000-2016", pairs)):
            src = train if fit_years is None else pairs
            sf, st, sd = arrays(src)
            ab = age_band_test(sf, st, sd, src.age_years, up=up, down2=down2,
                               held_out=(hf, ht, hd, test.age_years) if fit_years is None else None)
            extra = (f"; held-out gain {ab.heldout_gain:+.1f} nats over {ab.heldout_n:,} pairs "
                     f"({ab.heldout_gain / max(ab.heldout_n, 1) * 1000:+.2f} per 1000)") if fit_years is None else ""
            print(f"  age bands <30 / 30-59 / >=60 ({label}): pairs {ab.n_pairs}, LR {ab.lr:.1f} on {ab.df} df, "
                  f"p = {ab.p_value:.2g}{extra}")
        full = fit_generator(*arrays(pairs), up=up, down2=down2)
        print(f"  shipped fit, all pairs 2000-2016 ({len(pairs):,}), {best}: loglik {full.loglik:.1f}, "
              f"identified ratings {np.flatnonzero(full.identified).tolist()}, converged {full.converged}")
        for k, kind in enumerate(KINDS):
            for i in range(10):
                if full.in_structure[k, i]:
                    lo, hi = full.rate_ci[k, i]
                    ci = f"[{lo:.4f}-{hi:.4f}]" if full.identified[i] else "prior: tied to the nearest identified"
                    print(f"    {kind:<5} from {i}: {full.rates[k, i]:.4f} /yr {ci}  n_from {full.n_from[i]}")
        for note in full.notes:
            print(f"    note: {note}")
        p = full.one_year()
        print("  one-year P = expm(Q), rows from rating 0-9:")
        print_matrix(p)
        diag[comp] = np.diag(p)
        shipped[comp] = shipped_entry(comp, full, pairs, best)
    print("\n## Held-out check: fitted on 2000–2010, checked on 2011–2016, which the fit never saw")
    print("(one-year shares of yearly pairs; cells: observed / fitted [95 % interval of the fitted share, parametric "
          "bootstrap]; ✗ = observed outside the 95 % binomial interval of n pairs at the fitted share; pairs of a "
          "bridge are not independent, so the binomial interval is narrow)\n")
    print("\n".join(table))
    print(f"\n{cells[0]}/{cells[1]} cells inside the binomial interval")
    print("\nOne-year diagonals (stay), ratings 1-9:")
    for comp, dg in diag.items():
        print(f"  {comp:<15} " + " ".join(f"{v:.4f}" for v in dg[1:]))
    if args.yaml:
        doc = {"source": SOURCE, "method": "continuous-time Markov generator, maximum likelihood on inspection pairs "
               "(Kalbfleisch & Lawless 1985, JASA 80:863); P = expm(Q) one year; rating 0 read as missing, 0 "
               "absorbing", "pairs": "no MassDOT project window overlapping, no rise >= 2 outside windows",
               "licence": "data MIT (LICENSE-bridgeConditions.md, S. Vasserman and V. Bolotnyy); carry the notice",
               "not_identified": "fewer than 30 pairs from the rating: rates tied to the nearest identified rating's "
               "(a prior, ci95 null)",
               "components": shipped}
        args.yaml.write_text(yaml.safe_dump(doc, sort_keys=False, width=120, default_flow_style=None))
        print(f"\nwrote {args.yaml}")
    print(f"\n{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
