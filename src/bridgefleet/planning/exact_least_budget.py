"""The least budget at which some policy of the component model can meet a poor deck-area rule, exactly.

For a rule "at most F of the counted deck area poor at the end of every year, in expectation" (FHWA's minimum
condition, 23 CFR 490.411: F = 0.10 of NHS deck area) the relaxation asks for the least multiple s of one
budget (its split between agencies and years kept) at which a mixture of each bridge's policies keeps each
agency's expected spend within s × its budget rows and the expected poor deck area within F × the deck area
every year:

    min s   s.t.   Σ_b spend rows of x_b ≤ s × rows of one budget,   Σ_b E[poor deck area_t] of x_b ≤ F·D,

over mixtures x_b of each bridge's policies. Any fleet policy that keeps its budget on every path and meets the
rule in expectation gives such a mixture (each bridge's marginal policy), so **below the least budget no policy
of the model meets the rule in expectation**. Column generation solves it: the master LP over the policies found
so far (HiGHS) gives duals κ ≥ 0 (budget rows) and ν ≥ 0 (rule rows); each bridge's exact DP
(:func:`bridgefleet.planning.exact_dp.solve`, no utility, prices only) finds its cheapest policy under them, and
weak duality gives for any κ, ν ≥ 0 with κ · rows of one budget > 0

    s ≥ (Σ_b min_π [κ · spend_b(π) + ν · poor deck area_b(π)] − ν · F·D) / (κ · rows of one budget),

the certified lower end; the master's s is the upper end (a mixture of the policies found meets the rule at it).
On the finite model the DP is exact, so the lower end needs no grid and no certificate of its own (the continuous
model's :mod:`bridgefleet.planning.least_budget` needs both). Every action is allowed to every bridge (a
relaxation: a year's budget need not fit a whole treatment), so the lower end holds whatever the budget's size.
Budgets that carry over use cumulative rows. Bridges whose problems differ only by scale are one class, solved
and mixed once (:func:`_one_bridge_a_class`): the relaxation is the same. Sources: Dantzig & Wolfe 1960;
Adelman & Mersereau 2008, "Relaxations of weakly coupled stochastic dynamic programs", Operations Research 56(3).
"""

from __future__ import annotations

import dataclasses
import time
from typing import NamedTuple

import numpy as np

from bridgefleet.planning.alike import classes
from bridgefleet.planning.exact_bound import RULE_PENALTY, BudgetRows, Master, Rule, RuleRows
from bridgefleet.planning.exact_dp import FleetModel, policy_value, solve


class ExactLeastBudget(NamedTuple):
    """What :func:`least_budget` returns.

    Attributes:
        lower: the certified least budget, a multiple of ``budget``: below it no policy of the model meets the
            rule in expectation.
        upper: the master LP's multiple: a mixture of the policies found meets the rule at it in expectation
            (inf when none of them meets it at any budget).
        iterations: DP solves. seconds: wall time, s.
        budget_price: float64 (G, T), the best lower end's κ per USD of each row (cumulative rows with carry-over).
        rule_price: float64 (F, T), its ν per m² poor.
    """

    lower: float
    upper: float
    iterations: int
    seconds: float
    budget_price: np.ndarray
    rule_price: np.ndarray


