"""Budgets in an agency's terms on the component model (issue 80 item 2): what the next USD 1 million a year buys,
from the planner's price of money, against two planner runs a million apart on the same paths; and the least budget
that keeps the chance of FHWA's penalty (three consecutive years above 10 % of deck area poor) below 5 %, beside the
least budget (the floor).

For each fleet: the planner at ``--scale`` × the sized budget (rule priced, aims in turn as ``scenarios`` runs it) on
``--episodes`` paths, its next-million estimate; the planner at that budget + USD 1 million a year on the same paths;
each figure's estimate, the runs' paired difference ± 95 %, the tolerance and whether it agrees; then the penalty's
least budget searched from those two runs (``--probes`` planner runs on 59 paths) and the exact least budget.

    python benchmarks/next_million.py --fleets default,dc-2019 [--scales 1,2] [--episodes 16] [--probes 3]
"""

from __future__ import annotations

import argparse
import time

from bridgefleet.bench.results_page import provenance
from bridgefleet.config import FleetConfig
from bridgefleet.config.seeds import TEST_SEED
from bridgefleet.evaluation.budget_terms import PENALTY_PROBES, penalty_least, penalty_paths
from bridgefleet.evaluation.component_scenarios import AIMS, PENALTY_AIMS, exact_least_budget
from bridgefleet.evaluation.next_million import STEP_USD, check
from bridgefleet.evaluation.scenarios import exact_level
from bridgefleet.inventory.fleet import MAX_BUDGET_USD, one_fleet

RULE = 0.10


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fleets", default="default,dc-2019")
    ap.add_argument("--scales", default="1,2", help="the budget of each fleet, × its sized budget (one per fleet)")
    ap.add_argument("--episodes", type=int, default=16)
    ap.add_argument("--probes", type=int, default=PENALTY_PROBES)
    ap.add_argument("--alpha", type=float, default=0.05)
    args = ap.parse_args()
    print(provenance())
    for name, scale in zip(args.fleets.split(","), [float(x) for x in args.scales.split(",")], strict=True):
        began = time.perf_counter()
        base = FleetConfig.default_model()
        cfg, fleet = one_fleet((base if name == "default" else base.with_inventory(name)).replace(horizon_years=30),
                               TEST_SEED)
        sized = sum(cfg.budgets_usd)
        print(f"\n## {name}: sized budget USD {sized:,.0f} a year; the planner at {scale:g} × (USD "
              f"{scale * sized:,.0f}) and at USD {scale * sized + STEP_USD:,.0f}, {args.episodes} paths")
        t = time.perf_counter()
        lv = exact_level(cfg, fleet, scale, args.episodes, TEST_SEED, RULE, sized)
        t_level = time.perf_counter() - t
        t = time.perf_counter()
        up_scale = scale + STEP_USD / sized
        up = exact_level(cfg, fleet, up_scale, args.episodes, TEST_SEED, RULE, sized, AIMS)
        t_up = time.perf_counter() - t
        for one in (lv, up):
            b = one.result.breaches(RULE)
            print(f"at USD {one.budget_usd:,.0f}: aimed at {100 * one.aim:.3g} % of deck area poor, worst year's mean "
                  f"{b['worst_year_poor']:.1%}, three years running on {b['three_consecutive']:.0%} of the paths")
        print(f"runs {t_level:.0f} s and {t_up:.0f} s")
        if lv.margin is None:
            print("no price of money at this budget (the relaxation misses the rule)")
        else:
            rows, gap = check(lv.margin, lv.result, up.result, (lv.bound, up.bound), cfg.cost_lambda, RULE)
            below = (lv.bound - lv.result.mean_return) / cfg.cost_lambda
            print(f"the planner's distance below the bound: USD {below:,.0f} of value at {scale:g} ×, changed by USD "
                  f"{gap:,.0f} with the million\n")
            print("| figure | from the price of money | two runs (paired, ± 95 %) | tolerance | agrees |")
            print("|---|---:|---:|---:|---|")
            for r in rows:
                print(f"| {r.name} | {r.estimate:,.3f} | {r.measured:,.3f} ± {r.ci:,.3f} | ± {r.tolerance:,.3f} | "
                      f"{'yes' if r.agrees else 'no'} |")
        t = time.perf_counter()
        least, _ = exact_least_budget(cfg, fleet, TEST_SEED, RULE)
        t_least = time.perf_counter() - t
        t = time.perf_counter()
        runs = [lv, up]
        n = penalty_paths(args.alpha)

        def probe(s: float, fresh: bool, runs=runs, cfg=cfg, fleet=fleet, sized=sized, n=n):
            out = exact_level(cfg, fleet, s, n, TEST_SEED + n * fresh, RULE, sized, PENALTY_AIMS, penalty=True)
            runs.append(out)
            return out

        pen = penalty_least([lv, up], RULE, args.alpha, probe, args.probes, MAX_BUDGET_USD / sized, least.lower,
                            lambda run: run.aim <= RULE * min(PENALTY_AIMS) + 1e-12)
        t_pen = time.perf_counter() - t
        print(f"\npenalty's least budget ({args.probes} probes on {n} paths, {t_pen:.0f} s): " + (
            f"{pen.scale:.3f} × = USD {pen.scale * sized:,.0f} a year" if pen.scale is not None else
            f"none shown up to {pen.tried_to:.3f} ×")
              + ("" if pen.missed is None else f"; missed at {pen.missed:.3f} ×")
              + f"; runs (scale, paths with 3 years running, paths): {pen.runs}")
        print(f"least budget (the floor, {t_least:.0f} s): {least.lower:.3f} × = USD {least.lower * sized:,.0f} a "
              "year; probes aimed at (× the rule): "
              + ", ".join(f"{r.scale:.3f} ×: {r.aim / RULE:g}" for r in runs[2:]))
        print(f"{name}: {time.perf_counter() - began:.0f} s in all")


if __name__ == "__main__":
    main()
