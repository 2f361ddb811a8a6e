"""The Lagrangian upper bound on the finite model: budgets priced, every bridge's exact DP, column generation.

A fleet policy must keep every sample path within the agencies' budgets. Relaxing that to the expected spend
and pricing each budget row with a multiplier μ_row ≥ 0 (present-value reward units per USD) splits the
fleet into single-bridge problems (Hawkins 2003; Adelman & Mersereau 2008, "Relaxations of weakly coupled
stochastic dynamic programs", Operations Research 56(3)):

    L(μ) = Σ_b V_b(μ) + Σ_rows μ_row · budget_row,

V_b(μ) the exact optimum of bridge b alone (:func:`bridgefleet.planning.exact_dp.solve`) when each USD it
spends in year t costs, on top of ``cost_lambda``, the sum of the multipliers of the rows that year enters,
divided by γ^t (the DP's prices are in year-t units). Rows are (agency, year): spend of year t ≤ budget of
year t, or with carry-over the cumulative spend of years ≤ t ≤ the cumulative budget.

Why the bound is a bound: take any fleet policy that keeps every path within budget, and any μ ≥ 0. Its
value is Σ_t γ^t E[reward]; adding Σ_row μ_row (budget_row − E[spend_row]) ≥ 0 cannot lower it, and the
sum splits by bridge into rewards less priced spend, each at most V_b(μ) since bridge b's part of the fleet
policy is one (history-dependent, randomised) policy of its own MDP, which the single-bridge optimum
dominates. So every μ ≥ 0 gives L(μ) ≥ the fleet optimum (weak duality), whatever the budget; no action is
dropped. A row whose (cumulative) budget is below the cheapest positive-cost action of its agency's bridges (0
among them) forces zero spend in its years, as it does on every path of a feasible policy; its limit μ → ∞ is
taken exactly: positive-cost actions are forbidden there (the DP's inf price) and the row leaves the sum.

The best μ comes from column generation: the Dantzig–Wolfe master LP chooses a mixture of each bridge's
policies found so far (columns: value without the budget price, expected spend per year) within the expected
budgets; its duals are the next μ, each DP solve at them adds at most one column per bridge (those of
positive reduced cost), and it stops when min L (an upper bound) and the master's value (a lower bound on
min_μ L) agree within ``tol``. The master is solved by HiGHS (``highspy``) from its last basis. Agencies (with a
rule, each fleet and its agencies) that share no row are separate problems in one master: each keeps its own best
prices and leaves the DP once its own gap closes. From given prices, every other solve is at the master's duals
kept within a box around the best prices (boxstep, Marsten, Hogan & Blankenship 1975, Mathematical Programming
9), the others smoothed (Wentges 1997): the first bring L down, the second the columns the master needs. Given
columns (another search's policies on the same model: a policy is one whatever the budget) go into the master first
and its duals are the first prices, where a mixture of them meets the rule; else the search starts cold.

With a poor deck-area rule (:class:`Rule`: at most F of each fleet's counted deck area poor at the end of every
year, in expectation; FHWA's minimum condition, 23 CFR 490.411) each (fleet, year) adds a row priced by ν ≥ 0
(present-value reward units per m² poor), which the DP charges each bridge as ``price_poor`` = ν_t · deck_b / γ^t;
L gains Σ ν F D. The same weak-duality argument makes L an upper bound on every budget-feasible policy that meets
the rule in expectation. The master keeps those rows elastic (a slack at :data:`RULE_PENALTY` per allowance), so
it stays feasible before it has columns that meet the rule; ``ExactBound.rule_met`` says whether the last
master needs none.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import highspy
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from bridgefleet.planning.bound import run_highs
from bridgefleet.planning.exact_dp import FleetModel, policy_value, solve

RULE_PENALTY = 1e3
"""Master LP cost of exceeding one (fleet, year)'s poor deck-area allowance by all of it again, in multiples of
the do-nothing fleet's |reward| (at least 1): large enough that the master meets the rule wherever its columns
can, small enough for HiGHS's tolerances."""


class Rule(NamedTuple):
    """A poor deck-area rule: expected deck area poor ≤ ``share`` × counted deck area, each fleet, every year.

    Attributes:
        group: int (B,), each bridge's fleet (the rule's rows are per fleet and year), 0 … F−1.
        deck: float64 (B,) m², the deck area the rule counts (:func:`bridgefleet.sim.model.fhwa_weight`).
        share: F, in (0, 1] (0.10: 23 CFR 490.411).
    """

    group: np.ndarray
    deck: np.ndarray
    share: float


