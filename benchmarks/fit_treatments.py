"""What recorded work did to component ratings and what it cost: the five actions' treatment matrices, unit costs
and deck protection, fitted on MassDOT projects 2000–2016 and checked on Ontario's recorded rehabilitations
(``bridgefleet.calibration.treatment_fit``). Prints markdown tables for docs; ``--yaml PATH`` writes the proposal.

Run: python benchmarks/fit_treatments.py [--yaml treatments.yaml] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

import numpy as np
import yaml

from bridgefleet.calibration import treatment_fit as tf
from bridgefleet.calibration.component_fit import OVERLAY_YEARS, PRESERVATION_SOURCES
from bridgefleet.calibration.panel import COMPONENTS, read_panel, read_works

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FT2_PER_M2 = 10.764
OLD_COSTS = {1: 70.0, 2: 131.0, 3: 1698.0, 4: 2497.0}
"""The previous model's unit costs, USD/m² (preventive +1, repair +2, rehabilitation +4, replacement)."""
FHWA_REPLACEMENT = 232.0 * FT2_PER_M2
"""2,497 USD/m²: FHWA Bridge Replacement Unit Costs 2017, District of Columbia, USD 232 per ft² of NHS deck."""
OVERLAY_COST = 70.0
"""Thin polymer overlay USD 65–75/m² (shared/README.md reference facts; GIAMS / Indiana BMS)."""
SEAL_YEARS = 4.5
"""Deck sealers reapplied after 4–5 years: Iowa DOT TR-717, "Use of Polymer Overlays or Sealers on New Bridges"
(2017), https://publications.iowa.gov/26124/."""
SNBI = {0: ["0"], 1: ["DK5", "DK4"], 2: ["DK2", "DK3", "SP2", "SP3", "SB2", "SB3", "CU2", "CU3"],
        3: ["DK1", "SP2", "SB2"], 4: ["BR01"]}
NAMES = {0: "do_nothing", 1: "deck_preservation", 2: "component_rehabilitation", 3: "major_rehabilitation",
         4: "replacement"}


def _f(x: float, nd: int = 0) -> str:
    return "–" if not np.isfinite(x) else f"{x:,.{nd}f}"


def kind_counts(events: list[tf.TreatmentEvent]) -> str:
    c = collections.Counter(ev.kind for ev in events)
    return " / ".join(f"{k} {c[k]}" for k in tf.KINDS)


