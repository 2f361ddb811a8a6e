"""What the report shows, gathered from a run folder: the fleet today, the policies compared on the same
evaluation fleets, the plan, the training curve and the run's settings. Numbers only; no HTML here."""

from __future__ import annotations

import csv
import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.config.seeds import TEST_SEED
from bridgefleet.config.training import TrainConfig
from bridgefleet.evaluation.evaluate import EvalResult, best_heuristic, evaluate_with_bound
from bridgefleet.evaluation.work_plan import Plan, compute_plan, policy_plan
from bridgefleet.inventory.fleet import one_fleet
from bridgefleet.runs.load import load_policy
from bridgefleet.sim.heuristics import HEURISTICS
from bridgefleet.sim.model import ACTION_NAMES, GOOD_RATING, POOR_BELOW
from bridgefleet.sim.simulator import FleetSimulator

TRAINED = "trained policy"


@dataclass
class FleetToday:
    """The fleet at the start of the plan (one draw for a synthetic fleet).

    Attributes:
        source: inventory path, or a description of the synthetic fleet; ``source_date``: the inventory year
            and the file's modification date ("" for a synthetic fleet).
        agencies: rows {agency, bridges, good, fair, poor (counts), deck_area_m2} per agency and in total.
        quartiles: rows {what, min, q25, median, q75, max} for deck area (m²) and AADT (vehicles/day).
        bridge_id, condition, deck_area, latitude, longitude: (B,) in the plan's column order.
    """

    source: str
    source_date: str
    agencies: list[dict[str, Any]]
    quartiles: list[dict[str, Any]]
    bridge_id: np.ndarray
    condition: np.ndarray
    deck_area: np.ndarray
    latitude: np.ndarray
    longitude: np.ndarray

    @property
    def source_name(self) -> str:
        """Short name of the fleet for the page title: the inventory file's name, or "synthetic fleet"."""
        return "synthetic fleet" if self.source.startswith("synthetic") else Path(self.source.split(" (")[0]).name


@dataclass
class ReportData:
    run_dir: Path
    fleet: FleetToday
    results: list[EvalResult]
    bound: tuple[float, float] | None
    plan: Plan
    episodes: int
    seed: int
    curve: list[tuple[int, float, float, float]]  # (episode, seconds, eval return, target)
    settings: dict[str, Any]
    sentence: str = ""
    notes: list[str] = field(default_factory=list)
    cost_lambda: float = 1e-5  # reward units per USD (1/λ USD a unit)


def gather(run_dir: Path, inventory: str | None = None, episodes: int = 100, seed: int = TEST_SEED,
           samples: int = 16, bound: bool = True, progress: bool = False, max_urban: int | None = None,
           plan_policy: str | None = None, mapping: str | None = None) -> ReportData:
    """Evaluate the run's final policy beside every heuristic (and the planner and bound) and plan with it.

    Raises:
        FileNotFoundError: the run has no final.pt. ValueError: the inventory does not match the run's fleet.
    """
    if not (run_dir / "config.yaml").is_file():
        raise FileNotFoundError(f"{run_dir}: not a bridgefleet run directory (no config.yaml)")
    if not (run_dir / "final.pt").is_file():
        raise FileNotFoundError(f"{run_dir}: no final.pt (training has not finished): finish it with "
                                f"bridgefleet train --resume {run_dir}")
    cfg, policy = load_policy(run_dir, "cpu")
    fleet_cfg = cfg.fleet.with_inventory(inventory, mapping)
    if max_urban is not None:
        fleet_cfg = fleet_cfg.replace(max_urban=max_urban)
    # checks the match of the inventory and the run
    plan = compute_plan(run_dir, fleet_cfg.horizon_years, inventory, samples, 0, "cpu", max_urban, mapping,
                        loaded=(cfg, policy))
    if plan_policy is not None:  # the plan of the planner (or a rule of thumb) on the same fleet, instead
        plan = policy_plan(fleet_cfg, plan_policy, fleet_cfg.horizon_years, samples, 0)
    fleet = fleet_today(fleet_cfg, plan)
    results, bnd = evaluate_with_bound(fleet_cfg, list(HEURISTICS), episodes, seed, {TRAINED: policy},
                                       planner=bound, progress=progress)
    data = ReportData(run_dir, fleet, results, bnd, plan, episodes, seed, training_curve(run_dir),
                      settings(run_dir, cfg))
    data.sentence = plain_words(results, len(plan.bridge_id), fleet_cfg.cost_lambda)
    data.cost_lambda = fleet_cfg.cost_lambda
    return data


