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
Budgets that carry over use cumulative rows. Sources: Dantzig & Wolfe 1960; Adelman & Mersereau 2008,
"Relaxations of weakly coupled stochastic dynamic programs", Operations Research 56(3).
"""

from __future__ import annotations

import dataclasses
import time
from typing import NamedTuple

import highspy
import numpy as np

from bridgefleet.planning.bound import run_highs
from bridgefleet.planning.exact_bound import RULE_PENALTY, BudgetRows, Rule, RuleRows, add_columns
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
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("presolve", "off")
    inf = highspy.kHighsInf
    lower_rows = np.concatenate([np.full(n_b + n_r, -inf), np.ones(b_n)])
    upper_rows = np.concatenate([np.zeros(n_b), np.ones(n_r), np.ones(b_n)])
    h.addRows(n_b + n_r + b_n, lower_rows, upper_rows, 0, np.zeros(n_b + n_r + b_n, dtype=np.int32),
              np.zeros(0, dtype=np.int32), np.zeros(0))
    # s (cost 1) in every budget row with −1; a slack y_t (cost RULE_PENALTY) in each rule row with −1
    h.addCols(1, np.ones(1), np.zeros(1), np.full(1, inf), n_b, np.zeros(1, dtype=np.int32),
              np.arange(n_b, dtype=np.int32), -np.ones(n_b))
    h.addCols(n_r, np.full(n_r, RULE_PENALTY), np.zeros(n_r), np.full(n_r, inf), n_r, np.arange(n_r, dtype=np.int32),
              n_b + np.arange(n_r, dtype=np.int32), -np.ones(n_r))

    def add(spend: np.ndarray, poor: np.ndarray, bridge: np.ndarray) -> None:
        add_columns(h, np.zeros(len(bridge)), entries(spend, poor, bridge), bridge, b_n)

    def master() -> tuple[float, np.ndarray, np.ndarray, np.ndarray, float]:
        sol = run_highs(h, "least budget's master LP")
        y = np.asarray(sol.row_dual)
        cols = np.asarray(sol.col_value)
        return (float(cols[0]), np.maximum(-y[:n_b], 0.0), np.maximum(-y[n_b : n_b + n_r], 0.0), y[n_b + n_r :],
                float(cols[1 : 1 + n_r].sum()))

    every = np.arange(b_n)
    add(nothing.spend, nothing.poor, every)
    upper, kappa, nu, pi, slack = master()
    best = (-np.inf, kappa, nu)
    k_eval, n_eval = kappa, nu
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        price, charge = prices(k_eval, n_eval)
        sol = solve(model, price, charge, keep_policy=False)
        total = float(k_eval.sum())
        low = (float(-sol.value.sum()) - float(n_eval.sum())) / total if total > 0 else 0.0
        if low > best[0]:
            best = (low, k_eval, n_eval)
        a = entries(sol.spend, sol.poor, every)
        new = a @ np.concatenate([kappa, nu]) < pi - 1e-9 * np.maximum(1.0, np.abs(pi))
        if new.any():
            idx = np.flatnonzero(new)
            add(sol.spend[idx], sol.poor[idx], idx)
            upper, kappa, nu, pi, slack = master()
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
