"""Calibration of the default budget (docs/fleet-model.md): how much would the condition-based rule spend
with no budget limit, per agency, and what the heuristics return under the default budget.

Run: python benchmarks/calibrate_budget.py [--episodes 500]
"""

from __future__ import annotations

import argparse

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_heuristics, format_table
from bridgefleet.sim.heuristics import condition_based
from bridgefleet.sim.simulator import FleetSimulator


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--episodes", type=int, default=500)
    ap.add_argument("--fleet-model", default="default", help="named fleet model (default, plan-2025)")
    args = ap.parse_args()
    cfg = FleetConfig.named(args.fleet_model)
    free = cfg.replace(annual_budget_usd=1e15)
    sim = FleetSimulator(free, args.episodes)
    sim.reset(None, list(range(args.episodes)))
    rng = np.random.default_rng(0)
    spend = np.zeros(2)
    for _ in range(free.horizon_years):
        spend += sim.step(*condition_based(sim, rng)).cost.mean(0)
    spend /= free.horizon_years
    total = spend.sum()
    print(f"condition_based, no budget limit: mean annual spend USD {total:,.0f} "
          f"(urban {spend[0]:,.0f}, rural {spend[1]:,.0f}; urban share {spend[0] / total:.3f})")
    urban, rural = cfg.budgets_usd
    print(f"{args.fleet_model} budget USD {urban + rural:,.0f} a year (urban {urban:,.0f}, rural {rural:,.0f}): "
          f"unlimited spend / budget = {total / (urban + rural):.2f}")
    print(format_table(evaluate_heuristics(cfg, episodes=args.episodes)))


if __name__ == "__main__":
    main()
