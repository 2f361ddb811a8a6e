"""Issue 25's targets: the bound and the planner on inventories of 1×, 4× and 10× Indiana's 4,794 bridges.

Builds each inventory itself (Indiana's rows repeated under new structure numbers) and runs, each in a fresh
process, ``bridgefleet bound --inventory FILE --mapping indiana --episodes 1`` (the bound's price search and
the planner's first window of value tables) and ``bridgefleet evaluate --inventory FILE --mapping indiana
--policy lagrangian --episodes 1`` (the bound and the planner simulated over the 30 years: every later window of
its value tables too). One row per size and command: bridges, wall time, its ratio to Indiana's, and the
process's peak memory (``ru_maxrss``). A warm-up on dc-2019 first compiles Numba's kernels (cached
afterwards), so the timings do not include it. Targets (2 cores): bound + planner on 47,940 bridges in
≤ 10 × Indiana's time; peak memory ≤ 4 GB at every size.

    python benchmarks/planning_scale.py [--indiana INDIANA2019.csv] [--sizes 1,4,10] [--commands bound,evaluate]
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INDIANA = Path(__file__).resolve().parents[2] / "shared" / "data" / "indiana" / "INDIANA2019.csv"
TARGET_RATIO = 10.0
TARGET_GB = 4.0


def repeated(src: Path, times: int, dst: Path) -> int:
    """Write ``src`` ``times`` over to ``dst``, copy k's structure numbers suffixed with k; return the rows."""
    with src.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    fields = list(rows[0])
    with dst.open("w", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, fields)
        out.writeheader()
        for k in range(times):
            for i, row in enumerate(rows):
                out.writerow({**row, "Index": k * len(rows) + i,
                              "STRUCTURE_NUMBER_008": row["STRUCTURE_NUMBER_008"] + (f"R{k}" if k else "")})
    return times * len(rows)


COMMANDS = {"bound": ["bound", "--episodes", "1"],
            "evaluate": ["evaluate", "--policy", "lagrangian", "--episodes", "1"]}


WARM_WINDOWS = """
from bridgefleet.config import FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_policy
from bridgefleet.planning.planner import LagrangianPlanner
cfg = FleetConfig(n_urban=3, n_rural=5, horizon_years=12, fixed_fleet=True, fleet_seed=4)
evaluate_policy(LagrangianPlanner(max_iter=4, memory_mb=0.2), cfg, episodes=2, seed=0)
"""
"""Compiles the planner's window kernels (dc-2019's tables fit one window, so its run does not): later windows
solved from the horizon and from kept V_c."""


def run(path: Path | str, mapping: str | None = "indiana", command: str = "bound") -> tuple[float, float, str]:
    """Wall seconds, peak memory GB and, for ``bound``, "K DP solves in S s" (its search) of ``bridgefleet
    COMMAND`` on ``path`` in a fresh process."""
    cmd = [sys.executable, "-m", "bridgefleet", *COMMANDS[command], "--inventory", str(path), "--quiet"]
    cmd += ["--mapping", mapping] if mapping else []
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"bridgefleet {command} failed on {path}:\n{out[-2000:]}")
    found = re.search(r"(\d+) DP solves, ([\d.]+) s", out)
    return wall, usage.ru_maxrss / 2**20, f"{found[1]} DP solves in {found[2]} s" if found else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--indiana", type=Path, default=INDIANA)
    ap.add_argument("--sizes", default="1,4,10", help="multiples of Indiana's inventory")
    ap.add_argument("--commands", default="bound,evaluate", help="bound (the prices), evaluate (bound + planner)")
    args = ap.parse_args()
    if not args.indiana.is_file():
        raise SystemExit(f"{args.indiana} not found (--indiana PATH)")
    commands = args.commands.split(",")
    for c in commands:
        if c not in COMMANDS:
            raise SystemExit(f"--commands {c}: one of {', '.join(COMMANDS)}")
    run("dc-2019", None)  # warm-up: Numba compiles here on a fresh checkout
    subprocess.run([sys.executable, "-c", WARM_WINDOWS], check=True)
    print("| bridges | command | wall s | × Indiana's time | peak memory GB | the bound's search | target |")
    print("|---:|---|---:|---:|---:|---|---|")
    base: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k in (int(x) for x in args.sizes.split(",")):
            path = Path(tmp) / f"indiana-x{k}.csv"
            n = repeated(args.indiana, k, path)
            for c in commands:
                wall, gb, search = run(path, command=c)
                base.setdefault(c, wall)
                ok = gb <= TARGET_GB and (k < 10 or wall <= TARGET_RATIO * base[c])
                print(f"| {n:,} | {c} | {wall:.0f} | {wall / base[c]:.1f} | {gb:.2f} | {search} | "
                      f"{'met' if ok else 'not met'} |", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
