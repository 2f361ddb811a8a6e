"""``bridgefleet bench``: the plan's Benchmark Targets table, measured on this machine.

Every training preset of :data:`bridgefleet.config.presets.PRESETS` is trained on the default fleet from several
seeds, each run until its greedy evaluation reaches the target return (the best heuristic's, see
:func:`bridgefleet.training.runner.train`) or an episode cap. Runs are *interleaved* (every preset for seed 0,
then every preset for seed 1, …) and, by default, each run is a fresh Python process, so machine drift
and in-process caches (torch.compile, allocator) favour no preset.

Outputs in ``out``: ``bench.csv`` (one row per preset × seed), ``bench_summary.csv`` (one row per
preset), ``bench.md`` (header with machine/torch/device/threads, the table beside the plan's figures)
and ``bench.png`` (speed-up over ``baseline`` and episodes to target, measured and planned).

CLI wiring (in :mod:`bridgefleet.cli`)::

    b = sub.add_parser("bench", help="...")
    bench.add_arguments(b); b.set_defaults(func=bench.run_from_args)

Also runnable as ``python -m bridgefleet.bench.measure [options]``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime as _dt
import functools
import json
import math
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bridgefleet.bench.output import (
    _median,
    _num,
    _write_csv,
    machine_info,
    markdown_table,
    plot_bench,
    write_markdown,
)
from bridgefleet.outputs import write_json
from bridgefleet.paths import check_writable_folder

__all__ = ["PLAN_TARGETS", "PROFILES", "bench_config", "machine_info", "markdown_table", "plot_bench", "run_bench",
           "run_one", "summarize", "write_markdown"]

# Plan's "Benchmark Targets" table, copied from the acceleration plan (acceleration-plan.md, section
# "Benchmark Targets", document version 1.0, 2025-12-06). Columns: plan label, episodes to train,
# wall minutes, speed-up over baseline. The ``fleet`` and ``sarsa`` presets have no plan row.
PLAN_TARGETS: dict[str, tuple[str, int, float, float]] = {
    "baseline": ("Baseline", 2000, 60.0, 1.0),
    "compile-amp": ("+ torch.compile + AMP", 2000, 30.0, 2.0),
    "double": ("+ Double DQN", 1800, 27.0, 2.2),
    "nstep": ("+ Multi-step (3)", 1200, 24.0, 2.5),
    "per": ("+ PER", 800, 20.0, 3.0),
    "dueling": ("+ Dueling DQN", 700, 18.0, 3.3),
    "vectorized": ("+ Vectorized (4 envs)", 700, 8.0, 7.5),
    "all": ("+ All optimizations", 600, 6.0, 10.0),
}


@dataclass(frozen=True)
class Profile:
    """Seeds, episode caps and evaluation spacing of a bench profile.

    Caps and evaluation spacing are keyed by preset name, with ``"1env"`` (presets with one env),
    ``"vec"`` (several envs) as fall-backs. Units: episodes.
    """

    seeds: int
    caps: dict[str, int]
    eval_every: dict[str, int]


PROFILES: dict[str, Profile] = {
    # Under 10 minutes on 2 CPU cores (4.4 min measured): one seed, caps just past learning_starts for the
    # 1-env presets (their learning phase costs ~2 s/episode on 2 cores), enough for `sarsa` to reach the target.
    "quick": Profile(seeds=1, caps={"1env": 45, "vec": 100, "fleet": 1500, "sarsa": 800},
                     eval_every={"1env": 15, "vec": 50, "fleet": 100, "sarsa": 160}),
    # The real table. The plan's 2000 episodes for the 1-env presets would take ~70 min per run on
    # 2 cores (~2 s/episode once learning starts), so they are capped at 150 episodes (speed is measured,
    # reaching the target is not expected); about 2 hours on 2 cores, minutes on a GPU.
    "full": Profile(seeds=3, caps={"1env": 150, "vec": 600, "fleet": 3000, "sarsa": 2000},
                    eval_every={"1env": 25, "vec": 50, "fleet": 100, "sarsa": 160}),
}

TINY_OVERRIDES: dict[str, Any] = {
    "urban_hidden": (16,), "rural_hidden": (16,), "bridge_hidden": (16,), "batch_size": 16, "buffer_capacity": 2000,
    "learning_starts": 32, "eval_episodes": 4, "compile": "off", "target_sync_every": 50,
}
"""Overrides of ``--tiny`` (CI smoke tests): tiny networks, no torch.compile, 4 evaluation fleets."""
TINY_EPISODES = 4
"""Episode cap of every run under ``--tiny`` (at least one vector-env step of episodes)."""

RUN_FIELDS = (
    "preset", "seed", "episode_cap", "episodes", "reached", "episodes_to_target", "seconds_to_target",
    "wall_seconds", "seconds_per_episode", "seconds_per_episode_steady", "updates", "updates_per_second",
    "final_eval_return", "target_return", "num_envs", "device", "torch_version", "threads", "amp", "hardware_reason",
)
"""Columns of ``bench.csv`` (seconds are wall-clock seconds, returns discounted fleet returns)."""

SUMMARY_FIELDS = (
    "preset", "runs", "reached", "episodes_to_target_median", "episodes_to_target_min", "episodes_to_target_max",
    "seconds_to_target_median", "seconds_per_episode_median", "seconds_per_episode_steady_median",
    "updates_per_second_median", "final_eval_return_median", "speedup_seconds_per_episode",
    "speedup_time_to_target", "speedup_time_to_target_bound", "plan_label", "plan_episodes", "plan_minutes",
    "plan_speedup",
)
"""Columns of ``bench_summary.csv``; ``speedup_time_to_target_bound`` is "=" (exact), ">=" (baseline did
not reach the target: its time to target is at least its wall time) or "" (undefined)."""


# -- configs -------------------------------------------------------------------------------------------
def _group(preset: str, num_envs: int) -> str:
    return "1env" if num_envs == 1 else "vec"


def _pick(table: dict[str, int], preset: str, num_envs: int) -> int:
    return table.get(preset, table[_group(preset, num_envs)])


def bench_config(preset: str, seed: int, profile: str = "quick", device: str = "auto", tiny: bool = False,
                 caps: dict[str, int] | None = None, fleet_model: str = "plan-2025"):
    """The :class:`~bridgefleet.config.training.TrainConfig` of one bench run (stop at target, rare checkpoints).

    Args:
        preset: a name of :data:`bridgefleet.config.presets.PRESETS`.
        seed: training seed.
        profile: "quick" or "full" (:data:`PROFILES`).
        device: torch device string ("auto", "cpu", "cuda").
        tiny: CI smoke settings (:data:`TINY_OVERRIDES`, :data:`TINY_EPISODES`).
        caps: episode caps overriding the profile's, keyed by preset name or "1env"/"vec".
        fleet_model: the named fleet model trained on (default plan-2025, the model of the plan's table).

    Raises:
        ConfigError: unknown preset, profile or fleet model.
    """
    from bridgefleet.config import ConfigError
    from bridgefleet.config.presets import resolve_config

    if profile not in PROFILES:
        raise ConfigError(f"unknown bench profile {profile!r}; known: {', '.join(PROFILES)}")
    prof = PROFILES[profile]
    cfg = resolve_config(preset, None, {"device": device, "fleet": {"model": fleet_model}})
    table = {**prof.caps, **(caps or {})}
    cap = _pick(table, preset, cfg.num_envs)
    every = _pick(prof.eval_every, preset, cfg.num_envs)
    changes: dict[str, Any] = {}
    if tiny:
        changes.update(TINY_OVERRIDES)
        cap = max(TINY_EPISODES, cfg.num_envs)
        every = cap
    changes.update(episodes=int(cap), seed=int(seed), eval_every=int(every), stop_at_target=True,
                   checkpoint_every=10**9, device=device)
    return dataclasses.replace(cfg, **changes)


# -- one run ---------------------------------------------------------------------------------------------
def _steady_seconds_per_episode(run_dir: Path, learning_episode: int, num_envs: int = 1) -> float | None:
    """Wall seconds per training episode over the second half of the learning phase (from metrics.csv).

    Excludes the episodes before learning starts (no updates) and the first half of the learning phase
    (torch.compile's one-off compilation); evaluations in that window are included. With ``num_envs``
    fleets, episodes end in batches of ``num_envs`` at one wall time; only batch ends are used.
    """
    path = run_dir / "metrics.csv"
    if not path.exists():
        return None
    with path.open(newline="", encoding="utf-8") as f:
        rows = [(int(r["episode"]), float(r["wall_seconds"])) for r in csv.DictReader(f) if r["kind"] == "train"]
    rows = [(e, w) for e, w in rows if e % num_envs == 0]
    if not rows:
        return None
    last_ep, last_wall = rows[-1]
    start = learning_episode + (last_ep - learning_episode) // 2
    mid = [(e, w) for e, w in rows if e >= start and e < last_ep]
    if last_ep <= learning_episode or not mid:
        return None
    e0, w0 = mid[0]
    return (last_wall - w0) / (last_ep - e0) if last_ep > e0 else None


def _run_row(cfg: Any, run_dir: Path, summary: dict[str, Any]) -> dict[str, Any]:
    horizon = cfg.fleet.horizon_years
    # Episodes end in batches of num_envs; learning starts once replay holds learning_starts transitions.
    steps = max(cfg.learning_starts, cfg.batch_size) / cfg.num_envs + cfg.n_step
    learning_episode = math.ceil(steps / horizon) * cfg.num_envs
    ett = summary.get("episodes_to_target")
    return {
        "preset": cfg.preset, "seed": cfg.seed, "episode_cap": cfg.episodes, "episodes": summary["episodes"],
        "reached": ett is not None, "episodes_to_target": ett, "seconds_to_target": summary.get("seconds_to_target"),
        "wall_seconds": summary["wall_seconds"], "seconds_per_episode": summary["seconds_per_episode"],
        "seconds_per_episode_steady": _steady_seconds_per_episode(run_dir, learning_episode, cfg.num_envs),
        "updates": summary.get("updates"), "updates_per_second": summary.get("updates_per_second"),
        "final_eval_return": summary.get("final_eval_return"), "target_return": summary.get("target_return"),
        "num_envs": cfg.num_envs, "device": summary.get("device"), "torch_version": summary.get("torch_version"),
        "threads": summary.get("threads"), "amp": summary.get("amp"),
        "hardware_reason": "; ".join(filter(None, (summary.get("hardware", {}).get(k) for k in ("amp_reason",
                                                                                             "threads_reason")))),
    }


def run_one(cfg: Any, run_dir: Path, isolate: bool = True) -> dict[str, Any]:
    """Train one bench run into ``run_dir`` and return its ``bench.csv`` row.

    With ``isolate`` the run is a fresh ``python -m bridgefleet.bench.measure --worker`` process (no caches
    shared with other runs); its wall time counts from the start of training, not interpreter start-up.
    An existing ``run_dir`` (from an earlier bench into the same folder) is replaced.

    Raises:
        RuntimeError: if the worker process fails.
    """
    from bridgefleet.training.runner import train

    if run_dir.exists():
        shutil.rmtree(run_dir)  # a bench-owned run folder from an earlier invocation into the same --out
    run_dir.mkdir(parents=True)
    if isolate:
        write_json(run_dir / "bench_config.json", cfg.to_dict())
        proc = subprocess.run([sys.executable, "-m", "bridgefleet.bench.measure", "--worker", str(run_dir)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"bench run {cfg.preset} seed {cfg.seed} failed:\n{proc.stderr[-4000:]}")
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    else:
        _, summary = train(cfg, out=run_dir, progress=False)
    return _run_row(cfg, run_dir, summary)


def _worker(run_dir: str) -> int:
    from bridgefleet.config.training import TrainConfig
    from bridgefleet.training.runner import train

    path = Path(run_dir)
    cfg = TrainConfig.from_dict(json.loads((path / "bench_config.json").read_text(encoding="utf-8")), str(path))
    train(cfg, out=path, progress=False)
    return 0


# -- aggregation -------------------------------------------------------------------------------------------
def _censored_median(values: Sequence[Any]) -> float | None:
    """Median where a missing value (target not reached) counts as +∞; None if that median is infinite."""
    vals = [math.inf if _num(v) is None else float(v) for v in values]
    if not vals:
        return None
    m = statistics.median(vals)
    return None if math.isinf(m) else m


def _truthy(x: Any) -> bool:
    return x is True or str(x).lower() in ("true", "1", "yes")


def summarize(rows: Sequence[dict[str, Any]], baseline: str = "baseline") -> list[dict[str, Any]]:
    """One summary row per preset (first-appearance order) from ``bench.csv`` rows.

    Episodes and seconds to target are medians over seeds with "not reached" counted as +∞ (so the median
    is None when most seeds failed); the range (min/max) is over the seeds that reached it. Speed-ups are
    ratios of medians of ``baseline`` over the preset measured in the same invocation: in steady
    seconds per episode (falling back to whole-run seconds per episode), and in time to target. When the
    baseline did not reach the target, its time to target is at least its median wall time, so the
    time-to-target speed-up is a lower bound (``speedup_time_to_target_bound`` = ">=").
    """
    presets = list(dict.fromkeys(r["preset"] for r in rows))
    by = {p: [r for r in rows if r["preset"] == p] for p in presets}

    # Steady s/episode where every run has one (a run too short for a learning phase has none);
    # otherwise whole-run s/episode for every preset, so a ratio never mixes the two.
    steady_everywhere = all(_num(r.get("seconds_per_episode_steady")) is not None for r in rows)
    key = "seconds_per_episode_steady" if steady_everywhere else "seconds_per_episode"

    def spe(rs: Sequence[dict[str, Any]]) -> float | None:
        return _median(r.get(key) for r in rs)

    base = by.get(baseline)
    base_spe = spe(base) if base else None
    base_t2t = _censored_median([r["seconds_to_target"] for r in base]) if base else None
    base_wall = _median(r["wall_seconds"] for r in base) if base else None
    out = []
    for p in presets:
        rs = by[p]
        reached = [float(r["episodes_to_target"]) for r in rs if _truthy(r["reached"])]
        t2t = _censored_median([r["seconds_to_target"] if _truthy(r["reached"]) else None for r in rs])
        p_spe = spe(rs)
        sp_spe = base_spe / p_spe if base_spe and p_spe else None
        if t2t is not None and base_t2t is not None:
            sp_t2t, bound = base_t2t / t2t, "="
        elif t2t is not None and base is not None and base_wall is not None:
            sp_t2t, bound = base_wall / t2t, ">="
        else:
            sp_t2t, bound = None, ""
        plan = PLAN_TARGETS.get(p)
        out.append({
            "preset": p, "runs": len(rs), "reached": len(reached),
            "episodes_to_target_median": _censored_median(
                [r["episodes_to_target"] if _truthy(r["reached"]) else None for r in rs]),
            "episodes_to_target_min": min(reached) if reached else None,
            "episodes_to_target_max": max(reached) if reached else None,
            "seconds_to_target_median": t2t,
            "seconds_per_episode_median": _median(r["seconds_per_episode"] for r in rs),
            "seconds_per_episode_steady_median": _median(r.get("seconds_per_episode_steady") for r in rs),
            "updates_per_second_median": _median(r["updates_per_second"] for r in rs),
            "final_eval_return_median": _median(r["final_eval_return"] for r in rs),
            "speedup_seconds_per_episode": sp_spe, "speedup_time_to_target": sp_t2t,
            "speedup_time_to_target_bound": bound,
            "plan_label": plan[0] if plan else "", "plan_episodes": plan[1] if plan else None,
            "plan_minutes": plan[2] if plan else None, "plan_speedup": plan[3] if plan else None,
        })
    return out


# -- the bench --------------------------------------------------------------------------------------------
def run_bench(profile: str = "quick", seeds: int | None = None, presets: Sequence[str] | None = None,
              device: str = "auto", out: str | Path = "bench-out", tiny: bool = False,
              caps: dict[str, int] | None = None, isolate: bool = True, progress: bool = True,
              ray: str | None = None, fleet_model: str = "plan-2025") -> list[dict[str, Any]]:
    """Run the bench and write bench.csv, bench_summary.csv, bench.md and bench.png into ``out``.

    Args:
        profile: "quick" (4.4 min measured on 2 CPU cores, 1 seed) or "full" (3 seeds, higher caps, 34 min).
        seeds: number of seeds (0, 1, …), default from the profile.
        presets: preset names, default all of :data:`bridgefleet.config.presets.PRESETS`; ``baseline`` is needed
            for the speed-up columns.
        device: torch device ("auto", "cpu", "cuda").
        out: output folder; runs go to ``out/runs/<preset>-s<seed>``.
        tiny: tiny networks and 4-episode caps (CI smoke test, well under a minute).
        caps: episode caps overriding the profile's, keyed by preset name or "1env"/"vec".
        fleet_model: the named fleet model trained on (plan-2025: the plan's table was measured on it).
        isolate: run each training in a fresh process (default) rather than in this one.
        ray: run the matrix as Ray tasks, one core and one torch thread each ("local": this machine, else
            a cluster's host:port); the rows and files are the same.
        progress: show a tqdm bar over runs.

    Returns:
        The ``bench.csv`` rows (dicts with :data:`RUN_FIELDS`).

    Raises:
        ConfigError: unknown preset or profile.
    """
    from tqdm import tqdm

    from bridgefleet.config import ConfigError
    from bridgefleet.config.presets import PRESETS

    if profile not in PROFILES:
        raise ConfigError(f"unknown bench profile {profile!r}; known: {', '.join(PROFILES)}")
    # bench times learning to a target return episode by episode; a run fitted to a teacher has no episodes to cap
    trained = [name for name, p in PRESETS.items() if p.get("teacher") is None]
    names = list(presets) if presets else trained
    unknown = [p for p in names if p not in trained]
    if unknown:
        known = [p for p in unknown if p in PRESETS]
        why = (f" ({', '.join(known)} fitted to a teacher, with no episodes to time)" if known else "")
        raise ConfigError(f"preset(s) {unknown} not measured by bench{why}; bench measures: {', '.join(trained)}")
    n_seeds = seeds if seeds is not None else PROFILES[profile].seeds
    if n_seeds < 1:
        raise ConfigError(f"--seeds must be at least 1, got {n_seeds}")
    from bridgefleet.agents.learner import resolve_device

    try:  # an unusable device fails here, in one line, not inside every worker
        resolve_device(device)
    except ValueError as exc:  # its message names the option
        raise ConfigError(str(exc)) from None
    out = Path(out)
    if ray is not None:  # an unreachable cluster is refused before anything is written
        from bridgefleet.sweep import ray_run

        ray_run.connect(None if ray == "local" else ray, option="--ray")
    out.mkdir(parents=True, exist_ok=True)
    plan = [(p, s) for s in range(n_seeds) for p in names]  # interleaved: A B C … per seed
    cfgs = {(p, s): bench_config(p, s, profile, device, tiny, caps, fleet_model) for p, s in plan}
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    if ray is not None:
        rows = ray_run.bench_on_ray([cfgs[k] for k in plan], [out / "runs" / f"{p}-s{s}" for p, s in plan],
                                    functools.partial(run_one, isolate=False))
    bar = tqdm(plan if ray is None else [], unit="run", desc="bench", disable=not progress, dynamic_ncols=True)
    for p, s in bar:
        bar.set_postfix(preset=p, seed=s)
        rows.append(run_one(cfgs[(p, s)], out / "runs" / f"{p}-s{s}", isolate=isolate))
        _write_csv(out / "bench.csv", RUN_FIELDS, rows)  # partial results survive an interruption
    bar.close()
    summary = summarize(rows)
    _write_csv(out / "bench.csv", RUN_FIELDS, rows)
    _write_csv(out / "bench_summary.csv", SUMMARY_FIELDS, summary)
    meta = {"machine": machine_info(), "device": rows[0]["device"] if rows else device,
            "date": _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"), "profile": profile,
            "tiny": tiny, "fleet_model": fleet_model, "seeds": n_seeds,
            "caps": {p: cfgs[(p, 0)].episodes for p in names},
            "isolate": isolate if ray is None else f"Ray tasks ({ray}), one core and one torch thread each",
            "bench_seconds": time.perf_counter() - t0,
            "eval_episodes": cfgs[plan[0]].eval_episodes}
    write_markdown(out / "bench.md", summary, rows, meta)
    plot_bench(out / "bench.png", summary)
    return rows


def _parse_caps(text: str | None) -> dict[str, int] | None:
    if not text:
        return None
    from bridgefleet.config.presets import PRESETS
    from bridgefleet.typed_numbers import Refused, whole

    caps = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        if not value:
            raise ValueError(f"--caps: expected NAME=EPISODES items, got {item!r}")
        key = key.strip()
        if key not in (*PRESETS, "1env", "vec"):
            raise ValueError(f"--caps: unknown key {key!r} (presets: {', '.join(PRESETS)}; or 1env, vec)")
        try:
            caps[key] = whole(value, "", 1, "at least 1 episode")
        except Refused as exc:
            raise ValueError(f"--caps {key}={exc}") from None
    return caps


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``bench`` options to ``parser`` (a subcommand parser of the CLI)."""
    from bridgefleet.typed_numbers import whole_at_least

    parser.add_argument("--profile", choices=list(PROFILES), default="quick",
                        help="quick: 1 seed, low caps (4.4 min measured on 2 cores); full: 3 seeds, higher caps "
                        "(34 min) (default quick)")
    parser.add_argument("--seeds", type=whole_at_least(1, "at least 1 seed"),
                        help="number of seeds (default: quick 1, full 3)")
    parser.add_argument("--presets", help="comma-separated presets (default: all)")
    parser.add_argument("--device", default="auto", help="cpu, cuda or auto (default auto)")
    parser.add_argument("--out", default="bench-out", help="output folder (default bench-out)")
    parser.add_argument("--caps", help="episode caps overriding the profile's, e.g. '1env=60,vec=200,sarsa=2000' "
                        "(keys: preset names, 1env, vec)")
    parser.add_argument("--tiny", action="store_true",
                        help="tiny networks, 4-episode caps (a vector preset runs one step of all its fleets; "
                        "CI smoke test, ignores --caps)")
    parser.add_argument("--in-process", action="store_true", help="run all trainings in this process")
    parser.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                        help="run the matrix on Ray (this machine, or the cluster at ADDRESS; bridgefleet[ray])")
    from bridgefleet.config import FLEET_MODELS

    parser.add_argument("--fleet-model", choices=list(FLEET_MODELS), default="plan-2025",
                        help="fleet model the presets train on (default plan-2025: the model the plan's table was "
                        "measured on; docs/fleet-model.md)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def run_from_args(args: argparse.Namespace) -> int:
    """Run the bench from parsed :func:`add_arguments` options; prints bench.md. Returns exit status 0."""
    presets = None
    if args.presets:
        presets = [p.strip() for p in args.presets.split(",")]
        if not all(presets):
            raise ValueError(f"--presets {args.presets!r}: an empty entry; give preset names separated by commas")
    out = check_writable_folder(args.out, "--out")  # before minutes of training
    run_bench(profile=args.profile, seeds=args.seeds, presets=presets, device=args.device, out=out,
              tiny=args.tiny, caps=_parse_caps(args.caps), isolate=not args.in_process, progress=not args.quiet,
              ray=args.ray, fleet_model=args.fleet_model)
    print((out / "bench.md").read_text(encoding="utf-8"))
    print(f"written: {out / 'bench.csv'}, {out / 'bench_summary.csv'}, {out / 'bench.md'}, {out / 'bench.png'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m bridgefleet.bench.measure`` entry point (also runs a single worker with ``--worker DIR``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        return _worker(argv[1])
    parser = add_arguments(argparse.ArgumentParser(prog="bridgefleet bench", description=__doc__.splitlines()[0]))
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