def fleet_today(cfg: FleetConfig, plan: Plan) -> FleetToday:
    """Condition, size and traffic of the fleet the plan starts from (seed 0 draw for a synthetic fleet)."""
    rcfg, fleet = one_fleet(cfg, 0)
    sim = FleetSimulator(rcfg, 1, fleet)
    sim.reset(None, [0])
    cond = np.asarray(sim.state.condition[0], dtype=float)
    area = np.broadcast_to(np.asarray(sim.profile.deck_area, dtype=float), (1, len(cond)))[0]  # (B,) or (E, B)
    aadt = np.broadcast_to(np.asarray(sim.profile.aadt, dtype=float), (1, len(cond)))[0]
    urban = plan.urban
    rows = []
    for name, mask in (("urban", urban), ("rural", ~urban), ("all", np.ones_like(urban))):
        c = cond[mask]
        n = max(len(c), 1)
        good, poor = int((c >= GOOD_RATING).sum()), int((c < POOR_BELOW).sum())
        rows.append({"agency": name, "bridges": int(mask.sum()), "good": good, "fair": len(c) - good - poor,
                     "poor": poor, "good_pct": 100 * good / n, "fair_pct": 100 * (len(c) - good - poor) / n,
                     "poor_pct": 100 * poor / n, "deck_area_m2": float(area[mask].sum())})
    quart = [{"what": what, **dict(zip(("min", "q25", "median", "q75", "max"),
                                       np.percentile(v, [0, 25, 50, 75, 100]).tolist(), strict=True))}
             for what, v in (("deck area, m²", area), ("traffic (AADT), vehicles/day", aadt))]
    lat = np.full(len(cond), np.nan)
    lon = np.full(len(cond), np.nan)
    if cfg.inventory:
        from bridgefleet.inventory.load import load_inventory

        inv = load_inventory(cfg.inventory, mapping=cfg.inventory_mapping)
        where = {b: i for i, b in enumerate(inv.bridge_id)}
        idx = np.array([where.get(b, -1) for b in plan.bridge_id])
        ok = idx >= 0
        lat[ok], lon[ok] = inv.latitude[idx[ok]], inv.longitude[idx[ok]]
        path = Path(inv.source)
        year = f"inventory year {inv.year}" if inv.year is not None else "inventory year not given"
        bundled = Path(__file__).resolve().parents[1] / "data"
        if path.resolve().parent == bundled:  # its file date is the install's, not the data's
            source, date = f"{cfg.inventory} (FHWA NBI file {path.name}, bundled)", year
        else:
            stamp = datetime.date.fromtimestamp(path.stat().st_mtime).isoformat() if path.exists() else ""
            source, date = str(inv.source), year + (f"; file dated {stamp}" if stamp else "")
    else:
        source = (f"synthetic fleet ({rcfg.n_urban} urban + {rcfg.n_rural} rural bridges, "
                  f"bridgefleet's default model; draw of seed 0)")
        date = ""
    return FleetToday(source, date, rows, quart, plan.bridge_id, cond, area.copy(), lat, lon)


def training_curve(run_dir: Path) -> list[tuple[int, float, float, float]]:
    """Evaluation rows of metrics.csv: (episode, seconds, mean evaluation return, target return)."""
    path = run_dir / "metrics.csv"
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        return [(int(r["episode"]), float(r["wall_seconds"]), float(r["eval_return"]), float(r["target_return"]))
                for r in csv.DictReader(f) if r.get("kind") == "eval"]


