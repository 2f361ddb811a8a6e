"""The exact finite-model DP and its Lagrangian bound against naive dense computations and the joint MDP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bridgefleet.planning.exact_bound import lagrangian_bound
from bridgefleet.planning.exact_dp import FleetModel, distribution, policy_value, solve, state_index


def _stochastic(rng: np.random.Generator, shape: tuple[int, ...], zero: float = 0.4) -> np.ndarray:
    m = rng.random(shape) * (rng.random(shape) > zero)
    m[..., 0] += 1e-3  # no empty row
    return m / m.sum(-1, keepdims=True)


def random_model(rng: np.random.Generator, b_n: int, r_n: int = 3, a_n: int = 3, *, int_cost: bool = False,
                 culvert: bool = True, coupling: float = 0.0) -> FleetModel:
    """A random fleet: kind 0 bridges, kind 1 culverts (slots 1–2 at the top, identity there)."""
    k_n = 2
    P = _stochastic(rng, (k_n, 3, r_n, r_n))
    treat = _stochastic(rng, (k_n, a_n, 3, r_n, r_n))
    eye = np.eye(r_n)
    treat[:, 0] = eye  # do nothing
    for a in range(1, a_n):  # each action leaves some slots alone
        for c in range(3):
            if rng.random() < 0.4:
                treat[:, a, c] = eye
    P[1, 1:] = eye
    treat[1, :, 1:] = eye
    kind = rng.integers(0, 2 if culvert else 1, b_n)
    start = np.stack([rng.integers(0, r_n, b_n), rng.integers(0, r_n, b_n), rng.integers(0, r_n, b_n),
                      rng.integers(0, 2, b_n)], axis=1)
    start[kind == 1, 1:3] = r_n - 1
    cost = rng.integers(1, 4, (b_n, a_n)).astype(float) if int_cost else rng.random((b_n, a_n)) * 3
    cost[:, 0] = 0.0
    protect = rng.integers(0, 3, a_n)
    protect[0] = 2
    return FleetModel(P=P, P_protected=_stochastic(rng, (k_n, r_n, r_n)), lapse=float(rng.random() * 0.5),
                      treat=treat, protect=protect, lowest_only=rng.random(a_n) < 0.5, kind=kind,
                      utility=np.sort(rng.random((b_n, r_n)), axis=1), cost=cost, cost_lambda=0.1, gamma=0.9,
                      start=start, poor_top=r_n // 2, coupling=coupling)


def _together(rows: list[np.ndarray]) -> dict[tuple[int, int, int], float]:
    """The three components' next levels when one uniform u draws all three (inverse CDF of each row), by
    walking u over [0, 1) between every row's cumulative breakpoints."""
    cums = [np.cumsum(r) for r in rows]
    cuts = sorted({0.0, 1.0, *[float(x) for c in cums for x in c[:-1]]})
    out: dict[tuple[int, int, int], float] = {}
    for lo, hi in itertools.pairwise(cuts):
        u = (lo + hi) / 2
        key = tuple(int(min(np.searchsorted(c, u, side="right"), len(c) - 1)) for c in cums)
        out[key] = out.get(key, 0.0) + hi - lo
    return out


def dense_transitions(model: FleetModel, b: int) -> tuple[np.ndarray, np.ndarray]:
    """Naive S×S matrices per action, M[a, s, s'] (treatment → deterioration → lapse), built state by state: the
    treatment slot by slot, then a year's move (independent with 1 − coupling, together with coupling); and the
    lowest level of each state (S,)."""
    r_n, a_n = model.levels, len(model.protect)
    k = model.kind[b]
    w = model.coupling
    states = [(r0, r1, r2, p) for p in range(2) for r0 in range(r_n) for r1 in range(r_n) for r2 in range(r_n)]
    index = {s: i for i, s in enumerate(states)}
    n = len(states)
    move = np.zeros((2, n, n))  # by the flag after the action: deterioration and lapse
    for q in range(2):
        for i, (y0, y1, y2, _) in enumerate(states):
            rows = [(model.P_protected[k] if (c == 0 and q == 1) else model.P[k, c])[y] for c, y in
                    enumerate((y0, y1, y2))]
            joint = {key: (1 - w) * rows[0][key[0]] * rows[1][key[1]] * rows[2][key[2]] for key in
                     itertools.product(range(r_n), repeat=3)}
            for key, pr in _together(rows).items():
                joint[key] += w * pr
            for key, pr in joint.items():
                for p2 in range(2):
                    lap = (1.0 if p2 == 0 else 0.0) if q == 0 else (model.lapse if p2 == 0 else 1.0 - model.lapse)
                    move[q, i, index[(*key, p2)]] += pr * lap
    m = np.zeros((a_n, n, n))
    for a in range(a_n):
        for i, (r0, r1, r2, p) in enumerate(states):
            lv = [r0, r1, r2]
            q = p if model.protect[a] == 2 else int(model.protect[a])
            low = int(np.argmin(lv))
            post = np.zeros(n)
            for j, (s0, s1, s2, p2) in enumerate(states):
                if p2 != 0:
                    continue
                pr = 1.0
                for c, (x, y) in enumerate(zip(lv, (s0, s1, s2), strict=True)):
                    tr = model.treat[k, a, c] if (not model.lowest_only[a] or c == low) else np.eye(r_n)
                    pr *= tr[x, y]
                post[j] = pr
            m[a, i] = post @ move[q]
    return m, np.array([min(s[:3]) for s in states])


