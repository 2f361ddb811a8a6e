"""``plan --explain BRIDGE_ID``: one bridge's year-1 decision in an agency's units, from the planner's exact values.

For each treatment a of the bridge, three plans of the bridge alone are valued exactly
(:func:`bridgefleet.planning.exact_dp.policy_value` on its finite model, at the prices of money the planner found):
*a now* (a in year 1, then the bridge's best plan at those prices), *waiting* (nothing in year 1, then the best plan)
and *never* (nothing for the whole horizon). Their differences give what a treatment buys against waiting a year and
against doing nothing: deck area kept out of poor (m²-years, FHWA's poor: lowest rating ≤ 4, 23 CFR 490.409), the
road users' cost avoided (USD, present value: the detour and delay cost of a poor bridge, docs/fleet-model.md) and
the agency's later cost avoided (USD, present value of years 2 on). The cost of waiting a year and the agency's
cut-off are the planner's own (:mod:`bridgefleet.evaluation.explain`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from bridgefleet.evaluation.explain import BELOW_CUTOFF, Explaining, YearReasons
from bridgefleet.inventory.fleet import on_inventory
from bridgefleet.planning.exact_dp import policy_value, solve
from bridgefleet.planning.exact_model import state_index
from bridgefleet.sim import components
from bridgefleet.sim.simulator import FleetSimulator


@dataclass
class Outcome:
    """A plan of one bridge against another, each float64 (A,) by treatment: ``poor_m2_years`` deck area kept out of
    poor (m²-years, undiscounted), ``user_usd`` road users' cost avoided and ``later_usd`` the agency's cost of
    years 2 on avoided (USD, present value at the fleet's discount)."""

    poor_m2_years: np.ndarray
    user_usd: np.ndarray
    later_usd: np.ndarray


@dataclass
class BridgeExplanation:
    """One bridge's year-1 decision (module docstring): ``row`` its column in the fleet, ``reasons`` the year's
    reasons of the whole fleet, ``versus_waiting`` and ``versus_never`` by treatment, ``value_usd`` float64 (A,)
    the value of *a now* at the year's prices of money (USD of value; index 0: waiting), ``codes`` str (A,) the SNBI
    work codes."""

    row: int
    reasons: YearReasons
    versus_waiting: Outcome
    versus_never: Outcome
    value_usd: np.ndarray
    codes: np.ndarray


def find_bridge(sim: FleetSimulator, bridge_id: str) -> int:
    """The column of structure number ``bridge_id`` (as in the inventory, item 8 or BID01; surrounding spaces
    ignored).

    Raises:
        ValueError: no such bridge (naming the closest numbers).
    """
    ids = [str(x) for x in np.asarray(sim.profile.bridge_id).reshape(-1)[: sim.n_bridges]]
    want = str(bridge_id).strip()
    for j, x in enumerate(ids):
        if x.strip() == want:
            return j
    close = difflib.get_close_matches(want, [x.strip() for x in ids], n=3)
    hint = f" (closest: {', '.join(close)})" if close else f" (the fleet's first: {', '.join(ids[:3])})"
    raise ValueError(f"--explain {want!r}: no bridge of that structure number in this fleet{hint}")


def year_one(policy, sim: FleetSimulator) -> YearReasons:
    """The reasons of ``policy``'s year-1 decisions on ``sim`` at year 0 (the simulator is not stepped).

    Raises:
        ValueError: ``sim`` is not at year 0.
    """
    if int(sim.t.max()) != 0:
        raise ValueError("a bridge's decision is explained from year 1: reset the simulator first")
    explaining = Explaining(policy)
    explaining(sim)
    return explaining.last


def explain_bridge(planner, sim: FleetSimulator, row: int, reasons: YearReasons | None = None) -> BridgeExplanation:
    """Year 1's decision of bridge ``row`` by the exact planner on a fleet at year 0 (one sample of a fixed fleet or
    an inventory): the planner's reasons (``reasons``, or computed here by :func:`year_one`) and the bridge's plans
    valued exactly at its prices of money.

    Raises:
        ValueError: ``sim`` is not at year 0.
    """
    reasons = reasons if reasons is not None else year_one(planner, sim)
    model, price, poor_price = planner.bridge_problem(row)
    t_n, a_n = price.shape[1], model.cost.shape[1]
    best = solve(model, price, poor_price).policy  # (T, 1, S)
    s0 = int(state_index(model.start, model.levels)[0])
    deck = float(np.asarray(sim.profile.deck_area).reshape(-1)[row])
    user = float(sim.user_cost[0, row])
    disc = model.gamma ** np.arange(t_n)
    # every plan in one pass: copy a of the bridge does a in year 1 (copy 0: waiting), the last does nothing ever
    copies = np.zeros(a_n + 1, dtype=np.int64)
    pol = np.repeat(best, a_n + 1, axis=1)  # (T, A + 1, S)
    pol[0, np.arange(a_n), s0] = np.arange(a_n)
    pol[:, a_n] = 0
    plans = policy_value(model.subset(copies), pol, price[copies], poor_price[copies])

    def against(base: int) -> Outcome:
        kept = plans.poor[base] - plans.poor[:a_n]  # (A, T) probability of poor avoided each year
        later = ((plans.spend[base] - plans.spend[:a_n]) * disc)[:, 1:].sum(1)
        return Outcome(kept.sum(1) * deck, (kept * disc).sum(1) * user, later)

    lam = model.cost_lambda
    codes = components.work_codes(sim.components_model, np.arange(a_n)[None, :],
                                  np.repeat(sim.components[:1, row : row + 1], a_n, axis=1))[0]
    return BridgeExplanation(row, reasons, against(0), against(a_n), plans.value[:a_n] / lam, codes)


def format_explanation(ex: BridgeExplanation, sim: FleetSimulator, fleet: str, agent: YearReasons | None = None) -> str:
    """The explanation in words and a table (USD, m², the year's cut-off); ``agent``: a trained agent's reasons on
    the same fleet, said beside the planner's."""
    j, r = ex.row, ex.reasons
    names = sim.components_model.action_names
    lam = sim.config.cost_lambda
    g = int(sim.agency[j])  # the agency that pays: urban or rural, or the bridge's owner
    name = sim.config.agency_labels[g]
    agency = f"{name} agency" if sim.urban_rural else name
    money_of = f"{name} money" if sim.urban_rural else f"the money of {name}"
    slots = ("deck", "superstructure", "substructure") if sim.kind[j] == 0 else ("culvert",)
    ratings = ", ".join(f"{s} {int(c)}" for s, c in zip(slots, sim.components[0, j], strict=False))
    deck = float(np.asarray(sim.profile.deck_area).reshape(-1)[j])
    nhs = "on the NHS" if bool(np.asarray(sim.profile.nhs).reshape(-1)[j]) else "not on the NHS"
    bid = str(np.asarray(sim.profile.bridge_id).reshape(-1)[j])
    money = float(sim.budget[0, g])
    cut = r.cutoff[0, j] / lam
    act, best = int(r.action[0, j]), int(r.best[0, j])
    lines = [f"bridge {bid} ({agency}, {fleet}): deck area {deck:,.0f} m², {nhs}; ratings {ratings} "
             f"(lowest {int(sim.components[0, j].min())}); road users' cost while poor USD "
             f"{float(sim.user_cost[0, j]):,.0f} a year",
             f"year 1, {money_of} USD {money:,.0f}: the agency's cut-off is {cut:.3f} USD of value a USD (the "
             "benefit per USD of the first treatment the money does not reach; 0: money left over)"]
    if act > 0:
        ratio = r.benefit[0, j, act] / lam / r.cost[0, j, act]
        lines.append(f"decision: {names[act]} ({ex.codes[act]}), USD {r.cost[0, j, act]:,.0f}, funded: waiting a year "
                     f"would cost USD {r.benefit[0, j, act] / lam:,.0f} of value, {ratio:.3f} a USD"
                     + (BELOW_CUTOFF if ratio < cut else ""))
    elif best > 0:
        ratio = r.benefit[0, j, best] / lam / r.cost[0, j, best]
        lines.append(f"decision: deferred. Its best treatment, {names[best]} ({ex.codes[best]}, USD "
                     f"{r.cost[0, j, best]:,.0f}), returns {ratio:.3f} USD of value a USD "
                     f"{'below' if ratio < cut else 'above'} the cut-off; it would be funded this year with {money_of} "
                     f"of USD {r.funded_at[0, j]:,.0f}")
    else:
        lines.append("decision: do nothing; every treatment is worth more later than now (each one's cost of waiting "
                     "a year is below 0)")
    if agent is not None:
        mine, theirs = int(agent.action[0, j]), int(agent.best[0, j])
        same = "as the planner does" if mine == act else "unlike the planner"
        if mine > 0:
            said = (f"funds {names[mine]} ({same}): it puts the cost of waiting a year at USD "
                    f"{agent.benefit[0, j, mine] / lam:,.0f} of value")
        elif theirs > 0:
            said = (f"defers it ({same}): its best, {names[theirs]}, at {agent.ratio[0, j] / lam:.3f} USD of value a "
                    f"USD against its cut-off {agent.cutoff[0, j] / lam:.3f}")
        else:
            said = f"does nothing ({same}): it values no treatment more now than later"
        lines.append(f"the trained agent {said}")
    lines += ["", "against waiting a year (nothing in year 1, then the best plan):",
              f"{'treatment':<28} {'code':<12} {'cost USD':>12} {'cost of waiting':>16} {'per USD':>8} "
              f"{'poor m²-years':>14} {'users USD':>12} {'later agency USD':>17}"]
    w = ex.versus_waiting
    for a in range(1, len(names)):
        c = r.cost[0, j, a]
        ben = r.benefit[0, j, a] / lam
        mark = " ◀" if a == act else ""
        lines.append(f"{names[a]:<28} {ex.codes[a]:<12} {c:>12,.0f} {ben:>16,.0f} {ben / c if c > 0 else 0:>8.3f} "
                     f"{w.poor_m2_years[a]:>14,.0f} {w.user_usd[a]:>12,.0f} {w.later_usd[a]:>17,.0f}{mark}")
    shown = act if act > 0 else best
    if shown > 0:
        n = ex.versus_never
        lines += ["", f"{names[shown]} now, then the best plan, against doing nothing for "
                  f"{sim.config.horizon_years} years: "
                  f"{n.poor_m2_years[shown]:,.0f} m²-years of deck area kept out of poor, road users' cost USD "
                  f"{n.user_usd[shown]:,.0f} avoided, the agency's later cost USD {abs(n.later_usd[shown]):,.0f} "
                  f"{'avoided' if n.later_usd[shown] >= 0 else 'added'} (present values)",
                  f"value of the bridge's plan at this year's prices of money: {names[shown]} now USD "
                  f"{ex.value_usd[shown]:,.0f}, waiting USD {ex.value_usd[0]:,.0f} (USD of value)"]
    lines.append("(poor: lowest rating ≤ 4, 23 CFR 490.409; USD of value: return units ÷ λ, docs/fleet-model.md; "
                 "values are expectations under the fitted deterioration model)")
    return "\n".join(lines)


def explain_plan(bridge_ids: list[str], *, run_dir: str | None = None, fleet=None, inventory: str | None = None,
                 mapping: str | None = None, years: int = 30, seed: int = 0, budget_scale: float | None = None,
                 budget_usd: float | None = None, max_poor: float | None = None, max_urban: int | None = None,
                 device: str = "auto", progress: bool = False) -> str:
    """``plan --explain``: the planner's year-1 decision of each of ``bridge_ids`` on the fleet the plan would be
    for (a run's, or ``fleet``, the default model's when None; ``inventory`` read with ``mapping``), at the budget
    the plan would have; with ``run_dir`` the trained agent's decision beside it. ``progress``: the price search
    counted on the command's progress bar where one is open (:mod:`bridgefleet.progress`).

    Raises:
        ValueError: a continuous fleet model (no exact values), an unknown structure number, a bad budget.
    """
    from bridgefleet.config import FleetConfig
    from bridgefleet.evaluation.explain import explains
    from bridgefleet.inventory.fleet import one_fleet, set_budget
    from bridgefleet.planning.exact_planner import ExactPlanner
    from bridgefleet.runs.load import load_policy

    agent = None
    if run_dir is not None:
        cfg, agent = load_policy(run_dir, device)
        fleet = cfg.fleet
    fleet = on_inventory(fleet or FleetConfig.default_model(), inventory, mapping)
    if max_urban is not None:
        fleet = fleet.replace(max_urban=max_urban)
    if fleet.component_model is None:
        raise ValueError("--explain reads the planner's exact values: the component fleet model only "
                         "(--fleet-model components-2026)")
    fleet, data = one_fleet(fleet.replace(horizon_years=years), seed)
    fleet = set_budget(fleet, budget_scale, budget_usd)
    sim = FleetSimulator(fleet, 1, data)
    sim.reset(None, [seed])
    rows = [find_bridge(sim, b) for b in bridge_ids]  # every number checked before the price search
    planner = ExactPlanner(max_poor_deck_area=max_poor, progress=progress)  # its search on the command's bar
    reasons = year_one(planner, sim)
    mine = year_one(agent, sim) if agent is not None and explains(agent) else None
    words = ("the inventory " if fleet.inventory else "") + fleet.fleet_in_words()
    return "\n\n".join(format_explanation(explain_bridge(planner, sim, j, reasons), sim, words, mine) for j in rows)
