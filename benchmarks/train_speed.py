"""Training speed: the `baseline` preset against the `sarsa` preset (the per-bridge agent learned by SARSA, the
`default` preset until 2026-12-06), measured in the same run; and the main job's time on this CPU and on an AVX2-only
one.

Run: python benchmarks/train_speed.py [--episodes 2000] [--baseline-episodes 60] [--profile]
     python benchmarks/train_speed.py --four-ways [--preset default] [--episodes 2000] [--repeats 2]

--four-ways runs a preset (amp: auto, threads: auto) beside the same preset in plain fp32 with 1 thread, each
in a fresh process, ``--repeats`` times in ABBA order (averaged), under four conditions: this CPU's native
oneDNN ISA and ``ONEDNN_MAX_CPU_ISA=AVX2`` (no native bf16, as on most laptops), each on an idle machine and
with one core held by a busy loop in another process. It prints the run's wall seconds and s/episode of both and
what `auto` chose (docs/benchmarks.md, "Precision and threads"); ``--preset default`` is `bridgefleet train`'s
main job (fitted to the planner: ``--episodes`` does not apply, an episode is one fleet the teacher labels), whose
target is 60 s on an AVX2-only 2-core CPU.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path

from bridgefleet.config.presets import PRESETS, resolve_config
from bridgefleet.training.runner import train


def run(preset: str, episodes: int, seed: int, out: Path, reprobe: bool = False, **over) -> dict:
    """Train ``preset`` (``episodes`` of them where it learns episode by episode) and return its summary."""
    length = {} if PRESETS[preset].get("teacher") else {"episodes": episodes}
    cfg = resolve_config(preset, None, {**length, "seed": seed, **over})
    tag = "-".join(f"{k}{v}" for k, v in over.items())
    return train(cfg, out / f"{preset}-{episodes}-{seed}{tag}", progress=False, reprobe=reprobe)[1]


def profile_default(episodes: int, out: Path) -> None:
    prof = cProfile.Profile()
    prof.enable()
    summary = run("sarsa", episodes, 0, out / "profile")
    prof.disable()
    stats = pstats.Stats(prof)
    total = summary["wall_seconds"]

    def cum(pattern: str) -> float:
        return sum(v[3] for k, v in stats.stats.items() if pattern in f"{k[0]}:{k[2]}")

    parts = {
        "env (FleetVectorEnv.step)": cum("envs/vector.py:step"),
        "replay (add, sample, priorities)": cum("replay/buffers.py:add") + cum("replay/buffers.py:sample")
        + cum("replay/buffers.py:update_priorities") + cum("replay/nstep.py:add"),
        "learner updates": cum("agents/learner.py:update"),
        "acting (forward passes)": cum("agents/learner.py:act"),
        "evaluation (incl. heuristics)": cum("bridgefleet/evaluation/evaluate.py:evaluate_policy"),
    }
    print(f"\nprofile of `sarsa`, {episodes} episodes, {total:.1f} s wall:")
    for name, sec in parts.items():
        print(f"  {name:<36}{sec:>8.2f} s {sec / total:>7.1%}")
    rest = total - sum(parts.values())
    print(f"  {'rest (loop, logging, Python overhead)':<36}{rest:>8.2f} s {rest / total:>7.1%}")


def four_ways(episodes: int, seed: int, preset: str, repeats: int = 2) -> None:
    """``preset`` (auto) vs fp32 1-thread under native/AVX2 ISA × idle/busy, each run in a fresh process."""
    from bridgefleet.training.hardware import cpu_model

    rows = []
    for isa in ("native", "AVX2"):
        for busy in (False, True):
            env = dict(os.environ)
            env.pop("ONEDNN_MAX_CPU_ISA", None)
            if isa == "AVX2":
                env["ONEDNN_MAX_CPU_ISA"] = "AVX2"
            spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
            try:
                res: dict[str, list] = {"auto": [], "fp32-1": []}
                configs = (("auto", {}), ("fp32-1", {"amp": False, "threads": 1}))
                for r in range(repeats):  # ABBA order: drift on a shared machine favours neither
                    for name, over in configs if r % 2 == 0 else configs[::-1]:
                        code = ("import json, sys, tempfile; sys.path.insert(0, 'benchmarks');"
                                "from train_speed import run; from pathlib import Path; d = tempfile.mkdtemp();"
                                f"print(json.dumps(run({preset!r}, {episodes}, {seed}, Path(d), reprobe=True,"
                                f" **{over!r})))")
                        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                             cwd=Path(__file__).resolve().parents[1])
                        if out.returncode:
                            raise SystemExit(f"{isa}, {'busy' if busy else 'idle'}, {name} failed:\n{out.stderr}")
                        res[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
            finally:
                if spinner is not None:
                    spinner.kill()
            res = {k: {**v[0], "seconds_per_episode": sum(x["seconds_per_episode"] for x in v) / len(v),
                       "wall_seconds": sum(x["wall_seconds"] for x in v) / len(v),
                       "chosen": sorted({f"{x['amp']}, {x['threads']} thr." for x in v})} for k, v in res.items()}
            rows.append((isa, busy, res))
            a, f = res["auto"], res["fp32-1"]
            print(f"{isa:<7} {'busy' if busy else 'idle'}: auto {a['wall_seconds']:.1f} s, "
                  f"{a['seconds_per_episode']:.4f} s/ep ({' / '.join(a['chosen'])}), fp32 1 thread "
                  f"{f['wall_seconds']:.1f} s, {f['seconds_per_episode']:.4f} s/ep", flush=True)
    print(f"\nCPU: {cpu_model()}; {a['episodes']} episodes of `{preset}` per run")
    print(f"| oneDNN ISA | other load | `{preset}` (auto) s/episode | chosen | fp32, 1 thread s/episode "
          "| auto / fp32-1 | the run (auto), s |")
    print("|---|---|---:|---|---:|---:|---:|")
    for isa, busy, res in rows:
        a, f = res["auto"], res["fp32-1"]
        print(f"| {isa} | {'one core busy' if busy else 'idle'} | {a['seconds_per_episode']:.4f} "
              f"| {' / '.join(a['chosen'])} | {f['seconds_per_episode']:.4f} "
              f"| {a['seconds_per_episode'] / f['seconds_per_episode']:.2f} | {a['wall_seconds']:.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=2000, help="episodes of the sarsa preset (and of --four-ways' "
                    "preset where it learns episode by episode)")
    ap.add_argument("--baseline-episodes", type=int, default=60, help="episodes per baseline measurement")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true", help="also profile a 400-episode sarsa run")
    ap.add_argument("--four-ways", action="store_true", help="auto vs fp32 1-thread: native/AVX2 × idle/busy")
    ap.add_argument("--preset", default="default", help="preset of --four-ways (default: default)")
    ap.add_argument("--repeats", type=int, default=2, help="runs of each configuration in --four-ways (ABBA)")
    args = ap.parse_args()
    if args.four_ways:
        four_ways(args.episodes, args.seed, args.preset, args.repeats)
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        # The baseline reaches no target in a short run; its eval cadence is kept low so timing is training.
        b1 = run("baseline", args.baseline_episodes, args.seed, out, eval_every=args.baseline_episodes)
        d = run("sarsa", args.episodes, args.seed, out)
        b2 = run("baseline", args.baseline_episodes, args.seed + 1, out, eval_every=args.baseline_episodes)
        base_spe = (b1["seconds_per_episode"] + b2["seconds_per_episode"]) / 2
        print(f"{'preset':<10}{'episodes':>10}{'s/episode':>12}{'updates/s':>11}{'eval return':>13}"
              f"{'target':>10}{'ep. to target':>15}{'s to target':>13}")
        for name, s in (("baseline", b1), ("sarsa", d), ("baseline", b2)):
            ett = s["episodes_to_target"] if s["episodes_to_target"] is not None else "not reached"
            stt = f"{s['seconds_to_target']:.1f}" if s["seconds_to_target"] is not None else "-"
            print(f"{name:<10}{s['episodes']:>10}{s['seconds_per_episode']:>12.4f}{s['updates_per_second']:>11.1f}"
                  f"{s['final_eval_return']:>13.1f}{s['target_return']:>10.1f}{ett!s:>15}{stt:>13}")
        gain = (d["final_eval_return"] - d["target_return"]) / abs(d["target_return"])
        print(f"\nsarsa: {d['episodes']} episodes in {d['wall_seconds']:.1f} s; "
              f"speed-up over baseline in s/episode: {base_spe / d['seconds_per_episode']:.1f}x "
              f"(baseline {base_spe:.3f} s/episode, mean of two runs)")
        print(f"sarsa vs best heuristic ({d['target_policy']}) at the end: {gain:+.1%} "
              f"(target: ≥ +10 %)")
        if d["seconds_to_target"] is not None:
            print(f"sarsa reached the target after {d['episodes_to_target']} episodes, "
                  f"{d['seconds_to_target']:.1f} s")
        if args.profile:
            profile_default(400, out)


if __name__ == "__main__":
    main()
