"""Budgets in an agency's terms (issue 80 item 2): plans that do not get worse with more money, the least budget that
keeps the chance of FHWA's penalty low, and a plain line wherever a higher budget still shows a worse figure.

**The rule first.** At each budget the planner aims its prices at the rule and, where its simulated plan misses it,
at tighter shares (:data:`bridgefleet.evaluation.component_scenarios.AIMS`). A higher budget could then aim looser
than a lower one that needed a tight aim, and show more deck area poor and more breaches with more money.
:func:`rule_first` runs such a level again aimed as tight as the lower budget needed (the lower budget's plan shows
that aim can be kept with less money), and keeps the run with the smaller worst-year poor share.

**The least budget for the chance of a penalty.** FHWA's penalty follows three consecutive years above 10 % of NHS
deck area poor (23 CFR 490.411, 23 U.S.C. 119(f)(2)). :func:`penalty_least` finds the least budget at which the
planner's plan keeps the chance of that below α (``--max-penalty-chance``, 5 % by default) with 95 % confidence: on
:func:`penalty_paths` sampled paths (59 for 5 %) its count of such paths has a one-sided Clopper–Pearson upper bound
≤ α (Clopper & Pearson, Biometrika 26(4), 1934; none of 59 paths for 5 %). Its probes aim the planner as tight as
the budget allows; the levels' own runs bracket it, a probe confirms the lowest that kept it or the search goes up
from the floor, then it bisects, and the budget found is judged again on as many fresh paths (``PENALTY_PROBES``
planner runs in all).

**Why a higher budget can still show a worse figure** (:func:`worse_lines`): the runs share their seeds, so each
figure's difference has a paired 95 % confidence interval; a difference inside it is sampling noise. Otherwise the
planner maximises its return (condition, road users' and agency cost together) within the rule, and a figure it
gave up bought more of the others: the line says so with the return's gain.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from bridgefleet.evaluation.next_million import three_running
from bridgefleet.stats import ci95

PENALTY_CHANCE = 0.05
"""The chance of a penalty (three consecutive years above the rule) the least budget keeps below, by default."""
CONFIDENCE = 0.95
"""How sure the least budget's chance is below α: the one-sided Clopper–Pearson bound's level."""
MAX_PATHS = 256
"""The most paths a probe of the penalty's least budget runs: α ≥ 1 − 0.05^(1/256) ≈ 1.17 % can be shown."""
PENALTY_PROBES = 3
"""Planner runs on :func:`penalty_paths` paths the search makes at most (a level that needs confirming included)."""
BISECT_TOL = 0.05
"""The search stops once the budgets seen to miss and to keep the chance lie within this share of the latter."""
GALLOP = 1.5
"""Beyond the highest level the search tries this multiple of the last budget tried."""


def penalty_paths(alpha: float) -> int:
    """The fewest paths on which none with three consecutive years above the rule shows the chance is below
    ``alpha`` with :data:`CONFIDENCE` (⌈ln(1 − 0.95) / ln(1 − α)⌉: 59 for 5 %).

    Raises:
        ValueError: ``alpha`` outside [1 − 0.05^(1/256), 1) (more than :data:`MAX_PATHS` paths a probe).
    """
    least = 1.0 - (1.0 - CONFIDENCE) ** (1.0 / MAX_PATHS)
    if not least <= alpha < 1.0:
        raise ValueError(f"--max-penalty-chance {alpha:g}: must be a share in [{least:.4f}, 1) (a smaller chance "
                         f"needs more than {MAX_PATHS} sampled paths a budget to show)")
    return math.ceil(math.log(1.0 - CONFIDENCE) / math.log(1.0 - alpha))


def chance_upper(k: int, n: int) -> float:
    """The one-sided :data:`CONFIDENCE` Clopper–Pearson upper bound on a chance seen ``k`` times in ``n``."""
    from scipy.stats import beta  # here: SciPy's stats take a second to import

    return 1.0 if k >= n else float(beta.ppf(CONFIDENCE, k + 1, n - k))


def penalties(level, rule: float) -> tuple[int, int]:
    """(paths with three consecutive years above ``rule``, paths) of a level's run."""
    three = three_running(level.deck[..., 2], rule)
    return int(three.sum()), len(three)


def _meets(level, rule: float) -> bool:
    return bool((level.deck[..., 2].mean(0) <= rule + 1e-12).all())


def aims_for(levels: list, scale: float, rule: float, aims: tuple[float, ...]) -> tuple[float, ...]:
    """The shares of the rule (of ``aims``) a run at ``scale`` tries: none looser than the tightest aim a lower
    level (of ``levels``) needed to meet the rule in expectation."""
    needed = [lv.aim for lv in levels if lv.scale < scale and _meets(lv, rule) and lv.aim]
    tight = min(needed, default=rule)
    return tuple(a for a in aims if rule * a <= tight + 1e-12) or aims[-1:]


