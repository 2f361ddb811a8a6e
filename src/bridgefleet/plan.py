"""Maintenance plan: the trained greedy policy run on the fleet, averaged over deterioration samples."""

from __future__ import annotations

import csv
import os
import warnings
from pathlib import Path

import numpy as np

from bridgefleet.fleet.model import ACTION_NAMES, GOOD_RATING, POOR_BELOW
from bridgefleet.fleet.simulator import FleetSimulator, resolve_fleet
from bridgefleet.train import load_policy


def make_plan(run_dir: str | Path, out: str | Path | None, years: int = 30, inventory: str | None = None,
              samples: int = 32, seed: int = 0, device: str = "auto", max_urban: int | None = None) -> Path:
    """Write plan.csv (one row per bridge and year) and plan.png; print a yearly summary.

    ``out`` defaults to ``run_dir/plan.csv``; a folder gets ``plan.csv`` inside it.

    The fleet (the run's, or ``inventory``) is simulated ``samples`` times with seeds seed, seed+1, …
    (same fleet, different deterioration draws for a fixed or inventory fleet). Each row gives the action
    most often chosen for that bridge and year, its mean cost (USD) and the mean expected condition
    rating at the end of the year.

    Raises:
        FileNotFoundError: the run directory has no trained agents.
        ValueError: the inventory's urban count does not match the trained urban network.
    """
    if samples < 1:
        raise ValueError(f"--samples {samples}: must be at least 1")
    if years < 1:
        raise ValueError(f"--years {years}: must be at least 1")
    out = Path(out) if out is not None else Path(run_dir) / "plan.csv"
    if out.is_dir():
        out = out / "plan.csv"
    cfg, policy = load_policy(run_dir, device)
    if years > cfg.fleet.horizon_years:
        warnings.warn(f"--years {years} goes beyond the {cfg.fleet.horizon_years}-year horizon the policy was "
                      f"trained on: its decisions after year {cfg.fleet.horizon_years} are extrapolated",
                      stacklevel=2)
    fleet_cfg = cfg.fleet.replace(horizon_years=years)
    if inventory is not None:
        fleet_cfg = fleet_cfg.replace(inventory=inventory)
    if max_urban is not None:
        fleet_cfg = fleet_cfg.replace(max_urban=max_urban)
    elif fleet_cfg.inventory is None:
        fleet_cfg = fleet_cfg.replace(fixed_fleet=True, fleet_seed=seed)
    fleet_cfg, fleet = resolve_fleet(fleet_cfg)
    trained = cfg.fleet.n_urban if cfg.fleet.inventory is None else resolve_fleet(cfg.fleet)[0].n_urban
    if cfg.agent == "fleet" and fleet_cfg.n_urban != trained:
        raise ValueError(f"the plan's fleet has {fleet_cfg.n_urban} urban bridges under per-bridge control, the "
                         f"trained urban agent expects {trained} (use --max-urban {trained} when training)")
    sim = FleetSimulator(fleet_cfg, samples, fleet)
    sim.reset(None, [seed + i for i in range(samples)])
    rng = np.random.default_rng(seed)
    b = sim.n_bridges
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    yearly = []
    with tmp.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["year", "bridge_id", "cluster", "action", "action_share", "cost_usd", "expected_condition"])
        for year in range(1, years + 1):
            decision = policy(sim, rng)  # (urban actions, rural strategy), or requests of every bridge
            res = sim.step(*decision) if isinstance(decision, tuple) else sim.step_requests(decision)
            counts = np.stack([(res.actions == a).sum(0) for a in range(len(ACTION_NAMES))])  # (5, B)
            mode = counts.argmax(0)
            cost = np.where(res.actions > 0, sim.unit_costs[res.actions] * sim.profile.deck_area
                            * sim.profile.cost_factor, 0.0).mean(0)
            cond = sim.state.condition.mean(0)
            for j in range(b):  # output rows, not simulation
                w.writerow([year, sim.profile.bridge_id[j], sim.cluster[j], ACTION_NAMES[mode[j]],
                            f"{counts[mode[j], j] / samples:.2f}", f"{cost[j]:.0f}", f"{cond[j]:.2f}"])
            c = sim.state.condition
            yearly.append((year, (c >= GOOD_RATING).mean(), ((c >= POOR_BELOW) & (c < GOOD_RATING)).mean(),
                           (c < POOR_BELOW).mean(), res.cost.sum(1).mean(), sim.annual_budget.sum()))
    os.replace(tmp, out)
    print(f"{'year':>4} {'good':>6} {'fair':>6} {'poor':>6} {'spend USD':>12} {'budget USD':>12}")
    for y, g, fa, p, s, bud in yearly:
        print(f"{y:>4} {g:>6.1%} {fa:>6.1%} {p:>6.1%} {s:>12,.0f} {bud:>12,.0f}")
    png = _plot(yearly, out.with_suffix(".png"))
    print(f"plan: {out} ({years} years × {b} bridges), figure: {png}")
    return out


def _plot(yearly: list[tuple], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y, g, f, p, s, b = (np.array(v) for v in zip(*yearly, strict=True))
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    a1.stackplot(y, g, f, p, labels=["good (≥7)", "fair (5–6)", "poor (≤4)"],
                 colors=["tab:green", "gold", "tab:red"])
    a1.set_ylabel("share of bridges")
    a1.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    a2.bar(y, s / 1e3, color="tab:blue", label="mean annual spend")
    a2.plot(y, b / 1e3, "k--", label="annual budget")
    a2.set_ylabel("thousand USD")
    a2.set_xlabel("year")
    a2.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
