"""Speed and memory of the exact finite-model Lagrangian bound on an Indiana-sized synthetic fleet.

B = 4,794 bridges (a fifth culverts), R = 10 levels, T = 30 years, A = 5 actions (nothing, deck protection,
deck repair, rehabilitation of the lowest component, replacement), G = 2 agencies with carry-over, the
yearly budget 1/75 of the fleet's replacement value. Deterioration: stay 0.9, drop one level 0.1 (a protected
deck 0.97 / 0.03), protection lapses with probability 1/6 a year. Costs scale with each bridge's deck area
(lognormal), so no two bridges share a DP. Targets: ≤ 60 s and ≤ 2 GB peak RSS on 2 cores.

    .venv/bin/python benchmarks/exact_bound_speed.py [--bridges 4794] [--years 30] [--tol 1e-6] [--max-iter 500]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

from bridgefleet.planning.exact_bound import lagrangian_bound
from bridgefleet.planning.exact_dp import FleetModel, solve

R = 10
UNIT_COST = np.array([0.0, 40.0, 250.0, 700.0, 3000.0])  # USD per m² of deck: the five actions


def synthetic_fleet(b_n: int, seed: int = 0) -> tuple[FleetModel, np.ndarray, float]:
    """The fleet, each bridge's agency (B,), and the fleet's replacement value (USD)."""
    rng = np.random.default_rng(seed)
    drop = np.eye(R) * 0.9 + np.eye(R, k=-1) * 0.1
    drop[0, 0] = 1.0
    P = np.broadcast_to(drop, (2, 3, R, R)).copy()
    eye = np.eye(R)
    P[1, 1:] = eye  # culverts: slots 1–2 not applicable
    protected = np.eye(R) * 0.97 + np.eye(R, k=-1) * 0.03
    protected[0, 0] = 1.0
    P_protected = np.stack([protected, drop])

    def raise_by(k_lo: int, k_hi: int) -> np.ndarray:
        m = np.zeros((R, R))
        for r in range(R):
            for k in range(k_lo, k_hi + 1):
                m[r, min(r + k, R - 1)] += 1.0 / (k_hi - k_lo + 1)
        return m

    new = np.zeros((R, R))
    new[:, R - 1], new[:, R - 2] = 0.8, 0.2
    treat = np.broadcast_to(eye, (2, 5, 3, R, R)).copy()
    treat[:, 2, 0] = raise_by(1, 2)  # deck repair
    treat[:, 3] = raise_by(2, 4)  # rehabilitation: the lowest component only
    treat[:, 4] = new  # replacement
    treat[1, :, 1:] = eye
    kind = (rng.random(b_n) < 0.2).astype(np.int64)
    start = np.stack([rng.integers(3, R, b_n), rng.integers(3, R, b_n), rng.integers(3, R, b_n),
                      rng.integers(0, 2, b_n)], axis=1)
    start[kind == 1, 1:3] = R - 1
    area = rng.lognormal(np.log(600.0), 0.8, b_n)
    cost = area[:, None] * UNIT_COST
    utility = area[:, None] * (np.arange(R) / (R - 1)) ** 0.7
    model = FleetModel(P=P, P_protected=P_protected, lapse=1 / 6, treat=treat, protect=np.array([2, 1, 2, 2, 0]),
                       lowest_only=np.array([False, False, False, True, False]), kind=kind, utility=utility,
                       cost=cost, cost_lambda=1e-3, gamma=0.95, start=start, poor_top=4)
    return model, (rng.random(b_n) < 0.4).astype(np.int64), float(cost[:, 4].sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bridges", type=int, default=4794)
    ap.add_argument("--years", type=int, default=30)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iter", type=int, default=500)
    args = ap.parse_args()
    model, agency, replacement = synthetic_fleet(args.bridges)
    t_n = args.years
    share = np.array([np.sum(model.cost[agency == g, 4]) for g in range(2)]) / replacement
    budget = np.outer(share, np.full(t_n, replacement / 75.0))
    print(f"{args.bridges} bridges, R={R}, T={t_n}, S={model.states}, cores={os.cpu_count()}, "
          f"budget {budget.sum(0)[0]:.4g} USD/year")
    small = FleetModel(**{**model.__dict__, **{k: getattr(model, k)[:4] for k in ("kind", "utility", "cost",
                                                                                 "start")}})
    began = time.perf_counter()
    solve(small, horizon=t_n)  # compile (or load the cache)
    print(f"compile/load: {time.perf_counter() - began:.1f} s")
    began = time.perf_counter()
    sol = solve(model, horizon=t_n, keep_policy=False)
    print(f"one DP solve (no policy kept): {time.perf_counter() - began:.2f} s; unconstrained spend "
          f"{sol.spend.sum(0)[0]:.4g} USD in year 0")
    began = time.perf_counter()
    def report(it: int, lval: float, m_val: float) -> None:
        print(f"  iteration {it}: L {lval:.10g}  master {m_val:.10g}  at {time.perf_counter() - began:.1f} s")

    res = lagrangian_bound(model, agency, budget, carry_over=True, callback=report, tol=args.tol,
                           max_iter=args.max_iter)
    wall = time.perf_counter() - began
    gap = res.bound - res.master_value
    print(f"bound {res.bound:.8g}  master {res.master_value:.8g}  relative gap {gap / abs(res.bound):.2e}")
    print(f"bound wall {wall:.1f} s, iterations {res.iterations}, DP {res.dp_seconds:.1f} s "
          f"({res.dp_seconds / res.iterations:.2f} s a solve), HiGHS {res.lp_seconds:.1f} s, "
          f"columns {len(res.mixture.bridge)}")
    began = time.perf_counter()
    kept = solve(model, np.asarray(res.price)[agency], keep_policy=True)
    print(f"one DP solve keeping the policy {kept.policy.shape} int8: {time.perf_counter() - began:.2f} s")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
