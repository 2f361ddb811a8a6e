"""Maintenance plan: the trained greedy policy run on the fleet, averaged over deterioration samples."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bridgefleet.fleet.model import ACTION_NAMES, GOOD_RATING, POOR_BELOW
from bridgefleet.fleet.simulator import FleetSimulator, resolve_fleet
from bridgefleet.outputs import save_figure, write_csv
from bridgefleet.paths import check_writable_file
from bridgefleet.train import load_policy


@dataclass
class Plan:
    """A multi-year plan for Y years and B bridges (fleet column order), averaged over S deterioration samples.

    Attributes:
        bridge_id, cluster: str (B,): structure numbers as in the inventory (item 8) and "urban"/"rural".
        urban: bool (B,): the agency whose budget pays (urban agency for the first n_urban columns).
        action: int (Y, B): the action most often chosen for the bridge in that year (0 = do nothing).
        action_share: float (Y, B): share of the samples that chose it, 0–1.
        cost_usd: float (Y, B): mean cost of the bridge's work that year, USD.
        condition: float (Y, B): mean expected condition rating at the end of the year, rating points.
        spend_usd: float (Y, 2): mean spend of the urban and the rural agency, USD per year.
        budget_usd: float (2,): the agencies' annual budgets, USD.
        shares: float (Y, 3): mean share of bridges good / fair / poor at the end of each year, 0–1.
    """

    bridge_id: np.ndarray
    cluster: np.ndarray
    urban: np.ndarray
    action: np.ndarray
    action_share: np.ndarray
    cost_usd: np.ndarray
    condition: np.ndarray
    spend_usd: np.ndarray
    budget_usd: np.ndarray
    shares: np.ndarray

    @property
    def years(self) -> int:
        return self.action.shape[0]


def make_plan(run_dir: str | Path, out: str | Path | None, years: int = 30, inventory: str | None = None,
              samples: int = 32, seed: int = 0, device: str = "auto", max_urban: int | None = None) -> Path:
    """Write plan.csv (one row per bridge and year) and plan.png; print a yearly summary.

    ``out`` defaults to ``run_dir/plan.csv``; a folder gets ``plan.csv`` inside it. See :func:`compute_plan`.

    Raises:
        FileNotFoundError: the run directory has no trained agents.
        ValueError: the inventory's urban count does not match the trained urban network.
    """
    out = Path(out) if out is not None else Path(run_dir) / "plan.csv"
    if out.is_dir():
        out = out / "plan.csv"
    check_writable_file(out, "--out", create=True)  # before the plan is computed
    plan = compute_plan(run_dir, years, inventory, samples, seed, device, max_urban)
    def rows():
        yield ["year", "bridge_id", "cluster", "action", "action_share", "cost_usd", "expected_condition"]
        for y in range(plan.years):
            for j in range(len(plan.bridge_id)):  # output rows, not simulation
                yield [y + 1, plan.bridge_id[j], plan.cluster[j], ACTION_NAMES[plan.action[y, j]],
                       f"{plan.action_share[y, j]:.2f}", f"{plan.cost_usd[y, j]:.0f}", f"{plan.condition[y, j]:.2f}"]

    write_csv(out, rows())  # UTF-8, atomic, formula-like cells made text
    budget = plan.budget_usd.sum()
    print(f"{'year':>4} {'good':>6} {'fair':>6} {'poor':>6} {'spend USD':>12} {'annual budget USD':>18}")
    for y in range(plan.years):
        g, fa, p = plan.shares[y]
        print(f"{y + 1:>4} {g:>6.1%} {fa:>6.1%} {p:>6.1%} {plan.spend_usd[y].sum():>12,.0f} {budget:>18,.0f}")
    if (plan.spend_usd.sum(1) > budget + 1.0).any():
        print("(spend above the annual budget is money carried over from earlier years)")
    png = out.with_suffix(".png")
    plot_plan(plan, png)
    print(f"plan: {out} ({plan.years} years × {len(plan.bridge_id)} bridges), figure: {png}")
    return out


def compute_plan(run_dir: str | Path, years: int = 30, inventory: str | None = None, samples: int = 32,
                 seed: int = 0, device: str = "auto", max_urban: int | None = None) -> Plan:
    """Run the trained greedy policy of ``run_dir`` for ``years`` on its fleet (or ``inventory``).

    The fleet is simulated ``samples`` times with seeds seed, seed+1, … (same fleet, different
    deterioration draws for a fixed or inventory fleet).

    Raises:
        FileNotFoundError: the run directory has no trained agents.
        ValueError: bad ``samples``/``years``, or the inventory's urban count does not match the trained
            urban network (agent: fleet).
    """
    if samples < 1:
        raise ValueError(f"--samples {samples}: must be at least 1")
    if years < 1:
        raise ValueError(f"--years {years}: must be at least 1")
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
                         f"trained urban agent expects {trained}: keep {trained} under it (--max-urban "
                         f"{trained}) or train on this inventory")
    sim = FleetSimulator(fleet_cfg, samples, fleet)
    sim.reset(None, [seed + i for i in range(samples)])
    rng = np.random.default_rng(seed)
    b = sim.n_bridges
    urban = np.arange(b) < sim.n_urban
    n_act = len(ACTION_NAMES)
    out = {k: np.zeros((years, b)) for k in ("action_share", "cost_usd", "condition")}
    action = np.zeros((years, b), dtype=np.int64)
    spend = np.zeros((years, 2))
    shares = np.zeros((years, 3))
    for y in range(years):
        decision = policy(sim, rng)  # (urban actions, rural strategy), or requests of every bridge
        res = sim.step(*decision) if isinstance(decision, tuple) else sim.step_requests(decision)
        counts = np.stack([(res.actions == a).sum(0) for a in range(n_act)])  # (5, B)
        action[y] = counts.argmax(0)
        out["action_share"][y] = counts[action[y], np.arange(b)] / samples
        out["cost_usd"][y] = np.where(res.actions > 0, sim.unit_costs[res.actions] * sim.profile.deck_area
                                      * sim.profile.cost_factor, 0.0).mean(0)
        out["condition"][y] = sim.state.condition.mean(0)
        spend[y] = res.cost.mean(0)  # (urban, rural) USD
        c = sim.state.condition
        shares[y] = (c >= GOOD_RATING).mean(), ((c >= POOR_BELOW) & (c < GOOD_RATING)).mean(), (c < POOR_BELOW).mean()
    return Plan(np.asarray(sim.profile.bridge_id, dtype=str), np.asarray(sim.cluster, dtype=str), urban, action,
                out["action_share"], out["cost_usd"], out["condition"], spend, np.asarray(sim.annual_budget, float),
                shares)


def plot_plan(plan: Plan, path: Path | None = None, fmt: str = "png") -> str | None:
    """Shares good / fair / poor by year (%) and each agency's yearly spend against its budget; written to
    ``path``, or returned as an ``<svg>`` element (text) when ``path`` is None."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y = np.arange(1, plan.years + 1)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    g, f, p = (100 * plan.shares[:, k] for k in range(3))
    a1.stackplot(y, g, f, p, labels=["good (≥ 7)", "fair (5–6)", "poor (≤ 4)"],
                 colors=["#2e7d32", "#f9a825", "#c62828"])
    a1.set_ylabel("bridges, %")
    a1.set_ylim(0, 100)
    a1.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    a1.set_title("Condition of the fleet by year (FHWA good / fair / poor)")
    w = 0.4
    for k, (name, colour) in enumerate((("urban agency", "#1565c0"), ("rural agency", "#6d4c41"))):
        a2.bar(y + (k - 0.5) * w, plan.spend_usd[:, k] / 1e3, width=w, color=colour, label=f"{name} spend")
        a2.axhline(plan.budget_usd[k] / 1e3, color=colour, ls="--", lw=1, label=f"{name} budget")
    a2.set_ylabel("thousand USD per year")
    a2.set_xlabel("year of the plan")
    a2.set_title("Spend against each agency's annual budget (mean over deterioration samples)")
    a2.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, dpi=100)
        return None
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]  # without the XML prolog: it sits inside an HTML page
