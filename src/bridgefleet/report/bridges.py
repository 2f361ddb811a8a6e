"""The report's per-bridge panel: why each bridge is treated in year 1 (issue 80 item 1), and where the trained agent
and the planner decide otherwise.

From three things the report has already computed, with no planner run of its own: the plan's reasons
(:class:`~bridgefleet.evaluation.explain.PlanReasons`, the same figures as plan.csv's), the planner's year-1
decisions kept from the report's comparison (:class:`~bridgefleet.evaluation.explain.FirstYear`) and, on the
component model, each bridge's plans valued exactly at the planner's prices
(:func:`~bridgefleet.evaluation.explain_bridge.explain_bridge`, as ``plan --explain`` prints them). The planner's
comparison fleets are the plan's fleet only for an inventory (one fleet, futures differing in deterioration); a
synthetic fleet's plan is of one fleet of the model and the comparison's fleets are others, so there the panel
gives the plan's reasons alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bridgefleet.evaluation.explain import BELOW_CUTOFF, FirstYear
from bridgefleet.evaluation.work_plan import Plan

PANEL_BRIDGES = 40
"""The most bridges the panel lists (the largest costs of waiting first; plan.csv has every one)."""


@dataclass
class Treatment:
    """One treatment of a bridge as the planner values it against waiting a year: ``cost_usd``, ``waiting_usd`` (the
    cost of waiting a year, USD of value), ``per_usd`` (that per USD), ``poor_m2_years`` (deck area kept out of poor,
    m²-years), ``user_usd`` and ``later_usd`` (road users' and the agency's later cost avoided, USD, present value);
    ``chosen``: the planner's year-1 choice."""

    name: str
    code: str
    cost_usd: float
    waiting_usd: float
    per_usd: float
    poor_m2_years: float
    user_usd: float
    later_usd: float
    chosen: bool


@dataclass
class BridgeRow:
    """A bridge of the panel: its facts today, the plan's year-1 treatment with its reasons (USD, USD of value a
    USD, the agency's cut-off), the planner's decision in words (None where not compared) and ``treatments`` (the
    planner's exact values, empty where not computed), ``never`` (the plan against doing nothing, in words)."""

    bridge_id: str
    agency: str
    nhs: bool
    deck_m2: float
    ratings: str
    action: str
    code: str
    cost_usd: float
    waiting_usd: float
    per_usd: float
    cutoff_per_usd: float
    funded_at_usd: float | None
    why: str
    planner: str | None = None
    agree: bool | None = None
    treatments: list[Treatment] = field(default_factory=list)
    never: str = ""


@dataclass
class Panel:
    """The panel: ``rows``; ``treated`` bridges the plan treats in year 1, ``planner_treated`` the planner's
    (None where not compared), ``disagree`` bridges where they differ; ``note`` what is compared and what not."""

    rows: list[BridgeRow]
    treated: int
    planner_treated: int | None
    disagree: int
    note: str


def _why(plan: Plan, j: int) -> str:
    """The plan's year-1 reason for bridge ``j`` in plain words, from plan.csv's figures."""
    r, a = plan.reasons, int(plan.action[0, j])
    name = plan.agency_of(j)  # who pays: urban, rural, or the bridge's owner ("01 state highway agency")
    agency = f"the {name} agency's" if name in ("urban", "rural") else f"{name}'s"
    cut = r.cutoff_per_usd[0, j]
    bar = (f"{agency} cut-off of {cut:.2f} (the least its money reaches this year)" if cut > 0 else
           f"{agency} money this year, which funds every treatment worth its cost")
    if a > 0:
        below = BELOW_CUTOFF if r.value_per_usd[0, j] < cut else ""
        return (f"funded: waiting a year would lose {r.value_per_usd[0, j]:.2f} USD of value a USD of its cost, "
                f"against {bar}{below}")
    about = int(r.treatment[0, j])
    if about == 0:
        return "nothing this year: every treatment is worth more later than now"
    funded = r.funded_at_usd[0, j]
    money = f"{name} money" if name in ("urban", "rural") else f"{name}'s money"
    at = f"; it would be funded with {money} of USD {funded:,.0f} this year" if np.isfinite(funded) else ""
    return (f"deferred: {_name(plan.action_names[about])} would lose {r.value_per_usd[0, j]:.2f} USD of value a USD "
            f"by waiting, against {bar}{at}")


def _cost(plan: Plan, j: int) -> float:
    """The cost of a deferred bridge's best treatment in year 1, USD (its cost of waiting ÷ that per USD; 0 where
    no treatment is worth its cost)."""
    r = plan.reasons
    return float(r.waiting_usd[0, j] / r.value_per_usd[0, j]) if r.value_per_usd[0, j] > 0 else 0.0