def rise_table(events: list[tf.TreatmentEvent]) -> str:
    out = ["| kind | component | good ≥ 7 | fair 5–6 | poor ≤ 4 |", "|---|---|---:|---:|---:|"]
    for kind in tf.KINDS:
        rises = tf.mean_rise_by_band(events, kind, treated_only=kind != "preservation")
        for c in COMPONENTS:
            cells = [f"{m:+.2f} (n {n})" if n else "–" for m, n in (rises[(c, b)] for b, _, _ in tf.BANDS)]
            if any(cell != "–" for cell in cells):
                out.append(f"| {kind} | {c} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def matrix_table(m: tf.TreatmentMatrix, title: str) -> str:
    out = [f"**{title}** (rows: rating before; * = fewer than {tf.MIN_ROW_COUNT} pairs, topped up from the pool)",
           "", "| before | n | " + " | ".join(str(j) for j in range(tf.N_RATINGS)) + " | mean after |",
           "|---|---:|" + "---:|" * (tf.N_RATINGS + 1)]
    mean = m.mean_after()
    for r in range(tf.N_RATINGS):
        cells = " | ".join("" if p < 0.005 else f"{p:.2f}" for p in m.probs[r])
        out.append(f"| {r}{'*' if m.flagged[r] else ''} | {m.counts[r].sum()} | {cells} | {mean[r]:.2f} |")
    return "\n".join(out)


def cost_table(events: list[tf.TreatmentEvent]) -> tuple[str, dict[str, tf.CostSummary]]:
    out = ["| kind | n | median | q25 | q75 | Σ USD / Σ m² | ≈ 2024 USD (Σ/Σ × 1.90) | ratio to replacement |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    costs = {k: tf.cost_per_m2(events, k) for k in tf.KINDS}
    rep = costs["replacement"].aggregate
    for k, c in costs.items():
        out.append(f"| {k} | {c.n} | {_f(c.median)} | {_f(c.q25)} | {_f(c.q75)} | {_f(c.aggregate)} | "
                   f"{_f(c.aggregate * tf.USD_2016_TO_2024)} | {c.aggregate / rep:.2f} |")
    return "\n".join(out), costs


def lowest_check(events: list[tf.TreatmentEvent]) -> str:
    ev = [e for e in events if e.kind == "component_rehab"]
    low = sum(int(e.pre[e.treated][0]) == tf.lowest(e.pre) for e in ev)
    by = collections.Counter(COMPONENTS[int(np.flatnonzero(e.treated)[0])] for e in ev)
    return (f"component_rehab: the risen component was (one of) the lowest rated before in {low} of {len(ev)} "
            f"events; by component: {dict(by)}")


def bridge_level(events: list[tf.TreatmentEvent], ontario: dict[str, tuple[np.ndarray, np.ndarray]]) -> str:
    out = ["| data | work | n | mean change of the lowest rating | good ≥ 7 | fair 5–6 | poor ≤ 4 |",
           "|---|---|---:|---:|---:|---:|---:|"]

    def row(label: str, work: str, pre: np.ndarray, post: np.ndarray) -> str:
        d = post - pre
        cells = []
        for _, lo, hi in tf.BANDS:
            m = (pre >= lo) & (pre <= hi)
            cells.append(f"{d[m].mean():+.2f} ({m.sum()})" if m.any() else "–")
        return f"| {label} | {work} | {len(d)} | {d.mean():+.2f} | " + " | ".join(cells) + " |"

    for kind in tf.KINDS:
        sel = [e for e in events if e.kind == kind and tf.lowest(e.pre) >= 0 and tf.lowest(e.post) >= 0]
        pre = np.array([tf.lowest(e.pre) for e in sel])
        post = np.array([tf.lowest(e.post) for e in sel])
        out.append(row("MassDOT", kind, pre, post))
    for work, (pre, post) in ontario.items():
        out.append(row("Ontario (BCI → 0–9)", f"last {work} rehabilitation", pre, post))
    return "\n".join(out)


class _Row(list):
    """A list written in YAML flow style (one matrix row per line)."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Row, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))


def _matrix_yaml(m: tf.TreatmentMatrix) -> dict[str, object]:
    return {"matrix": [_Row(round(float(p), 6) for p in row) for row in m.probs],
            "pairs_per_row": _Row(int(n) for n in m.counts.sum(axis=1)),
            "flagged_rows": _Row(int(r) for r in np.flatnonzero(m.flagged))}


def proposal(events: list[tf.TreatmentEvent], costs: dict[str, tf.CostSummary],
             evidence: tf.DeckDropEvidence) -> dict[str, object]:
    rep = costs["replacement"].aggregate
    ratio = {k: costs[k].aggregate / rep for k in ("component_rehab", "major_rehab")}
    ma = ("MassDOT projects 2000-2016 (Vasserman & Bolotnyy, StanCon 2018, MIT), kind inferred from component "
          "rating rises (bridgefleet.calibration.treatment_fit.infer_kind)")
    fhwa = "FHWA Bridge Replacement Unit Costs 2017, District of Columbia, USD 232/ft2 x 10.764 = 2,497 USD/m2"
    actions: list[dict[str, object]] = [
        {"action": 0, "name": NAMES[0], "snbi": SNBI[0], "unit_cost_usd_per_m2": 0.0, "sources": [],
         "components": {}},
        {"action": 1, "name": NAMES[1], "snbi": SNBI[1], "unit_cost_usd_per_m2": OVERLAY_COST,
         "sources": ["thin polymer overlay USD 65-75/m2 (shared/README.md; GIAMS / Indiana BMS)",
                     "no rating change: sets the deck-protected flag (deck_protection below)"],
         "components": {}},
    ]
    for action, kind in ((2, "component_rehab"), (3, "major_rehab"), (4, "replacement")):
        cost = FHWA_REPLACEMENT if action == 4 else round(ratio[kind] * FHWA_REPLACEMENT, 0)
        src = [fhwa] if action == 4 else [
            f"{ma}: sum USD / sum m2 of {kind} = {ratio[kind]:.3f} x replacement's (n {costs[kind].n}), "
            f"times {fhwa}"]
        src.append(f"{ma}: {kind} {_f(costs[kind].aggregate)} USD/m2 nominal 2000-2016, about "
                   f"{_f(costs[kind].aggregate * tf.USD_2016_TO_2024)} in 2024 USD (NHCCI 2024Q1 3.1908 / 2016 1.68)")
        mats = tf.fit_action_matrices(events, kind)
        actions.append({"action": action, "name": NAMES[action], "snbi": SNBI[action],
                        "unit_cost_usd_per_m2": float(cost), "sources": src,
                        "components": {c: _matrix_yaml(m) for c, m in mats.items()}})
    return {
        "source": "benchmarks/fit_treatments.py",
        "actions": actions,
        "deck_protection": {
            "slowdown": round(evidence.ratio, 3),
            "slowdown_meaning": "while protected, each yearly deck drop probability is multiplied by slowdown "
                                "(P_protected = I + slowdown * (P - I) on the deck's one-year matrix)",
            "slowdown_ci95": [round(evidence.ci_low, 3), round(evidence.ci_high, 3)],
            "mean_years": OVERLAY_YEARS,
            "mean_years_sealing_only": SEAL_YEARS,
            "sources": [f"{ma}: deck drops in the {evidence.bridge_years} bridge-years after projects that raised "
                        f"no rating, {evidence.observed} observed against {evidence.expected:.1f} expected from "
                        "no-work bridges at the same deck rating (weak: exact Poisson 95 % interval "
                        f"{evidence.ci_low:.2f}-{evidence.ci_high:.2f})", *PRESERVATION_SOURCES],
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA, help="folder holding massachusetts/ and ontario/")
    ap.add_argument("--yaml", type=Path, default=None, help="write the proposed five actions here")
    args = ap.parse_args()
    ma = args.data / "massachusetts"
    panel = read_panel(ma / "ma_bridge_timeseries_2000_2016.csv")
    works = read_works(ma / "ma_massdot_bridge_projects.csv", panel)
    events, skipped = tf.treatment_events(panel, works)
    strict, _ = tf.treatment_events(panel, works, min_rise=2)
    print("## Kinds inferred from MassDOT projects\n")
    print(f"{len(works.bridge_id)} project rows → {len(events) + skipped} merged windows; {len(events)} with a record "
          f"≤ {tf.MAX_GAP_YEARS} years before and after ({skipped} without). Kinds (rise ≥ {tf.MIN_RISE}): "
          f"{kind_counts(events)}; with rise ≥ 2: {kind_counts(strict)}.\n")
    print(lowest_check(events) + "\n")
    print("## Mean rise (post − pre, rating points) of treated components by band before\n")
    print(rise_table(events) + "\n")
    print("## Cost per m² of deck (USD nominal of the project years 2000–2016)\n")
    table, costs = cost_table(events)
    print(table + "\n")
    print("## Bridge level: MassDOT (lowest component) against Ontario's recorded rehabilitations\n")
    ontario = tf.read_ontario_rehabs(args.data / "ontario" / "bridge_data.csv")
    print(bridge_level(events, ontario) + "\n")
    for work, (pre, post) in ontario.items():
        print(matrix_table(tf.fit_matrix(pre, post), f"Ontario, last {work} rehabilitation (bridge level)") + "\n")
    print("## Fitted post-treatment distributions (MassDOT)\n")
    for action, kind in ((2, "component_rehab"), (3, "major_rehab"), (4, "replacement")):
        for c, m in tf.fit_action_matrices(events, kind).items():
            if m.counts.sum():
                print(matrix_table(m, f"action {action} ({kind}), {c}") + "\n")
    ev = tf.deck_drop_evidence(panel, works, events)
    print("## Deck preservation evidence\n")
    print(f"- MassDOT: after the {sum(e.kind == 'preservation' for e in events)} projects that raised no rating "
          f"(median {_f(costs['preservation'].median)} USD/m², so mostly not cheap sealing), decks dropped "
          f"{ev.observed} times in {ev.bridge_years} bridge-years against {ev.expected:.1f} expected at the no-work "
          f"rate of the same deck rating: ratio {ev.ratio:.2f} (95 % {ev.ci_low:.2f}–{ev.ci_high:.2f}).")
    for s in PRESERVATION_SOURCES:
        print(f"- {s}")
    prop = proposal(events, costs, ev)
    print("\n## Proposed five actions (against the previous model)\n")
    print("| action | SNBI | unit cost USD/m² | previous model | effect |\n|---|---|---:|---:|---|")
    effect = {0: "deterioration only", 1: f"deck protected: drops × {ev.ratio:.2f}, mean {OVERLAY_YEARS} years",
              2: "lowest component: fitted matrix", 3: "every component: fitted matrix",
              4: "every component: fitted matrix (new bridge)"}
    for a in prop["actions"]:  # type: ignore[union-attr]
        i = a["action"]
        print(f"| {i} {a['name']} | {', '.join(a['snbi'])} | {_f(a['unit_cost_usd_per_m2'])} | "
              f"{_f(OLD_COSTS.get(i, 0.0))} | {effect[i]} |")
    if args.yaml:
        text = yaml.dump(prop, Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)
        args.yaml.write_text(text, encoding="utf-8")
        print(f"\nwrote {args.yaml}")


if __name__ == "__main__":
    main()
