"""Maintenance plan: a trained run's greedy policy, the `lagrangian` planner or a rule of thumb run on the fleet,
averaged over deterioration samples."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.config.fleet import check_years
from bridgefleet.config.seeds import PLAN_SAMPLES
from bridgefleet.config.training import TrainConfig
from bridgefleet.evaluation.budget_words import plan_columns, plan_terms
from bridgefleet.evaluation.explain import Explaining, PlanReasons, explains
from bridgefleet.evaluation.snbi_works import refuse_without_codes, start_year_of, works_path, write_works
from bridgefleet.inventory.fleet import input_files, on_inventory, one_fleet, resolve_fleet, set_budget
from bridgefleet.outputs import counted, figure_out, write_csv, write_xlsx
from bridgefleet.paths import check_writable_file
from bridgefleet.progress import BRIDGE_YEARS_PER_UNIT
from bridgefleet.progress import current as current_bar
from bridgefleet.runs.folder import run_inputs
from bridgefleet.runs.load import load_policy, warn_untrained_budget
from bridgefleet.sim import components
from bridgefleet.sim.model import ACTION_NAMES, band_shares
from bridgefleet.sim.simulator import FleetSimulator

FHWA_RULE = 0.10
"""FHWA's minimum condition: at most 10 % of NHS deck area poor (23 CFR 490.411)."""
PLAN_NUMBERS = frozenset({"year", "deck_area_m2", "action_share", "cost_usd", "expected_condition",
                          "cost_of_waiting_usd", "value_per_usd", "cutoff_per_usd", "funded_at_usd"})
"""plan.csv's numeric columns (numbers in plan.xlsx; the rest is text)."""
PLANNER_YEAR_COST = 0.6
"""A sample-bridge-year of the plan simulated under the planner once its prices are found (its benefits, the
knapsack and the year's reasons), on the command's progress bar in bridge-years of the planner's DP
(:data:`bridgefleet.progress.BRIDGE_YEARS_PER_UNIT`): 10.7 s for 32 samples × 100 bridges × 30 years against the
price search's 22.8 s for its 30 solves × 3,000 (components-2026, 2-core EPYC under load, 2026-12-08)."""
POLICY_YEAR_COST = {"network": 0.4, "rule": 0.02}
"""A sample-bridge-year under a trained network or a rule of thumb, as
:data:`bridgefleet.evaluation.evaluate.NETWORK_COST` and ``RULE_COST``."""
MARGIN_COST = 2.0
"""What the next million buys (:func:`bridgefleet.evaluation.next_million.plan_margin`), per bridge-year of the
plan: each bridge's exact plan at two prices, about two DP solves (1.2 s for 3,000 bridge-years, as above)."""
WRITE_COST = 3.0
"""plan.csv, plan.xlsx, the summary and plan.png, per bridge-year row (2.0 s for 3,000 rows, as above)."""


