"""The exact bound with a poor deck-area rule, against the linear programme over occupation measures.

With budgets and the rule both in expectation, the Lagrangian relaxation of independent bridges is exact: its
value equals the LP whose variables are each bridge's state-action occupation measures x_b[t, s, a] (Puterman
1994, §6.9; Altman 1999, *Constrained Markov Decision Processes*), coupled only by the expected spend and poor
deck area rows. So on small random fleets the bound must equal that LP (to the column generation's tolerance),
and say the rule cannot be met where the LP is infeasible.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import linprog
from test_exact_dp import dense_transitions, random_model

from bridgefleet.planning.exact_bound import Rule, lagrangian_bound
from bridgefleet.planning.exact_dp import policy_value, state_index
from bridgefleet.planning.exact_least_budget import least_budget


def occupation_lp(model, agency, budget, deck, share, least: bool = False) -> float | None:
    """max Σ_b Σ_t γ^t Σ_{s,a} x_b[t,s,a] r_b(s,a) over flows from each start state, expected spend per agency
    and year ≤ budget, expected poor deck area ≤ share × Σ deck each year; None if infeasible. ``least``: instead
    the least multiple of ``budget`` at which the constraints can be met."""
    b_n, a_n = len(model.kind), len(model.protect)
    g_n, t_n = budget.shape
    mats = [dense_transitions(model, b) for b in range(b_n)]
    s_n = mats[0][0].shape[1]
    per = t_n * s_n * a_n
    n = b_n * per
    c = np.zeros(n)
    eq_rows, eq_rhs, ub_rows, ub_rhs = [], [], [], []
    spend_rows = np.zeros((g_n * t_n, n))
    poor_rows = np.zeros((t_n, n))
    for b, (m, mn) in enumerate(mats):
        def at(t, s, a, b=b):
            return b * per + (t * s_n + s) * a_n + a
        rew = m @ model.utility[b, mn] - model.cost_lambda * model.cost[b][:, None]  # (A, S)
        poor = m @ (mn <= model.poor_top).astype(float)  # (A, S)
        s0 = int(state_index(model.start[b : b + 1], model.levels)[0])
        for t in range(t_n):
            for s in range(s_n):
                for a in range(a_n):
                    c[at(t, s, a)] = -(model.gamma**t) * rew[a, s]
                    spend_rows[agency[b] * t_n + t, at(t, s, a)] = model.cost[b, a]
                    poor_rows[t, at(t, s, a)] = deck[b] * poor[a, s]
            for s2 in range(s_n):  # flow into (t, s2)
                row = np.zeros(n)
                for a in range(a_n):
                    row[at(t, s2, a)] = 1.0
                if t == 0:
                    eq_rhs.append(1.0 if s2 == s0 else 0.0)
                else:
                    for s in range(s_n):
                        for a in range(a_n):
                            row[at(t - 1, s, a)] -= m[a, s, s2]
                    eq_rhs.append(0.0)
                eq_rows.append(row)
    ub_rows = np.vstack([spend_rows, poor_rows])
    ub_rhs = np.concatenate([budget.ravel(), np.full(t_n, share * deck.sum())])
    eq = np.array(eq_rows)
    if least:  # a last variable, the multiple s: spend − s × budget ≤ 0
        c = np.zeros(n + 1)
        c[-1] = 1.0
        ub_rows = np.hstack([ub_rows, np.concatenate([-budget.ravel(), np.zeros(t_n)])[:, None]])
        ub_rhs = np.concatenate([np.zeros(g_n * t_n), ub_rhs[g_n * t_n :]])
        eq = np.hstack([eq, np.zeros((len(eq), 1))])
    # interior point: the dual simplex cycles on one of the infeasible cases (case 7 at 0.4 of do nothing's worst)
    res = linprog(c, A_ub=ub_rows, b_ub=ub_rhs, A_eq=eq, b_eq=np.array(eq_rhs), method="highs-ipm")
    return None if res.status == 2 else (float(res.fun) if least else -float(res.fun))


def test_rule_bound_equals_occupation_lp():
    """Six fleets of two bridges, 3 levels, 3–4 years, one or two agencies, rules from 95 % to 5 % of deck area
    poor: the bound equals the LP where it is feasible, says the rule is not met where not; the rule binds (lowers
    the bound) in several of them."""
    binding = sum(_rule_case(case) for case in range(6))
    assert binding >= 3  # the cases test the rule's prices, not only its absence


def _two_bridges(seed: int, case: int, top: int):
    """A random 2-bridge fleet of 3 levels, 3–4 years, one or two agencies (a third of them coupled), budgets of
    1 … top − 1 a year, deck areas 1–3 m²: (model, agency, budget, deck, T)."""
    rng = np.random.default_rng(seed)
    t_n = 3 + case % 2
    model = replace(random_model(rng, 2, 3, a_n=3, int_cost=True, coupling=0.4 * (case % 3 == 0)), poor_top=0)
    agency = np.array([0, case % 2])
    budget = rng.integers(1, top, (2, t_n)).astype(float)
    return model, agency, budget, rng.uniform(1.0, 3.0, 2), t_n


def _rule_case(case: int) -> int:
    model, agency, budget, deck, t_n = _two_bridges(100 + case, case, 5)
    nothing = lagrangian_bound(model, agency, np.zeros((2, t_n)), rule=Rule(np.zeros(2, int), deck, 1.0))
    free = lagrangian_bound(model, agency, budget, tol=1e-10).bound
    binding = 0
    for share in np.linspace(0.95, 0.05, 10):
        lp = occupation_lp(model, agency, budget, deck, share)
        res = lagrangian_bound(model, agency, budget, rule=Rule(np.zeros(2, int), deck, share), tol=1e-10,
                               max_iter=300)
        if lp is None:
            assert not res.rule_met, (case, share)
            continue
        assert res.rule_met
        assert res.bound == pytest.approx(lp, rel=1e-6, abs=1e-7), (case, share)
        assert res.bound <= free + 1e-7  # a rule only takes policies away
        binding += res.bound < free - 1e-6
    return binding
    assert nothing.rule_met  # every share meets a rule of 100 %


def test_rule_never_binding_changes_nothing():
    """A rule of 100 % of deck area poor leaves the bound as it is without a rule, ν = 0."""
    rng = np.random.default_rng(7)
    model = random_model(rng, 12, 3, a_n=4)
    agency = rng.integers(0, 2, 12)
    budget = np.full((2, 5), 2.0)
    plain = lagrangian_bound(model, agency, budget, tol=1e-9)
    ruled = lagrangian_bound(model, agency, budget, rule=Rule(np.zeros(12, int), np.ones(12), 1.0), tol=1e-9)
    assert ruled.bound == pytest.approx(plain.bound, rel=1e-8)
    assert (ruled.rule_price == 0).all() and ruled.rule_met


def test_least_budget_equals_occupation_lp():
    """The least budget's two ends meet at the LP's least multiple on small fleets (one or two agencies, with and
    without carry-over is the same LP without carry-over only), and it is inf exactly where no money meets the rule."""
    found = 0
    for case in range(8):
        model, agency, budget, deck, t_n = _two_bridges(200 + case, case, 4)
        poor = policy_value(model, 0, horizon=t_n).poor  # (2, T): do nothing's, so the rule below it binds
        worst = float((deck @ poor).max() / deck.sum())
        for share in (0.9 * worst, 0.7 * worst, 0.4 * worst):
            lp = occupation_lp(model, agency, budget, deck, share, least=True)
            res = least_budget(model, agency, budget, Rule(np.zeros(2, int), deck, share), tol=1e-9, max_iter=300)
            assert res.lower <= res.upper + 1e-12
            if lp is None:
                assert res.upper == np.inf, (case, share)
                continue
            found += lp > 1e-6
            assert res.lower == pytest.approx(lp, rel=1e-6, abs=1e-8), (case, share)
            assert res.upper == pytest.approx(lp, rel=1e-6, abs=1e-8), (case, share)
    assert found >= 5


def test_the_least_budget_solves_one_bridge_a_class_and_still_equals_the_occupation_lp():
    """A third bridge like the first at 2.5 times its costs and deck area joins its class (one DP solve and master
    row for both): the least budget still equals the occupation LP, which sees three bridges."""
    from bridgefleet.planning.exact_least_budget import _one_bridge_a_class

    checked = 0
    for case in range(6):
        model, agency, budget, deck, t_n = _two_bridges(300 + case, case, 4)
        three = replace(model, kind=model.kind[[0, 1, 0]], utility=model.utility[[0, 1, 0]],
                        cost=model.cost[[0, 1, 0]] * np.array([1.0, 1.0, 2.5])[:, None], start=model.start[[0, 1, 0]])
        agency3, deck3 = agency[[0, 1, 0]], deck[[0, 1, 0]] * np.array([1.0, 1.0, 2.5])
        one, _, rule1 = _one_bridge_a_class(three, agency3, Rule(np.zeros(3, int), deck3, 0.5))
        assert len(one.kind) == 2 and rule1.deck == pytest.approx([3.5 * deck[0], deck[1]])
        assert one.cost[0] == pytest.approx(3.5 * model.cost[0])
        worst = float((deck3 @ policy_value(three, 0, horizon=t_n).poor).max() / deck3.sum())
        lp = occupation_lp(three, agency3, budget, deck3, 0.6 * worst, least=True)
        if lp is None:
            continue
        res = least_budget(three, agency3, budget, Rule(np.zeros(3, int), deck3, 0.6 * worst), tol=1e-9,
                           max_iter=300)
        assert res.lower == pytest.approx(lp, rel=1e-6, abs=1e-8), case
        checked += lp > 1e-6
    assert checked >= 3


@pytest.mark.parametrize("case", range(4))
def test_bound_from_given_prices_equals_occupation_lp(case):
    """Started from arbitrary prices the search takes its boxstep turns (``box``) and still ends at the LP's value,
    with and without a binding rule, as it does with smoothing alone (box 0)."""
    model, agency, budget, deck, t_n = _two_bridges(200 + case, case, 5)
    start = np.random.default_rng(case).uniform(0.0, 2.0, (2, t_n))
    for share in (1.0, 0.3):
        lp = occupation_lp(model, agency, budget, deck, share)
        if lp is None:
            continue
        rule = Rule(np.zeros(2, int), deck, share)
        for box in (0.2, 0.0):
            res = lagrangian_bound(model, agency, budget, rule=rule, tol=1e-10, max_iter=300, start=start, box=box)
            assert res.rule_met
            assert res.bound == pytest.approx(lp, rel=1e-6, abs=1e-7), (case, share, box)


def test_independent_fleets_in_one_master_each_their_own_bound():
    """Two fleets priced in one master (their own agencies and rule rows) end where each ends alone: the bound is
    the sum of the two LP optima (each block stops on its own and keeps its own best prices)."""
    model, agency, budget, deck, t_n = _two_bridges(300, 1, 5)
    other = np.random.default_rng(7).integers(1, 5, (2, t_n)).astype(float)
    both = model.subset(np.array([0, 1, 0, 1]))
    share = 0.9
    rule = Rule(np.array([0, 0, 1, 1]), np.tile(deck, 2), share)
    res = lagrangian_bound(both, np.concatenate([agency, agency + 2]), np.vstack([budget, other]), rule=rule,
                           tol=1e-10, max_iter=300)
    one = occupation_lp(model, agency, budget, deck, share)
    two = occupation_lp(model, agency, other, deck, share)
    assert one is not None and two is not None
    assert res.bound == pytest.approx(one + two, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("case", range(4))
def test_bound_from_an_earlier_searchs_policies_equals_occupation_lp(case):
    """Started from the policies another search found (another budget and rule: ``columns``), the search still ends
    at the LP's value; policies that spend where this budget forbids (a year of 0) are left out, and where the given
    policies cannot meet the rule the search starts cold and says whether the rule can be met as a cold one does."""
    model, agency, budget, deck, _ = _two_bridges(300 + case, case, 5)
    found = [lagrangian_bound(model, agency, k * budget, rule=Rule(np.zeros(2, int), deck, f), tol=1e-10,
                              max_iter=300).mixture for k, f in ((2.0, 0.9), (4.0, 0.2))]
    before = type(found[0])(*(np.concatenate(x) for x in zip(*found, strict=True)))
    assert (before.iteration >= 0).any() and (before.spend[:, 0] > 0).any()
    short = budget.copy()
    short[:, 0] = 0.0  # the first year has no money: the earlier policies that treat then are not policies here
    for b, share in ((budget, 1.0), (budget, 0.3), (short, 0.5), (budget, 0.05)):
        lp = occupation_lp(model, agency, b, deck, share)
        rule = Rule(np.zeros(2, int), deck, share)
        cold = lagrangian_bound(model, agency, b, rule=rule, tol=1e-10, max_iter=300)
        warm = lagrangian_bound(model, agency, b, rule=rule, tol=1e-10, max_iter=300, columns=before)
        assert warm.rule_met == cold.rule_met == (lp is not None), (case, share)
        if lp is not None:
            assert warm.bound == pytest.approx(lp, rel=1e-6, abs=1e-7), (case, share)
        if b is short:
            given = warm.mixture.iteration == -2
            assert not (warm.mixture.spend[given, 0] > 0).any()
