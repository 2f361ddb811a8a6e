"""Decision quality on the component model: heuristics, the planner and the exact bound at several budgets.

    python benchmarks/component_decision_quality.py [--fleets default,dc-2019,indiana] [--levels 0.5,1,2]
        [--episodes 16] [--indiana PATH] [--out results.md]

Every policy on the same test fleets (synthetic fleets seeded from 1,000,000,000, which nothing was tuned on; an
inventory's bridges with that many deterioration paths): mean discounted return ± 95 % CI, the planner's distance
to the bound per bridge, the best heuristic, and the planner's deck area good / poor (FHWA, NHS where coded) at
years 1, 5, 10 and 30 with its spend against the budget. Prints the two tables in docs/results.md's format
(machine, date, commit, command); ``--out`` writes them too.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bridgefleet.bench.results_page import provenance
from bridgefleet.config import FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_with_bound
from bridgefleet.inventory.fleet import resolve_fleet, set_budget
from bridgefleet.sim.heuristics import HEURISTICS

ROOT = Path(__file__).resolve().parents[1]
INDIANA = ROOT.parent / "shared" / "data" / "indiana" / "INDIANA2019.csv"
TEST_SEED = 1_000_000_000
YEARS = (1, 5, 10, 30)


def fleet_config(name: str, indiana: Path) -> FleetConfig:
    inventory = {"default": None, "dc-2019": "dc-2019", "indiana": str(indiana)}[name]
    return FleetConfig.named("components-2026", inventory=inventory)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fleets", default="default,dc-2019,indiana")
    ap.add_argument("--levels", default="0.5,1,2")
    ap.add_argument("--episodes", type=int, default=16)
    ap.add_argument("--indiana", type=Path, default=INDIANA)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    quality = ["| fleet | budget × sized (USD a year) | best heuristic | planner | bound | planner below bound, per "
               "bridge | heuristic below bound, per bridge | s |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    condition = ["| fleet | budget × sized | " + " | ".join(f"good / poor y{y}" for y in YEARS)
                 + " | planner spend / budget |", "|---|---|" + "---:|" * (len(YEARS) + 1)]
    for name in args.fleets.split(","):
        cfg = fleet_config(name, args.indiana)
        for level in (float(x) for x in args.levels.split(",")):
            t0 = time.perf_counter()
            results, bound = evaluate_with_bound(cfg, list(HEURISTICS), args.episodes, TEST_SEED,
                                                 budget_scale=level)
            secs = time.perf_counter() - t0
            planner = next(r for r in results if r.policy == "lagrangian")
            best = max((r for r in results if r.policy in HEURISTICS), key=lambda r: r.mean_return)
            sized = set_budget(resolve_fleet(cfg)[0], scale=level)
            b_n = sized.n_bridges
            budget = sum(sized.budgets_usd)
            quality.append(
                f"| {name} | {level:g} ({budget:,.0f}) | {best.policy} {best.mean_return:.1f} ± {best.ci95:.1f} | "
                f"{planner.mean_return:.1f} ± {planner.ci95:.1f} | {bound.mean:.1f} ± {bound.ci95:.1f} | "
                f"{(bound.mean - planner.mean_return) / b_n:.3f} | {(bound.mean - best.mean_return) / b_n:.3f} | "
                f"{secs:.0f} |")
            deck = planner.deck_by_year.mean(0)
            cells = [f"{100 * deck[y - 1, 0]:.1f} / {100 * deck[y - 1, 2]:.1f} %" for y in YEARS if y <= len(deck)]
            spend = planner.mean_annual_cost_usd / budget if budget else float("nan")
            condition.append(f"| {name} | {level:g} | " + " | ".join(cells) + f" | {100 * spend:.0f} % |")
            print(quality[-1], flush=True)
    line = provenance()
    text = ("### Decision quality on the component model\n\n" + line + "\n\n`components-2026`, test fleets "
            f"(seed 1,000,000,000 on; {args.episodes} fleets or paths each); return = expected discounted return, "
            "reward units, ± 95 % CI\n\n" + "\n".join(quality)
            + "\n\n### The planner's deck area by year\n\n" + line
            + "\n\nFHWA's measure (NHS where coded), good / poor, mean over the paths\n\n"
            + "\n".join(condition) + "\n")
    print("\n" + text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
