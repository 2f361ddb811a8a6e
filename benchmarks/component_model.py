"""Fit the component model to Massachusetts' ratings and MassDOT's projects and write the bundled model YAML.

    python benchmarks/component_model.py [--data ../shared/data] [--last-year 2010] [--out PATH]

The fit is the product's (``bridgefleet.calibration.component_fit``, what ``bridgefleet calibrate --panel`` runs on
an agency's own panel): per component (deck, superstructure, substructure, culvert) a continuous-time generator with
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

from bridgefleet.calibration.component_fit import MASSACHUSETTS_SOURCE, dump_yaml, fit_component_model
from bridgefleet.calibration.panel import read_panel, read_works

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "src" / "bridgefleet" / "calibration" / "massachusetts-2026.yaml"


def fit_model(data: Path, last_year: int | None = None, rises: str = "all") -> tuple[dict, dict]:
    """(the model as a YAML mapping for :func:`bridgefleet.sim.components.from_mapping`, a summary of the fit).

    ``last_year``: fit on inspection pairs that end and projects that end by then only (the held-out check).
    ``rises``: "all" (the shipped model: the generator's one-year matrix, rises of two or more levels outside any
    project window kept in the pairs), "up" (those dropped as unrecorded work), "drop" (the downward part only)."""
    ma = data / "massachusetts"
    panel = read_panel(ma / "ma_bridge_timeseries_2000_2016.csv")
    works = read_works(ma / "ma_massdot_bridge_projects.csv", panel)
    fit = fit_component_model(panel, works, last_year=last_year, rises=rises,
                              name="massachusetts-2026" if last_year is None else f"massachusetts-to-{last_year}",
                              data_source=MASSACHUSETTS_SOURCE, works_name="MassDOT",
                              fitted_by="benchmarks/component_model.py", intervals=False)
    return fit.model, fit.summary()


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
    out.write_text(header + dump_yaml(model), encoding="utf-8")
    for k, v in summary.items():
        print(f"{k}: {v}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
