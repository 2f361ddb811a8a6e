"""The nation state by state: several inventories (one NBI file per state), each its own problem.

Each file gets its own agencies and sized budgets (docs/fleet-model.md), its bound and its ``lagrangian``
planner; the table has a row per file and a total. With a Ray cluster the files run as Ray tasks, one core each.
"""

from __future__ import annotations

import glob
import time
from dataclasses import asdict, dataclass

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_policy
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.sim.model import band_shares
from bridgefleet.sim.simulator import FleetSimulator

GLOB_CHARS = "*?["


@dataclass
class FileRow:
    """One inventory file's problem.

    Attributes:
        file: the file. bridges: bridges modelled. deck_m2: the deck area FHWA's measures count, m² (NHS where
        the file codes it). good, poor: shares of that deck area good / poor today, 0–1. budget_usd: the sized
        annual budget, USD a year. bound: the upper bound on the expected discounted return, reward units.
        planner: the planner's mean discounted return over the episodes. spend_usd: its mean agency spend,
        USD a year. poor_y10: its mean share of counted deck area poor at the end of year 10 (or the last).
        seconds: wall time of the file's bound and planner, s.
    """

    file: str
    bridges: int
    deck_m2: float
    good: float
    poor: float
    budget_usd: float
    bound: float
    planner: float
    spend_usd: float
    poor_y10: float
    seconds: float = 0.0


def inventory_files(pattern: str) -> list[str]:
    """The files a pattern such as ``'DIR/*.txt'`` names, sorted.

    Raises:
        ValueError: no file matches.
    """
    files = sorted(glob.glob(pattern))
    if not files:
        raise ValueError(f"--inventory {pattern}: no file matches")
    return files


def file_row(cfg: FleetConfig, fleet, episodes: int, seed: int, max_poor: float | None = None,
             **planner: float) -> FileRow:
    """The bound and the planner on one inventory, over ``episodes`` deterioration samples: ``cfg`` and ``fleet``
    as :func:`bridgefleet.inventory.fleet.resolve_fleet` returned them for it (:func:`run_files` reads every file
    before solving any)."""
    start = time.perf_counter()
    sim = FleetSimulator(cfg, episodes, fleet)
    sim.reset(None, [seed + i for i in range(episodes)])
    weight = sim.fhwa_weight()[0]
    today = band_shares(sim.state.condition[0], weight)
    if cfg.component_model is not None:  # the exact bound and planner (no grid: ``step`` does not apply)
        from bridgefleet.planning.exact_planner import ExactPlanner

        pl = ExactPlanner(max_iter=int(planner.get("max_iter") or 200), max_poor_deck_area=max_poor)
    else:
        pl = LagrangianPlanner(max_poor_deck_area=max_poor, **planner)
    res = evaluate_policy(pl, cfg, episodes, seed, "lagrangian", sim)  # from the same year-0 state
    year = min(10, cfg.horizon_years) - 1
    return FileRow(str(cfg.inventory), sim.n_bridges, float(weight.sum()), float(today[0]), float(today[2]),
                   float(sum(cfg.budgets_usd)), pl.bound.mean, res.mean_return, float(res.agency_usd.mean()),
                   float(res.deck_by_year[:, year, 2].mean()), time.perf_counter() - start)


def run_files(cfg: FleetConfig, pattern: str, episodes: int, seed: int, max_poor: float | None = None,
              ray: str | None = None, progress: bool = True, **planner: float) -> list[FileRow]:
    """:func:`file_row` of every file ``pattern`` names (``cfg`` for everything but the inventory), in this
    process with a progress bar, or as Ray tasks on the cluster at ``ray`` ("local": Ray on this machine).

    Raises:
        ValueError: no file matches. InventoryError (a ValueError): a file that cannot be read as an inventory or
            a fleet, before any file is solved.
    """
    if cfg.component_model is not None and planner.get("step") is not None:
        raise ValueError("--grid-step: the component model's bound is exact on its finite states (no grid); leave it "
                         "out")
    files = inventory_files(pattern)
    # every file read and checked before any is solved: a bad last file wastes no work
    resolved = [resolve_fleet(cfg.replace(inventory=f)) for f in files]
    if ray is not None:
        from bridgefleet.cluster import one_core_tasks

        ray_mod, task = one_core_tasks(ray)
        return ray_mod.get([task.remote(file_row, c, fl, episodes, seed, max_poor, **planner) for c, fl in resolved])
    if progress:
        from tqdm import tqdm

        resolved = tqdm(resolved, desc="inventories", unit="file", leave=False)
    return [file_row(c, fl, episodes, seed, max_poor, **planner) for c, fl in resolved]


def total(rows: list[FileRow]) -> FileRow:
    """The sum over files (shares weighted by counted deck area)."""
    deck = np.array([r.deck_m2 for r in rows])
    w = deck / max(deck.sum(), 1e-300)

    def mean(f: str) -> float:
        return float(sum(wi * getattr(r, f) for wi, r in zip(w, rows, strict=True)))

    return FileRow("total", sum(r.bridges for r in rows), float(deck.sum()), mean("good"), mean("poor"),
                   sum(r.budget_usd for r in rows), sum(r.bound for r in rows), sum(r.planner for r in rows),
                   sum(r.spend_usd for r in rows), mean("poor_y10"), sum(r.seconds for r in rows))


def markdown(rows: list[FileRow]) -> str:
    """The table: a row per file and the total."""
    lines = ["| file | bridges | counted deck area m² | good today | poor today | sized budget USD/yr | bound | "
             "planner | planner spend USD/yr | planner poor, year 10 | wall s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in [*rows, total(rows)]:
        name = r.file.replace("|", "\\|")
        lines.append(f"| {name} | {r.bridges:,} | {r.deck_m2:,.0f} | {r.good:.1%} | {r.poor:.1%} | "
                     f"{r.budget_usd:,.0f} | {r.bound:,.2f} | {r.planner:,.2f} | {r.spend_usd:,.0f} | "
                     f"{r.poor_y10:.1%} | {r.seconds:,.0f} |")
    return "\n".join(lines)


def to_json(rows: list[FileRow], settings: dict | None = None) -> dict:
    """The table as JSON: ``settings`` (episodes, seed, the rule, units), a row per file and the total."""
    return {"settings": settings or {}, "files": [asdict(r) for r in rows], "total": asdict(total(rows))}
