"""The scenarios written out: scenarios.csv, scenarios.md, scenarios.json and scenarios.png
(:func:`write_scenarios`), and the sentences the report shares with them. What they hold is computed by
:mod:`bridgefleet.evaluation.scenarios`."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from bridgefleet.evaluation.budget_words import markdown, terms_data
from bridgefleet.evaluation.evaluate import bound_gap
from bridgefleet.evaluation.scenario_figure import SHOW_YEARS, plot_scenarios
from bridgefleet.evaluation.scenarios import Level, Scenarios
from bridgefleet.outputs import counted, write_csv, write_json, write_text
from bridgefleet.stats import ci95

RULE_SENTENCE = ("The planner buys the most value (condition, traffic and cost) within the rule: it keeps the expected "
                 "poor share at or under the rule each year, not as low as the money allows, so below the rule the "
                 "poor share need not fall as the budget grows.")
"""What the planner's poor share means, said once for scenarios.md and the report's section."""
COLUMNS_SENTENCE = ("The breach columns and the worst sample-year poor are single episodes' (the highest share of any "
                    "episode in any year); the rule and the least budgets are judged on each year's mean over the "
                    "episodes. \"Planner aimed at\": the poor share each year's plan kept to, and where it followed "
                    "the relaxation's mixture, the share of the budget the mixture spends in expectation (the rest "
                    "a margin for the episodes whose spend runs above it, spent in the last years).")
"""What the scenario table's breach, worst-year and aim columns measure (scenarios.md)."""

def _mean_ci(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), ci95(x)


SCENARIO_FILES = ("scenarios.csv", "scenarios.md", "scenarios.png", "scenarios.json")
"""What :func:`write_scenarios` writes in its folder."""


def write_scenarios(sc: Scenarios, out: Path) -> str:
    """scenarios.csv (a row per level and year), scenarios.md (returned), scenarios.json and scenarios.png in
    ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    rule = sc.rule

    def rows():
        yield ["budget_scale", "budget_usd_per_year", "year", "deck_good", "deck_good_ci95", "deck_poor",
               "deck_poor_ci95", "agency_usd", "user_usd", "breach_probability"]
        for lv in sc.levels:
            r = lv.result
            for t in range(lv.deck.shape[1]):
                g, gc = _mean_ci(lv.deck[:, t, 0])
                p, pc = _mean_ci(lv.deck[:, t, 2])
                yield [f"{lv.scale:g}", f"{lv.budget_usd:.0f}", t + 1, f"{g:.4f}", f"{gc:.4f}", f"{p:.4f}",
                       f"{pc:.4f}", f"{lv.agency_usd[:, t].mean():.0f}", f"{r.user_usd[:, t].mean():.0f}",
                       f"{r.breached(rule)[:, t].mean():.3f}"]

    csv_path, md_path, png_path, json_path = (out / name for name in SCENARIO_FILES)
    write_csv(csv_path, rows())
    text = format_markdown(sc)
    write_text(md_path, text)
    data = summary(sc)
    write_json(json_path, data)
    plot_scenarios(data, png_path)
    return text


def lumps_sentence(lumps: dict[str, float], exact: bool = False) -> str:
    """Said under the (certified) least budget (``scenarios.md``, the report), with :attr:`Scenarios.lumps`'s
    figures (annual budgets: 2 decimals below 1, 1 below 100, none above); ``exact``: the component model's."""
    n = {k: f"{v:.2f}" if v < 1 else f"{v:.1f}" if v < 100 else f"{v:,.0f}" for k, v in lumps.items()}
    it = "least budget" if exact else "certificate"
    return (f"The {it} is a floor, not a price: it counts each year's spend in expectation over the futures, "
            f"while each future pays whole treatments from its own agency's budget; at the {it} a "
            f"rehabilitation costs a median {n['rehabilitation_median']} years of its agency's budget (at most "
            f"{n['rehabilitation_max']}) and a replacement {n['replacement_median']} years "
            f"({n['replacement_max']}). The lumpier the treatments, the further above the floor the least budget "
            "of any policy can lie.")