class Mixture(NamedTuple):
    """The master LP's columns (N of them) and weights, for a planner to round.

    Attributes:
        bridge: int64 (N,), whose column.
        iteration: int64 (N,), the iteration whose prices (``ExactBound.iteration_price``) give the column's
            policy again through :func:`~bridgefleet.planning.exact_dp.solve`; −1: do nothing; −2: given
            (``lagrangian_bound``'s ``columns``).
        reward: float64 (N,), the policy's value without the budget price (reward units, present value).
        spend: float64 (N, T) USD, its expected spend per year.
        weight: float64 (N,), the master's weights (each bridge's sum to 1).
        poor: float64 (N, T), its probability of ending each year poor.
    """

    bridge: np.ndarray
    iteration: np.ndarray
    reward: np.ndarray
    spend: np.ndarray
    weight: np.ndarray
    poor: np.ndarray


class ExactBound(NamedTuple):
    """What :func:`lagrangian_bound` returns.

    Attributes:
        bound: min over the prices tried of L(μ), reward units: an upper bound on any budget-feasible fleet
            policy's value.
        price: float64 (G, T), the best prices per agency and year in the DP's units (reward units per USD in
            year-t units, added to ``cost_lambda``); inf where the (cumulative) budget is 0.
        row_price: float64 (G, T), the multipliers μ of the budget rows (present-value reward units per USD;
            cumulative rows under carry-over); 0 on rows whose budget is 0 (they are enforced, not priced).
        values: float64 (B,), V_b at the best prices.
        spend: float64 (B, T) USD, the expected spend of the bridges' optimal policies at the best prices.
        master_value: the last master LP's value (≤ min_μ L(μ) ≤ bound).
        iterations: DP solves.
        history: float64 (iterations, 2), L(μ) and the master value after each solve.
        iteration_price: float64 (iterations, G, T), the prices (DP units) of each solve.
        mixture: :class:`Mixture`.
        dp_seconds, lp_seconds: wall time in the DP solves and in HiGHS.
        price_poor: float64 (B, T), the DP's charge for ending year t poor at the best prices (the rule's ν_t ·
            deck_b / γ^t plus any given ``price_poor``), reward units; zeros without a rule or price.
        rule_price: float64 (F, T), ν per fleet and year (present-value reward units per m² poor); (0, T)
            without a rule.
        rule_met: whether the last master meets the rule with no slack (True without a rule).
    """

    bound: float
    price: np.ndarray
    row_price: np.ndarray
    values: np.ndarray
    spend: np.ndarray
    master_value: float
    iterations: int
    history: np.ndarray
    iteration_price: np.ndarray
    mixture: Mixture
    dp_seconds: float
    lp_seconds: float
    price_poor: np.ndarray
    rule_price: np.ndarray
    rule_met: bool


def add_columns(h: highspy.Highs, cost: np.ndarray, coef: np.ndarray, bridge: np.ndarray, b_n: int) -> None:
    """Add k policy columns w ≥ 0 to a master LP whose rows are M coupling rows, then one convexity row per
    bridge: objective ``cost`` (k,) (HiGHS minimises), entries ``coef`` (k, M) (|x| < 1e-12 dropped), a 1 in the
    convexity row of ``bridge`` (k,)."""
    k = len(cost)
    coef = np.where(np.abs(coef) < 1e-12, 0.0, coef)
    conv = sp.csc_matrix((np.ones(k), (bridge, np.arange(k))), shape=(b_n, k))
    a = sp.vstack([sp.csc_matrix(coef.T), conv], format="csc")
    status = h.addCols(k, cost, np.zeros(k), np.full(k, highspy.kHighsInf), a.nnz,
                       a.indptr[:-1].astype(np.int32), a.indices.astype(np.int32), a.data)
    if status == highspy.HighsStatus.kError:
        raise RuntimeError(f"master LP: HiGHS refused {k} columns (an entry up to {np.abs(a.data).max():.3g})")


