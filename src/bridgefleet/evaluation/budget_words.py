"""Budgets in an agency's terms, in words: what the next USD 1 million a year buys at each budget, the least budget
that keeps the chance of FHWA's penalty low beside the least budget, the next million's check, and why a higher
budget can still show a worse figure. One source for ``scenarios.md``, ``scenarios.json`` and the report's budget
section (:func:`budget_terms`, which the report's template calls). The figures come from
:mod:`bridgefleet.evaluation.next_million` and :mod:`bridgefleet.evaluation.budget_terms`.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from bridgefleet.evaluation.budget_terms import worse_lines
from bridgefleet.evaluation.scenario_figure import SHOW_YEARS

MILLION_HEAD = ("budget (× sized)", "USD a year", "deck area out of poor in year 10 (m²)",
                "chance of a penalty: now → with it", "road users' cost avoided (USD, PV)",
                "worth at most (USD of value)")
"""The next-million table's columns."""


def terms_data(sc: Any) -> dict:
    """The scenarios' agency terms as JSON-ready data (``scenarios.json``): each level's next million (by scale),
    the penalty's least budget, the next million's check, the lines on worse figures. Empty on a model without
    them (the continuous ones)."""
    if not sc.exact:
        return {}
    y_n = sc.levels[0].deck.shape[1]
    years = [y for y in SHOW_YEARS if y <= y_n] or [y_n]
    return {"next_million": {f"{lv.scale:g}": None if lv.margin is None else lv.margin.as_dict() for lv in sc.levels},
            "penalty_least": None if sc.penalty is None else sc.penalty.as_dict(),
            "million_check": None if sc.million_check is None else sc.million_check.as_dict(),
            "worse_lines": worse_lines(sc.levels, sc.rule, years, sc.cost_lambda),
            "tightened": [lv.scale for lv in sc.levels if lv.tightened]}


class BudgetTerms(NamedTuple):
    """What the report's budget section shows: ``lines`` plain sentences, ``head`` and ``rows`` the next-million
    table (text cells)."""

    lines: list[str]
    head: tuple[str, ...]
    rows: list[list[str]]


def _usd(x: float) -> str:
    return f"USD {x:,.0f}"