def format_markdown(sc: Scenarios) -> str:
    """The scenario table: per level the deck area good / poor at the shown years, costs, breaches, bound."""
    y_n = sc.levels[0].deck.shape[1]
    show = [y for y in SHOW_YEARS if y <= y_n] or [y_n]
    head = ["budget (× sized)", "USD a year"] + [f"good / poor y{y}" for y in show] + [
        "agency USD (PV)", "user USD (PV)", "P(breach any year)", "P(3 years running)", "worst sample-year poor",
        "planner aimed at", "bound (return units)"]
    lines = [f"Scenarios on {sc.fleet}: the lagrangian planner, rule ≤ {sc.rule:.0%} of deck area poor "
             f"(23 CFR 490.411), {counted(sc.episodes, 'episode')}, mean over them (± 95 % CI of the poor share); "
             f"deck area of {sc.levels[0].result.basis}. {RULE_SENTENCE} {COLUMNS_SENTENCE}", "",
             "| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    if sc.agency_budgets is not None and set(sc.agency_budgets) != {"urban", "rural"}:  # an inventory's owners
        lines[2:2] = ["Agencies holding the budgets and their sized budgets (USD a year; a level scales them all): "
                      + "; ".join(f"{name} {_usd(usd)}" for name, usd in sc.agency_budgets.items()) + ".", ""]
    for lv in sc.levels:
        cells = [f"{lv.scale:g}", f"{lv.budget_usd:,.0f}"]
        for y in show:
            p, pc = _mean_ci(lv.deck[:, y - 1, 2])
            ci = f" ± {pc:.1%}" if lv.deck.shape[0] > 1 else ""  # one episode has no interval
            cells.append(f"{lv.deck[:, y - 1, 0].mean():.1%} / {p:.1%}{ci}")
        r, b = lv.result, lv.result.breaches(sc.rule)
        cells += [f"{r.present_value(r.agency_usd).mean():,.0f}", f"{r.present_value(r.user_usd).mean():,.0f}",
                  f"{b['any_year']:.0%}", f"{b['three_consecutive']:.0%}" if y_n >= 3 else "— (under 3 years)",
                  f"{lv.deck[..., 2].max():.1%}",
                  "— (no money to aim with)" if lv.budget_usd == 0 else f"{100 * lv.aim:.3g} %" + (
                      f" (the relaxation's mixture of policies, {lv.budget_share:.0%} of budget)" if lv.rounded
                      else ""),
                  "— (no policy meets the rule at this budget)" if sc.exact and not lv.rule_met_by_bound else
                  f"{lv.bound:,.2f}" + ("" if lv.rule_met_by_bound else " (rule not met)")]
        lines.append("| " + " | ".join(cells) + " |")
    cert = sc.certified * sc.sized_usd
    low, high = max(sc.relaxation[0], 0.0), max(sc.relaxation[1], 0.0)  # no "-0.000"
    if math.isinf(high):  # no mixture of the policies found meets the rule, whatever the money
        where = ("the least budget is at least {:,.3f} × the sized budget" if sc.exact else
                 f"on the planner's {sc.planner_step:g}-point grid the least budget would be at least " + "{:,.3f} × "
                 "the sized budget").format(low)
        lines += ["", f"**No budget meets the rule in the relaxation**: with any money the policies found keep more "
                  f"than {sc.rule:.0%} of deck area poor in some year in expectation ({where}); a rule this tight is "
                  "out of the fleet's reach (docs/planning.md)."]
    else:
        how = (f"exact on the component model's finite states, no grid: the relaxation's least budget lies in "
               f"[{low:.3f}, {high:.3f}]" if sc.exact else
               f"certified values on a {sc.certify_step:g}-point grid; on the planner's {sc.planner_step:g}-point "
               f"grid the relaxation's least budget lies in [{low:.3f}, {high:.3f}]")
        lines += ["", f"{'Least' if sc.exact else 'Certified least'} budget: **{sc.certified:.3f} × the sized budget = "
                  f"USD {_usd(cert)} a year** — below it no policy of the model keeps the expected poor deck area ≤ "
                  f"{sc.rule:.0%} in every year ({how}; docs/planning.md)."]
        if sc.lumps is not None:
            lines.append(lumps_sentence(sc.lumps, sc.exact))
    if sc.planner_least is None:
        lines.append("The planner meets the rule in expectation at none of these levels.")
    else:
        least = f"{'' if sc.exact else 'certified '}least budget"
        # a ratio to a least budget under USD 1 a year (a sized budget of cents) says nothing
        ratio = (f"{sc.planner_least / sc.certified:.2f} × the {least}" if sc.certified * sc.sized_usd >= 1.0 else
                 f"the {least} is under USD 1 a year")
        lines.append(f"The planner meets the rule in expectation (each year's mean over the episodes at or under "
                     f"it) from {sc.planner_least:.3f} × = USD "
                     f"{_usd(sc.planner_least * sc.sized_usd)} a year ({ratio}; "
                     f"judged on {counted(sc.planner_at_least.episodes, 'episode')}"
                     + ("; no lower budget was simulated on as many episodes and missed" if sc.planner_missed is None
                        else f"; it missed at {sc.planner_missed:.3f} ×") + ")"
                     + _breach_words(sc.planner_at_least, sc.rule) + ".")
    lines += markdown({**summary_head(sc), **terms_data(sc)})
    lines.append(f"Sized budget: USD {_usd(sc.sized_usd)} a year (1/75 of the replacement value). PV: discounted "
                 f"at γ = {sc.levels[0].result.discount} a year; USD of today. Bound: the most mean discounted "
                 "return (condition, traffic and cost) a policy can reach at that budget (with the rule: in "
                 f"expectation), in return units of USD {1 / sc.cost_lambda:,.0f} of cost-equivalent each; it can "
                 + ("go below zero, and it holds for every policy of the model (docs/planning.md)." if sc.exact else
                    "go below zero, and on the planner's grid its error has no sign (docs/planning.md)."))
    if sc.agent is not None:
        lines += ["", "The trained agent at each level, on the same fleets (below the bound: per bridge, in return "
                  "units and USD of cost-equivalent a year):", "",
                  "| budget (× sized) | agent good / poor worst year | P(breach any year) | agent return | planner "
                  "return | bound | agent below bound | USD / bridge / yr | planner below bound | USD / bridge / yr |",
                  "|" + "---:|" * 10]
        for lv, a in zip(sc.levels, sc.agent, strict=True):
            au, ad = bound_gap(a, lv.bound, sc.n_bridges, sc.cost_lambda)
            pu, pd = bound_gap(lv.result, lv.bound, sc.n_bridges, sc.cost_lambda)
            worst = int(a.deck_by_year[..., 2].mean(0).argmax())
            d = a.deck_by_year.mean(0)[worst]
            lines.append(f"| {lv.scale:g} | {d[0]:.1%} / {d[2]:.1%} (y{worst + 1}) | "
                         f"{a.breaches(sc.rule)['any_year']:.0%} | {a.mean_return:,.2f} | "
                         f"{lv.result.mean_return:,.2f} | {lv.bound:,.2f} | {au:.3f} | {ad:,.0f} | {pu:.3f} | "
                         f"{pd:,.0f} |")
    return "\n".join(lines) + "\n"


def _usd(x: float) -> str:
    """USD with thousands separators: whole dollars, cents under USD 100 (a budget of cents is not "USD 0")."""
    return f"{x:,.2f}" if abs(x) < 100 else f"{x:,.0f}"


def _breach_words(level: Level | None, rule: float) -> str:
    """", where …": the probability of a breach at the planner's least budget, its worst year (issue 28)."""
    if level is None:
        return ""
    b = level.result.breaches(rule)
    return (f", where over {counted(level.episodes, 'episode')} the probability that one episode breaches it (poor "
            f"deck area above {rule:.0%}) in some year is {b['any_year']:.0%} and in 3 years running "
            f"{b['three_consecutive']:.0%}, "
            f"and the worst year's mean is {b['worst_year_poor']:.1%} (year {b['worst_year']})")


def summary(sc: Scenarios) -> dict:
    """The scenarios as JSON-ready data (scenarios.json; what ``report --scenarios`` shows)."""
    levels = []
    for lv in sc.levels:
        r, b = lv.result, lv.result.breaches(sc.rule)
        poor = lv.deck[..., 2]
        levels.append({"scale": lv.scale, "budget_usd": lv.budget_usd,
                       "deck_good_by_year": lv.deck[..., 0].mean(0).tolist(),
                       "deck_poor_by_year": poor.mean(0).tolist(),
                       "deck_poor_ci95_by_year": [_mean_ci(poor[:, t])[1] for t in range(poor.shape[1])],
                       "agency_usd_pv": float(r.present_value(r.agency_usd).mean()),
                       "user_usd_pv": float(r.present_value(r.user_usd).mean()),
                       "breach_any_year": b["any_year"], "breach_three_running": b["three_consecutive"],
                       "aim": lv.aim, "rounded": lv.rounded, "budget_share": lv.budget_share, "bound": lv.bound,
                       "rule_met_by_bound": lv.rule_met_by_bound,
                       "planner_return": lv.result.mean_return})
    for lv, a, row in zip(sc.levels, sc.agent or [], levels, strict=False):
        units, usd = bound_gap(a, lv.bound, sc.n_bridges, sc.cost_lambda)
        row["agent"] = {"return": a.mean_return, "deck_poor_by_year": a.deck_by_year[..., 2].mean(0).tolist(),
                        "breach_any_year": a.breaches(sc.rule)["any_year"],
                        "below_bound": {"per_bridge": units, "usd_per_bridge_year": usd}}
    return {"fleet": sc.fleet, "basis": sc.levels[0].result.basis, "rule": sc.rule, "episodes": sc.episodes,
            "sized_usd": sc.sized_usd, "certified_least_scale": sc.certified, "exact": sc.exact,
            "certify_step": sc.certify_step, "planner_step": sc.planner_step,
            "grid_relaxation_least_scale": list(sc.relaxation), "treatment_in_annual_budgets": sc.lumps,
            "planner_least_scale": sc.planner_least, "planner_least_episodes": None if sc.planner_at_least is None
            else sc.planner_at_least.episodes,
            "planner_missed_scale": sc.planner_missed,
            "planner_least_breaches": None if sc.planner_at_least is None
            else sc.planner_at_least.result.breaches(sc.rule),
            "agency_budgets_usd": sc.agency_budgets, "levels": levels, **terms_data(sc)}


def summary_head(sc: Scenarios) -> dict:
    """What :func:`bridgefleet.evaluation.budget_words.budget_terms` reads of :func:`summary` besides the terms."""
    return {"rule": sc.rule, "sized_usd": sc.sized_usd, "certified_least_scale": sc.certified,
            "levels": [{"scale": lv.scale, "budget_usd": lv.budget_usd} for lv in sc.levels]}