@dataclass
class Plan:
    """A multi-year plan for Y years and B bridges (fleet column order), averaged over S deterioration samples.

    Attributes:
        bridge_id, cluster: str (B,): structure numbers as in the inventory (item 8) and "urban"/"rural".
        urban: bool (B,): the columns of the urban agent (the first n_urban).
        action: int (Y, B): the action most often chosen for the bridge in that year (0 = do nothing).
        action_share: float (Y, B): share of the samples that chose it, 0–1.
        cost_usd: float (Y, B): mean cost of the bridge's work that year, USD.
        condition: float (Y, B): mean expected condition rating at the end of the year, rating points.
        spend_usd: float (Y, A): mean spend of each agency (``agencies``), USD per year.
        budget_usd: float (A,): the agencies' annual budgets, USD.
        shares: float (Y, 3): mean share of bridges good / fair / poor at the end of each year, 0–1.
        deck_shares: float (Y, 3): mean share of deck area good / fair / poor at the end of each year, 0–1
            (FHWA's measures, 23 CFR 490.407, over the bridges ``basis`` names).
        policy: str: what made the plan (a run folder, ``lagrangian`` or a heuristic's name).
        basis: str: which bridges the deck-area shares count (NHS bridges where the inventory codes them).
        fleet: str: which fleet the plan is for (the inventory file, or one fleet of the model and its seed).
        samples: int: the deterioration samples the means are over.
        action_names: the names of the fleet model's actions (the component model's treatments, or the
            continuous models' :data:`~bridgefleet.sim.model.ACTION_NAMES`).
        work_code: str (Y, B) or None: the SNBI work code (``Works`` item BW03) of the modal action, the treated
            component's in its first sample that took it ('' for do nothing); the component model only.
        deck_area: float (B,) m²; nhs: bool (B,) on the National Highway System (NBI item 104); today: str (B,)
            the ratings at the start (deck/superstructure/substructure, or the continuous rating).
        reasons: why each row's bridge is treated or deferred (:class:`~bridgefleet.evaluation.explain.
            PlanReasons`); None where the policy does not decide from benefits (a rule of thumb).
        deck_today, shares_today: float (3,): the shares of deck area (as ``deck_shares``) and of bridges good /
            fair / poor today, before year 1's work (year 0 of the plan's charts), 0–1.
        agencies: the agencies' names (urban and rural, or an inventory's owners: ``FleetConfig.agency_labels``).
        agency: int (B,), each bridge's agency, the one whose budget pays it; None: urban for the ``urban`` columns.
        poor_paths: float (S, Y), each sample's share of deck area poor at the end of each year (as ``deck_shares``).
        margin: what the next USD 1 million a year buys at the plan's budget (the planner's plan on the component
            model: :class:`bridgefleet.evaluation.next_million.NextMillion`); None otherwise.
        rule: the share of deck area poor the chance of a penalty counts (0.10, or ``--max-poor-deck-area``).
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
    deck_shares: np.ndarray
    policy: str = ""
    basis: str = "all bridges"
    fleet: str = ""
    samples: int = 1
    action_names: tuple[str, ...] = ACTION_NAMES
    work_code: np.ndarray | None = None
    deck_area: np.ndarray | None = None
    nhs: np.ndarray | None = None
    today: np.ndarray | None = None
    reasons: PlanReasons | None = None
    deck_today: np.ndarray | None = None
    shares_today: np.ndarray | None = None
    agencies: tuple[str, ...] = ("urban", "rural")
    agency: np.ndarray | None = None
    poor_paths: np.ndarray | None = None
    margin: object | None = None
    rule: float = 0.10

    def agency_of(self, j: int) -> str:
        """The name of the agency that pays bridge column ``j``."""
        return self.agencies[int(self.agency[j])] if self.agency is not None else ("urban" if self.urban[j]
                                                                                   else "rural")

    @property
    def years(self) -> int:
        return self.action.shape[0]


def make_plan(run_dir: str | Path | None, out: str | Path | None, years: int = 30, inventory: str | None = None,
              mapping: str | None = None, samples: int = PLAN_SAMPLES, seed: int = 0, device: str = "auto",
              max_urban: int | None = None, policy: str | None = None, fleet: FleetConfig | None = None,
              budget_scale: float | None = None, budget_usd: float | None = None,
              max_poor: float | None = None, reads: list[tuple[str | Path, str]] | None = None,
              works: bool = False, start_year: int | None = None, progress: bool = False) -> Path:
    """Write plan.csv (one row per bridge and year), plan_summary.csv (a row per year) and plan.png; print the
    yearly summary. With ``works`` (``--format snbi-works``) also the plan's treatments as SNBI ``Works`` entries
    (:mod:`bridgefleet.evaluation.snbi_works`), year 1 = calendar year ``start_year`` (default this year), in
    ``<stem>.works.json`` beside the CSV, or at ``out`` where it ends in ``.json`` (the CSV then beside it as
    ``<stem>.csv``); the component fleet model only (refused before any work on a continuous one).
    ``progress``: the work counted on the command's progress bar where one is open (:mod:`bridgefleet.progress`:
    the price search, the samples' years at their policy's cost, the next million and the files written).

    With ``run_dir`` and no ``policy``: the run's trained agents (:func:`compute_plan`). With ``policy``
    (``lagrangian`` or a heuristic's name): that policy on the run's fleet, or on ``fleet`` (a fleet config; the
    default fleet when None) where there is no run (:func:`policy_plan`). Either at ``budget_scale`` × the sized
    budget or ``budget_usd`` USD a year (a trained run warns outside the budgets it learned at). ``out`` defaults
    to ``run_dir/plan.csv`` (``plan.csv`` without a run); a folder, or a path without a suffix (a folder to make,
    as ``scenarios --out``), gets ``plan.csv`` inside it. No output replaces a file the plan reads: the run's, the
    inventory and its mapping, and ``reads`` ((path, what it is), e.g. a config file).

    Raises:
        FileNotFoundError: the run directory has no trained agents.
        ValueError: the inventory's urban count does not match the trained urban network; an unknown policy; an
            output would replace a file the plan reads; ``works`` on a continuous fleet model, or ``start_year``
            without ``works`` or not a four-digit year.
        NotADirectoryError: ``out`` is an existing file without a suffix (such a path is a folder).
    """
    if run_dir is None and policy is None:
        raise ValueError("give a training run folder, or --policy lagrangian (the planner, no training run)")
    if max_poor is not None and policy != "lagrangian":
        raise ValueError("--max-poor-deck-area needs --policy lagrangian (the planner prices the rule)")
    out = Path(out) if out is not None else Path(run_dir or ".") / "plan.csv"
    if start_year is not None and not works:
        raise ValueError(f"--start-year {start_year} dates the SNBI works file: give it with --format snbi-works")
    works_out = out if works and out.suffix == ".json" and not out.is_dir() else None
    if works_out is not None:  # the works file's own path: the plan CSV beside it
        out = out.with_suffix(".csv")
    if out.exists() and not out.is_dir() and not out.suffix:
        raise NotADirectoryError(f"--out {out} is a file, and a path without a suffix is taken as a folder: give a "
                                 ".csv path or a folder")
    if out.is_dir() or not out.suffix:
        out = out / "plan.csv"
    if len(set(plan_files(out))) < 4:  # plan.png or plan.xlsx: the plan and its figure or workbook would be one file
        raise ValueError(f"--out {out}: the plan is a CSV, with its figure and workbook beside it as "
                         f"{out.with_suffix('.png')} and {out.with_suffix('.xlsx')}: give a .csv path or a folder")
    reads = [*(reads or []), *(run_inputs(run_dir) if run_dir is not None else []),
             *input_files(on_inventory(fleet or FleetConfig.default_model(), inventory, mapping))]
    if works:
        works_out = works_out or works_path(out)
        start = start_year_of(start_year, years)
    for path in (*plan_files(out), *([works_out] if works_out else [])):  # before the plan is computed
        check_writable_file(path, "--out", create=True, reads=reads)
    if policy is None:
        loaded = load_policy(run_dir, device) if works else None
        if loaded is not None:
            refuse_without_codes(loaded[0].fleet.component_model, f"the run {run_dir}")
        plan = compute_plan(run_dir, years, inventory, samples, seed, device, max_urban, mapping, loaded=loaded,
                            budget_scale=budget_scale, budget_usd=budget_usd, progress=progress)
    else:
        if run_dir is not None:
            fleet = load_policy(run_dir, device)[0].fleet  # the run's fleet
        fleet = on_inventory(fleet or FleetConfig.default_model(), inventory, mapping)
        if max_urban is not None:
            fleet = fleet.replace(max_urban=max_urban)
        if works:
            refuse_without_codes(fleet.component_model, "this fleet" if run_dir is None else f"the run {run_dir}")
        plan = policy_plan(fleet, policy, years, samples, seed, budget_scale, budget_usd, max_poor, progress)
    if (work := current_bar() if progress else None) is not None:
        work.stage("plan: writing its files")
    write_plan(plan, out)
    _advance(progress, WRITE_COST * plan.years * len(plan.bridge_id))
    if works_out is not None:
        print(write_works(plan, works_out, start))
    if policy == "lagrangian" and max_poor is None and plan.deck_shares[:, 2].max() > FHWA_RULE:
        print(f"note: the plan leaves {plan.deck_shares[:, 2].max():.1%} of deck area poor in a year; it was not "
              f"asked to meet FHWA's rule (--max-poor-deck-area {FHWA_RULE:g} plans to it, as `scenarios` does)")
    return out


def plan_files(out: Path) -> tuple[Path, Path, Path, Path]:
    """The files a plan written to ``out`` takes: ``out`` (CSV), ``<stem>_summary.csv``, ``<stem>.png`` and
    ``<stem>.xlsx`` (the CSV as a workbook)."""
    return out, out.with_name(f"{out.stem}_summary.csv"), out.with_suffix(".png"), out.with_suffix(".xlsx")


def write_plan(plan: Plan, out: Path) -> None:
    """``out`` (CSV, a row per bridge and year), the yearly summary (:func:`summary_rows`) in
    ``<out stem>_summary.csv`` and on stdout, and the figure beside them."""
    codes, why, known = plan.work_code is not None, plan.reasons, plan.deck_area is not None

    def rows():
        yield ["year", "bridge_id", "cluster", *(["deck_area_m2", "nhs", "ratings_today"] if known else []),
               "action", *(["snbi_work_code"] if codes else []), "action_share", "cost_usd", "expected_condition",
               *(["cost_of_waiting_usd", "value_per_usd", "cutoff_per_usd", "funded_at_usd", "reason"] if why else [])]
        for y in range(plan.years):
            for j in range(len(plan.bridge_id)):  # output rows, not simulation
                a = int(plan.action[y, j])
                yield [y + 1, plan.bridge_id[j], plan.cluster[j],
                       *([f"{plan.deck_area[j]:.1f}", "yes" if plan.nhs[j] else "no", plan.today[j]] if known else []),
                       plan.action_names[a], *([plan.work_code[y, j]] if codes else []),
                       f"{plan.action_share[y, j]:.2f}", f"{plan.cost_usd[y, j]:.0f}", f"{plan.condition[y, j]:.2f}",
                       *([f"{why.waiting_usd[y, j]:.0f}", f"{why.value_per_usd[y, j]:.3f}",
                          f"{why.cutoff_per_usd[y, j]:.3f}",
                          "" if np.isnan(why.funded_at_usd[y, j]) else f"{why.funded_at_usd[y, j]:.0f}",
                          why.reason(y, j, a, plan.action_names, plan.agency_of(j))] if why else [])]

    out.parent.mkdir(parents=True, exist_ok=True)
    _, summary, png, book = plan_files(out)
    table = list(rows())  # formatted once for both files
    write_csv(out, table)  # UTF-8, atomic, formula-like cells made text
    write_xlsx(book, table, numeric=PLAN_NUMBERS)  # the same rows, text cells typed as text
    write_csv(summary, summary_rows(plan))
    print(format_summary(plan))
    plot_plan(plan, png)
    size = f"{counted(plan.years, 'year')} × {counted(len(plan.bridge_id), 'bridge')}"
    print(f"plan ({plan.policy}): {out} ({size}; also {book.name}), yearly summary: {summary}, figure: {png}")


def summary_rows(plan: Plan) -> Iterator[list]:
    """The yearly summary as CSV rows (a header, then a row per year): shares of deck area good / fair / poor
    (FHWA's measures over ``plan.basis``) and of bridges good / poor, 0–1, and each agency's spend and budget,
    USD a year (spend above the budget is money carried over); for the planner's plan on the component model also
    what the next USD 1 million a year changes each year (:func:`bridgefleet.evaluation.budget_words.plan_columns`)."""
    yield ["year", "deck_area_good", "deck_area_fair", "deck_area_poor", "bridges_good", "bridges_poor",
           *(f"{name}_spend_usd" for name in plan.agencies), *(f"{name}_budget_usd" for name in plan.agencies),
           *plan_columns(plan)]
    more = plan_columns(plan)
    for y in range(plan.years):
        yield [y + 1, *(f"{v:.4f}" for v in plan.deck_shares[y]), f"{plan.shares[y, 0]:.4f}",
               f"{plan.shares[y, 2]:.4f}", *(f"{v:.0f}" for v in plan.spend_usd[y]),
               *(f"{v:.0f}" for v in plan.budget_usd), *(col[y] for col in more.values())]


def format_summary(plan: Plan) -> str:
    """The yearly summary: shares of deck area and of bridges good / poor, spend against the budget (USD); then the
    chance of a penalty and what the next USD 1 million a year buys (:func:`bridgefleet.evaluation.budget_words.
    plan_terms`)."""
    budget = plan.budget_usd.sum()
    lines = ["                 deck area           bridges",
             f"{'year':>4} {'good':>8} {'fair':>6} {'poor':>6} {'good':>8} {'poor':>6} {'spend USD':>12} "
             f"{'of budget':>9}"]
    for y in range(plan.years):
        g, fa, p = plan.deck_shares[y]
        spend = plan.spend_usd[y].sum()
        lines.append(f"{y + 1:>4} {g:>8.1%} {fa:>6.1%} {p:>6.1%} {plan.shares[y, 0]:>8.1%} {plan.shares[y, 2]:>6.1%} "
                     f"{spend:>12,.0f} {spend / budget if budget > 0 else 0.0:>9.0%}")
    if plan.agencies == ("urban", "rural"):
        lines.append(f"annual budget USD {budget:,.0f} (urban {plan.budget_usd[0]:,.0f}, rural "
                     f"{plan.budget_usd[1]:,.0f}); deck area: {plan.basis} (FHWA good ≥ 7, poor ≤ 4)")
    else:  # an inventory's owners: each one's spend against its own budget
        lines.append(f"annual budget USD {budget:,.0f}, held by {len(plan.agencies)} agencies (owners); deck area: "
                     f"{plan.basis} (FHWA good ≥ 7, poor ≤ 4)")
        width = max(len(a) for a in (*plan.agencies, "agency"))
        lines.append(f"  {'agency':<{width}} {'budget USD a year':>18} {'spend a year, mean':>19} {'of budget':>9}")
        for name, usd, spent in zip(plan.agencies, plan.budget_usd, plan.spend_usd.mean(0), strict=True):
            share = f"{spent / usd:>9.0%}" if usd > 0 else f"{'—':>9}"
            lines.append(f"  {name:<{width}} {usd:>18,.0f} {spent:>19,.0f} {share}")
    lines.append(f"means of {plan.samples} deterioration samples of {plan.fleet}")
    if (plan.spend_usd.sum(1) > budget + 1.0).any():
        lines.append("(spend above the annual budget is money carried over from earlier years)")
    return "\n".join(lines + plan_terms(plan))


def _check(years: int, samples: int) -> None:
    if samples < 1:
        raise ValueError(f"--samples {samples}: must be at least 1")
    check_years(years)


def policy_plan(fleet_cfg: FleetConfig, policy: str, years: int = 30, samples: int = PLAN_SAMPLES, seed: int = 0,
                budget_scale: float | None = None, budget_usd: float | None = None,
                max_poor: float | None = None, progress: bool = False) -> Plan:
    """The plan of ``policy`` (``lagrangian``: the planner of :mod:`bridgefleet.planning.planner`, its prices
    computed for this fleet and horizon; or a heuristic's name) on ``fleet_cfg`` for ``years``, at
    ``budget_scale`` × the sized budget or ``budget_usd`` USD a year (:func:`set_budget`); ``max_poor``: the
    planner prices "at most this share of deck area poor in any year". A synthetic fleet is held fixed (fleet
    seed ``seed``). ``progress``: as :func:`make_plan`'s.

    Raises:
        ValueError: an unknown policy, bad ``samples``/``years`` or budget.
    """
    from bridgefleet.planning.exact_planner import ExactPlanner
    from bridgefleet.planning.planner import LagrangianPlanner
    from bridgefleet.sim.heuristics import get_policy

    _check(years, samples)
    exact = fleet_cfg.component_model is not None
    planner = (ExactPlanner(max_poor_deck_area=max_poor, progress=progress) if exact else
               LagrangianPlanner(max_poor_deck_area=max_poor, progress=progress))
    decide = planner if policy == "lagrangian" else get_policy(policy)
    fleet_cfg, fleet = one_fleet(fleet_cfg.replace(horizon_years=years), seed)
    fleet_cfg = set_budget(fleet_cfg, budget_scale, budget_usd)
    margin = exact and policy == "lagrangian"  # what the next million buys, from the planner's prices
    cost = PLANNER_YEAR_COST if policy == "lagrangian" else POLICY_YEAR_COST["rule"]
    bridge_years = (fleet_cfg.n_urban + fleet_cfg.n_rural) * years
    # the whole plan on the bar now (the price search adds its own part when it starts)
    _declare(progress, bridge_years * (samples * cost + WRITE_COST + (MARGIN_COST if margin else 0.0)))
    if policy == "lagrangian" and max_poor is not None:
        plan = plan_within_rule(decide, fleet_cfg, fleet, samples, seed, max_poor, progress)
    else:
        plan = simulate_plan(fleet_cfg, fleet, decide, samples, seed, policy, cost if progress else 0.0)
    plan.rule = FHWA_RULE if max_poor is None else max_poor
    if margin:
        from bridgefleet.evaluation.next_million import plan_margin

        if (work := current_bar() if progress else None) is not None:
            work.stage("plan: what the next million buys")
        plan.margin = plan_margin(planner, fleet_cfg, fleet, seed, plan.poor_paths, plan.rule)
        _advance(progress, MARGIN_COST * bridge_years)
    return plan


def _declare(progress: bool, bridge_years: float) -> None:
    """Work of ``bridge_years`` DP bridge-years added to the command's bar (nothing without one)."""
    if (work := current_bar() if progress else None) is not None:
        work.total += bridge_years / BRIDGE_YEARS_PER_UNIT


def _advance(progress: bool, bridge_years: float) -> None:
    """Work of ``bridge_years`` DP bridge-years done on the command's bar (nothing without one)."""
    if (work := current_bar() if progress else None) is not None:
        work.advance(bridge_years / BRIDGE_YEARS_PER_UNIT)


def plan_within_rule(planner, fleet_cfg: FleetConfig, fleet: tuple[dict, dict] | None, samples: int, seed: int,
                     rule: float, progress: bool = False) -> Plan:
    """The planner's plan that meets the rule in expectation where it can, as ``scenarios`` finds it at a level:
    each of :data:`bridgefleet.evaluation.scenarios.AIMS` in turn, the first whose mean share of deck area poor
    is ≤ ``rule`` in every year (``Plan.policy`` says which; :func:`bridgefleet.evaluation.scenarios.try_aims`),
    with a warning where it misses the rule. ``progress``: each aim's samples counted on the command's bar (the
    first aim's declared by the caller, each further one's when it starts)."""
    from bridgefleet.evaluation import component_scenarios, scenarios

    tries = 0

    def attempt() -> Plan:
        nonlocal tries
        if tries:  # another aim: another price search (its own part) and simulation
            _declare(progress, PLANNER_YEAR_COST * samples * (fleet_cfg.n_urban + fleet_cfg.n_rural)
                     * fleet_cfg.horizon_years)
        tries += 1
        plan = simulate_plan(fleet_cfg, fleet, planner, samples, seed, "lagrangian",
                             PLANNER_YEAR_COST if progress else 0.0)
        mixture = (f", the relaxation's mixture within {planner.budget_share:.0%} of the budget"
                   if getattr(planner, "rounded", False) else "")
        plan.policy = f"lagrangian{mixture}, each year planned to {100 * planner.aim:.3g}% of deck area poor"
        return plan

    if fleet_cfg.component_model is not None:  # the exact planner: its prices aimed at tighter shares in turn
        best = component_scenarios.try_aims(planner, rule, attempt, lambda plan: plan.deck_shares[:, 2])[0]
    else:
        best = scenarios.try_aims(planner, rule, attempt, lambda plan: plan.deck_shares[:, 2])
    worst = best.deck_shares[:, 2]
    if worst.max() > rule + 1e-12:
        warnings.warn(f"the plan does not meet the rule (≤ {rule:.0%} of deck area poor every year, in expectation): "
                      f"{worst.max():.1%} poor in year {int(worst.argmax()) + 1}; `bridgefleet scenarios` gives the "
                      "least budget at which the planner meets it", stacklevel=2)
    return best


def compute_plan(run_dir: str | Path, years: int = 30, inventory: str | None = None, samples: int = PLAN_SAMPLES,
                 seed: int = 0, device: str = "auto", max_urban: int | None = None,
                 mapping: str | None = None, loaded: tuple[TrainConfig, Callable] | None = None,
                 budget_scale: float | None = None, budget_usd: float | None = None, progress: bool = False) -> Plan:
    """Run the trained greedy policy of ``run_dir`` for ``years`` on its fleet (or ``inventory``, read with
    ``mapping``, default the run's), at ``budget_scale`` × the fleet's sized budget or ``budget_usd`` USD a year
    (:func:`set_budget`; a warning where that is outside the budgets the run learned at); ``loaded``: the run's
    (config, policy) where the caller has already read it (:func:`bridgefleet.runs.load.load_policy`), so its
    checkpoint is read once.

    The fleet is simulated ``samples`` times with seeds seed, seed+1, … (same fleet, different
    deterioration draws for a fixed or inventory fleet). ``progress``: as :func:`make_plan`'s.

    Raises:
        FileNotFoundError: the run directory has no trained agents.
        ValueError: bad ``samples``/``years``, or the inventory's urban count does not match the trained
            urban network (agent: fleet).
    """
    _check(years, samples)
    cfg, policy = loaded or load_policy(run_dir, device)
    if years > cfg.fleet.horizon_years:
        warnings.warn(f"--years {years} goes beyond the {cfg.fleet.horizon_years}-year horizon the policy was "
                      f"trained on: its decisions after year {cfg.fleet.horizon_years} are extrapolated",
                      stacklevel=2)
    fleet_cfg = on_inventory(cfg.fleet.replace(horizon_years=years), inventory, mapping)
    if max_urban is not None:  # an inventory's (the config refuses it on a model fleet)
        fleet_cfg = fleet_cfg.replace(max_urban=max_urban)
    fleet_cfg, fleet = one_fleet(fleet_cfg, seed)
    warn_untrained_budget(cfg, budget_scale, run_dir, budget_usd, fleet_cfg)
    fleet_cfg = set_budget(fleet_cfg, budget_scale, budget_usd)
    trained = cfg.fleet.n_urban if cfg.fleet.inventory is None else resolve_fleet(cfg.fleet)[0].n_urban
    if cfg.agent == "fleet" and fleet_cfg.n_urban != trained:
        raise ValueError(f"the plan's fleet has {fleet_cfg.n_urban} urban bridges under per-bridge control, the "
                         f"trained urban agent expects {trained}: keep {trained} under it (--max-urban "
                         f"{trained}) or train on this inventory")
    cost = POLICY_YEAR_COST["network"]
    _declare(progress, (fleet_cfg.n_urban + fleet_cfg.n_rural) * years * (samples * cost + WRITE_COST))
    return simulate_plan(fleet_cfg, fleet, policy, samples, seed, f"trained agents of {run_dir}",
                         cost if progress else 0.0)


def simulate_plan(fleet_cfg: FleetConfig, fleet: tuple[dict, dict] | None, policy, samples: int, seed: int,
                  name: str, cost: float = 0.0) -> Plan:
    """``policy`` (sim, rng) → decision run for ``fleet_cfg.horizon_years`` on ``samples`` copies of the
    fleet (deterioration seeds seed, seed+1, …), summarized as a :class:`Plan`. ``cost``: each year moves the
    command's progress bar by its samples' bridge-years at this cost (DP bridge-years each; the caller declared
    them on the bar's total); 0: not counted."""
    years = fleet_cfg.horizon_years
    sim = FleetSimulator(fleet_cfg, samples, fleet)
    sim.reset(None, [seed + i for i in range(samples)])
    rng = np.random.default_rng(seed)
    b = sim.n_bridges
    urban = np.arange(b) < sim.n_urban
    n_act = len(ACTION_NAMES)
    cm = sim.components_model
    work = np.full((years, b), "", dtype=object) if cm is not None else None
    out = {k: np.zeros((years, b)) for k in ("action_share", "cost_usd", "condition")}
    action = np.zeros((years, b), dtype=np.int64)
    spend = np.zeros((years, sim.n_agencies))
    shares = np.zeros((years, 3))
    deck = np.zeros((years, 3))
    poor_paths = np.zeros((samples, years))
    counted = sim.fhwa_weight()  # the deck area FHWA counts: fixed for the plan
    today = (np.array(["/".join(str(int(c)) for c in r) for r in sim.components[0]]) if cm is not None
             else np.array([f"{c:.2f}" for c in sim.state.condition[0]]))
    if explains(policy):
        policy = Explaining(policy)
        why = PlanReasons.empty(years, b)
    deck_today = band_shares(sim.state.condition, counted).mean(0)  # year 0: before any work
    shares_today = band_shares(sim.state.condition).mean(0)
    bar = current_bar() if cost > 0 else None
    for y in range(years):
        if bar is not None:
            bar.stage(f"plan: year {y + 1} of {years}, {samples} samples")
        decision = policy(sim, rng)  # (urban actions, rural strategy), or requests of every bridge
        before = sim.components.copy() if cm is not None else None
        res = sim.step(*decision) if isinstance(decision, tuple) else sim.step_requests(decision)
        counts = np.stack([(res.actions == a).sum(0) for a in range(n_act)])  # (5, B)
        action[y] = counts.argmax(0)
        if work is not None:  # the modal action's work code, in its first sample that took it
            first = (res.actions == action[y]).argmax(0)
            work[y] = components.work_codes(cm, res.actions, before)[first, np.arange(b)]
        out["action_share"][y] = counts[action[y], np.arange(b)] / samples
        if isinstance(policy, Explaining):
            why.add(y, policy.last, action[y], fleet_cfg.cost_lambda)
        out["cost_usd"][y] = np.where(res.actions > 0, sim.unit_costs[res.actions] * sim.profile.deck_area
                                      * sim.profile.cost_factor, 0.0).mean(0)
        out["condition"][y] = sim.state.condition.mean(0)
        spend[y] = res.cost.mean(0)  # (A,) USD, each agency's
        shares[y] = band_shares(sim.state.condition).mean(0)
        by_path = band_shares(sim.state.condition, counted)
        deck[y], poor_paths[:, y] = by_path.mean(0), by_path[:, 2]
        if bar is not None:
            bar.advance(cost * samples * b / BRIDGE_YEARS_PER_UNIT)
    return Plan(np.asarray(sim.profile.bridge_id, dtype=str), np.asarray(sim.cluster, dtype=str), urban, action,
                out["action_share"], out["cost_usd"], out["condition"], spend, np.asarray(sim.annual_budget, float),
                shares, deck, name, sim.fhwa_basis,
                ("the inventory " if fleet_cfg.inventory else "") + fleet_cfg.fleet_in_words(), samples,
                cm.action_names if cm is not None else ACTION_NAMES, None if work is None else work.astype(str),
                np.asarray(sim.profile.deck_area[0], dtype=float), np.asarray(sim.profile.nhs[0], dtype=bool), today,
                why if isinstance(policy, Explaining) else None, deck_today, shares_today, sim.config.agency_labels,
                sim.agency.copy(), poor_paths)


def plot_plan(plan: Plan, path: Path | None = None, fmt: str = "png") -> str | None:
    """Shares of deck area poor / fair / good by year (%, FHWA's measures, 23 CFR 490.407, over ``plan.basis``;
    year 0 is today, where the plan has ``deck_today``) with FHWA's 10 % line and the share of bridges poor, and
    each agency's yearly spend against its budget (million USD); written
    to ``path``, or returned as an ``<svg>`` element (text) when ``path`` is None."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y = np.arange(1, plan.years + 1)
    deck, count = plan.deck_shares, plan.shares[:, 2]
    if plan.deck_today is not None:  # year 0: today, before any work
        y = np.arange(0, plan.years + 1)
        deck, count = np.vstack([plan.deck_today, deck]), np.concatenate([[plan.shares_today[2]], count])
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    g, f, p = (100 * deck[:, k] for k in range(3))
    a1.stackplot(y, p, f, g, labels=["poor (≤ 4)", "fair (5–6)", "good (≥ 7)"],
                 colors=["#c62828", "#f9a825", "#2e7d32"])  # poor at the bottom: its share reads off the axis
    a1.axhline(100 * FHWA_RULE, color="black", ls="--", lw=1.2,
               label=f"FHWA: ≤ {FHWA_RULE:.0%} poor (23 CFR 490.411)")
    a1.plot(y, 100 * count, color="black", ls=":", lw=1.2, label="poor, % of all bridges (a count)")
    a1.set_ylabel("deck area, %")
    a1.set_ylim(0, 100)
    a1.set_xlim(y[0] - 0.5, y[-1] + 0.5)
    a1.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    a1.set_title(f"Condition by year (year 0: today), FHWA good / fair / poor\nshare of the deck area of "
                 f"{plan.basis}", fontsize=10)
    w = 0.4
    if plan.agencies == ("urban", "rural"):
        for k, (name, colour) in enumerate((("urban agency", "#1565c0"), ("rural agency", "#6d4c41"))):
            a2.bar(y[-plan.years:] + (k - 0.5) * w, plan.spend_usd[:, k] / 1e6, width=w, color=colour,
                   label=f"{name} spend")
            a2.axhline(plan.budget_usd[k] / 1e6, color=colour, ls="--", lw=1,
                       label=f"{name} budget (USD {plan.budget_usd[k] / 1e6:,.2f} million a year)")
        a2.set_ylabel("million USD per year")
    else:  # owners of budgets a thousand-fold apart: each one's spend as a share of its own budget
        for k, name in enumerate(plan.agencies):
            usd = plan.budget_usd[k]
            a2.plot(y[-plan.years:], 100 * plan.spend_usd[:, k] / usd if usd > 0 else np.zeros(plan.years),
                    marker=".", lw=1, label=f"{name} (USD {usd / 1e6:,.2f} million a year)")
        a2.axhline(100, color="black", ls="--", lw=1, label="the annual budget (above: money carried over)")
        a2.set_ylabel("spend, % of the agency's budget")
    a2.set_xlabel("year of the plan (0: today)" if y[0] == 0 else "year of the plan")
    a2.set_title(f"Spend against each agency's annual budget (mean of {plan.samples} simulated futures)", fontsize=10)
    a2.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return figure_out(fig, path, dpi=100)
