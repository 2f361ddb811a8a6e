"""Which reward should the plan's agents learn? The `fleet` preset with each reward option, interleaved seeds.

Run: python benchmarks/reward_modes.py [--episodes 2000] [--seeds 2] [--only "per_bridge + shared,per_bridge + own"]

Rows: urban_reward scalar (shared scalar reward for every branch) vs per_bridge (reward decomposition),
and reward_mode shared (municipality total for both agents) vs own (each agency's part). Prints the final
greedy evaluation return (same evaluation seeds), its margin over the best heuristic, and s/episode.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bridgefleet.config.presets import resolve_config
from bridgefleet.training.runner import train

VARIANTS = {
    "scalar + shared": {"urban_reward": "scalar", "reward_mode": "shared"},
    "per_bridge + shared": {"urban_reward": "per_bridge", "reward_mode": "shared"},
    "scalar + own": {"urban_reward": "scalar", "reward_mode": "own"},
    "per_bridge + own": {"urban_reward": "per_bridge", "reward_mode": "own"},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--only", help="comma-separated variants (default: all four)")
    args = ap.parse_args()
    variants = {k: VARIANTS[k] for k in args.only.split(",")} if args.only else VARIANTS
    results: dict[str, list[dict]] = {k: [] for k in variants}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            for k, (name, over) in enumerate(variants.items()):  # interleaved: A B C D, A B C D
                cfg = resolve_config("fleet", None, {"episodes": args.episodes, "seed": seed, **over})
                results[name].append(train(cfg, Path(tmp) / f"seed{seed}-variant{k}", progress=False)[1])
    print(f"{'variant':<28}{'final eval (mean)':>18}{'vs best heuristic':>19}{'s/episode':>11}   per seed")
    for name, rows in results.items():
        ev = statistics.mean(r["final_eval_return"] for r in rows)
        target = rows[0]["target_return"]
        spe = statistics.mean(r["seconds_per_episode"] for r in rows)
        seeds = ", ".join(f"{r['final_eval_return']:.0f}" for r in rows)
        print(f"{name:<28}{ev:>18.1f}{(ev - target) / abs(target):>+19.1%}{spe:>11.4f}   {seeds}")
    print(f"target (best heuristic, {rows[0]['target_policy']}): {target:.1f}")


if __name__ == "__main__":
    main()
