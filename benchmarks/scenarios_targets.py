"""Issue 28's targets for ``bridgefleet scenarios``: its wall time on each fleet, and the planner's least budget
against the certified least budget.

Targets (8 budget levels, 2 cores): dc-2019 ≤ 2 min, Indiana (4,794 bridges) ≤ 15 min, the default fleet ≤ 10
min; the planner's least budget within 10 % of the certified least budget on all three. Each fleet runs
``run_scenarios`` with its defaults (8 levels, 16 samples, bisection 3, test seeds) unless told otherwise, and
prints one row: wall time, the certified least budget, the planner's least budget and their ratio, and the time
of each phase (least budget; planner runs: the levels, the probes of its least budget and, on the component model,
the penalty's probes and the next million's check). A warm-up on a tiny fleet first compiles Numba's kernels
(cached afterwards), so the timings do not include it. ``--fleet-model`` picks the model (default: the commands'
default, ``components-2026``; issue 28 measured ``continuous-2026``).

    python benchmarks/scenarios_targets.py --fleets default,dc-2019,indiana [--fleet-model NAME] [--episodes 16]
        [--budgets ...] [--out DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bridgefleet.config import FleetConfig
from bridgefleet.config.fleet import DEFAULT_FLEET_MODEL
from bridgefleet.evaluation import component_scenarios, scenario_tables, scenarios

INDIANA = Path(__file__).resolve().parents[2] / "shared" / "data" / "indiana" / "INDIANA2019.csv"
TARGET_S = {"default": 600, "dc-2019": 120, "indiana": 900}
TARGET_RATIO = 1.10


def fleet(name: str, indiana: Path, model: str) -> FleetConfig | None:
    if name == "default":
        return FleetConfig.named(model)
    if name == "indiana":
        if not indiana.is_file():
            print(f"skipped Indiana: {indiana} not found (--indiana PATH)")
            return None
        return FleetConfig.named(model).with_inventory(str(indiana), "indiana")
    return FleetConfig.named(model).with_inventory(name)


class _Clock:
    """Time spent in each phase of ``run_scenarios`` (wrapping the module's functions it calls)."""

    def __init__(self):
        self.seconds = {"least budget": 0.0, "planner runs": 0.0}
        self.calls = 0

    def wrap(self, name: str, fn):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start
                self.calls += name != "least budget"
        return timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fleets", default="default,dc-2019,indiana")
    ap.add_argument("--fleet-model", default=DEFAULT_FLEET_MODEL, help=f"default {DEFAULT_FLEET_MODEL}")
    ap.add_argument("--episodes", type=int, default=16)
    ap.add_argument("--budgets", default=None, help="comma-separated levels (default: the 8 of `scenarios`)")
    ap.add_argument("--bisect", type=int, default=3)
    ap.add_argument("--indiana", type=Path, default=INDIANA, help="Indiana's 2019 NBI file (INDIANA2019.csv)")
    ap.add_argument("--out", default=None, help="folder: each fleet's scenarios.csv/.md/.json/.png in OUT/FLEET")
    args = ap.parse_args()
    levels = None if args.budgets is None else [float(x) for x in args.budgets.split(",")]
    start = time.perf_counter()  # compile Numba's kernels (cached after the first run) outside the timings
    scenarios.run_scenarios(FleetConfig.named(args.fleet_model, n_urban=2, n_rural=2), [0.5, 1.0], years=3,
                            episodes=2, bisect=1, progress=False)
    print(f"warm-up (Numba compiles on a fresh checkout): {time.perf_counter() - start:.0f} s")
    print("| fleet | levels | wall s | target s | least budget s | planner runs s | planner runs | "
          "probe paths | certified least | planner missed at | planner least | ratio | target ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.fleets.split(","):
        cfg = fleet(name, args.indiana, args.fleet_model)
        if cfg is None:
            continue
        clock = _Clock()
        kept = (scenarios.least_budget, scenarios.simulate_level, component_scenarios.exact_least_budget,
                scenarios.exact_level)
        scenarios.least_budget = clock.wrap("least budget", kept[0])
        scenarios.simulate_level = clock.wrap("planner runs", kept[1])
        component_scenarios.exact_least_budget = clock.wrap("least budget", kept[2])
        scenarios.exact_level = clock.wrap("planner runs", kept[3])
        try:
            start = time.perf_counter()
            sc = scenarios.run_scenarios(cfg, levels, episodes=args.episodes, bisect=args.bisect, progress=False)
            wall = time.perf_counter() - start
        finally:
            (scenarios.least_budget, scenarios.simulate_level, component_scenarios.exact_least_budget,
             scenarios.exact_level) = kept
        if args.out:
            scenario_tables.write_scenarios(sc, Path(args.out) / Path(name).stem)
        planner = sc.planner_least
        ratio = "–" if planner is None else f"{planner / sc.certified:.2f}"
        print(f"| {name} | {len(sc.levels)} | {wall:.0f} | {TARGET_S.get(name, '–')} | "
              f"{clock.seconds['least budget']:.0f} | {clock.seconds['planner runs']:.0f} | {clock.calls} | "
              f"{sc.probe_episodes} | {sc.certified:.3f} | "
              f"{'–' if sc.planner_missed is None else f'{sc.planner_missed:.3f}'} | "
              f"{'none' if planner is None else f'{planner:.3f}'} | {ratio} | "
              f"≤ {TARGET_RATIO:.2f} |", flush=True)


if __name__ == "__main__":
    main()
