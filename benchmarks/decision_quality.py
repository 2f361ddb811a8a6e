"""Decision quality against the best possible: heuristics, trained agents, the lagrangian planner and the
budget-relaxed upper bound on the same evaluation fleets, for the default fleet, dc-2019 (all bridges) and
Indiana (all bridges).

Prints, per fleet and policy: the mean discounted return with its 95 % CI, the gain over worst_first (the
paired difference and its standard error, and in USD of cost-equivalent: 1/λ a reward unit), the distance
below the bound, and the seconds it took
(training for agents; bound + planner for the planner); for the default fleet also the bound on a grid of
half the step (its discretization error).

With --agents, the per-bridge agent (``--bridge-preset``: the `default` preset, one network for every bridge fitted
to the planner; `sarsa`, the same network learned by SARSA, takes ``--bridge-episodes``) is trained on each
fleet, and the plan's urban + rural agents (the `fleet` preset, seed architecture) on the default fleet, before
the evaluation, every fleet with the same preset (no per-fleet settings); training evaluates on the validation
fleets (seeds 2,000,000 …), and the table is on the test fleets (seeds 1,000,000,000 …: nothing was tuned on them).
The distance below the bound is given per bridge, in return units and USD of cost-equivalent a year, beside the
percentage of the bound (which depends on where the return's zero lies).

Run: python benchmarks/decision_quality.py [--fleets default,dc,indiana] [--episodes 100] [--agents]
Indiana needs ../shared/data/indiana/INDIANA2019.csv (not bundled); it is skipped when missing.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

from bridgefleet.config import FleetConfig
from bridgefleet.config.presets import resolve_config
from bridgefleet.config.seeds import TEST_SEED
from bridgefleet.evaluation.evaluate import bound_gap, evaluate_with_bound
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.runs.load import load_policy
from bridgefleet.sim.simulator import FleetSimulator
from bridgefleet.training.runner import train

INDIANA = Path(__file__).resolve().parents[2] / "shared" / "data" / "indiana" / "INDIANA2019.csv"



def fleets(names: list[str]) -> dict[str, tuple[str, FleetConfig]]:
    out = {}
    for name in names:
        if name == "default":
            out[name] = ("default", FleetConfig())
        elif name == "dc":
            out[name] = ("dc-2019 (all 244 bridges)", FleetConfig(inventory="dc-2019"))
        elif name == "indiana":
            if INDIANA.is_file():
                out[name] = ("Indiana 2019 (all 4,794 bridges)", FleetConfig(inventory=str(INDIANA)))
            else:
                print(f"skipped Indiana: {INDIANA} not found")
        else:
            raise SystemExit(f"unknown fleet {name!r}: default, dc, indiana")
    return out


def train_agents(name: str, cfg: FleetConfig, bridge_episodes: int | None, out: Path,
                 bridge_preset: str = "default") -> dict[str, tuple]:
    """Train the per-bridge agent (and the seed architecture on the default fleet); {label: (policy, s)}."""
    agents = {}
    over = {"inventory": cfg.inventory}
    if bridge_episodes:
        over["episodes"] = bridge_episodes
    runs = [("bridge agent", bridge_preset, over)]
    if name == "default":
        runs.append(("seed agents (fleet)", "fleet", {}))
    for label, preset, o in runs:
        tc = resolve_config(preset, None, o)
        t0 = time.perf_counter()
        run_dir, summary = train(tc, out / f"{name}-{preset}", progress=True)
        print(f"{name}: {label} trained, {summary['episodes']} episodes in {summary['wall_seconds']:.0f} s "
              f"({summary['amp']}, {summary['threads']} threads)")
        agents[label] = (load_policy(run_dir)[1], time.perf_counter() - t0)
    return agents


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fleets", default="default,dc,indiana")
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=TEST_SEED, help="first test fleet")
    ap.add_argument("--bound-iters", type=int, default=80)
    ap.add_argument("--agents", action="store_true", help="also train and evaluate the agents")
    ap.add_argument("--bridge-preset", default="default", help="preset of the per-bridge agent (default: default; "
                    "sarsa)")
    ap.add_argument("--bridge-episodes", type=int, help="training episodes of the per-bridge agent (sarsa only)")
    ap.add_argument("--grid-check", type=int, default=10, help="default fleets re-bounded on a half-step grid")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (label, cfg) in fleets(args.fleets.split(",")).items():
            agents = train_agents(name, cfg, args.bridge_episodes, Path(tmp), args.bridge_preset) if args.agents else {}
            t0 = time.perf_counter()
            results, bound = evaluate_with_bound(cfg, ["do_nothing", "worst_first"], args.episodes, args.seed,
                                                 extra={k: v[0] for k, v in agents.items()},
                                                 max_iter=args.bound_iters, progress=True)
            wall = time.perf_counter() - t0
            by = {r.policy: r for r in results}
            wf = by["worst_first"]
            resolved = resolve_fleet(cfg)[0]
            n_bridges = resolved.n_urban + resolved.n_rural
            for pol in ["worst_first", "lagrangian", *agents]:
                r = by[pol]
                d = r.returns - wf.returns
                se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else 0.0
                sec = agents[pol][1] if pol in agents else (wall if pol == "lagrangian" else None)
                gap = bound_gap(r, bound[0], n_bridges, cfg.cost_lambda)
                rows.append((label, pol, r, bound, d.mean(), se, sec, gap))
            print(f"{label}: evaluated in {wall:.0f} s")
    usd = 1.0 / FleetConfig().cost_lambda  # USD of cost-equivalent per reward unit (1/λ)
    print("\n| fleet | policy | mean return ± 95 % CI | gain over worst_first (paired ± s.e.) | gain, million USD "
          "of cost-equivalent | upper bound | below bound | below bound per bridge | USD / bridge / yr | seconds |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, pol, r, bound, dm, se, sec, (g_units, g_usd) in rows:
        gain = "" if pol == "worst_first" else f"{dm:+.1f} ± {se:.1f} | {dm * usd / 1e6:+,.1f}"
        gain = gain or " | "
        secs = f"{sec:.0f}" if sec is not None else ""
        what = {"lagrangian": "bound + planner", "worst_first": ""}.get(pol, "training")
        print(f"| {label} | {pol} | {r.mean_return:.2f} ± {r.ci95:.2f} | {gain} | {bound[0]:.2f} ± {bound[1]:.2f} "
              f"| {(bound[0] - r.mean_return) / abs(bound[0]):.1%} | {g_units:.3f} | {g_usd:,.0f} | {secs} {what} |")
    if args.grid_check and "default" in args.fleets.split(","):
        cfg, fleet = resolve_fleet(FleetConfig())
        sim = FleetSimulator(cfg, args.grid_check, fleet)
        values = {}
        for step in (0.05, 0.025):
            sim.reset(None, [args.seed + i for i in range(args.grid_check)])
            t0 = time.perf_counter()
            b = LagrangianPlanner(step=step, max_iter=args.bound_iters).bound_only(sim)
            values[step] = b.mean
            print(f"grid step {step}: bound {b.mean:.2f} on {args.grid_check} default fleets "
                  f"({b.iterations} DP solves, {time.perf_counter() - t0:.0f} s, LP gap ≤ {b.gap:.1%})")
        print(f"halving the grid changes the bound by {(values[0.025] - values[0.05]) / abs(values[0.05]):+.2%}")


if __name__ == "__main__":
    main()
