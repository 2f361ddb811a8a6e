"""Variants of the per-bridge agent's `sarsa` preset (the `default` preset until 2026-12-06), each trained once
and evaluated on the same 100 evaluation fleets as the decision-quality table (seeds 1,000,000 …), with the
training seed's spread.

    python benchmarks/bridge_agent_variants.py                       # every variant below, one line each
    python benchmarks/bridge_agent_variants.py --variants base,seed1,per --threads 2

Prints one JSON line per variant: mean return ± 95 % CI on the evaluation fleets, training seconds and the
best validation return (the network kept in final.pt). Compare variants against the seed spread (base vs
seed1, seed2): a difference smaller than that is not a finding.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bridgefleet.config import FleetConfig
from bridgefleet.config.presets import resolve_config
from bridgefleet.config.seeds import VALIDATION_SEED
from bridgefleet.evaluation.evaluate import evaluate_policy
from bridgefleet.runs.load import load_policy
from bridgefleet.training.runner import train

VARIANTS = {
    "base": {},
    "seed1": {"seed": 1},
    "seed2": {"seed": 2},
    "n1": {"n_step": 1},
    "n2": {"n_step": 2},
    "n5": {"n_step": 5},
    "n10": {"n_step": 10},
    "eps01": {"eps_end": 0.01},
    "h256": {"bridge_hidden": (256, 256)},
    "lr5e-4": {"lr": 5e-4},
    "per": {"per": True},
    "dueling": {"dueling": True},
    "ep3200": {"episodes": 3200},
    "lrcos": {"lr_end_fraction": 0.1},
    "lrcos-seed1": {"lr_end_fraction": 0.1, "seed": 1},
    "tau005": {"polyak_tau": 0.005},
    "tau005-seed1": {"polyak_tau": 0.005, "seed": 1},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)}")
    ap.add_argument("--threads", default="2", help="torch threads of every run (a number, or auto)")
    ap.add_argument("--episodes", type=int, default=100, help="evaluation fleets")
    args = ap.parse_args()
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant(s) {unknown}: {', '.join(VARIANTS)}")
    threads = args.threads if args.threads == "auto" else int(args.threads)
    for name in names:
        cfg = resolve_config("sarsa", None, {"threads": threads, **VARIANTS[name]})
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            run_dir, summary = train(cfg, Path(tmp) / "run", progress=False)
            # variants are compared to choose one: on validation fleets, never the test fleets
            r = evaluate_policy(load_policy(run_dir)[1], FleetConfig(), args.episodes, VALIDATION_SEED, name)
            print(json.dumps({"variant": name, "mean": round(r.mean_return, 2), "ci": round(r.ci95, 2),
                              "train_s": round(summary["wall_seconds"], 1),
                              "best_eval": round(summary["best_eval_return"], 2),
                              "total_s": round(time.perf_counter() - t0, 1)}), flush=True)


if __name__ == "__main__":
    main()