def least_budget(model: FleetModel, agency: np.ndarray, budget: np.ndarray, rule: Rule, carry_over: bool = False, *,
                 tol: float = 1e-3, max_iter: int = 200, smoothing: float = 0.5) -> ExactLeastBudget:
    """The least multiple of ``budget`` at which the relaxation meets ``rule`` (module docstring).

    Args:
        model: the fleet (:class:`~bridgefleet.planning.exact_dp.FleetModel`); its utility and ``cost_lambda``
            are ignored (only money and the rule count here).
        agency: int (B,), each bridge's agency, indexing the rows of ``budget``.
        budget: float64 (G, T) USD a year per agency: one budget, whose multiples are searched; a row of 0
            stays 0 at every multiple (positive-cost actions forbidden there).
        rule: the poor deck-area rule (:class:`~bridgefleet.planning.exact_bound.Rule`).
        carry_over: unspent money carries over (cumulative rows).
        tol: stop when upper − lower ≤ tol × max(upper, 1e-9).
        max_iter: DP solves at most (the lower end stays certified if it stops there, only lower).
        smoothing: α of Wentges' dual smoothing (0: Kelley's cutting planes).

    Returns:
        :class:`ExactLeastBudget`.

    Raises:
        ValueError: shapes or values of agency, budget or rule; see :meth:`FleetModel.check`.
        RuntimeError: HiGHS finds no optimum of the master LP.
    """
    began = time.perf_counter()
    model.check()
    model = dataclasses.replace(model, utility=np.zeros_like(np.asarray(model.utility, dtype=np.float64)),
                                cost_lambda=0.0)
    checked = BudgetRows(agency, budget, carry_over, model.gamma, len(model.kind))  # shapes and values, then the
    RuleRows(rule, len(model.kind), checked.t_n)  # rows of the classes below
    model, agency, rule = _one_bridge_a_class(model, checked.agency, rule)
    b_n = len(model.kind)
    budget_rows = BudgetRows(agency, budget, carry_over, model.gamma, b_n)
    rule_rows = RuleRows(rule, b_n, budget_rows.t_n)
    agency, t_n, disc = budget_rows.agency, budget_rows.t_n, budget_rows.disc
    n_b, n_r = budget_rows.n, rule_rows.n

    def entries(spend: np.ndarray, poor: np.ndarray, bridge: np.ndarray) -> np.ndarray:
        return np.concatenate([budget_rows.entries(spend, bridge), rule_rows.entries(poor, bridge)], axis=1)

    def prices(kappa: np.ndarray, nu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scaled duals → the DP's (B, T) price per USD and charge for a poor year (year-t units)."""
        return (budget_rows.dp_price(budget_rows.unscale(kappa))[agency],
                rule_rows.dp_price(rule_rows.unscale(nu), disc))

    nothing = policy_value(model, 0, horizon=t_n)
    master = Master(n_b + n_r, b_n, n_b + np.arange(n_r), RULE_PENALTY, multiple=n_b)
    every = np.arange(b_n)

    def solved() -> tuple[float, np.ndarray, np.ndarray, np.ndarray, float]:
        _, dual, pi, _ = master.solve()
        return master.multiple_value(), dual[:n_b], dual[n_b:], pi, float(master.slacks().sum())

    master.add(np.zeros(b_n), entries(nothing.spend, nothing.poor, every), every)
    upper, kappa, nu, pi, slack = solved()
    k_eval, n_eval = kappa, nu
    best = (-np.inf, k_eval, n_eval)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        price, charge = prices(k_eval, n_eval)
        sol = solve(model, price, charge, keep_policy=False)
        total = float(k_eval.sum())
        low = (float(-sol.value.sum()) - float(n_eval.sum())) / total if total > 0 else 0.0
        if low > best[0]:
            best = (low, k_eval, n_eval)
        a = entries(sol.spend, sol.poor, every)
        new = a @ np.concatenate([kappa, nu]) < -pi - 1e-9 * np.maximum(1.0, np.abs(pi))
        if new.any():
            idx = np.flatnonzero(new)
            master.add(np.zeros(len(idx)), a[idx], idx)
            upper, kappa, nu, pi, slack = solved()
        met = slack <= 1e-9 * max(1, n_r)
        if met and upper - max(best[0], 0.0) <= tol * max(upper, 1e-9):
            break
        if not new.any() and k_eval is kappa:
            break
        if not new.any():
            k_eval, n_eval = kappa, nu
        else:
            k_eval = smoothing * best[1] + (1.0 - smoothing) * kappa
            n_eval = smoothing * best[2] + (1.0 - smoothing) * nu
    lower, kappa_best, nu_best = best
    met = slack <= 1e-9 * max(1, n_r)
    return ExactLeastBudget(max(lower, 0.0), upper if met else np.inf, it, time.perf_counter() - began,
                            budget_rows.unscale(kappa_best), rule_rows.unscale(nu_best))


def _one_bridge_a_class(model: FleetModel, agency: np.ndarray, rule: Rule) -> tuple[FleetModel, np.ndarray, Rule]:
    """The fleet with one bridge for each class of bridges whose prices-only problems are one problem up to scale
    (:func:`bridgefleet.planning.alike.classes`: equal agency, rule fleet, kind and start state, costs and counted
    deck area in the same proportions), its costs and deck area the sum of its class's. Every policy of the
    class's problem scales to each member, so a mixture for the class is one for each member and the relaxation
    (spend and poor deck area, linear in the scale) is the fleet's: the least budget is the same, with a DP solve
    and a master row per class (Indiana's 4,794 bridges: 148 classes; dc-2019's 244: 85)."""
    cost = np.asarray(model.cost, dtype=np.float64)
    deck = np.asarray(rule.deck, dtype=np.float64)
    rep, of, ratio = classes(np.column_stack([agency, np.asarray(rule.group), model.kind, model.start]), cost, deck)
    size = np.bincount(of, ratio, len(rep))
    one = dataclasses.replace(model.subset(rep), cost=cost[rep] * size[:, None])
    return one, agency[rep], Rule(np.asarray(rule.group)[rep], deck[rep] * size, rule.share)