def _rule_figures(level, rule: float) -> tuple[float, float, float]:
    """(worst year's mean poor share, chance of a breach in some year, chance of three years running)."""
    b = level.result.breaches(rule)
    return b["worst_year_poor"], b["any_year"], b["three_consecutive"]


def rule_first(levels: list, rule: float, rerun: Callable[[float, tuple[float, ...]], object],
               aims: tuple[float, ...]) -> list:
    """The levels (ascending budgets) with each that aims looser than a lower level needed and shows a worse rule
    figure (worst-year mean poor share, a breach in some year, three years running) run again by ``rerun(scale,
    aims)`` at the lower level's aim (module docstring); the run with the smaller worst-year poor share is kept, with
    the first run's bound (at the rule itself), marked ``tightened``."""
    out: list = []
    for lv in sorted(levels, key=lambda x: x.scale):
        tighter = aims_for(out, lv.scale, rule, aims)
        if lv.aim and rule * tighter[0] < lv.aim - 1e-12:
            lower = [x for x in out if _meets(x, rule) and x.aim <= rule * tighter[0] + 1e-12]
            mine = _rule_figures(lv, rule)
            if any(any(m > o + 1e-9 for m, o in zip(mine, _rule_figures(x, rule), strict=True)) for x in lower):
                again = rerun(lv.scale, tighter)
                if _rule_figures(again, rule)[0] <= mine[0] + 1e-12:
                    again.bound, again.rule_met_by_bound, again.tightened = lv.bound, lv.rule_met_by_bound, True
                    lv = again
        out.append(lv)
    return out


@dataclass
class PenaltyBudget:
    """The least budget for the chance of a penalty (:func:`penalty_least`).

    Attributes:
        alpha: the chance it keeps below. paths: the paths a run is judged on (:func:`penalty_paths`).
        at: the run at the least budget found (its scale, paths, result), or None where none was shown.
        counts: (paths with three years running, paths) it was judged on there: its own and a second set.
        missed: the largest budget below it seen not to keep the chance (× the sized budget), or None.
        runs: (scale, paths with three years running, paths) of every budget judged, ascending (a confirmed
            budget's two sets of paths together).
        tried_to: the highest budget tried where none was shown, × the sized budget.
    """

    alpha: float
    paths: int
    at: object | None = None
    counts: tuple[int, int] | None = None
    missed: float | None = None
    runs: list[tuple[float, int, int]] = field(default_factory=list)
    tried_to: float | None = None

    @property
    def scale(self) -> float | None:
        return None if self.at is None else self.at.scale

    def as_dict(self) -> dict:
        k, n = self.counts or (None, None)
        return {"alpha": self.alpha, "paths": self.paths, "scale": self.scale, "missed_scale": self.missed,
                "tried_to_scale": self.tried_to, "at_paths_running": k, "at_paths": n,
                "at_upper": None if k is None else chance_upper(k, n), "runs": [list(r) for r in self.runs]}


