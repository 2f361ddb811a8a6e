"""What ``bridgefleet bench`` writes: bench.csv, bench.md (the plan's Benchmark Targets table measured) and
bench.png; the machine it ran on."""

from __future__ import annotations

import math
import os
import platform
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bridgefleet.bench.results_page import commit
from bridgefleet.outputs import SafeDictWriter, atomic_write, save_figure, write_text


def _num(x: Any) -> float | None:
    if x is None or x == "":
        return None
    v = float(x)
    return None if math.isnan(v) else v


def _median(values: Iterable[Any]) -> float | None:
    vals = [v for v in (_num(x) for x in values) if v is not None]
    return statistics.median(vals) if vals else None



# -- writing ---------------------------------------------------------------------------------------------
def _fmt(x: Any, spec: str = ".3g") -> str:
    v = _num(x) if not isinstance(x, str) else x
    if v is None:
        return "—"
    return v if isinstance(v, str) else format(v, spec)


def machine_info() -> dict[str, str]:
    """CPU model (from /proc/cpuinfo where available), platform, Python and torch versions, threads."""
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return {"cpu": cpu, "cores": str(os.cpu_count()), "platform": platform.platform(),
            "python": platform.python_version(), "torch": torch.__version__, "threads": str(torch.get_num_threads()),
            "gpu": gpu}


def _write_csv(path: Path, fields: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    def table(f) -> None:
        w = SafeDictWriter(f, fieldnames=list(fields), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})

    atomic_write(path, table)


def markdown_table(summary: Sequence[dict[str, Any]]) -> str:
    """The bench table in Markdown: measured columns, then the plan's figures for the row."""
    head = ("| preset | reached | episodes to target, median (range) | s to target, median | s/episode "
            "(run) | s/episode (steady) | updates/s | final eval return | speed-up s/ep | speed-up time to "
            "target | plan: episodes | plan: time | plan: speed-up |")
    lines = [head, "|" + "---|" * head.count(" |")]
    for s in summary:
        ett = s["episodes_to_target_median"]
        rng = (f" ({_fmt(s['episodes_to_target_min'], '.0f')}–{_fmt(s['episodes_to_target_max'], '.0f')})"
               if s["reached"] else "")
        ett_txt = (_fmt(ett, ".0f") if ett is not None else "not reached") + rng
        t2t = s["speedup_time_to_target"]
        bound = "≥ " if s["speedup_time_to_target_bound"] == ">=" else ""
        plan_time = f"{s['plan_minutes']:.0f} min" if s["plan_minutes"] is not None else "—"
        plan_sp = f"{s['plan_speedup']:g}×" if s["plan_speedup"] is not None else "—"
        sp = s["speedup_seconds_per_episode"]
        lines.append(
            f"| {s['preset']} | {s['reached']}/{s['runs']} | {ett_txt} | {_fmt(s['seconds_to_target_median'], '.1f')} "
            f"| {_fmt(s['seconds_per_episode_median'], '.3f')} | {_fmt(s['seconds_per_episode_steady_median'], '.3f')} "
            f"| {_fmt(s['updates_per_second_median'], '.1f')} | {_fmt(s['final_eval_return_median'], '.0f')} "
            f"| {_fmt(sp, '.2f') + '×' if sp is not None else '—'} "
            f"| {bound + _fmt(t2t, '.2f') + '×' if t2t is not None else '—'} "
            f"| {_fmt(s['plan_episodes'], '.0f')} | {plan_time} | {plan_sp} |")
    return "\n".join(lines)


