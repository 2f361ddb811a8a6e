"""Fit the component model to Massachusetts' ratings and MassDOT's projects and write the bundled model YAML.

    python benchmarks/component_model.py [--data ../shared/data] [--last-year 2010] [--out PATH]

Deterioration: per component (deck, superstructure, substructure, culvert), a continuous-time generator with
drops of one and two levels and an upward rate (``bridgefleet.calibration.markov``, fitted on inspection pairs with
no MassDOT project overlapping them, ``calibration.panel.inspection_pairs``, rises of two or more levels kept).
"Do nothing" therefore means *no capital project*: the rises without a recorded project (0.9–1.3 % of yearly pairs;
they stick, as work does, and most are on bridges other owners maintain) are the routine maintenance and other
owners' work that Massachusetts' bridges got in 2000–2016, and the model keeps them at that rate. Left out
(``--rises drop``), the model fitted on 2000–2010 ends 2016 5.0 points short of the NBI's good deck area and 5.7
above its poor (``check_ma_2016.py --rises drop``); kept, 2.6 and 1.4. The components move together in a share of
years fitted to their joint moves (``markov.fit_coupling``). Treatments: MassDOT's projects, their kind inferred
from which components rise (``calibration.treatment_fit``); deck preservation from the deck's drops after projects
that raised no rating and from cited service lives (docs/fleet-model.md). Unit costs are the fleet config's
(``FleetConfig.named("components-2026")``), not this file's.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import yaml
from fit_deterioration_ma import SOURCE, arrays
from fit_treatments import OVERLAY_YEARS, PRESERVATION_SOURCES
from scipy.linalg import expm

from bridgefleet.calibration import treatment_fit as tf
from bridgefleet.calibration.markov import fit_coupling, fit_generator
from bridgefleet.calibration.panel import COMPONENTS, inspection_pairs, joint_pairs, read_panel, read_works

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "src" / "bridgefleet" / "calibration" / "massachusetts-2026.yaml"
ACTIONS = (("do_nothing", None, {}), ("deck_preservation", None, {"deck": "DK4"}),
           ("component_rehabilitation", "component_rehab", {"deck": "DK2", "superstructure": "SP2",
                                                            "substructure": "SB2"}),
           ("major_rehabilitation", "major_rehab", {"deck": "DK1", "superstructure": "SP2", "substructure": "SB2"}),
           ("replacement", "replacement", {"deck": "BR01", "superstructure": "BR01", "substructure": "BR01"}))


class _Row(list):
    """A matrix row written on one line."""


yaml.SafeDumper.add_representer(_Row, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))


def down_only(rates: np.ndarray) -> np.ndarray:
    """The one-year matrix float64 (10, 10) of a generator's downward part: ``rates`` (3, 10) per year (drop one,
    drop two, rise one) as ``GeneratorFit.rates``; the rise is left out. Rows sum to 1."""
    q = np.zeros((10, 10))
    for i in range(1, 10):
        q[i, i - 1] = rates[0, i]
        if i >= 2:
            q[i, i - 2] = rates[1, i]
    q[np.diag_indices(10)] = -q.sum(axis=1)
    p = np.clip(expm(q), 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


def _rows(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


TINY = 1e-4
"""Transition probabilities below this a year are set to 0 (mostly drops of three or more levels in a year, which
the generator's matrix exponential spreads thinly over every level): each row keeps its few real entries, which is
what makes the exact DP fast; the largest entry takes the remainder."""


def _matrix(p: np.ndarray) -> list:
    p = np.where(p < TINY, 0.0, p)
    rows = [_Row(round(float(v), 6) for v in row) for row in p]
    for row in rows:  # rounding: the largest entry takes the rest, so each row sums to 1 exactly enough
        k = int(np.argmax(row))
        row[k] = round(row[k] + 1.0 - sum(row), 6)
    return rows


def fit_model(data: Path, last_year: int | None = None, rises: str = "all") -> tuple[dict, dict]:
    """(the model as a YAML mapping for :func:`bridgefleet.sim.components.from_mapping`, a summary of the fit).

    ``last_year``: fit on inspection pairs that end and projects that end by then only (the held-out check).
    ``rises``: "all" (the shipped model: the generator's one-year matrix, rises of two or more levels outside any
    project window kept in the pairs), "up" (those dropped as unrecorded work), "drop" (the downward part only)."""
    ma = data / "massachusetts"
    panel = read_panel(ma / "ma_bridge_timeseries_2000_2016.csv")
    works = read_works(ma / "ma_massdot_bridge_projects.csv", panel)
    det, summary = {}, {}
    for comp in COMPONENTS:
        pairs = inspection_pairs(panel, works, comp, big_rise="keep" if rises == "all" else "drop")
        if last_year is not None:
            pairs = pairs.select(pairs.year_from + pairs.interval_years <= last_year)
        fit = fit_generator(*arrays(pairs), up=True, down2=True)
        det[comp] = down_only(fit.rates) if rises == "drop" else _rows(fit.one_year())
        summary[comp] = {"pairs": len(pairs), "not identified": [i for i in range(10) if not fit.identified[i]]}
    coupling = fit_coupling(np.stack([det[c] for c in COMPONENTS[:3]]), *joint_pairs(panel, works, last_year=last_year))
    summary["coupling"] = (f"w = {coupling.w:.3f} (95 % {coupling.ci95[0]:.3f}-{coupling.ci95[1]:.3f}) on "
                           f"{coupling.n_pairs:,} bridge-years; -log-likelihood {coupling.nll:.1f} against "
                           f"{coupling.nll_independent:.1f} independent")
    events, _ = tf.treatment_events(panel, works)
    if last_year is not None:
        events = [e for e in events if e.post_year <= last_year]
    slowdown = tf.deck_drop_evidence(panel, works, events).ratio
    det["deck_protected"] = np.eye(10) + slowdown * (det["deck"] - np.eye(10))
    actions = []
    for name, kind, codes in ACTIONS:
        act: dict = {"name": name, "codes": codes}
        if kind is not None:
            mats = tf.fit_action_matrices(events, kind)
            slots = ("deck", "superstructure", "substructure", "culvert")
            act["treats"] = {s: _matrix(mats[s].probs) for s in slots}
            summary[kind] = sum(e.kind == kind for e in events)
        if name == "deck_preservation":
            act["protect"] = "set"
        if name == "do_nothing":
            act["protect"] = "keep"
        if name == "component_rehabilitation":
            act["lowest_only"] = True
        actions.append(act)
    years = f"2000-{last_year or 2016}"
    model = {
        "name": "massachusetts-2026" if last_year is None else f"massachusetts-to-{last_year}",
        "sources": {
            "deterioration": f"{SOURCE}; pairs {years} with no MassDOT project overlapping; continuous-time "
                             "generator (drop 1, drop 2, rise 1) by maximum likelihood (Kalbfleisch & Lawless "
                             "1985); do nothing = no capital project, rises without one (routine and other owners' "
                             "work) kept at their recorded rate (benchmarks/component_model.py)",
            "coupling": f"share of years the components move together, by maximum likelihood on the joint yearly "
                        f"moves {years} (bridgefleet.calibration.markov.fit_coupling): {summary['coupling']}",
            "treatments": f"MassDOT projects {years}, kind inferred from the component ratings before and after "
                          "(bridgefleet.calibration.treatment_fit); rating after given rating before, pooled where "
                          "thin",
            "deck_protection": f"deck drop probabilities x {slowdown:.3f} while protected (MassDOT, deck drops after "
                               f"projects that raised no rating; weak); mean {OVERLAY_YEARS} years: "
                               + "; ".join(PRESERVATION_SOURCES[1:2]),
        },
        "deterioration": {k: _matrix(v) for k, v in det.items()},
        "protection_years": OVERLAY_YEARS,
        "coupling": round(coupling.w, 4),
        "actions": actions,
    }
    summary["slowdown"] = round(slowdown, 3)
    return model, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder holding massachusetts/ (and ontario/)")
    ap.add_argument("--last-year", type=int, default=None, help="fit on pairs and projects ending by this year")
    ap.add_argument("--out", type=Path, default=None, help=f"the YAML to write (default {OUT.name} in the package)")
    args = ap.parse_args()
    model, summary = fit_model(args.data, args.last_year)
    out = args.out or OUT
    header = ("# The component model fitted by benchmarks/component_model.py (do not edit by hand; run it again).\n"
              "# Data: Massachusetts NBI component ratings and MassDOT projects 2000-2016, S. Vasserman and\n"
              "# V. Bolotnyy (github.com/shoshievass/bridgeConditions), MIT licence:\n"
              "# see LICENSE-bridgeConditions.md.\n")
    out.write_text(header + yaml.safe_dump(model, sort_keys=False, width=120, allow_unicode=True), encoding="utf-8")
    for k, v in summary.items():
        print(f"{k}: {v}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
