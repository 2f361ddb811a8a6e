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
from bridgefleet.config.seeds import PLAN_SAMPLES, TEST_SEED
from bridgefleet.config.training import TrainConfig
from bridgefleet.evaluation.evaluate import EvalResult, evaluate_with_bound
from bridgefleet.evaluation.explain import FirstYear
from bridgefleet.evaluation.work_plan import FHWA_RULE, Plan, compute_plan, policy_plan
from bridgefleet.inventory.fleet import on_inventory, one_fleet
from bridgefleet.report.bridges import Panel, year_one_panel
from bridgefleet.report.policies import (
    TRAINED,
    Scale,
    best_rule,
    collapse,
    elsewhere_warning,
    futures_words,
    owner_rules,
    plain_words,
    scale,
    trained_on_words,
)
from bridgefleet.runs.load import load_policy
from bridgefleet.sim.model import GOOD_RATING, POOR_BELOW, band_shares
from bridgefleet.sim.simulator import FleetSimulator


@dataclass
class FleetToday:
    """The fleet at the start of the plan (one draw for a synthetic fleet).

    Attributes:
        source: inventory path, or a description of the synthetic fleet; ``source_date``: the inventory year
            and the file's modification date ("" for a synthetic fleet).
        agencies: rows {agency, bridges, good, fair, poor (counts), deck_area_m2} per agency holding a budget (urban /
            rural, or an inventory's owners: ``FleetConfig.agency_labels``) and in total.
        quartiles: rows {what, min, q25, median, q75, max} for deck area (m²) and AADT (vehicles/day).
        bridge_id, condition, deck_area, latitude, longitude: (B,) in the plan's column order.
        deck_shares: float64 (3,), the share of counted deck area good / fair / poor today, 0–1 (FHWA's measures,
            23 CFR 490.407: the deck area of ``basis``; poor: lowest rating ≤ 4).
        basis: which bridges FHWA's measures count (NHS bridges where the inventory codes NHS, NBI item 104).
        counted_m2: the deck area they count, m²; counted_bridges: how many bridges that is.
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
    deck_shares: np.ndarray = field(default_factory=lambda: np.zeros(3))
    basis: str = "all bridges"
    counted_m2: float = 0.0
    counted_bridges: int = 0

    @property
    def meets_rule(self) -> bool:
        """Whether at most :data:`~bridgefleet.evaluation.work_plan.FHWA_RULE` (10 %) of the counted deck area is
        poor today (23 CFR 490.411's minimum condition)."""
        return bool(self.deck_shares[2] <= FHWA_RULE)

    @property
    def source_name(self) -> str:
        """Short name of the fleet for the page title: the inventory file's name, or "synthetic fleet"."""
        return "synthetic fleet" if self.source.startswith("synthetic") else Path(self.source.split(" (")[0]).name


@dataclass
class ReportData:
    """What the page shows (numbers and words, no HTML): ``results`` the policies compared (an owner's rules of
    thumb, identical outcomes once, :func:`bridgefleet.report.policies.collapse`; ``same`` the names each stands
    for), ``best`` today's best rule of thumb among them, ``scale`` their 0–100 score, ``elsewhere`` the warning for
    a run trained on another fleet (None where it trained on this one), ``panel`` why each bridge is treated in year
    1 (None for a rule of thumb's plan)."""

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
    best: EvalResult | None = None
    same: dict[str, list[str]] = field(default_factory=dict)
    scale: Scale | None = None
    elsewhere: str | None = None
    panel: Panel | None = None
    futures: str = ""


def gather(run_dir: Path, inventory: str | None = None, episodes: int = 100, seed: int = TEST_SEED,
           samples: int = PLAN_SAMPLES, bound: bool = True, progress: bool = False, max_urban: int | None = None,
           plan_policy: str | None = None, mapping: str | None = None) -> ReportData:
    """Evaluate the run's final policy beside an owner's rules of thumb (and the planner and bound) and plan with
    it; the planner's year-1 decisions are kept from that evaluation for the per-bridge panel.

    Raises:
        FileNotFoundError: the run has no final.pt. ValueError: the inventory does not match the run's fleet.
    """
    if not (run_dir / "config.yaml").is_file():
        raise FileNotFoundError(f"{run_dir}: not a bridgefleet run directory (no config.yaml)")
    if not (run_dir / "final.pt").is_file():
        raise FileNotFoundError(f"{run_dir}: no final.pt (training has not finished): finish it with "
                                f"bridgefleet train --resume {run_dir}")
    cfg, policy = load_policy(run_dir, "cpu")
    fleet_cfg = on_inventory(cfg.fleet, inventory, mapping)
    if max_urban is not None:
        fleet_cfg = fleet_cfg.replace(max_urban=max_urban)
    # checks the match of the inventory and the run
    plan = compute_plan(run_dir, fleet_cfg.horizon_years, inventory, samples, 0, "cpu", max_urban, mapping,
                        loaded=(cfg, policy))
    if plan_policy is not None:  # the plan of the planner (or a rule of thumb) on the same fleet, instead
        plan = policy_plan(fleet_cfg, plan_policy, fleet_cfg.horizon_years, samples, 0)
    sim = plan_fleet(fleet_cfg)
    fleet = fleet_today(fleet_cfg, plan, sim)
    first: list[FirstYear] = []

    def watch(planner):  # the planner's year-1 reasons, kept from the comparison (no planner run of its own)
        first.append(FirstYear(planner))
        return first[-1]

    rules = owner_rules(int((~plan.urban).sum()))
    results, bnd = evaluate_with_bound(fleet_cfg, rules, episodes, seed, {TRAINED: policy}, planner=bound,
                                       progress=progress, watch=watch)
    results, same = collapse(results)
    data = ReportData(run_dir, fleet, results, bnd, plan, episodes, seed, training_curve(run_dir),
                      settings(run_dir, cfg))
    data.same, data.best, data.scale = same, best_rule(results), scale(results, bnd)
    data.futures = futures_words(episodes, fleet_cfg.inventory is not None, fleet_cfg.horizon_years)
    data.sentence = plain_words(results, data.best, len(plan.bridge_id), fleet_cfg.inventory is not None)
    data.cost_lambda = fleet_cfg.cost_lambda
    if (trained_on := trained_elsewhere(run_dir, cfg.fleet, fleet_cfg)) is not None:
        data.elsewhere = elsewhere_warning(trained_on, trained_on_words(fleet_cfg.inventory), results, data.scale)
    fixed = fleet_cfg.inventory is not None  # the comparison's fleets are the plan's (futures of one inventory)
    data.panel = year_one_panel(plan, first[0] if first else None, sim if fixed else None,
                                compare=plan_policy is None)
    return data


def plan_fleet(cfg: FleetConfig) -> FleetSimulator:
    """The fleet the plan starts from at year 0, one sample (the seed 0 draw of a synthetic fleet)."""
    rcfg, fleet = one_fleet(cfg, 0)
    sim = FleetSimulator(rcfg, 1, fleet)
    sim.reset(None, [0])
    return sim


def trained_elsewhere(run_dir: Path, trained: FleetConfig, report: FleetConfig) -> str | None:
    """Where the run was trained, in words, when the report's fleet is another one: an inventory against the
    synthetic fleet, or another inventory file (by path, or by content where the run recorded its file's SHA-256,
    :mod:`bridgefleet.runs.inputs`) or column mapping; None when it is the same fleet (a file changed since
    training is :func:`bridgefleet.runs.inputs.warn_changed`'s warning, not this)."""
    from bridgefleet.runs.inputs import input_files, recorded, sha256

    if trained.inventory is None and report.inventory is None:
        return None
    words = trained_on_words(trained.inventory)
    if trained.inventory is None or report.inventory is None or trained.inventory_mapping != report.inventory_mapping:
        return words
    if trained.inventory == report.inventory:
        return None
    now = {key: path for key, _, path in input_files(report)}.get("inventory")
    then = {f["key"]: f for f in recorded(run_dir)}.get("inventory")
    was = {key: path for key, _, path in input_files(trained)}.get("inventory")
    if now is None:
        return words
    if was is not None and was.resolve() == now.resolve():
        return None
    if then is not None and (Path(then["path"]) == now.resolve() or then["sha256"] == sha256(now)):
        return None
    return words


def fleet_today(cfg: FleetConfig, plan: Plan, sim: FleetSimulator | None = None) -> FleetToday:
    """Condition, size and traffic of the fleet the plan starts from (seed 0 draw for a synthetic fleet; ``sim``:
    :func:`plan_fleet`'s simulator of it, made here when None)."""
    sim = sim if sim is not None else plan_fleet(cfg)
    rcfg = sim.config
    cond = np.asarray(sim.state.condition[0], dtype=float)
    area = np.broadcast_to(np.asarray(sim.profile.deck_area, dtype=float), (1, len(cond)))[0]  # (B,) or (E, B)
    aadt = np.broadcast_to(np.asarray(sim.profile.aadt, dtype=float), (1, len(cond)))[0]
    agency = np.asarray(sim.agency)  # (B,): the agency holding each bridge's budget (urban / rural, or its owner)
    groups = [(name, agency == a) for a, name in enumerate(rcfg.agency_labels) if (agency == a).any()]
    rows = []
    for name, mask in (*groups, ("all", np.ones(len(cond), dtype=bool))):
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
    counted = sim.fhwa_weight()  # (1, B) m²
    return FleetToday(source, date, rows, quart, plan.bridge_id, cond, area.copy(), lat, lon,
                      band_shares(sim.state.condition, counted)[0].astype(np.float64), sim.fhwa_basis,
                      float(counted.sum()), int((counted > 0).sum()))


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


def plan_rows(plan: Plan, fleet: FleetToday) -> list[list[Any]]:
    """Every bridge × year: [year, structure number, agency, action (the fleet model's name, in words), cost USD,
    expected rating, share of the futures that took the action]."""
    agency = [plan.agency_of(j) for j in range(len(plan.bridge_id))]  # who pays: urban, rural or the owner
    names = [n.replace("_", " ") for n in plan.action_names]  # the fleet model's treatments
    rows = []
    for y in range(plan.years):
        for j in range(len(plan.bridge_id)):  # output rows, not simulation
            rows.append([y + 1, str(plan.bridge_id[j]), str(agency[j]), names[plan.action[y, j]],
                         round(float(plan.cost_usd[y, j])), round(float(plan.condition[y, j]), 2),
                         round(float(plan.action_share[y, j]), 2)])
    return rows