def _planner_words(names: tuple[str, ...], mine: int, theirs: int) -> tuple[str, bool]:
    """The planner's year-1 decision beside the plan's, in words, and whether they agree."""
    if mine == theirs:
        return ("the same" if mine > 0 else "waits too"), True
    return ("waits" if theirs == 0 else _name(names[theirs])), False


def _name(action: str) -> str:
    return action.replace("_", " ")


def year_one_panel(plan: Plan, planner: FirstYear | None, sim=None, compare: bool = True,
                   limit: int = PANEL_BRIDGES) -> Panel | None:
    """The panel of ``plan``'s year 1: the bridges the plan treats and, where the planner's decisions are of the same
    fleet (``sim`` given: a simulator of the plan's fleet at year 0, one sample), those the planner treats, the
    largest costs of waiting first, at most ``limit``; ``compare``: say where the planner decides otherwise (False
    where the plan is the planner's own). None where the plan has no reasons (a rule of thumb's plan).

    Each listed bridge's treatments are valued exactly at the planner's prices where the planner is the exact one
    (the component model) and ``sim`` is given."""
    if plan.reasons is None:
        return None
    from bridgefleet.evaluation.explain_bridge import explain_bridge

    mine = plan.action[0]
    theirs = None
    same = sim is not None and planner is not None and planner.reasons is not None
    if same:
        theirs = planner.reasons.action[0]  # the fixed fleet: every future decides year 1 alike
    compared = same and compare
    treated = (mine > 0) | ((theirs > 0) if theirs is not None else False)
    differ = (mine != theirs) if compared else np.zeros_like(treated)
    order = sorted(np.flatnonzero(treated), key=lambda j: (not differ[j], -plan.reasons.waiting_usd[0, j]))[:limit]
    exact = same and hasattr(planner.policy, "bridge_problem")
    rows = []
    for j in order:
        a = int(mine[j])
        about = a if a > 0 else int(plan.reasons.treatment[0, j])
        funded = plan.reasons.funded_at_usd[0, j]
        row = BridgeRow(str(plan.bridge_id[j]), plan.agency_of(j), bool(plan.nhs[j]), float(plan.deck_area[j]),
                        str(plan.today[j]), _name(plan.action_names[a]) if a > 0 else
                        f"waits (its best: {_name(plan.action_names[about])})" if about > 0 else "waits",
                        str(plan.work_code[0, j]) if plan.work_code is not None else "",
                        float(plan.cost_usd[0, j]) if a > 0 else _cost(plan, j), float(plan.reasons.waiting_usd[0, j]),
                        float(plan.reasons.value_per_usd[0, j]), float(plan.reasons.cutoff_per_usd[0, j]),
                        float(funded) if np.isfinite(funded) else None, _why(plan, j))
        if compared:
            row.planner, row.agree = _planner_words(plan.action_names, a, int(theirs[j]))
        if exact:
            _value(row, explain_bridge(planner.policy, sim, int(j), planner.reasons), sim, int(j), about,
                   plan.action_names)
        rows.append(row)
    if not same:
        note = ("The planner's decisions are compared on an inventory: this plan is of one fleet of the model, the "
                "comparison's of others." if planner is not None else "The planner was left out (--no-bound).")
    elif not compare:
        note = "This plan is the planner's own."
    else:
        note = ""
    return Panel(rows, int((mine > 0).sum()), None if theirs is None else int((theirs > 0).sum()),
                 int(np.count_nonzero(differ)), note)


def _value(row: BridgeRow, ex, sim, j: int, about: int, names: tuple[str, ...]) -> None:
    """Fill ``row``'s treatments and its plan against doing nothing from the bridge's exact values ``ex``."""
    r = ex.reasons
    lam = sim.config.cost_lambda
    w = ex.versus_waiting
    for a in range(1, len(names)):
        cost = float(r.cost[0, j, a])
        waiting = float(r.benefit[0, j, a]) / lam
        per = waiting / cost if cost > 0 else 0.0
        row.treatments.append(Treatment(_name(names[a]), str(ex.codes[a]), cost, waiting, per,
                                        float(w.poor_m2_years[a]), float(w.user_usd[a]), float(w.later_usd[a]),
                                        a == int(r.action[0, j])))
    if about > 0:
        n = ex.versus_never
        later = float(n.later_usd[about])
        treatment = _name(names[about]).capitalize()
        row.never = (f"{treatment} now, then the best plan, against no work for {sim.config.horizon_years} years: "
                     f"{n.poor_m2_years[about]:,.0f} m²-years of deck area kept out of poor, road users' cost USD "
                     f"{n.user_usd[about]:,.0f} avoided, the agency's later cost USD {abs(later):,.0f} "
                     f"{'avoided' if later >= 0 else 'added'} (present values).")