def dense_backward(model: FleetModel, b: int, price: np.ndarray, price_poor: np.ndarray):
    """V_0 (S,) and the policy (T, S) by dense backward induction with the S×S matrices."""
    m, mn = dense_transitions(model, b)
    t_n = price.shape[0]
    v = np.zeros(m.shape[1])
    pol = np.zeros((t_n, m.shape[1]), dtype=int)
    for t in range(t_n - 1, -1, -1):
        end = model.utility[b, mn] - price_poor[t] * (mn <= model.poor_top) + model.gamma * v
        q = m @ end - ((model.cost_lambda + price[t]) * model.cost[b])[:, None]
        pol[t] = q.argmax(0)
        v = q.max(0)
    return v, pol


@pytest.mark.parametrize("coupling", [0.0, 0.45, 1.0])
def test_dp_equals_dense_backward_induction(coupling):
    """(a) Every state of two random kinds (each state a start), prices and a poor price: values, actions,
    spend and the share poor against dense S×S backward induction and a dense forward pass; the components
    moving independently, together in 45 % of years, and always together."""
    rng = np.random.default_rng(1)
    r_n, t_n = 3, 4
    base = random_model(rng, 2, r_n, a_n=4, coupling=coupling)
    s_n = 2 * r_n**3
    all_states = np.array([(r0, r1, r2, p) for p in range(2) for r0 in range(r_n) for r1 in range(r_n)
                           for r2 in range(r_n)])
    for k in range(2):
        b_n = s_n
        idx = np.zeros(b_n, dtype=int) + k
        model = FleetModel(**{**base.__dict__, "kind": np.full(b_n, k), "utility": base.utility[idx],
                              "cost": base.cost[idx], "start": all_states})
        price = np.tile(rng.random(t_n) * 0.3, (b_n, 1))
        pp = np.tile(rng.random(t_n) * 0.2, (b_n, 1))
        sol = solve(model, price, pp)
        v, pol = dense_backward(model, 0, price[0], pp[0])
        np.testing.assert_allclose(sol.value, v, rtol=1e-12, atol=1e-12)
        assert (state_index(all_states, r_n) == np.arange(s_n)).all()
        m, mn = dense_transitions(model, 0)
        d = np.eye(s_n)
        for t in range(t_n):
            np.testing.assert_allclose(sol.spend[:, t], d @ model.cost[0, pol[t]], atol=1e-12)
            d = sum((d * (pol[t] == a)) @ m[a] for a in range(len(model.protect)))
            np.testing.assert_allclose(sol.poor[:, t], d @ (mn <= model.poor_top), atol=1e-12)
        check = policy_value(model, sol.policy, price, pp)
        np.testing.assert_allclose(check.value, sol.value, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(sol.reward - (price * sol.spend * model.gamma ** np.arange(t_n)).sum(1),
                                   sol.value, atol=1e-12)
        dist = distribution(model, sol.policy, np.array([3, 7]))
        np.testing.assert_allclose(dist.sum(2), 1.0, atol=1e-12)


def joint_optimum(model: FleetModel, agency: np.ndarray, budget: np.ndarray, carry_over: bool) -> float:
    """The optimum over every fleet policy (adaptive ones included) of the joint finite MDP whose state is every
    bridge's state and, with carry-over, the money carried per agency (integer costs and budgets); a joint
    action is allowed when its spend per agency fits the money available that year."""
    b_n, a_n = len(model.kind), len(model.protect)
    g_n, t_n = budget.shape
    mats, rew = [], []
    for b in range(b_n):
        m, mn = dense_transitions(model, b)
        mats.append(m)
        rew.append(m @ model.utility[b, mn] - model.cost_lambda * model.cost[b][:, None])  # (A, S)
    s_n = mats[0].shape[1]
    acts = list(itertools.product(range(a_n), repeat=b_n))
    spend = np.array([[sum(model.cost[b, a[b]] for b in range(b_n) if agency[b] == g) for g in range(g_n)]
                      for a in acts])  # (J, G)
    most = np.array([sum(model.cost[b].max() for b in range(b_n) if agency[b] == g) for g in range(g_n)])
    cap = [most * (t_n - t) for t in range(t_n + 1)]  # money beyond all later spend is as good as that

    def step(m: tuple, t: int, j: int) -> tuple | None:
        avail = np.array(m) + budget[:, t] if carry_over else budget[:, t]
        if (spend[j] > avail + 1e-9).any():
            return None
        return tuple(np.minimum(avail - spend[j], cap[t + 1]).round(6)) if carry_over else ()

    money = [{()} if not carry_over else {tuple(np.zeros(g_n))}]
    for t in range(t_n):
        money.append({n for m in money[t] for j in range(len(acts)) if (n := step(m, t, j)) is not None})
    v_next = {m: np.zeros((s_n,) * b_n) for m in money[t_n]}
    for t in range(t_n - 1, -1, -1):
        keys = sorted(money[t + 1])
        stack = np.stack([v_next[m] for m in keys])  # (n_m, S, …, S)
        where = {m: i for i, m in enumerate(keys)}
        exp = {(): stack}  # contract axis b by M_b[a_b], sharing the prefixes of the joint actions
        for b in range(b_n):
            exp = {(*pre, a): np.moveaxis(np.tensordot(mats[b][a], x, axes=([1], [b + 1])), 0, b + 1)
                   for pre, x in exp.items() for a in range(a_n)}
        v_t = {}
        for m in money[t]:
            best = np.full((s_n,) * b_n, -np.inf)
            for j, a in enumerate(acts):
                n = step(m, t, j)
                if n is None:
                    continue
                val = model.gamma * exp[a][where[n]]
                for b in range(b_n):
                    val = val + rew[b][a[b]].reshape((1,) * b + (s_n,) + (1,) * (b_n - b - 1))
                best = np.maximum(best, val)
            v_t[m] = best
        v_next = v_t
    (m0,) = money[0]
    return float(v_next[m0][tuple(state_index(model.start, model.levels))])


def test_generous_budget_bound_equals_joint_optimum():
    """(b) Two bridges with room for any plan: the bound is the joint optimum (the sum of the single optima)."""
    rng = np.random.default_rng(2)
    for carry in (False, True):
        model = random_model(rng, 2, 3, a_n=3, int_cost=True)
        agency = np.array([0, 1])
        budget = np.full((2, 4), 20.0)
        opt = joint_optimum(model, agency, budget, carry)
        res = lagrangian_bound(model, agency, budget, carry)
        assert res.bound == pytest.approx(opt, rel=1e-10, abs=1e-10)
        assert res.iterations == 1
        assert res.bound == pytest.approx(solve(model, horizon=4).value.sum(), abs=1e-12)


def test_bound_above_joint_optimum_on_random_fleets():
    """(c) 50 random small fleets, budgets from 0 to generous, with and without carry-over, one or two agencies:
    the bound is never below the joint optimum over every fleet policy."""
    rng = np.random.default_rng(3)
    gaps = []
    for i in range(50):
        three = i % 5 == 4
        b_n = 3 if three else 2
        t_n = 3 if three else int(rng.integers(3, 6))
        a_n = 2 if three else int(rng.integers(2, 4))
        model = random_model(rng, b_n, 3, a_n=a_n, int_cost=True, coupling=0.4 * (i % 3 == 0))
        g_n = 1 if three else int(rng.integers(1, 3))
        agency = rng.integers(0, g_n, b_n)
        top = int(rng.choice([0, 1, 2, 4, 8]))
        budget = rng.integers(0, top + 1, (g_n, t_n)).astype(float)
        carry = bool(i % 2)
        opt = joint_optimum(model, agency, budget, carry)
        res = lagrangian_bound(model, agency, budget, carry, tol=1e-9)
        assert res.bound >= opt - 1e-9 * max(1.0, abs(opt)), (i, res.bound, opt)
        assert res.master_value <= res.bound + 1e-9
        gaps.append(res.bound - opt)
    print(f"\nbound − joint optimum over 50 fleets: largest {max(gaps):.6g}, smallest {min(gaps):.3g}, "
          f"median {np.median(gaps):.3g}")


def test_zero_budget_bound_is_do_nothing():
    """(d) With no money the bound is exactly do-nothing's value (every positive-cost action forbidden)."""
    rng = np.random.default_rng(4)
    model = random_model(rng, 20, 3, a_n=4)
    agency = rng.integers(0, 2, 20)
    for carry in (False, True):
        res = lagrangian_bound(model, agency, np.zeros((2, 5)), carry)
        nothing = policy_value(model, 0, horizon=5)
        assert abs(res.bound - nothing.value.sum()) <= 1e-9
        assert (res.spend == 0).all()


def test_a_budget_below_the_cheapest_treatment_bound_is_do_nothing():
    """A budget of a few cents (below every positive cost of the agency's bridges) buys nothing on any path: the
    bound is do nothing's value, as at 0 (it scaled the master's entries past what HiGHS holds: columns refused
    silently, then a shape error). At the cheapest cost itself the row is priced and the bound is above."""
    rng = np.random.default_rng(4)
    model = random_model(rng, 20, 3, a_n=4)
    agency = rng.integers(0, 2, 20)
    nothing = policy_value(model, 0, horizon=5).value.sum()
    cheapest = np.array([model.cost[agency == g][:, 1:].min() for g in range(2)])
    for carry in (False, True):
        for budget in (np.full((2, 5), 1e-9), np.repeat(cheapest[:, None] * 0.999 / 5, 5, axis=1)):
            res = lagrangian_bound(model, agency, budget, carry)
            if not carry or budget[0, 0] < 1e-3:  # with carry-over 5 years of 0.999/5 reach the cheapest in year 5
                assert abs(res.bound - nothing) <= 1e-9
                assert (res.spend == 0).all()
        res = lagrangian_bound(model, agency, np.repeat(cheapest[:, None], 5, axis=1), carry)
        assert res.bound > nothing + 1e-6


def test_hand_computed_case():
    """(e) One bridge, one component (slots 1–2 at the top, identity), R = 2, T = 2, γ = 0.9, λ = 0.1/USD.
    Level 1 drops to 0 with probability 0.2 a year; level 0 stays. Action 1 (1 USD) restores level 1 before the
    year's deterioration; action 2 (0.05 USD) does nothing (never worth its cost; it makes 0.05 USD the
    cheapest treatment). Utility u(0) = 0, u(1) = 1 on the year-end level; poor: level 0.

    Year 1 (last): at level 1, nothing gives 0.8·1 = 0.8, repair 0.8 − 0.1 = 0.7: nothing, V_1(1) = 0.8.
    At level 0, nothing gives 0, repair 0.7: repair, V_1(0) = 0.7.
    Year 0 from level 1: nothing 0.8·(1 + 0.9·0.8) + 0.2·(0 + 0.9·0.7) = 1.376 + 0.126 = 1.502 (repair 1.402).
    Expected spend: year 0 none, year 1 P(level 0) = 0.2 USD. Share poor: 0.2 both years (0.8·0.2 + 0.2·0.2).
    With a budget of 0 in year 0 and 0.1 USD in year 1 (no carry-over), the relaxation repairs half the
    time: the price is 0.7 reward/USD in year-1 units (0.63 present value), V(μ) = 1.376 and
    L = 1.376 + 0.63·0.1 = 1.439. No fleet policy can pay 1 USD from 0.1, so the true optimum is 1.376.
    With 0.04 USD in year 1, below the cheapest treatment, no path spends that year: the row is enforced and the
    bound is the optimum, 1.376."""
    eye = np.eye(2)
    drop = np.array([[1.0, 0.0], [0.2, 0.8]])
    P = np.stack([drop, eye, eye])[None]
    nothing = np.stack([eye, eye, eye])
    treat = np.stack([nothing, np.stack([np.array([[0.0, 1.0], [0.0, 1.0]]), eye, eye]), nothing])[None]
    model = FleetModel(P=P, P_protected=drop[None], lapse=0.5, treat=treat, protect=np.array([2, 2, 2]),
                       lowest_only=np.array([False, False, False]), kind=np.array([0]),
                       utility=np.array([[0.0, 1.0]]), cost=np.array([[0.0, 1.0, 0.05]]), cost_lambda=0.1, gamma=0.9,
                       start=np.array([[1, 1, 1, 0]]), poor_top=0)
    sol = solve(model, horizon=2)
    assert sol.value[0] == pytest.approx(1.502, abs=1e-12)
    np.testing.assert_allclose(sol.spend[0], [0.0, 0.2], atol=1e-12)
    np.testing.assert_allclose(sol.poor[0], [0.2, 0.2], atol=1e-12)
    res = lagrangian_bound(model, np.array([0]), np.array([[0.0, 0.1]]))
    assert res.bound == pytest.approx(1.439, abs=1e-9)
    assert res.price[0, 1] == pytest.approx(0.7, abs=1e-9)
    assert np.isinf(res.price[0, 0])
    assert lagrangian_bound(model, np.array([0]), np.array([[0.0, 0.04]])).bound == pytest.approx(1.376, abs=1e-12)
    assert joint_optimum(model, np.array([0]), np.array([[0.0, 0.1]]), False) == pytest.approx(1.376, abs=1e-12)


def test_blocks_of_bridges_equal_the_per_bridge_kernel():
    """solve and policy_value run blocks of 8 bridges of one kind (exact_lanes): on 13 bridges of two kinds (two
    blocks padded), a rank-one action, a lowest-only one, the components moving together in 30 % of years, an
    inf price in some bridges' years and a poor price, the values and policies are those of the per-bridge kernel
    bit for bit, spend, share poor and reward to rounding."""
    from bridgefleet.planning import exact_dp

    rng = np.random.default_rng(7)
    r_n, t_n, b_n = 4, 5, 13
    model = random_model(rng, b_n, r_n, a_n=5, coupling=0.3)
    treat = model.treat.copy()
    treat[:, 3] = np.broadcast_to(_stochastic(rng, (2, 3, 1, r_n)), (2, 3, r_n, r_n))  # rank one, every slot
    treat[1, 3, 1:] = np.eye(r_n)
    lowest = np.array([False, False, False, False, True])
    model = FleetModel(**{**model.__dict__, "treat": treat, "lowest_only": lowest})
    price = rng.random((b_n, t_n)) * 0.5
    price[:4, 2] = np.inf
    pp = rng.random((b_n, t_n)) * 0.3
    args, _, _ = exact_dp._prep(model, price, pp, None)
    s_n = model.states
    pol = np.zeros((t_n, b_n, s_n), dtype=np.int8)
    value, reward, spend, poor = np.zeros(b_n), np.zeros(b_n), np.zeros((b_n, t_n)), np.zeros((b_n, t_n))
    exact_dp._fleet(*args, np.zeros((0, 0, s_n), dtype=np.int8), True, True, pol, value, reward, spend, poor,
                    np.full(b_n, -1), np.zeros((0, 0, s_n)))
    sol = solve(model, price, pp)
    assert set(np.unique(model.kind)) == {0, 1} and (np.unique(pol) == np.arange(5)).all()
    np.testing.assert_array_equal(sol.value, value)
    np.testing.assert_array_equal(sol.policy, pol)
    np.testing.assert_allclose(sol.reward, reward, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(sol.spend, spend, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(sol.poor, poor, rtol=1e-13, atol=1e-13)
    fixed = rng.integers(0, 5, (t_n, b_n, s_n)).astype(np.int8)
    finite = np.where(np.isinf(price), 0.0, price)
    args, _, _ = exact_dp._prep(model, finite, pp, None)
    exact_dp._fleet(*args, fixed, False, False, np.zeros((0, 0, 0), dtype=np.int8), value, reward, spend, poor,
                    np.full(b_n, -1), np.zeros((0, 0, s_n)))
    check = policy_value(model, fixed, price, pp)
    for got, want in ((check.value, value), (check.reward, reward), (check.spend, spend), (check.poor, poor)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