def settings(run_dir: Path, cfg: TrainConfig) -> dict[str, Any]:
    """Run settings for the page: preset, agent, how it learned and at which budgets, episodes, seconds, machine,
    torch, precision, threads."""
    s: dict[str, Any] = {}
    if (run_dir / "summary.json").exists():
        s = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    if cfg.teacher is not None:
        how = (f"fitted to the {cfg.teacher} planner's benefit of each action (imitation with DAgger rounds, Ross "
               "et al. 2011), not by reinforcement learning")
    else:
        how = "reinforcement learning (" + ("SARSA targets)" if cfg.agent == "bridge" else "DQN)")
    lo, hi = cfg.trained_budget_scales
    return {"preset": cfg.preset, "agent": cfg.agent, "how it learned": how,
            "budgets learned at": f"{lo:g} to {hi:g} × the sized budget" if lo < hi else f"{lo:g} × the sized budget",
            "episodes": s.get("episodes"),
            "training seconds": round(s["wall_seconds"], 1) if "wall_seconds" in s else None,
            "machine": s.get("machine"), "torch": s.get("torch_version"), "device": s.get("device"),
            "precision": s.get("amp"), "threads": s.get("threads"), "seed": cfg.seed,
            "training target": s.get("target_policy"),
            "training fleet": cfg.fleet.inventory or "synthetic, bridgefleet's default model",
            "run folder": str(run_dir.resolve())}


def plain_words(results: list[EvalResult], n_bridges: int, cost_lambda: float) -> str:
    """One sentence comparing the trained policy with the best heuristic at year 10 (or the last year): FHWA's
    share of deck area poor first (23 CFR 490.411's measure; at year 10 and in each policy's worst year, so a
    policy that lets the fleet slide after year 10 does not read as the better one), then bridges poor by count
    (which can go the other way when the poor bridges are small ones), spend, and the return difference in
    cost-equivalent USD (1/λ a unit)."""
    trained = next(r for r in results if r.policy == TRAINED)
    best = best_heuristic([r for r in results if r.policy in HEURISTICS])
    year = min(10, len(trained.share_poor_by_year))
    diff = (best.share_poor_by_year[year - 1] - trained.share_poor_by_year[year - 1]) * n_bridges
    spend = trained.mean_annual_cost_usd / max(best.mean_annual_cost_usd, 1.0) - 1.0
    usd = (trained.mean_return - best.mean_return) / cost_lambda
    deck_t, deck_b = (r.deck_by_year[:, year - 1, 2].mean() for r in (trained, best))
    (worst_t, when_t), (worst_b, when_b) = ((b["worst_year_poor"], b["worst_year"])
                                            for b in (r.breaches() for r in (trained, best)))
    spends = ("as much a year as the rule of thumb" if abs(spend) < 0.005 else
              f"{abs(spend):.0%} {'more' if spend >= 0 else 'less'} a year than the rule of thumb (each within the "
              "budgets)")
    count = "as many bridges poor" if abs(diff) < 0.05 else f"{abs(diff):.1f} {'fewer' if diff > 0 else 'more'} " \
        "bridges poor"
    if (diff < -0.05 and deck_t < deck_b) or (diff > 0.05 and deck_t > deck_b):
        count += f" ({'smaller' if diff < 0 else 'larger'} ones)"
    return (f"Averaged over the {len(trained.returns)} evaluation fleets: at year {year} the trained policy leaves "
            f"{deck_t:.1%} of deck area poor against {deck_b:.1%} for "
            f"today's best rule of thumb ({best.policy}) under the same annual budgets, and {worst_t:.1%} (year "
            f"{when_t}) against {worst_b:.1%} (year {when_b}) in each one's worst year (FHWA's limit is 10 %), "
            f"with {count}; it spends {spends} and is worth USD {abs(usd):,.0f} of cost-equivalent "
            f"{'more' if usd >= 0 else 'less'} than the rule of thumb over the horizon (present value: condition, "
            f"traffic and cost, at USD {1 / cost_lambda:,.0f} a return unit).")


def plan_rows(plan: Plan, fleet: FleetToday) -> list[list[Any]]:
    """Every bridge × year: [year, structure number, agency, action, cost USD, expected rating, share]."""
    agency = np.where(plan.urban, "urban", "rural")
    rows = []
    for y in range(plan.years):
        for j in range(len(plan.bridge_id)):  # output rows, not simulation
            rows.append([y + 1, str(plan.bridge_id[j]), str(agency[j]), ACTION_NAMES[plan.action[y, j]],
                         round(float(plan.cost_usd[y, j])), round(float(plan.condition[y, j]), 2),
                         round(float(plan.action_share[y, j]), 2)])
    return rows
