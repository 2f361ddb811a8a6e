"""Decision quality against the best possible: heuristics, the lagrangian planner and the budget-relaxed upper
bound on the same evaluation fleets, for the default fleet, dc-2019 (all bridges) and Indiana (all bridges).

Prints, per fleet: worst_first, the lagrangian planner (gain over worst_first with the paired difference
and its standard error, distance below the bound), the bound with its LP gap and time; and for the default
fleet the bound again on a grid of half the step (its discretization error).

Run: python benchmarks/decision_quality.py [--fleets default,dc,indiana] [--episodes 100] [--bound-iters 80]
Indiana needs ../shared/data/indiana/INDIANA2019.csv (not bundled); it is skipped when missing.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from bridgefleet.config import FleetConfig
from bridgefleet.evaluate import evaluate_with_bound
from bridgefleet.fleet.simulator import FleetSimulator, resolve_fleet
from bridgefleet.planning.planner import LagrangianPlanner

INDIANA = Path(__file__).resolve().parents[2] / "shared" / "data" / "indiana" / "INDIANA2019.csv"


def fleets(names: list[str]) -> dict[str, FleetConfig]:
    out = {}
    for name in names:
        if name == "default":
            out[name] = FleetConfig()
        elif name == "dc":
            out["dc-2019 (all bridges)"] = FleetConfig(inventory="dc-2019")
        elif name == "indiana":
            if INDIANA.is_file():
                out["Indiana 2019 (all 4,794 bridges)"] = FleetConfig(inventory=str(INDIANA))
            else:
                print(f"skipped Indiana: {INDIANA} not found")
        else:
            raise SystemExit(f"unknown fleet {name!r}: default, dc, indiana")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fleets", default="default,dc,indiana")
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1_000_000)
    ap.add_argument("--bound-iters", type=int, default=80)
    ap.add_argument("--grid-check", type=int, default=10, help="default fleets re-bounded on a half-step grid")
    args = ap.parse_args()
    rows = []
    for label, cfg in fleets(args.fleets.split(",")).items():
        t0 = time.perf_counter()
        results, bound = evaluate_with_bound(cfg, ["do_nothing", "worst_first"], args.episodes, args.seed,
                                             max_iter=args.bound_iters, progress=True)
        wall = time.perf_counter() - t0
        by = {r.policy: r for r in results}
        wf, lg = by["worst_first"], by["lagrangian"]
        d = lg.returns - wf.returns
        se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else 0.0
        rows.append((label, wf, lg, bound, d.mean(), se, wall))
        print(f"{label}: done in {wall:.0f} s")
    print("\n| fleet | worst_first | lagrangian | gain over worst_first (paired ± s.e.) | upper bound "
          "| lagrangian below bound | bound + planner, s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, wf, lg, bound, dm, se, wall in rows:
        print(f"| {label} | {wf.mean_return:.2f} ± {wf.ci95:.2f} | {lg.mean_return:.2f} ± {lg.ci95:.2f} "
              f"| {(lg.mean_return - wf.mean_return) / abs(wf.mean_return):+.1%} ({dm:+.1f} ± {se:.1f}) "
              f"| {bound[0]:.2f} ± {bound[1]:.2f} | {(bound[0] - lg.mean_return) / abs(bound[0]):.1%} | {wall:.0f} |")
    if args.grid_check and "default" in args.fleets.split(","):
        cfg, fleet = resolve_fleet(FleetConfig())
        sim = FleetSimulator(cfg, args.grid_check, fleet)
        values = {}
        for step in (0.05, 0.025):
            sim.reset(None, [args.seed + i for i in range(args.grid_check)])
            t0 = time.perf_counter()
            b = LagrangianPlanner(step=step, max_iter=args.bound_iters).prepare(sim)
            values[step] = b.mean
            print(f"grid step {step}: bound {b.mean:.2f} on {args.grid_check} default fleets "
                  f"({b.iterations} DP solves, {time.perf_counter() - t0:.0f} s, LP gap ≤ {b.gap:.1%})")
        print(f"halving the grid changes the bound by {(values[0.025] - values[0.05]) / abs(values[0.05]):+.2%}")


if __name__ == "__main__":
    main()