def budget_terms(data: dict) -> BudgetTerms:
    """The agency terms of a ``scenarios.json`` (``data``, :func:`bridgefleet.evaluation.scenario_tables.summary`) in
    words and a table; nothing where it has none (written before them, or a continuous fleet model)."""
    rule, sized = data["rule"], data["sized_usd"]
    lines: list[str] = []
    pen = data.get("penalty_least")
    if pen:
        what = (f"the chance of a penalty (three consecutive years above {rule:.0%} of deck area poor, 23 U.S.C. "
                f"119(f)(2)) below {pen['alpha']:.0%}")
        floor = (f"the least budget, {_usd(data['certified_least_scale'] * sized)} a year, is the floor: below it no "
                 "plan keeps the rule even on average")
        if pen["scale"] is not None:
            missed = ("" if pen["missed_scale"] is None else
                      f"; at {_usd(pen['missed_scale'] * sized)} a year the planner did not show it")
            lines.append(f"Least budget that keeps {what}: {_usd(pen['scale'] * sized)} a year "
                         f"({pen['scale']:.3f} × the sized budget), where {floor}. At it the planner's plan had three "
                         f"years running above the rule on {pen['at_paths_running']} of {pen['at_paths']} sampled "
                         f"paths: the chance is below {pen['at_upper']:.1%} with 95 % confidence{missed}.")
        else:
            seen = [r for r in pen.get("runs", []) if r[2] >= pen["paths"]]  # the probes' own paths
            runs = "; ".join(f"{k} of {m} paths three years running at {_usd(s * sized)}" for s, k, m in seen)
            lines.append(f"No budget up to {_usd(pen['tried_to_scale'] * sized)} a year was shown to keep {what} "
                         f"(with 95 % confidence on {pen['paths']} sampled paths a budget"
                         + (f": {runs}" if runs else "") + f"); {floor}.")
    check = data.get("million_check")
    if check:
        said = "; ".join(f"{r['name']}: {_fig(r['estimate'], r['name'], True)} estimated, "
                         f"{_fig(r['measured'], r['name'], True)} ± {_fig(r['ci95'], r['name'])} in the runs "
                         f"({'within' if r['agrees'] else 'outside'} the tolerance ± {_fig(r['tolerance'], r['name'])})"
                         for r in check["rows"])
        gap = check["gap_usd"]
        moved = (f"with the million the planner came {_usd(-gap)} of value closer to it" if gap <= 0 else
                 f"with the million the planner fell {_usd(gap)} of value further below it")
        lines.append(f"What the next USD 1 million a year buys is estimated from the planner's price of money (the "
                     f"table). Checked at {check['scale']:g} × the sized budget against two planner runs USD 1 million "
                     f"apart on the same {check['paths']} sampled paths — {said}. The tolerance is the runs' 95 % "
                     "interval plus the change in the planner's distance below the bound between the two budgets, "
                     f"at the estimate's own rate ({moved}: the price of money does not see that the planner pays "
                     "whole treatments from each year's money).")
    if data.get("tightened"):
        lines.append("At " + ", ".join(f"{s:g} ×" for s in data["tightened"]) + " the planner was run again aimed "
                     "as tight as a lower budget needed, so that more money does not keep more deck area poor.")
    worse = data.get("worse_lines")
    if worse is not None:
        lines += worse or ["No higher budget shows a worse figure in the table than a lower one."]
    rows = []
    for lv in data["levels"]:
        nm = (data.get("next_million") or {}).get(f"{lv['scale']:g}")
        rows.append([f"{lv['scale']:g}", f"{lv['budget_usd']:,.0f}"] + (
            ["—"] * 4 if nm is None else
            [f"{nm['out_of_poor_m2']:,.0f}", f"{nm['penalty_before']:.0%} → {nm['penalty_after']:.0%}",
             f"{nm['user_usd']:,.0f}", f"{nm['worth_usd']:,.0f}"]))
    return BudgetTerms(lines, MILLION_HEAD, rows if data.get("next_million") else [])


def check_terms(data: dict, path: object) -> None:
    """Refuse, in one line naming ``path`` and the field, a ``scenarios.json`` whose agency terms
    (:func:`terms_data`'s fields, absent from files written before them) :func:`budget_terms` cannot read.

    Raises:
        ValueError: a field of the wrong kind, or a number not finite.
    """
    def bad(field: str) -> ValueError:
        return ValueError(f"{path}: field {field!r} is not what bridgefleet scenarios writes: write it again with "
                          "bridgefleet scenarios")

    def number(x: object, field: str, low: float = -math.inf) -> None:
        if isinstance(x, bool) or not isinstance(x, int | float) or not (math.isfinite(x) and x >= low):
            raise bad(field)

    nm = data.get("next_million")
    if nm is not None:
        if not isinstance(nm, dict):
            raise bad("next_million")
        for key, row in nm.items():
            if row is None:
                continue
            if not isinstance(row, dict):
                raise bad(f"next_million.{key}")
            for f in ("out_of_poor_m2", "user_usd", "worth_usd"):
                number(row.get(f), f"next_million.{key}.{f}")
            for f in ("penalty_before", "penalty_after"):
                number(row.get(f), f"next_million.{key}.{f}", 0.0)
    pen = data.get("penalty_least")
    if pen is not None:
        if not isinstance(pen, dict):
            raise bad("penalty_least")
        number(pen.get("alpha"), "penalty_least.alpha", 0.0)
        number(pen.get("paths"), "penalty_least.paths", 1.0)
        which = ("scale", "at_paths_running", "at_paths", "at_upper") if pen.get("scale") is not None else (
            "tried_to_scale",)
        for f in which:
            number(pen.get(f), f"penalty_least.{f}", 0.0)
        if pen.get("missed_scale") is not None:
            number(pen["missed_scale"], "penalty_least.missed_scale", 0.0)
        runs = pen.get("runs", [])
        if not isinstance(runs, list) or not all(isinstance(r, list) and len(r) == 3 for r in runs):
            raise bad("penalty_least.runs")
        for k, r in enumerate(runs):
            for x in r:
                number(x, f"penalty_least.runs[{k}]", 0.0)
    check = data.get("million_check")
    if check is not None:
        if not isinstance(check, dict) or not isinstance(check.get("rows"), list):
            raise bad("million_check")
        number(check.get("scale"), "million_check.scale", 0.0)
        number(check.get("gap_usd"), "million_check.gap_usd")
        number(check.get("paths"), "million_check.paths", 1.0)
        for k, r in enumerate(check["rows"]):
            if not isinstance(r, dict) or not isinstance(r.get("name"), str) or not isinstance(r.get("agrees"), bool):
                raise bad(f"million_check.rows[{k}]")
            for f in ("estimate", "measured", "ci95", "tolerance"):
                number(r.get(f), f"million_check.rows[{k}].{f}")
    for field in ("worse_lines", "tightened"):
        value = data.get(field)
        if value is not None and (not isinstance(value, list) or not all(
                isinstance(v, str) if field == "worse_lines" else isinstance(v, int | float) for v in value)):
            raise bad(field)


