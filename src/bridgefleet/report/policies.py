"""Which policies the report compares, what it calls them and the words it says about them: an owner's rules of
thumb, the one best rule of thumb, a score from 0 (do nothing) to 100 (the upper bound), money in millions, the
sentence in plain words and the warning for a run trained on another fleet. Numbers and text only; no HTML here.

The method's own terms (discounted return, return units, greedy, the do-nothing → bound distance) stay in the docs
(docs/report.md says how each figure here is computed from them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bridgefleet.evaluation.evaluate import EvalResult, best_heuristic
from bridgefleet.evaluation.work_plan import FHWA_RULE
from bridgefleet.sim.heuristics import HEURISTICS

TRAINED = "trained policy"
"""The trained agents' name among the results."""
PLANNER = "lagrangian"
"""The planner's name among the results (its CLI name)."""
NOT_AN_OWNERS = ("random",)
"""Heuristics no agency uses, left out of the report (they stay in ``evaluate``)."""
RURAL_RULES = tuple(n for n in HEURISTICS if n.startswith("rural_"))
"""The rules that fix the rural agency's fleet-level strategy (the urban bridges on the condition-based rule)."""
MIN_RURAL_FLEET = 2
"""A rural agency with fewer bridges than this has no fleet for a fleet-level strategy: its rules are left out."""
_NAMES = {TRAINED: "trained agent (this run)", PLANNER: "planner", "do_nothing": "do nothing",
          "condition_based": "condition-based rule", "worst_first": "worst first", "fixed_interval": "fixed interval",
          "random": "at random"}


def owner_rules(n_rural: int) -> list[str]:
    """The rules of thumb the report evaluates, in :data:`HEURISTICS` order: all but :data:`NOT_AN_OWNERS`, and
    without :data:`RURAL_RULES` where the rural agency has fewer than :data:`MIN_RURAL_FLEET` bridges (DC's one
    rural bridge: seven rules that differ on one bridge)."""
    return [n for n in HEURISTICS if n not in NOT_AN_OWNERS and (n_rural >= MIN_RURAL_FLEET or n not in RURAL_RULES)]


def collapse(results: list[EvalResult]) -> tuple[list[EvalResult], dict[str, list[str]]]:
    """The results with each set of identical outcomes (every episode's return and deck area shares equal) shown
    once, the first kept; and for each kept name the names it stands for (those left out)."""
    kept: list[EvalResult] = []
    same: dict[str, list[str]] = {}
    for r in results:
        twin = next((k for k in kept if np.array_equal(k.returns, r.returns)
                     and np.array_equal(k.deck_by_year, r.deck_by_year)), None)
        if twin is None or r.policy in (TRAINED, PLANNER):
            kept.append(r)
            same[r.policy] = []
        else:
            same[twin.policy].append(r.policy)
    return kept, same


def plain_name(name: str) -> str:
    """A policy's name in words: ``worst_first`` → "worst first", ``rural_6_aadt_risk_weighted`` → "rural agency:
    aadt risk weighted", the planner and the trained agents by what they are."""
    if name in _NAMES:
        return _NAMES[name]
    if name.startswith("rural_"):
        return "rural agency: " + name.split("_", 2)[2].replace("_", " ")
    return name.replace("_", " ")


def best_rule(results: list[EvalResult]) -> EvalResult:
    """Today's best rule of thumb: the heuristic among ``results`` with the highest mean return, doing nothing (the
    score's zero, no rule for work) aside (one for the whole report: its sentence, its table and its training chart
    name the same one)."""
    return best_heuristic([r for r in results if r.policy in HEURISTICS and r.policy != "do_nothing"] or results)


@dataclass(frozen=True)
class Scale:
    """The score of a policy: 100 × (its mean return − do nothing's) / (the top − do nothing's), so 0 is doing
    nothing and 100 the upper bound (no budget-feasible policy can expect more), or the best policy shown where
    the bound was not computed. Its CI scales the same way."""

    zero: float
    top: float
    top_is_bound: bool

    def score(self, value: float) -> float:
        """``value`` (return units) on the 0–100 scale."""
        return 100.0 * (value - self.zero) / (self.top - self.zero)

    def points(self, value: float) -> float:
        """A difference of ``value`` return units in points of the scale."""
        return 100.0 * value / (self.top - self.zero)


def scale(results: list[EvalResult], bound: tuple[float, float] | None) -> Scale:
    """The score's :class:`Scale` for ``results`` (do nothing among them) and ``bound`` (mean, CI) or None."""
    zero = next(r.mean_return for r in results if r.policy == "do_nothing")
    top = bound[0] if bound is not None else max(r.mean_return for r in results)
    span = top - zero
    if not span > 0:  # every policy as good as doing nothing: points of the bound's size
        span = max(abs(top), 1.0)
    return Scale(zero, zero + span, bound is not None)


def money(usd: float) -> str:
    """USD in words sized to the budget's scale: "USD 18.77 million" from a million, else "USD 520,000"."""
    return f"USD {usd / 1e6:,.2f} million" if abs(usd) >= 1e6 else f"USD {usd:,.0f}"