class Master:
    """max Σ r_k w_k s.t. Σ_k coef_k w_k ≤ 1 (budget rows scaled by their right-hand sides), Σ_{k of b} w_k = 1,
    w ≥ 0, as a HiGHS minimisation kept warm between solves.

    With ``multiple`` = k > 0 the first k rows read Σ_k coef_k w_k ≤ s instead, s ≥ 0 a column of reward −1 (the
    least budget's multiple of one budget, :mod:`bridgefleet.planning.exact_least_budget`); ``multiple_value()``
    reads it."""

    def __init__(self, n_rows: int, b_n: int, elastic: np.ndarray | None = None, penalty: float = 0.0,
                 box: int = 0, multiple: int = 0):
        self.n_rows, self.b_n = n_rows, b_n
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.h.setOptionValue("presolve", "off")
        self.h.setOptionValue("simplex_strategy", 4)  # primal: added columns keep the basis primal feasible
        # rows come scaled by their right-hand sides; row-wise pricing suits 60 coupling rows and many columns
        # (Indiana's bound: the LPs 33.5 → 12.6 s, the same bound; docs/decisions.md)
        self.h.setOptionValue("simplex_scale_strategy", 0)
        self.h.setOptionValue("simplex_price_strategy", 2)
        lower = np.concatenate([np.full(n_rows, -highspy.kHighsInf), np.ones(b_n)])
        upper = np.concatenate([np.zeros(multiple), np.ones(n_rows + b_n - multiple)])
        self.h.addRows(n_rows + b_n, lower, upper, 0, np.zeros(n_rows + b_n, dtype=np.int32),
                       np.zeros(0, dtype=np.int32), np.zeros(0))
        # columns before the policies: s (with ``multiple``), the elastic rows' slacks, the box's (2 × box)
        self.multiple, self.box = multiple, box
        self.n_elastic = 0 if elastic is None else len(elastic)
        self.elastic_at = int(multiple > 0)
        self.box_at = self.elastic_at + self.n_elastic
        self.policies_at = self.box_at + 2 * box
        if multiple:
            self.h.addCols(1, np.ones(1), np.zeros(1), np.full(1, highspy.kHighsInf), multiple,
                           np.zeros(1, dtype=np.int32), np.arange(multiple, dtype=np.int32), -np.ones(multiple))
        if self.n_elastic:  # slack y ≥ 0 of rows ``elastic`` at ``penalty`` each: row − y ≤ 1
            k = self.n_elastic
            self.h.addCols(k, np.full(k, penalty), np.zeros(k), np.full(k, highspy.kHighsInf), k,
                           np.arange(k, dtype=np.int32), np.asarray(elastic, dtype=np.int32), -np.ones(k))
        for sign in (-1.0, 1.0) if box else ():  # the box's columns on rows 0 … box−1, fixed at 0 until set
            self.h.addCols(box, np.zeros(box), np.zeros(box), np.zeros(box), box, np.arange(box, dtype=np.int32),
                           np.arange(box, dtype=np.int32), np.full(box, sign))

    def box_around(self, centre: np.ndarray | None, width: float) -> None:
        """Keep the duals of rows 0 … box−1 within centre × (1 ± width) (a floor of 1 % of the mean centre on
        the width), or free them (``centre`` None). A column that overdraws row r at centre_r (1 + width) per
        unit caps its dual there, one that leaves it unused for centre_r (1 − width) floors it (Marsten, Hogan &
        Blankenship 1975, the boxstep method); the master's value then bounds nothing, so the box is freed
        before any value is read."""
        k = self.box
        ix = np.arange(self.box_at, self.box_at + 2 * k, dtype=np.int32)
        if centre is None:
            self.h.changeColsBounds(2 * k, ix, np.zeros(2 * k), np.zeros(2 * k))
            return
        half = width * np.maximum(centre, 1e-2 * centre.mean())
        self.h.changeColsCost(2 * k, ix, np.concatenate([centre + half, -np.maximum(centre - half, 0.0)]))
        self.h.changeColsBounds(2 * k, ix, np.zeros(2 * k), np.full(2 * k, highspy.kHighsInf))

    def add(self, reward: np.ndarray, coef: np.ndarray, bridge: np.ndarray) -> None:
        """Columns of value ``reward`` (k,), scaled row entries ``coef`` (k, M), of bridges ``bridge`` (k,)."""
        add_columns(self.h, -reward, coef, bridge, self.b_n)

    def solve(self) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """(value, scaled row duals ≥ 0 (M,), convexity duals (B,), weights)."""
        sol = run_highs(self.h, "master LP")
        dual = -np.asarray(sol.row_dual)
        return (-self.h.getInfo().objective_function_value, np.maximum(dual[: self.n_rows], 0.0),
                dual[self.n_rows :], np.asarray(sol.col_value)[self.policies_at :])

    def slacks(self) -> np.ndarray:
        """The elastic rows' slacks in the last solution (allowances exceeded), (n_elastic,)."""
        return np.asarray(self.h.getSolution().col_value)[self.elastic_at : self.box_at]

    def multiple_value(self) -> float:
        """s in the last solution (0 without ``multiple``)."""
        return float(self.h.getSolution().col_value[0]) if self.multiple else 0.0