def _fig(x: float, name: str, signed: bool = False) -> str:
    """A checked figure in its unit (from the row's name); ``signed``: a change, with its sign where a chance."""
    if "USD" in name:
        return f"USD {x:,.0f}"
    if "m²" in name:
        return f"{x:,.0f} m²"
    return f"{100 * x:+.0f} points" if signed else f"{100 * x:.0f} points"


def markdown(data: dict) -> list[str]:
    """:func:`budget_terms` as ``scenarios.md`` lines (the table, then the sentences)."""
    terms = budget_terms(data)
    out = []
    if terms.rows:
        out += ["", "What the next USD 1 million a year buys at each budget (from the planner's price of money: "
                "money for the bridges at the cut-off; a dash where no policy meets the rule there):", "",
                "| " + " | ".join(terms.head) + " |", "|" + "---:|" * len(terms.head)]
        out += ["| " + " | ".join(r) + " |" for r in terms.rows]
    if terms.lines:
        out += ["", *terms.lines]
    return out


def plan_terms(plan: Any) -> list[str]:
    """``plan``'s printed summary in an agency's terms: the chance of a penalty over its samples (where it keeps
    them, :attr:`~bridgefleet.evaluation.work_plan.Plan.poor_paths`) and what the next USD 1 million a year buys
    (the planner's plan on the component model, :attr:`~bridgefleet.evaluation.work_plan.Plan.margin`)."""
    from bridgefleet.evaluation.next_million import million_words, three_running

    if plan.poor_paths is None or plan.poor_paths.shape[1] < 3:
        return []
    k = int(three_running(plan.poor_paths, plan.rule).sum())
    n = len(plan.poor_paths)
    out = [f"chance of a penalty (three consecutive years above {plan.rule:.0%} of deck area poor, 23 U.S.C. "
           f"119(f)(2)): {k / n:.0%} ({k} of {n} samples)"]
    if plan.policy.startswith("lagrangian"):
        out.append(million_words(plan.margin, plan.rule))
    return out


def plan_columns(plan: Any) -> dict[str, list[str]]:
    """plan_summary.csv's columns of the next USD 1 million a year, a value a year: the change in deck area poor at
    the year's end (m², negative: less poor) and the road users' cost it avoids that year (USD); none without
    :attr:`~bridgefleet.evaluation.work_plan.Plan.margin`."""
    nm = plan.margin
    if nm is None:
        return {}
    return {"next_million_poor_m2": [f"{v:.1f}" for v in nm.poor_m2],
            "next_million_user_usd": [f"{v:.0f}" for v in nm.user_by_year]}
