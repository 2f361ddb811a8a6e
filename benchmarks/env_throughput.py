"""Bridge-steps per second of the vectorized simulator at 1, 16 and 256 fleets, and of the scalar
reference (plain Python, one bridge at a time), measured in the same run.

Run: python benchmarks/env_throughput.py [--seconds 2]
Prints the table in docs/results.md's format (machine, date, commit, command).
The fleet is ``FleetConfig()``'s (the continuous model, ``continuous-2026``).
A bridge-step is one bridge simulated for one year (budget, maintenance, deterioration, reward),
including episode resets and observation building. Actions: random requests and strategies drawn
before timing (the reference gets the same kind).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bridgefleet import FleetConfig, FleetVectorEnv
from bridgefleet.bench.results_page import results_table
from bridgefleet.sim.reference import reference_year
from bridgefleet.sim.simulator import FleetSimulator


def vectorized(num_envs: int, seconds: float) -> float:
    env = FleetVectorEnv(num_envs, FleetConfig())
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    # Actions are drawn before timing: the simulator is measured, not a policy.
    actions = [{"urban": rng.integers(0, 5, size=(num_envs, env.sim.n_urban)),
                "rural": rng.integers(0, 8, size=num_envs)} for _ in range(30)]
    steps = 0
    t0 = time.perf_counter()
    while True:
        for a in actions:
            env.step(a)
        steps += 30
        if (elapsed := time.perf_counter() - t0) > seconds:
            return steps * num_envs * env.sim.n_bridges / elapsed


def reference(seconds: float) -> float:
    cfg = FleetConfig()
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    s = {k: getattr(sim.state, k)[0].astype(float).tolist() for k in ("condition", "age", "ysm", "rate")}
    p = sim.profile
    prof = [p.deck_area[0].tolist(), p.aadt[0].tolist(), p.cost_factor[0].tolist(), p.target_condition[0].tolist()]
    noise = sim.noise[0].astype(float).tolist()
    budget = (cfg.urban_budget_usd, cfg.rural_budget_usd)
    rng = np.random.default_rng(0)
    draws = [rng.integers(0, 5, size=cfg.n_bridges).tolist() for _ in range(30)]
    steps = 0
    t0 = time.perf_counter()
    while True:
        for t, actions in enumerate(draws):
            reference_year(s["condition"], s["age"], s["ysm"], s["rate"], *prof, actions, noise[t], budget,
                           cfg.n_urban, cfg)
        steps += 30
        if (elapsed := time.perf_counter() - t0) > seconds:
            return steps * cfg.n_bridges / elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0, help="measuring time per row")
    ap.add_argument("--envs", default="1,16,256", help="comma-separated fleet counts")
    args = ap.parse_args()
    ref = reference(args.seconds)
    rows = [("scalar reference (Python)", 1, f"{ref:,.0f}", "1.0×")]
    for n in (int(x) for x in args.envs.split(",")):
        v = vectorized(n, args.seconds)
        rows.append(("vectorized (NumPy + Numba)", n, f"{v:,.0f}", f"{v / ref:.1f}×"))
    print(results_table("Simulator throughput", ("simulator", "fleets", "bridge-steps/s", "vs reference"), rows))


if __name__ == "__main__":
    main()