def penalty_least(levels: list, rule: float, alpha: float, probe: Callable[[float, bool], object], probes: int,
                  max_scale: float, floor: float = 0.0, misses: Callable[[object], bool] | None = None
                  ) -> PenaltyBudget:
    """The least budget at which the planner keeps the chance of three consecutive years above ``rule`` below
    ``alpha`` with :data:`CONFIDENCE` (module docstring), in at most ``probes`` runs of ``probe(scale, fresh)`` on
    :func:`penalty_paths` paths (``fresh``: a second set of as many paths, other seeds); budgets above ``max_scale``
    (× the sized budget) are not tried, nor at or below ``floor`` (the least budget: no plan meets the rule there
    even on average). ``misses(run)``: whether a run of ``levels`` above α says the budget misses (a level aimed
    looser than the probes aim, the tightest the budget allows, does not); None: every one does.

    The levels bracket it; the lowest level above every budget that missed whose own paths saw no penalty is
    confirmed on the probes' paths, or the search goes up from the last miss (or ``floor``) × :data:`GALLOP`; then
    it bisects. A
    budget shown on the probes' paths is judged again with a second set of as many (the two together must show it):
    the bisection picks the least budget whose paths happened to stay clear, and fresh paths undo that choice.
    The last probe goes to that check where one is due.

    Returns:
        :class:`PenaltyBudget`.
    """
    n = penalty_paths(alpha)
    seen: list[list] = []  # [scale, paths running, paths, run, confirmed, a miss counts]
    for lv in levels:
        seen.append([lv.scale, *penalties(lv, rule), lv, False, misses is None or misses(lv)])

    def shown(k: int, m: int) -> bool:
        return chance_upper(k, m) <= alpha + 1e-12

    def fails(e: list) -> bool:
        """Above α on the run's paths, or on as many paths as a probe and not shown below it."""
        return e[5] and (e[1] / e[2] > alpha or (e[2] >= n and not shown(e[1], e[2])))

    def state(confirmed: bool = False) -> tuple[float, list | None]:
        """(the largest budget that failed below the least shown, the least shown (``confirmed``: and confirmed))."""
        ok = [e for e in seen if shown(e[1], e[2]) and (e[4] or not confirmed)]
        hi = min(ok, key=lambda e: e[0]) if ok else None
        lo = max((e[0] for e in seen if fails(e) and (hi is None or e[0] < hi[0])), default=floor)
        return max(lo, floor), hi

    done = 0
    while done < probes:
        lo, hi = state()
        if hi is not None and not hi[4] and (hi[0] - lo <= BISECT_TOL * hi[0] or done == probes - 1):
            k, m = penalties(probe(hi[0], True), rule)  # the second set of paths
            hi[1], hi[2], hi[4] = hi[1] + k, hi[2] + m, True
            done += 1
            continue
        if hi is not None:  # bisect between the brackets
            if hi[0] - lo <= BISECT_TOL * hi[0]:
                break
            nxt = 0.5 * (lo + hi[0])
        else:  # confirm the lowest level above every miss whose own paths kept it, or go beyond the levels
            above = sorted(e[0] for e in seen if e[0] > lo and not fails(e) and e[1] / e[2] <= alpha)
            tried = max((e[0] for e in seen), default=0.0)
            nxt = above[0] if above else min((lo if lo > 0 else tried) * GALLOP, max_scale)
            if not above and (nxt <= lo or any(abs(e[0] - nxt) <= 1e-12 for e in seen if e[2] >= n)):
                break  # nothing left to try
        seen.append([nxt, *penalties(lv := probe(nxt, False), rule), lv, False, True])
        done += 1
    lo, hi = state(confirmed=True)
    out = PenaltyBudget(alpha, n, runs=sorted((e[0], e[1], e[2]) for e in seen))
    if hi is None:
        out.tried_to = max(e[0] for e in seen)
        out.missed = lo if lo > floor else None
    else:
        out.at, out.counts, out.missed = hi[3], (hi[1], hi[2]), (lo if lo > floor else None)
    return out


def _row_figures(level, rule: float, years: list[int]) -> dict[str, tuple[np.ndarray, bool, str]]:
    """The scenario table's figures of a level, per path (E,), with whether higher is better and how shown."""
    r, deck = level.result, level.deck
    out = {}
    for y in years:
        out[f"good deck area in year {y}"] = (deck[:, y - 1, 0], True, "pct")
        out[f"poor deck area in year {y}"] = (deck[:, y - 1, 2], False, "pct")
    out["road users' cost"] = (r.present_value(r.user_usd), False, "usd")
    out["chance of a breach in some year"] = (r.breached(rule).any(1).astype(float), False, "chance")
    out["chance of three years running"] = (three_running(deck[..., 2], rule).astype(float), False, "chance")
    return out


def _shown(x: float, how: str) -> float:
    """The value as the table rounds it (% to 0.1 point, chances to 1 point, USD to 1)."""
    return round(x * 1000) / 1000 if how == "pct" else round(x * 100) / 100 if how == "chance" else round(x)


def _say(x: float, how: str) -> str:
    return f"{x:.1%}" if how == "pct" else f"{x:.0%}" if how == "chance" else f"USD {x:,.0f}"


def worse_lines(levels: list, rule: float, years: list[int], cost_lambda: float) -> list[str]:
    """One plain line for each level (ascending budgets) showing a figure of the scenario table worse than a lower
    budget does: which figures, against which budget, and why (module docstring)."""
    lines = []
    levels = sorted(levels, key=lambda x: x.scale)
    for i, lv in enumerate(levels):
        mine = _row_figures(lv, rule, years)
        worse = []  # (figure, lower level, its value, mine, within noise)
        for name, (x, up, how) in mine.items():
            best = None
            for low in levels[:i]:
                y = _row_figures(low, rule, years)[name][0]
                a, b = _shown(float(x.mean()), how), _shown(float(y.mean()), how)
                if (a < b if up else a > b) and (best is None or (b > best[1] if up else b < best[1])):
                    best = (low, b, y)
            if best is not None:
                low, _, y = best
                d = x - y
                ci = ci95(d)
                worse.append((name, low, float(y.mean()), float(x.mean()), how, abs(float(d.mean())) <= ci))
        if not worse:
            continue
        said = "; ".join(f"{name} {_say(m, how)} against {_say(o, how)} at {low.scale:g} ×"
                         for name, low, o, m, how, _ in worse)
        n = lv.episodes
        if all(noise for *_, noise in worse):
            why = f"within the sampling noise of {n} paths (each difference inside its paired 95 % interval)"
        elif not _meets(lv, rule):
            why = "the planner cannot keep the rule in expectation at this budget"
        else:
            low = min((w[1] for w in worse if not w[5]), key=lambda x: x.scale)
            gain = (lv.result.mean_return - low.result.mean_return) / cost_lambda
            aims = (f"its aim, {100 * lv.aim:.3g} % of deck area poor" if lv.aim else "the rule")
            traded = all(w[0].startswith(("good", "road")) for w in worse if not w[5])  # not a rule figure
            if traded and lv.aim and low.aim and lv.aim < low.aim - 1e-12:
                why = (f"the planner aims tighter here ({100 * lv.aim:.3g} % of deck area poor against "
                       f"{100 * low.aim:.3g} % at {low.scale:g} ×: the rule first), and the money that takes comes "
                       "from the rest")
            elif gain > 0:
                why = (f"the planner keeps the poor share within {aims}, and puts the rest of the money where its "
                       f"return (condition, road users' and agency cost together) gains most: USD {gain:,.0f} of value "
                       f"more than at {low.scale:g} ×")
            else:
                why = (f"the planner's own return is no better either (USD {-gain:,.0f} of value less than at "
                       f"{low.scale:g} ×): its yearly choice of whole treatments is not always better with more money")
        lines.append(f"At {lv.scale:g} × the budget: {said} — {why}.")
    return lines


