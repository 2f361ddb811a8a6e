"""sweep.csv (one row per trial, read from the trials' own run folders) and sweep.md (configurations ranked
by their final evaluation return, with 95 % CIs over seeds)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import yaml

from bridgefleet.outputs import SafeDictWriter, atomic_write, write_text
from bridgefleet.stats import t95

RUN_FIELDS = ("seed", "episodes", "finished", "final_eval_return", "best_eval_return", "seconds",
              "episodes_to_target", "seconds_to_target", "trial")


def trial_row(run_dir: Path, fields: list[str]) -> dict[str, Any] | None:
    """A trial's row from its run folder: summary.json when it finished, else its last evaluations (a trial
    ASHA stopped early). None for a trial that never evaluated."""
    if not (run_dir / "config.yaml").exists():
        return None
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    evals = []
    if (run_dir / "metrics.csv").exists():
        with (run_dir / "metrics.csv").open(newline="", encoding="utf-8", errors="replace") as f:
            evals = [r for r in csv.DictReader(f) if r.get("kind") == "eval"]
    if (run_dir / "summary.json").exists():
        s = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        best = s.get("best_eval_return", max((float(r["eval_return"]) for r in evals), default=None))
        run = {"episodes": s["episodes"], "finished": True, "final_eval_return": s["final_eval_return"],
               "best_eval_return": best, "seconds": s["wall_seconds"],
               "episodes_to_target": s.get("episodes_to_target"), "seconds_to_target": s.get("seconds_to_target")}
    elif evals:
        reached = [r for r in evals if float(r["eval_return"]) >= float(r["target_return"])]
        run = {"episodes": int(evals[-1]["episode"]), "finished": False,
               "final_eval_return": float(evals[-1]["eval_return"]),
               "best_eval_return": max(float(r["eval_return"]) for r in evals),
               "seconds": float(evals[-1]["wall_seconds"]),
               "episodes_to_target": int(reached[0]["episode"]) if reached else None,
               "seconds_to_target": float(reached[0]["wall_seconds"]) if reached else None}
    else:
        return None
    return {**{k: _plain(cfg.get(k)) for k in fields}, "seed": cfg.get("seed"), **run, "trial": run_dir.name}


def _plain(v: Any) -> Any:
    return "-".join(map(str, v)) if isinstance(v, list | tuple) else v


def write_results(out: Path, fields: list[str]) -> list[dict[str, Any]]:
    """Write out/sweep.csv and out/sweep.md from out/trials/*; returns the rows."""
    rows = [r for d in sorted((out / "trials").glob("*")) if d.is_dir() and (r := trial_row(d, fields))]
    names = [*fields, *RUN_FIELDS]
    def table(f) -> None:
        w = SafeDictWriter(f, names)
        w.writeheader()
        w.writerows(rows)

    atomic_write(out / "sweep.csv", table)
    write_text(out / "sweep.md", markdown(rows, fields))
    return rows


def ranked(rows: list[dict[str, Any]], fields: list[str]) -> list[dict[str, Any]]:
    """Configurations (the searched fields' values) with mean final evaluation return ± 95 % CI over seeds."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in fields), []).append(r)
    out = []
    for key, rs in groups.items():
        x = [float(r["final_eval_return"]) for r in rs]
        n = len(x)
        mean = sum(x) / n
        sd = math.sqrt(sum((v - mean) ** 2 for v in x) / (n - 1)) if n > 1 else None
        out.append({**dict(zip(fields, key, strict=True)), "seeds": n, "mean": mean,
                    "ci95": t95(n) * sd / math.sqrt(n) if sd is not None else None,
                    "finished": sum(bool(r["finished"]) for r in rs),
                    "seconds": sum(float(r["seconds"]) for r in rs) / n})
    return sorted(out, key=lambda g: -g["mean"])


def markdown(rows: list[dict[str, Any]], fields: list[str]) -> str:
    groups = ranked(rows, fields)
    head = "| rank | " + " | ".join(fields) + " | seeds | finished | final eval return | 95 % CI | seconds |"
    lines = ["# Sweep results", "",
             f"{len(rows)} trial(s), {len(groups)} configuration(s), best first (final evaluation return on the "
             "validation fleets; a trial stopped early counts with its last evaluation).", "", head,
             "|" + "---|" * (len(fields) + 6)]
    for i, g in enumerate(groups, 1):
        ci = f"± {g['ci95']:.2f}" if g["ci95"] is not None else "–"
        lines.append(f"| {i} | " + " | ".join(str(g[k]) for k in fields)
                     + f" | {g['seeds']} | {g['finished']} | {g['mean']:.2f} | {ci} | {g['seconds']:.0f} |")
    return "\n".join(lines) + "\n"