def lagrangian_bound(model: FleetModel, agency: np.ndarray, budget: np.ndarray, carry_over: bool = False, *,
                     price_poor: np.ndarray | None = None, rule: Rule | None = None, tol: float = 1e-6,
                     max_iter: int = 500, smoothing: float = 0.5, box: float = 0.2, warm: int = 600, seed: int = 0,
                     start: np.ndarray | None = None, columns: Mixture | None = None,
                     callback: Callable[[int, float, float], None] | None = None) -> ExactBound:
    """The Lagrangian upper bound of the fleet under per-agency budgets (and a poor deck-area rule), minimised
    over the prices.

    Args:
        model: the fleet (see :class:`~bridgefleet.planning.exact_dp.FleetModel`).
        agency: int (B,) in 0 … G−1, each bridge's agency.
        budget: float64 (G, T) USD per agency and year, ≥ 0.
        carry_over: unspent money carries over (cumulative rows) if True, else each year stands alone.
        price_poor: float64 (B, T), passed to the DP (reward units per poor year); None: zeros.
        rule: the poor deck-area rule priced (module docstring); None: none.
        tol: stop when bound − master value ≤ tol × max(1, |bound|).
        max_iter: the most DP solves (the bound stays valid if it stops there, only looser).
        smoothing: α of Wentges' dual smoothing: the DP is solved at α μ_best + (1 − α) μ_master (falling back
            to μ_master when that adds no column); 0: plain Kelley column generation.
        box: when started from prices (``start`` or ``warm``), every other DP solve is at the master's duals kept
            within the best prices × (1 ± box) (boxstep), the others smoothed as above: the first make L fall
            fast from good prices, the second bring the master the columns its value needs (Indiana's 4,794
            bridges: 6 DP solves to tol 1e-3 against 13 with smoothing alone). 0: smoothing alone.
        warm: in a fleet of more bridges, first solve the bound of a random sub-fleet of ``warm`` bridges (budget
            scaled per agency by its share of the replacement cost, the dearest action) to tolerance 1e-4; its
            prices are the fleet's first. 0: none. Any prices give a valid bound; this only saves DP solves.
        seed: the sub-fleet's draw.
        start: float64 (G, T), row multipliers μ to solve the DP at first (e.g. a like fleet's ``row_price``),
            instead of ``warm``'s; any gives a valid bound, good ones save DP solves.
        columns: policies of these bridges found before (a :class:`Mixture` of another search on the same
            model: another budget or rule; its iteration and weight are not read), put in the master first; its
            duals are the first prices unless ``start`` is given (no ``warm`` sample then). A column is a policy
            of the model whatever the budget, so any columns leave the bound valid; those that spend where this
            budget forbids are left out. Not read where a ``warm`` sample is drawn: its prices start a large fleet
            better (Indiana at 0.5 × the sized budget: 6 DP solves after the sample's, 26 from the policies of
            two searches at 0.25 ×, whose many columns also slowed each master LP).
        callback: called after each DP solve with (iteration, L(μ), master value).

    Returns:
        :class:`ExactBound`.

    Raises:
        ValueError: bad agency, budget or rule shapes or values, and see :meth:`FleetModel.check`.
        RuntimeError: HiGHS finds no optimum of the master LP.
    """
    model.check()
    b_n = len(model.kind)
    rows_budget = BudgetRows(agency, budget, carry_over, model.gamma, b_n, cost=model.cost)
    agency, budget = rows_budget.agency, rows_budget.budget
    g_n, t_n = budget.shape
    disc = rows_budget.disc
    base_poor = np.zeros((b_n, t_n)) if price_poor is None else np.asarray(price_poor, dtype=np.float64)
    rows_rule = RuleRows(rule, b_n, t_n)
    n_budget = rows_budget.n
    dp_price = rows_budget.dp_price

    def rows(spend: np.ndarray, poor: np.ndarray, bridge: np.ndarray) -> np.ndarray:
        """Scaled row entries (k, M) of columns with ``spend`` and ``poor`` (k, T)."""
        return np.concatenate([rows_budget.entries(spend, bridge), rows_rule.entries(poor, bridge)], axis=1)

    def split(dual: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Scaled duals (M,) → μ (G, T) per USD and ν (F, T) per m², present value."""
        return rows_budget.unscale(dual[:n_budget]), rows_rule.unscale(dual[n_budget:])

    mu_warm = None if start is None else np.where(rows_budget.forbid, 0.0, np.asarray(start, dtype=np.float64))
    nu_warm = None
    if mu_warm is not None and mu_warm.shape != (g_n, t_n):
        raise ValueError(f"start: shape {mu_warm.shape}, expected {(g_n, t_n)}")
    nothing = policy_value(model, 0, price_poor=base_poor, horizon=t_n)
    penalty = RULE_PENALTY * max(1.0, float(np.abs(nothing.reward).sum()))
    every = np.arange(b_n)
    sampled = 0 < warm < b_n  # a large fleet starts from a sample's prices, not from given columns

    def build(pool: tuple | None, warm_start: bool) -> tuple[Master, list, tuple]:
        """The master with the do-nothing columns and ``pool``'s, solved (its time added to ``lp_s``)."""
        nonlocal lp_s
        m = Master(n_budget + rows_rule.n, b_n, n_budget + np.arange(rows_rule.n), penalty,
                   box=n_budget if warm_start and box > 0 else 0)
        c = [(every, np.full(b_n, -1), nothing.reward, nothing.spend, nothing.poor)]
        m.add(nothing.reward, rows(nothing.spend, nothing.poor, every), every)
        if pool is not None:
            m.add(pool[2], rows(pool[3], pool[4], pool[0]), pool[0])
            c.append(pool)
        began = time.perf_counter()
        out = m.solve()
        lp_s += time.perf_counter() - began
        return m, c, out

    lp_s = 0.0
    pool = None
    if columns is not None and not sampled:  # the policies of searches before, where this budget allows their spend
        ok = columns.bridge < b_n
        ok[ok] = ~(rows_budget.forbid[agency[columns.bridge[ok]]] & (columns.spend[ok] > 0)).any(1)
        if ok.any():
            pool = (columns.bridge[ok], np.full(int(ok.sum()), -2), columns.reward[ok], columns.spend[ok],
                    columns.poor[ok])
            master, cols, (m_val, dual, pi, _) = build(pool, True)
            # Where they cannot meet the rule the search starts cold: where the relaxation cannot meet it at all
            # the bound is the rule's penalty and its tolerance leaves the reward's part loose, so where a search
            # stops decides the plan; started cold, it stops where it always has.
            if master.slacks().sum() > 1e-6 * max(1, rows_rule.n):
                pool = None
    if pool is None:
        if mu_warm is None and sampled:
            pick = np.sort(np.random.default_rng(seed).choice(b_n, warm, replace=False))
            dear = np.asarray(model.cost).max(1)
            share = np.array([dear[pick][agency[pick] == g].sum() / max(dear[agency == g].sum(), 1e-300)
                              for g in range(g_n)])
            sub = lagrangian_bound(model.subset(pick), agency[pick], budget * share[:, None], carry_over,
                                   price_poor=base_poor[pick], rule=rows_rule.subset(pick),
                                   tol=max(tol, 1e-4), max_iter=max_iter, smoothing=smoothing, box=box, warm=0)
            mu_warm, nu_warm = sub.row_price, rows_rule.from_subset(sub.rule_price, pick)
        master, cols, (m_val, dual, pi, _) = build(None, mu_warm is not None)
    stabilise = master.box > 0
    dp_s = 0.0
    mu_master, nu_master = split(dual)
    if mu_warm is None and pool is not None:
        mu_warm, nu_warm = mu_master, nu_master
    mu_eval = mu_master if mu_warm is None else mu_warm
    nu_eval = nu_master if mu_warm is None else (nu_master if nu_warm is None else nu_warm)
    # Each block (agencies and rule fleets that share bridges) is a problem of its own: its best prices are its
    # own, and it stops being solved once its bound and master value agree.
    blocks = _Blocks(agency, g_n, rows_rule, t_n)
    k_n = blocks.k_n
    best_l = np.full(k_n, np.inf)
    best_mu, best_nu = mu_eval.copy(), nu_eval.copy()
    best_value, best_spend = np.zeros(b_n), np.zeros((b_n, t_n))
    best_poor = np.zeros((b_n, t_n))
    done = np.zeros(k_n, dtype=bool)
    history, prices = [], []
    for it in range(max_iter):
        act = np.flatnonzero(~done[blocks.of_bridge])
        price = dp_price(mu_eval)
        poor_price = np.broadcast_to(base_poor + rows_rule.dp_price(nu_eval, disc), (b_n, t_n))[act]
        began = time.perf_counter()
        sol = solve(model if len(act) == b_n else model.subset(act), price[agency[act]], poor_price,
                    keep_policy=False)
        dp_s += time.perf_counter() - began
        lk = (np.bincount(blocks.of_bridge[act], sol.value, k_n) + blocks.rows(rows_budget.allowances(mu_eval),
                                                                             rows_rule.allowances(nu_eval)))
        lk = np.where(done, best_l, lk)
        prices.append(price)
        up = lk < best_l
        best_l = np.minimum(best_l, lk)
        best_mu[up[blocks.of_agency]] = mu_eval[up[blocks.of_agency]]
        if rows_rule.n:
            best_nu[up[blocks.of_fleet]] = nu_eval[up[blocks.of_fleet]]
        moved = up[blocks.of_bridge[act]]
        for best, now in ((best_value, sol.value), (best_spend, sol.spend), (best_poor, poor_price)):
            best[act[moved]] = now[moved]
        # reduced cost at the master's duals (the DP's columns are priced at mu_eval; a column's value leaves
        # the rule's charge out, which its rows carry)
        reward = sol.reward + rows_rule.charge(nu_eval, sol.poor, act)
        coef = rows(sol.spend, sol.poor, act)
        rc = reward - coef @ dual - pi[act]
        new = rc > 1e-9 * np.maximum(1.0, np.abs(reward))
        if new.any():
            idx = np.flatnonzero(new)
            master.add(reward[idx], coef[idx], act[idx])
            cols.append((act[idx], np.full(len(idx), it), reward[idx], sol.spend[idx], sol.poor[idx]))
            began = time.perf_counter()
            m_val, dual, pi, weight = master.solve()
            mk = blocks.master_values(cols, weight, master.slacks(), penalty)
            if stabilise and it % 2 == 0:  # the next prices: the master's within the box around the best
                master.box_around(best_mu.ravel()[rows_budget.active] * rows_budget.scale, box)
                mu_box, nu_box = split(master.solve()[1])
                master.box_around(None, box)
            lp_s += time.perf_counter() - began
            mu_master, nu_master = split(dual)
            done |= best_l - mk <= tol * np.maximum(1.0, np.abs(best_l))
        history.append((float(lk.sum()), m_val))
        if callback is not None:
            callback(it, float(lk.sum()), m_val)
        if done.all() or best_l.sum() - m_val <= tol * max(1.0, abs(best_l.sum())):
            break
        if not new.any() and mu_eval is mu_master:
            break  # the master's duals price no column in: L(μ_master) = master value
        if stabilise and new.any() and it % 2 == 0:
            mu_eval, nu_eval = mu_box, nu_box
        elif not new.any():
            mu_eval, nu_eval = mu_master, nu_master
        else:
            mu_eval = smoothing * best_mu + (1.0 - smoothing) * mu_master
            nu_eval = smoothing * best_nu + (1.0 - smoothing) * nu_master
    _, _, _, weight = master.solve()
    bridge, iteration, reward, spend, poor = (np.concatenate(x) for x in zip(*cols, strict=True))
    return ExactBound(float(best_l.sum()), dp_price(best_mu), best_mu, best_value, best_spend, m_val, len(history),
                      np.array(history), np.array(prices), Mixture(bridge, iteration, reward, spend, weight, poor),
                      dp_s, lp_s, best_poor, best_nu, master.slacks().sum() <= 1e-6 * max(1, rows_rule.n))


class _Blocks:
    """The independent problems within one master: agencies and rule fleets joined by the bridges they share.

    Attributes:
        k_n: number of blocks; of_agency (G,), of_fleet (F,), of_bridge (B,): int64 block of each.
    """

    def __init__(self, agency: np.ndarray, g_n: int, rule: RuleRows, t_n: int):
        f_n = rule.g_n if rule.n else 0
        if f_n:  # nodes: the agencies, then the fleets; an edge per bridge
            edges = sp.coo_matrix((np.ones(len(agency)), (agency, g_n + rule.group)), shape=(g_n + f_n,) * 2)
            self.k_n, label = connected_components(edges, directed=False)
        else:
            self.k_n, label = g_n, np.arange(g_n)
        self.of_agency = label[:g_n].astype(np.int64)
        self.of_fleet = label[g_n:].astype(np.int64)
        self.of_bridge = self.of_agency[agency]
        self.t_n = t_n

    def rows(self, budget: np.ndarray, rule: np.ndarray) -> np.ndarray:
        """(K,): per-agency (G,) and per-fleet (F,) amounts summed by block."""
        out = np.bincount(self.of_agency, budget, self.k_n)
        return out + np.bincount(self.of_fleet, rule, self.k_n) if len(rule) else out

    def master_values(self, cols: list, weight: np.ndarray, slack: np.ndarray, penalty: float) -> np.ndarray:
        """(K,): the master's value by block: its columns' rewards × weights less the penalty of its fleets' rule
        slacks (rows fleet-major, T a fleet)."""
        bridge = np.concatenate([c[0] for c in cols])
        reward = np.concatenate([c[2] for c in cols])
        out = np.bincount(self.of_bridge[bridge], reward * weight, self.k_n)
        if len(slack):
            out -= penalty * np.bincount(self.of_fleet[np.arange(len(slack)) // self.t_n], slack, self.k_n)
        return out


class BudgetRows:
    """The budgets' master rows: one per (agency, year) whose budget (cumulative with carry-over) is above 0,
    scaled by it; a row of 0 is enforced instead (positive-cost actions forbidden that year: an inf price). Given
    ``cost`` (B, A) USD, a row below the cheapest positive cost among its agency's bridges is enforced too: no
    path of a budget-feasible policy spends there, and a budget of a few cents would scale the row's entries past
    what the LP holds.

    Raises:
        ValueError: ``agency`` not (B,) indexing the rows of ``budget`` (G, T); a budget not finite or below 0.
    """

    def __init__(self, agency: np.ndarray, budget: np.ndarray, carry_over: bool, gamma: float, b_n: int,
                 cost: np.ndarray | None = None):
        self.agency = np.asarray(agency, dtype=np.int64)
        self.budget = np.asarray(budget, dtype=np.float64)
        if (self.budget.ndim != 2 or self.agency.shape != (b_n,) or (self.agency < 0).any()
                or (self.agency >= self.budget.shape[0]).any()):
            raise ValueError(f"agency (B,) = ({b_n},) must index the rows of budget (G, T); got "
                             f"{self.agency.shape}, {self.budget.shape}")
        if not np.isfinite(self.budget).all() or (self.budget < 0).any():
            raise ValueError("budget: finite and ≥ 0 USD")
        self.carry_over = carry_over
        self.g_n, self.t_n = self.budget.shape
        self.disc = gamma ** np.arange(self.t_n)
        self.rhs = np.cumsum(self.budget, axis=1) if carry_over else self.budget
        cheapest = np.zeros(self.g_n)
        if cost is not None:
            cheapest = np.full(self.g_n, np.inf)
            np.minimum.at(cheapest, self.agency, np.where(np.asarray(cost) > 0, cost, np.inf).min(1))
            cheapest[np.isinf(cheapest)] = 0.0  # an agency whose every action is free
        self.forbid = (self.rhs <= 0.0) | (self.rhs < cheapest[:, None])
        self.active = np.flatnonzero(~self.forbid.ravel())
        self.scale = self.rhs.ravel()[self.active]
        self.n = len(self.active)

    def entries(self, spend: np.ndarray, bridge: np.ndarray) -> np.ndarray:
        """(k, n): each column's expected spend (k, T) USD in its agency's rows, over their budgets."""
        s = np.cumsum(spend, axis=1) if self.carry_over else spend
        full = np.zeros((len(bridge), self.g_n, self.t_n))
        full[np.arange(len(bridge)), self.agency[bridge]] = s
        return full.reshape(len(bridge), -1)[:, self.active] / self.scale

    def unscale(self, dual: np.ndarray) -> np.ndarray:
        """Scaled duals (n,) → μ (G, T) per USD of each row, present value (0 on enforced rows)."""
        mu = np.zeros((self.g_n, self.t_n))
        mu.ravel()[self.active] = dual / self.scale
        return mu

    def dp_price(self, mu: np.ndarray) -> np.ndarray:
        """(G, T): the DP's price of a USD spent in year t (year-t units), inf where the row is enforced."""
        per_year = np.cumsum(mu[:, ::-1], axis=1)[:, ::-1] if self.carry_over else mu
        return np.where(self.forbid, np.inf, per_year / self.disc)

    def allowances(self, mu: np.ndarray) -> np.ndarray:
        """(G,): Σ_t μ · budget over each agency's priced rows, the budgets' part of L."""
        return np.where(self.forbid, 0.0, mu * self.rhs).sum(1)


class RuleRows:
    """The rule's master rows: one per (fleet, year), scaled by the allowance F · D_fleet (m²)."""

    def __init__(self, rule: Rule | None, b_n: int, t_n: int):
        self.rule, self.t_n = rule, t_n
        if rule is None:
            self.n, self.g_n = 0, 0
            return
        group = np.asarray(rule.group, dtype=np.int64)
        deck = np.asarray(rule.deck, dtype=np.float64)
        if group.shape != (b_n,) or deck.shape != (b_n,) or (group < 0).any():
            raise ValueError(f"rule: group and deck of shape ({b_n},), group ≥ 0; got {group.shape}, {deck.shape}")
        if not (np.isfinite(deck).all() and (deck >= 0).all()):
            raise ValueError("rule: deck area finite and ≥ 0 m²")
        if not 0.0 < rule.share <= 1.0:
            raise ValueError(f"rule: share {rule.share:g} must be in (0, 1]")
        self.group, self.deck, self.g_n = group, deck, int(group.max()) + 1
        self.allow = rule.share * np.bincount(group, weights=deck, minlength=self.g_n)  # (F,) m²
        self.n = self.g_n * t_n

    def entries(self, poor: np.ndarray, bridge: np.ndarray) -> np.ndarray:
        """(k, F·T): each column's expected m² poor per (fleet, year), over the allowance."""
        out = np.zeros((len(bridge), self.g_n, self.t_n))
        if self.n:
            g = self.group[bridge]
            out[np.arange(len(bridge)), g] = poor * (self.deck[bridge] / np.maximum(self.allow[g], 1e-300))[:, None]
        return out.reshape(len(bridge), -1)

    def unscale(self, dual: np.ndarray) -> np.ndarray:
        """Scaled duals (F·T,) → ν (F, T) per m² poor (present value)."""
        if not self.n:
            return np.zeros((0, self.t_n))
        return dual.reshape(self.g_n, self.t_n) / np.maximum(self.allow, 1e-300)[:, None]

    def dp_price(self, nu: np.ndarray, disc: np.ndarray) -> np.ndarray | float:
        """The DP's charge (B, T) for ending year t poor: ν_t · deck_b / γ^t (0 without a rule)."""
        if not self.n:
            return 0.0
        return nu[self.group] * self.deck[:, None] / disc

    def charge(self, nu: np.ndarray, poor: np.ndarray, bridge: np.ndarray) -> np.ndarray | float:
        """(k,) Σ_t ν_t deck_b poor_bt of bridges ``bridge`` (k,), poor (k, T): the present value the DP charged
        each for the rule."""
        if not self.n:
            return 0.0
        return (nu[self.group[bridge]] * poor).sum(1) * self.deck[bridge]

    def allowances(self, nu: np.ndarray) -> np.ndarray:
        """(F,): Σ_t ν F D of each fleet, the rule's part of L (empty without a rule)."""
        return (nu * self.allow[:, None]).sum(1) if self.n else np.zeros(0)

    def subset(self, pick: np.ndarray) -> Rule | None:
        """The rule of some bridges (their fleets renumbered 0 … by order of first appearance)."""
        if self.rule is None:
            return None
        _, group = np.unique(self.group[pick], return_inverse=True)
        return Rule(group, self.deck[pick], self.rule.share)

    def from_subset(self, nu: np.ndarray, pick: np.ndarray) -> np.ndarray | None:
        """ν of a sub-fleet's fleets back on this rule's fleets (fleets it has none of: 0)."""
        if not self.n:
            return None
        out = np.zeros((self.g_n, self.t_n))
        out[np.unique(self.group[pick])] = nu
        return out
