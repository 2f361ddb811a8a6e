"""What the next USD 1 million a year buys, in an agency's terms, from the planner's price of money; and its check
against two planner runs a million apart.

The planner's bound at a budget b (:mod:`bridgefleet.planning.exact_bound`, the rule priced) prices each agency's
money in each year (μ, the Lagrange multipliers of its budget rows). From them, with no further planner run
(:func:`next_million`):

- **worth**: μ × the extra money, in USD of value (÷ ``cost_lambda``; present value over the horizon): the most the
  money is worth to the relaxation (:func:`bridgefleet.planning.exact_margin.money_worth`);
- **what it buys**: each bridge's best plan (exact DP) at a price of money 20 % below the planner's against 20 %
  above (:func:`bridgefleet.planning.exact_margin.price_response`): the plans that change are those of the bridges
  at the cut-off, and their difference in expected spend, deck area poor each year (m², the deck area FHWA counts)
  and road users' cost (USD, present value: a poor bridge's detour cost) is scaled to the extra money over the
  horizon. A first-order figure: what money buys near the price the planner pays for it;
- **the chance of a penalty** (three consecutive years above the rule, 23 CFR 490.411, 23 U.S.C. 119(f)(2)): the
  level's simulated paths, each year's poor share moved by that change, counted again.

:func:`check` compares it with two planner runs on the same seeds a million apart, each aimed at the rule first
(as ``scenarios`` runs a level). The planner funds whole treatments from each year's money, so it sits below the
relaxation (the bound), and more money also changes that distance: the planner's gain is the relaxation's gain less
the change in its distance below the bound, which the two runs' bounds measure. The **tolerance** of each figure is
the 95 % confidence interval of the two runs' paired difference plus that change, converted into the figure's unit
at the estimate's own rate (the figure per USD of value). The figure agrees where the runs' difference lies within
it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bridgefleet.evaluation.evaluate import EvalResult
from bridgefleet.planning.exact_bound import ExactBound
from bridgefleet.planning.exact_dp import FleetModel
from bridgefleet.planning.exact_margin import money_worth, price_response
from bridgefleet.stats import ci95

STEP_USD = 1e6
"""The next money a year, USD (split between the agencies as the budget is)."""
YEAR = 10
"""The year whose deck area out of poor is reported (the issue's "by year 10")."""


@dataclass
class NextMillion:
    """What ``step_usd`` more a year buys at one budget, from the planner's prices (module docstring).

    Attributes:
        step_usd: the extra money, USD a year.
        worth_usd: the most it is worth to the relaxation, USD of value (present value over the horizon).
        poor_m2: float64 (T,), the change in expected deck area poor at the end of each year, m² (negative: less
            poor), of the deck area FHWA counts.
        user_usd: road users' cost avoided, USD (present value; positive: avoided).
        user_by_year: float64 (T,), road users' cost avoided each year, USD (undiscounted).
        penalty: (before, with the money): the chance that a path has three consecutive years above the rule, on
            the level's simulated paths, 0–1.
        deck_m2: the deck area FHWA counts, m².
    """

    step_usd: float
    worth_usd: float
    poor_m2: np.ndarray
    user_usd: float
    penalty: tuple[float, float]
    deck_m2: float
    user_by_year: np.ndarray

    @property
    def out_of_poor_m2(self) -> float:
        """Deck area out of poor at the end of year :data:`YEAR` (or the last year), m²."""
        return float(-self.poor_m2[min(YEAR, len(self.poor_m2)) - 1])

    def as_dict(self) -> dict:
        return {"step_usd": self.step_usd, "worth_usd": self.worth_usd, "year": min(YEAR, len(self.poor_m2)),
                "out_of_poor_m2": self.out_of_poor_m2, "poor_m2_by_year": self.poor_m2.tolist(),
                "user_usd": self.user_usd, "user_usd_by_year": self.user_by_year.tolist(),
                "penalty_before": self.penalty[0], "penalty_after": self.penalty[1]}


def three_running(share: np.ndarray, rule: float) -> np.ndarray:
    """bool (E,): the paths whose share of deck area poor (float (E, T), 0–1) is above ``rule`` three years running
    (23 U.S.C. 119(f)(2))."""
    over = share > rule
    run = np.zeros(share.shape[0], dtype=np.int64)
    three = np.zeros(share.shape[0], dtype=bool)
    for t in range(share.shape[1]):
        run = np.where(over[:, t], run + 1, 0)
        three |= run >= 3
    return three


def next_million(bound: ExactBound, model: FleetModel, agency: np.ndarray, budget: np.ndarray, carry_over: bool,
                 deck: np.ndarray, user_cost: np.ndarray, shares: np.ndarray, rule: float,
                 step_usd: float = STEP_USD) -> NextMillion | None:
    """The next ``step_usd`` a year at the planner's budget (module docstring).

    Args:
        bound: the planner's bound on the fixed fleet (``PlannerBound.parts[0]``: its prices).
        model: the fleet's finite model (:func:`bridgefleet.planning.exact_planner.fleet_model`; its costs,
            discount and ``cost_lambda``). agency: int (B,), each bridge's row of ``budget``.
        budget: float64 (G, T) USD a year per agency (the level's). carry_over: unspent money carries over.
        deck: float64 (B,) m², the deck area FHWA counts. user_cost: float64 (B,) USD a year of a poor bridge.
        shares: float (E, T), the share of that deck area poor at the end of each year on each simulated path of
            the planner's plan at this budget, 0–1.
        rule: the share the penalty counts (0.10).
        step_usd: the extra money a year, split between the agencies as ``budget`` is (evenly where it is 0).

    Returns:
        :class:`NextMillion`, or None where the relaxation does not meet the rule at this budget (its prices then
        price the rule's penalty, not money).
    """
    if not bound.rule_met:
        return None
    t_n = budget.shape[1]
    year = budget[:, 0]
    split = year / year.sum() if year.sum() > 0 else np.full(len(year), 1.0 / len(year))
    extra = np.repeat((step_usd * split)[:, None], t_n, axis=1)
    spend, poor = price_response(model, bound.price[agency], bound.price_poor)
    bought = float(spend.sum())  # USD over the horizon between the two prices
    scale = step_usd * t_n / bought if bought > 1e-6 * step_usd else 0.0  # no money at the cut-off: buys nothing
    poor_m2 = scale * (deck @ poor)
    user = -scale * (user_cost @ poor)
    total = float(deck.sum())
    after = shares + (poor_m2 / total if total > 0 else 0.0)
    chance = (float(three_running(shares, rule).mean()), float(three_running(after, rule).mean()))
    return NextMillion(step_usd, money_worth(bound.row_price, extra, carry_over) / model.cost_lambda, poor_m2,
                       float(user @ model.gamma ** np.arange(t_n)), chance, total, user)


@dataclass
class Check:
    """:func:`check`'s comparison of one figure.

    Attributes:
        name: what it is. estimate: from the prices. measured: the two runs' mean paired difference. ci: its 95 %
            confidence half-width. tolerance: ``ci`` plus the planner's distance below the bound in this unit.
    """

    name: str
    estimate: float
    measured: float
    ci: float
    tolerance: float

    @property
    def agrees(self) -> bool:
        return abs(self.measured - self.estimate) <= self.tolerance


def _paired(d: np.ndarray) -> tuple[float, float]:
    """Mean and 95 % half-width (Student's t s / √n, :func:`bridgefleet.stats.ci95`) of paired differences."""
    return float(d.mean()), ci95(d)


def check(estimate: NextMillion, before: EvalResult, after: EvalResult, bounds: tuple[float, float],
          cost_lambda: float, rule: float) -> tuple[list[Check], float]:
    """The estimate against two planner runs on the same seeds, at b (``before``) and at b + the step (``after``),
    whose bounds at the rule are ``bounds`` (reward units), figure by figure (module docstring).

    Returns:
        (checks of the value (USD), deck area out of poor in year :data:`YEAR` (m²), road users' cost avoided (USD)
        and the change in the chance of a penalty (−1 … 1); the change in the planner's distance below the bound
        from b to b + the step, USD of value (negative: the planner came closer)).

    Raises:
        ValueError: the runs are not on as many paths and years.
    """
    if before.deck_by_year.shape != after.deck_by_year.shape:
        raise ValueError(f"the two runs differ in paths or years: {before.deck_by_year.shape} and "
                         f"{after.deck_by_year.shape}")
    y = min(YEAR, before.deck_by_year.shape[1]) - 1
    gap = ((bounds[1] - after.mean_return) - (bounds[0] - before.mean_return)) / cost_lambda
    worth = max(estimate.worth_usd, 1e-12)
    was = three_running(before.deck_by_year[..., 2], rule).astype(float)
    rows = []
    for name, est, diff in (
            ("value, USD", estimate.worth_usd, (after.returns - before.returns) / cost_lambda),
            (f"deck area out of poor in year {y + 1}, m²", estimate.out_of_poor_m2,
             (before.deck_by_year[:, y, 2] - after.deck_by_year[:, y, 2]) * estimate.deck_m2),
            ("road users' cost avoided, USD", estimate.user_usd,
             before.present_value(before.user_usd) - after.present_value(after.user_usd)),
            ("change in the chance of a penalty", estimate.penalty[1] - estimate.penalty[0],
             three_running(after.deck_by_year[..., 2], rule).astype(float) - was)):
        mean, ci = _paired(diff)
        rows.append(Check(name, est, mean, ci, ci + abs(gap) * abs(est) / worth))
    return rows, gap


def million_words(nm: NextMillion | None, rule: float) -> str:
    """The next million at a budget in one sentence (``plan``'s summary, scenarios.md)."""
    if nm is None:
        return ("The next USD 1 million a year: no price of money here (the relaxation cannot keep the poor share at "
                "its aim at this budget, so its prices price the rule, not money).")
    y = min(YEAR, len(nm.poor_m2))
    step = f"USD {nm.step_usd:,.0f}" if nm.step_usd != STEP_USD else "USD 1 million"
    out = nm.out_of_poor_m2
    area = (f"keeps {out:,.0f} m² more deck area out of poor in year {y}" if out >= 0 else
            f"leaves {-out:,.0f} m² more deck area poor in year {y} (the money goes where the return gains more)")
    chance = (f"leaves the chance of a penalty (three years running above {rule:.0%} of deck area poor) at "
              f"{nm.penalty[0]:.0%}" if round(100 * nm.penalty[0]) == round(100 * nm.penalty[1]) else
              f"changes the chance of a penalty (three years running above {rule:.0%} of deck area poor) from "
              f"{nm.penalty[0]:.0%} to about {nm.penalty[1]:.0%}")
    return (f"The next {step} a year {area}, {chance}, and avoids USD "
            f"{nm.user_usd:,.0f} of road users' cost (present value); it is worth at most USD {nm.worth_usd:,.0f} of "
            "value at the planner's price of money (a first-order estimate from the planner's prices).")


def level_margin(bound, level_cfg, fleet, seed: int, shares: np.ndarray, rule: float,
                 step_usd: float = STEP_USD) -> NextMillion | None:
    """:func:`next_million` of a ``scenarios`` level: ``bound`` the planner's bound (a :class:`~bridgefleet.
    planning.exact_planner.PlannerBound` of the fixed fleet ``fleet``, at the aim the level's paths kept),
    ``level_cfg`` the fleet at the level's budget, ``shares`` float (E, T) the level's paths' share of deck area
    poor by year."""
    from bridgefleet.planning.exact_planner import fleet_model
    from bridgefleet.sim.simulator import FleetSimulator

    sim = FleetSimulator(level_cfg, 1, fleet)
    sim.reset(None, [seed])
    model, agency, budget = fleet_model(sim, np.arange(1))
    return next_million(bound.parts[0], model, agency, budget, level_cfg.carry_over_budget,
                        sim.fhwa_weight()[0].astype(np.float64), sim.user_cost[0].astype(np.float64), shares,
                        rule, step_usd)


def plan_margin(planner, fleet_cfg, fleet, seed: int, shares: np.ndarray, rule: float,
                step_usd: float = STEP_USD) -> NextMillion | None:
    """:func:`next_million` of ``plan --policy lagrangian`` on the component model: ``planner`` the
    :class:`~bridgefleet.planning.exact_planner.ExactPlanner` that made the plan (its prices, on the fixed fleet
    ``fleet`` at ``fleet_cfg``'s budget), ``shares`` float (S, Y) its samples' share of deck area poor by year."""
    return level_margin(planner.bound, fleet_cfg, fleet, seed, shares, rule, step_usd)
