"""Where a distilled network (the `default` preset) decides unlike its teacher, the `lagrangian` planner, year by year.

Runs the trained network's greedy policy on validation fleets (seeds from ``VALIDATION_SEED`` + 500,000, as
``benchmarks/learner_scale.py --split validation``) at a budget level and, every year, asks the planner (its prices
computed for these fleets at that level) what it would fund in the same state. Printed per year (means over the
fleets): the network's error in the quantity it learns, asinh(benefit / (λ · cost)) of each available treatment
(its mean, the bias, and its mean absolute value), the treatments each funds, the share of the teacher's choices the
network makes too, what each spends (USD), and the teacher's benefit (return units, at its own prices) of its own
choice and of the network's: their gap is the value the network's choices lose in the teacher's eyes. Then, at year 0
(a state the network was fitted on: an inventory starts every path from its own state), each treatment's error
quantiles and the correlation of the network's output with the teacher's.

    python benchmarks/distill_agreement.py RUN --level 0.5 --fleets 4
"""

from __future__ import annotations

import argparse

import numpy as np

from bridgefleet.agents.bridge import action_costs, bridge_features, decide, scaled_benefit, unscaled_benefit
from bridgefleet.config.seeds import VALIDATION_SEED
from bridgefleet.inventory.fleet import resolve_fleet, set_budget
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.runs.load import load_policy
from bridgefleet.sim.model import ACTION_NAMES
from bridgefleet.sim.simulator import FleetSimulator


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="a run of the default preset (a network fitted to the planner)")
    ap.add_argument("--level", type=float, default=0.5, help="budget, a multiple of the sized budget")
    ap.add_argument("--fleets", type=int, default=4, help="validation fleets (sample paths of an inventory)")
    args = ap.parse_args()
    cfg, policy = load_policy(args.run, "cpu")
    if cfg.teacher is None:
        ap.error(f"{args.run} was not fitted to a teacher (teacher: null): nothing to compare its benefits with")
    fleet_cfg, fleet = resolve_fleet(cfg.fleet)
    fleet_cfg = set_budget(fleet_cfg, args.level)
    lam, e_n = fleet_cfg.cost_lambda, args.fleets
    sim = FleetSimulator(fleet_cfg, e_n, fleet)
    sim.reset(None, [VALIDATION_SEED + 500_000 + i for i in range(e_n)])
    planner = LagrangianPlanner()
    cost = action_costs(sim)
    print("| year | bias | mean abs error | funded (teacher) | funded (network) | teacher's choices made | "
          "USD spent (teacher) | USD spent (network) | teacher's benefit of its choice | of the network's |")
    print("|---:" * 10 + "|")
    lost = []
    for year in range(fleet_cfg.horizon_years):
        ben = planner.benefits(sim)
        z = policy.q_values(bridge_features(sim, cost, policy.net.n_features))
        target, out = scaled_benefit(ben, cost, lam), z - z[..., :1]
        ok = ~np.isnan(target)
        ok[..., 0] = False
        err = (out - target)[ok]
        mine, theirs = decide(unscaled_benefit(z, cost, lam), cost, sim), decide(ben, cost, sim)
        if year == 0:
            first = (target, out, ok)
        finite = np.where(np.isfinite(ben), ben, 0.0)
        value = [np.take_along_axis(finite, a[..., None], -1).sum() / e_n for a in (theirs, mine)]
        spend = [np.take_along_axis(cost, a[..., None], -1)[..., 0].sum() / e_n for a in (theirs, mine)]
        same = ((theirs == mine) & (theirs > 0)).sum() / max((theirs > 0).sum(), 1)
        lost.append(value[0] - value[1])
        print(f"| {year + 1} | {err.mean():+.3f} | {np.abs(err).mean():.3f} | {(theirs > 0).sum() / e_n:.1f} | "
              f"{(mine > 0).sum() / e_n:.1f} | {same:.0%} | {spend[0]:,.0f} | {spend[1]:,.0f} | {value[0]:.2f} | "
              f"{value[1]:.2f} |")
        sim.step_requests(mine)
    print(f"\nteacher's benefit lost by the network's choices, summed over the years: {sum(lost):.2f} "
          f"({sum(lost) / sim.n_bridges:.3f} per bridge; not discounted further than the benefits are)")
    target, out, ok = first
    print("\nyear 0 (a state the network was fitted on), error in asinh(benefit / (λ · cost)):")
    for a in range(1, 5):
        m = ok[..., a]
        if not m.any():
            continue
        e = out[..., a][m] - target[..., a][m]
        corr = np.corrcoef(out[..., a][m], target[..., a][m])[0, 1] if m.sum() > 2 else float("nan")
        t = target[..., a][m]
        print(f"  {ACTION_NAMES[a]:<15} target mean {t.mean():+.2f} (s.d. {t.std():.2f}); error mean {e.mean():+.3f}, "
              f"|error| median {np.median(np.abs(e)):.3f}, 90th percentile {np.percentile(np.abs(e), 90):.3f}; "
              f"correlation {corr:.3f}")


if __name__ == "__main__":
    main()