CHECK_AT = 1.0
"""The next million is checked against two planner runs at the level nearest this budget (× the sized budget)."""


@dataclass
class MillionCheck:
    """The next million at one level against two planner runs a million apart (:func:`bridgefleet.evaluation.
    next_million.check`): ``scale`` the level (× the sized budget), ``rows`` the figures, ``gap_usd`` the change in
    the planner's distance below the bound between the two (USD of value), ``paths`` the runs' paths."""

    scale: float
    rows: list
    gap_usd: float
    paths: int

    def as_dict(self) -> dict:
        return {"scale": self.scale, "gap_usd": self.gap_usd, "paths": self.paths,
                "rows": [{"name": r.name, "estimate": r.estimate, "measured": r.measured, "ci95": r.ci,
                          "tolerance": r.tolerance, "agrees": r.agrees} for r in self.rows]}


def agency_terms(levels: list, level_at: Callable[[float, tuple[float, ...], int, bool, bool], object], rule: float,
                 alpha: float, episodes: int, sized_usd: float, cost_lambda: float, aims: tuple[float, ...],
                 evidence: list, max_scale: float, step_usd: float, floor: float = 0.0,
                 penalty_aims: tuple[float, ...] | None = None) -> tuple[list, PenaltyBudget, MillionCheck | None]:
    """The levels with the rule first (:func:`rule_first`), the least budget for the chance of a penalty
    (:func:`penalty_least`, ``evidence`` other runs to bracket it with) and the next million's check at the level
    nearest :data:`CHECK_AT`; ``level_at(scale, aims, paths, fresh, quick)`` runs the planner (a :class:`~bridgefleet.
    evaluation.scenarios.Level`) on the same seeds as the levels (``fresh``: as many other paths, the seeds after
    them; ``quick``: the penalty's probes, ``aims`` tightest first and the first whose plan keeps the rule kept: the
    plan with the least chance of a penalty the budget allows). ``floor``: the least budget (× the sized budget).
    ``penalty_aims``: the probes' aims, tightest first (default ``aims`` reversed; :data:`bridgefleet.evaluation.
    component_scenarios.PENALTY_AIMS` on the component model)."""
    from bridgefleet.evaluation.next_million import check

    levels = rule_first(levels, rule, lambda s, a: level_at(s, a, episodes, False, False), aims)
    million, after = None, None
    priced = [lv for lv in levels if lv.margin is not None and lv.scale > 0 and not lv.tightened]
    if priced and sized_usd > 0:
        lv = min(priced, key=lambda x: abs(math.log(x.scale / CHECK_AT)))
        after = level_at(lv.scale + step_usd / sized_usd, aims, episodes, False, False)  # at the rule first, as lv
        rows, gap = check(lv.margin, lv.result, after.result, (lv.bound, after.bound), cost_lambda, rule)
        million = MillionCheck(lv.scale, rows, gap, episodes)
    n = penalty_paths(alpha)
    runs = [e for e in [*evidence, after] if e is not None and all(e is not lv for lv in levels)]  # more brackets
    probe_aims = aims[::-1] if penalty_aims is None else penalty_aims
    tightest = rule * min(probe_aims)
    penalty = penalty_least(levels + runs, rule, alpha, lambda s, fresh: level_at(s, probe_aims, n, fresh, True),
                            PENALTY_PROBES, max_scale, floor, lambda lv: bool(lv.aim) and lv.aim <= tightest + 1e-12)
    return levels, penalty, million