def deck_words(basis: str) -> str:
    """The deck area FHWA's measures count, as a noun phrase: "NHS deck area" or "deck area"."""
    return "NHS deck area" if basis.startswith("NHS") else "deck area"


def futures_words(n: int, inventory: bool, years: int) -> str:
    """What the evaluation's ``n`` episodes of ``years`` are: simulated futures of one inventory, or simulated
    fleets of a model."""
    return (f"{n} simulated {years}-year futures of this fleet" if inventory
            else f"{n} simulated fleets of the model, {years} years each")


def plain_words(results: list[EvalResult], best: EvalResult, n_bridges: int, inventory: bool) -> str:
    """One sentence comparing the trained agents with today's best rule of thumb ``best`` at year 10 (or the last):
    FHWA's share of deck area poor first (23 CFR 490.411's measure; at year 10 and in each one's worst year, so a
    policy that lets the fleet slide after year 10 does not read as the better one), then bridges poor by count
    (which can go the other way when the poor bridges are small ones), spend, and road users' cost of poor bridges
    (USD a year, the mean over the years)."""
    trained = next(r for r in results if r.policy == TRAINED)
    year = min(10, len(trained.share_poor_by_year))
    diff = (best.share_poor_by_year[year - 1] - trained.share_poor_by_year[year - 1]) * n_bridges
    spend = trained.mean_annual_cost_usd / max(best.mean_annual_cost_usd, 1.0) - 1.0
    deck_t, deck_b = (r.deck_by_year[:, year - 1, 2].mean() for r in (trained, best))
    (worst_t, when_t), (worst_b, when_b) = ((b["worst_year_poor"], b["worst_year"])
                                            for b in (r.breaches() for r in (trained, best)))
    user_t, user_b = trained.user_usd.mean(), best.user_usd.mean()
    spends = ("as much a year as the rule of thumb" if abs(spend) < 0.005 else
              f"{money(trained.mean_annual_cost_usd)} a year where the rule of thumb spends nothing"
              if best.mean_annual_cost_usd < 1.0 else
              f"{abs(spend):.0%} {'more' if spend >= 0 else 'less'} a year than the rule of thumb (each within the "
              "budgets)")
    count = "as many bridges poor" if abs(diff) < 0.05 else f"{abs(diff):.1f} {'fewer' if diff > 0 else 'more'} " \
        "bridges poor"
    if (diff < -0.05 and deck_t < deck_b) or (diff > 0.05 and deck_t > deck_b):
        count += f" ({'smaller' if diff < 0 else 'larger'} ones)"
    users = ("road users' cost of poor bridges is the same" if abs(user_t - user_b) < 0.5 else
             f"road users' cost of poor bridges (detours and delay) is {money(abs(user_t - user_b))} a year "
             f"{'lower' if user_t < user_b else 'higher'} ({money(user_t)} against {money(user_b)})")
    years = len(trained.share_poor_by_year)
    return (f"Over {futures_words(len(trained.returns), inventory, years)}: at year {year} the trained agent leaves "
            f"{deck_t:.1%} of {deck_words(trained.basis)} poor against {deck_b:.1%} under today's best rule of thumb "
            f"({plain_name(best.policy)}) with the same annual budgets, and {worst_t:.1%} (year {when_t}) against "
            f"{worst_b:.1%} (year {when_b}) in each one's worst year (FHWA's limit is 10 %), with {count}; it spends "
            f"{spends}, and {users}.")


def trained_on_words(fleet_inventory: str | None) -> str:
    """The fleet a run trained on, in words."""
    if fleet_inventory is None:
        return "a synthetic fleet of bridgefleet's model"
    from bridgefleet.inventory.model import BUNDLED

    return fleet_inventory if fleet_inventory in BUNDLED else Path(fleet_inventory).name


def elsewhere_warning(trained_on: str, report_on: str, results: list[EvalResult], sc: Scale) -> str:
    """The warning at the top of a report on a fleet its run was not trained on: where it was trained, and how far
    the trained agents fall short of the planner here (score points, spend, the worst year's deck area poor), or
    that the planner was not run."""
    head = (f"This run was trained on {trained_on}, not on {report_on}: its decisions were never trained or checked "
            "on this fleet.")
    trained = next(r for r in results if r.policy == TRAINED)
    planner = next((r for r in results if r.policy == PLANNER), None)
    advice = ("Use the planner's plan here (bridgefleet report RUN --policy lagrangian, bridgefleet plan --policy "
              "lagrangian), or train on this fleet.")
    if planner is None:
        return f"{head} Its distance to the planner is not measured (the planner was left out: --no-bound). {advice}"
    gap = sc.points(planner.mean_return - trained.mean_return)
    (w_t, w_p) = (r.breaches(FHWA_RULE)["worst_year_poor"] for r in (trained, planner))
    where = "below" if gap >= 0 else "above"
    return (f"{head} Here it scores {abs(gap):.1f} points {where} the planner (0: do nothing, 100: the upper bound), "
            f"spends {money(trained.mean_annual_cost_usd)} a year against the planner's "
            f"{money(planner.mean_annual_cost_usd)}, and leaves {w_t:.1%} of {deck_words(trained.basis)} poor in its "
            f"worst year against the planner's {w_p:.1%}. {advice}")