def write_markdown(path: Path, summary: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]],
                   meta: dict[str, Any]) -> None:
    """bench.md: header (machine, torch, device, threads, date, profile, seeds, caps, order) and the table."""
    m = meta["machine"]
    caps = ", ".join(f"{p} {c}" for p, c in meta["caps"].items())
    target = _median(r["target_return"] for r in rows)
    text = [
        "# bridgefleet bench",
        "",
        f"- machine: {m['cpu']} ({m['cores']} cores), {m['platform']}, GPU: {m['gpu']}",
        f"- torch {m['torch']}, Python {m['python']}, device {meta['device']}, torch threads {m['threads']}",
        f"- date: {meta['date']}; commit: {commit()}; profile: {meta['profile']}{' (tiny)' if meta['tiny'] else ''}; "
        f"seeds: {meta['seeds']}; episode caps: {caps}; fleet model: {meta['fleet_model']}",
        f"- order: interleaved (every preset for seed 0, then for seed 1, …), "
        f"{_runner(meta['isolate'])}; "
        f"bench wall time {meta['bench_seconds'] / 60:.1f} min",
        f"- target return: {_fmt(target, '.1f')} (best heuristic, {meta['eval_episodes']} evaluation fleets, "
        "discounted); every run "
        "stops at the first evaluation that reaches it",
        "- precision and threads (amp: auto, threads: auto; docs/benchmarks.md, \"Precision and threads\"): "
        + "; ".join(sorted({f"{r['preset']} {r.get('amp')}, {r.get('threads')} threads ({r.get('hardware_reason')})"
                            for r in rows})),
        "",
        markdown_table(summary),
        "",
        "Episodes to target: median over seeds with \"not reached\" counted as infinite (range over the seeds "
        "that reached it); s/episode (run): wall seconds / episodes of the whole run (including start-up, "
        "evaluations and torch.compile); s/episode (steady): over the second half of the learning phase "
        "(after learning_starts). Speed-ups are ratios of medians, baseline ÷ preset, from this invocation: "
        "\"speed-up s/ep\" uses the steady s/episode (the whole-run one for every preset when a run had no "
        "learning phase to measure), \"speed-up time to target\" the seconds to target (≥: "
        "baseline never reached the target, so its wall time is a lower bound on its time to target). "
        "Plan columns: the acceleration plan's Benchmark Targets table (2000 episodes, 60 min for the "
        "baseline).",
        "",
    ]
    write_text(path, "\n".join(text))


def _runner(isolate: bool | str) -> str:
    if isinstance(isolate, str):
        return isolate
    return "each run in a fresh process" if isolate else "all runs in one process"


def plot_bench(path: Path, summary: Sequence[dict[str, Any]]) -> Path:
    """bench.png: speed-up over baseline (steady s/episode; plan's figure beside it) and episodes to target."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = [s["preset"] for s in summary]
    x = np.arange(len(names))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    meas = [s["speedup_seconds_per_episode"] or 0.0 for s in summary]
    plan = [s["plan_speedup"] or 0.0 for s in summary]
    a1.bar(x - 0.2, meas, 0.4, label="measured (steady s/episode)", color="tab:blue")
    a1.bar(x + 0.2, plan, 0.4, label="plan", color="0.7")
    a1.axhline(1.0, color="k", lw=0.8)
    a1.set_xticks(x, names, rotation=30, ha="right")
    a1.set_ylabel("speed-up over baseline (×)")
    a1.set_title("speed per episode")
    a1.legend()
    ett = [s["episodes_to_target_median"] or 0.0 for s in summary]
    caps = [0.0 if s["episodes_to_target_median"] is not None else 1.0 for s in summary]
    a2.bar(x - 0.2, ett, 0.4, label="measured (median)", color="tab:green")
    a2.bar(x + 0.2, [s["plan_episodes"] or 0.0 for s in summary], 0.4, label="plan", color="0.7")
    for i, c in enumerate(caps):
        if c:
            a2.text(x[i] - 0.2, 0, "not\nreached", ha="center", va="bottom", fontsize=7)
    a2.set_xticks(x, names, rotation=30, ha="right")
    a2.set_ylabel("episodes to target")
    a2.set_title("episodes to target")
    a2.legend()
    fig.tight_layout()
    save_figure(fig, path, dpi=100)
    return path


