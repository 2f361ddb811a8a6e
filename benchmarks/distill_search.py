"""Variants of the `default` preset (the network distilled from the planner) scored on validation fleets at several
budget levels, in one process that shares the teacher's price searches between variants of one seed.

Each ``--variant`` (a YAML mapping of training options over the preset, ``{}`` for the preset itself) is trained
with ``seed`` on its fleet; variants with the same ``num_envs`` reuse the simulator and the planners whose prices
the first one searched (the same training fleets: a new level adds its own search), so a variant costs its labels,
fits and scoring, not four price searches. Each run is scored beside the planner and the bound on validation fleets
(seeds from ``VALIDATION_SEED`` + 500,000, as ``benchmarks/learner_scale.py --split validation``; the planner's and
the bound's figures are kept in ``--cache`` and read back on the next call). Printed per variant and level: the
agent's and the planner's distance to the bound per bridge, their ratio, and the agent's return below the planner's
per bridge with its paired 95 % interval. ``--runs`` scores run folders instead (``--split test`` on the test fleets:
to publish; nothing is chosen there).

    python benchmarks/distill_search.py --levels 0.5,1,2 --episodes 16 --variant '{}' --variant '{dagger_rounds: 3}'
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from bridgefleet.agents.bridge import BridgePolicy
from bridgefleet.config import FleetConfig
from bridgefleet.config.presets import resolve_config
from bridgefleet.config.seeds import TEST_SEED, VALIDATION_SEED
from bridgefleet.evaluation.evaluate import evaluate_with_bound
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.runs.load import load_policy
from bridgefleet.stats import ci95
from bridgefleet.training.distill_run import DistillTrainer

FIRST = {"validation": VALIDATION_SEED + 500_000, "test": TEST_SEED}
"""First fleet scored of each split (the validation fleets apart from those a run's evaluations see)."""


def reference(fc: FleetConfig, name: str, level: float, episodes: int, cache: Path, first: int
              ) -> dict[str, list[float]]:
    """The planner's returns and the bound's values on fleets ``first``, … at ``level``, from ``cache`` if there."""
    key = f"{name}|{level:g}|{episodes}|{first}"
    known = json.loads(cache.read_text()) if cache.exists() else {}
    if key not in known:
        (planner,), bound = evaluate_with_bound(fc, [], episodes, first, budget_scale=None if level == 1 else level)
        known = json.loads(cache.read_text()) if cache.exists() else {}
        known[key] = {"planner": planner.returns.tolist(), "bound": bound.values.tolist()}
        cache.write_text(json.dumps(known))
    return known[key]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fleet", default="default", help="default (the fleet model) or an inventory")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--levels", default="0.5,1,2")
    ap.add_argument("--episodes", type=int, default=16, help="validation fleets (paths of an inventory)")
    ap.add_argument("--variant", action="append", default=[], help="YAML mapping of options over the preset")
    ap.add_argument("--cache", default="distill_search_reference.json")
    ap.add_argument("--split", choices=("validation", "test"), default="validation", help="fleets scored on: "
                    "validation (to choose a setting on) or test (to publish, nothing chosen on them)")
    ap.add_argument("--runs", nargs="*", default=None, help="score these run folders instead of training variants")
    ap.add_argument("--reference-only", action="store_true", help="the planner's and the bound's figures only")
    args = ap.parse_args()
    inventory = None if args.fleet == "default" else args.fleet
    fc = resolve_config("default", None, {"inventory": inventory}).fleet  # the fleet a run of the preset trains on
    resolved = resolve_fleet(fc)[0]
    n_bridges = resolved.n_urban + resolved.n_rural
    levels = [float(x) for x in args.levels.split(",")]
    first = FIRST[args.split]
    refs = {lv: reference(fc, args.fleet, lv, args.episodes, Path(args.cache), first) for lv in levels}
    for lv, r in refs.items():
        gap = (np.mean(r["bound"]) - np.mean(r["planner"])) / n_bridges
        print(f"planner at {lv:g} x: {np.mean(r['planner']):.2f}, bound {np.mean(r['bound']):.2f}, "
              f"planner below bound / bridge {gap:.3f}", flush=True)
    if args.reference_only:
        return
    if args.runs is not None:
        for run in args.runs:
            print(f"| {run} | " + " | ".join(score(load_policy(run, "cpu")[1], fc, levels, refs, args.episodes, first,
                                                   n_bridges)) + " |", flush=True)
        return
    print("| seed | variant | train s | " + " | ".join(f"agent / planner gap {lv:g} x" for lv in levels) + " |")
    shared: dict[tuple, DistillTrainer] = {}
    out = Path(tempfile.mkdtemp(prefix="distill-search-"))
    for seed in map(int, args.seeds.split(",")):
        for k, text in enumerate(args.variant or ["{}"]):
            over = yaml.safe_load(text) or {}
            cfg = resolve_config("default", None, {**over, "seed": seed, "inventory": inventory})
            t0 = time.perf_counter()
            trainer = DistillTrainer(cfg, out / f"s{seed}-v{k}", progress=False)
            first = shared.get((seed, trainer.paths))
            if first is not None:  # the same training fleets: the planners keep their prices
                trainer.sim, trainer.teachers = first.sim, first.teachers
            else:
                shared[(seed, trainer.paths)] = trainer
            trainer.run()
            secs = time.perf_counter() - t0
            cells = score(BridgePolicy(trainer.net.eval(), "cpu", distilled=True), fc, levels, refs, args.episodes,
                          first, n_bridges)
            print(f"| {seed} | {text} | {secs:.0f} | " + " | ".join(cells) + " |", flush=True)


def score(policy: BridgePolicy, fc: FleetConfig, levels: list[float], refs: dict, episodes: int, first: int,
          n_bridges: int) -> list[str]:
    """At each level: the agent's distance to the bound per bridge / the planner's = their ratio, and the agent's
    return below the planner's per bridge ± its paired 95 % interval (the same fleets and draws)."""
    cells = []
    for lv in levels:
        (agent,), _ = evaluate_with_bound(fc, [], episodes, first, extra={"agent": policy}, planner=False,
                                          budget_scale=None if lv == 1 else lv)
        bound, planner = np.mean(refs[lv]["bound"]), np.asarray(refs[lv]["planner"])
        a, p = (bound - agent.mean_return) / n_bridges, (bound - planner.mean()) / n_bridges
        d = (planner - agent.returns) / n_bridges
        cells.append(f"{a:.3f} / {p:.3f} = {a / p:.2f} ({d.mean():.3f} ± {ci95(d):.3f})")
    return cells


if __name__ == "__main__":
    main()
