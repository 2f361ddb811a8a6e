"""Exact single-bridge dynamic programmes on the finite rating model, vectorised over a fleet.

The state of one bridge is x = (r0, r1, r2, p): the levels 0 … R−1 of its three component slots (deck,
superstructure, substructure; a culvert's slots 1–2 sit at the top with identity transitions) and its
deck-protection flag p. States are numbered p-major, s = p·R³ + r0·R² + r1·R + r2 (the value tensor of a
fleet is (B, 2, R, R, R); S = 2·R³). Within year t = 0 … T−1: the action a (its cost counted in year t) →
its treatment (component c by ``treat[k, a, c]``, or only the lowest component if ``lowest_only[a]``; the
flag cleared, set or kept by ``protect[a]``) → one year's deterioration (components independently, slot 0
by ``P_protected`` while protected) and the flag's lapse → the reward on the end-of-year state,

    r_t = utility[b, m] − price_poor[b, t]·[m ≤ poor_top] − (cost_lambda + price[b, t])·cost[b, a],

m the lowest level at year end, discounted by γ^t; V_T = 0. The model is finite, so backward induction is
exact. The expectation over one year is never an S×S matrix: deterioration is three one-axis contractions
of the (2, R, R, R) value tensor and each treatment one per treated axis, with the R×R matrices stored
sparse by row (the project's banded matrices have 1–3 entries a row). Each bridge is solved in a
compiled loop over the fleet (``prange``), its policy kept in a (T, S) int8 buffer of its own and pushed
forward at once, so the fleet's policy (T, B, S) int8 is stored only when asked. :func:`solve` and
:func:`policy_value` run the same arithmetic on blocks of bridges of one kind, the bridge innermost
(:mod:`bridgefleet.planning.exact_lanes`, 2.6 × faster on Indiana); :func:`distribution` and the planner's value
tables use the kernels here.

Prices (``price``) are in reward units per USD in year-t units: a Lagrange multiplier μ in present-value
units (reward at year 0 per USD spent in year t) is μ / γ^t here. An infinite price forbids every action
of positive cost in that year (the limit of large prices; zero-cost actions stay allowed). Sources:
Puterman 1994, *Markov Decision Processes*, §4.5 (backward induction); Adelman & Mersereau 2008,
"Relaxations of weakly coupled stochastic dynamic programs", Operations Research 56(3) (single-bridge
problems under prices); Hawkins 2003 (the Lagrangian decomposition).
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from bridgefleet.planning import exact_lanes as lanes
from bridgefleet.planning.exact_model import FleetModel, make_bank, state_index

__all__ = ["FleetModel", "state_index"]  # re-exported: the model the DP solves


@nb.njit(cache=True, nogil=True)
def _pull(src, dst, w, nxt, ln):  # pragma: no cover - compiled
    """dst = (1 − w) dst + w Σ_j ln[s, j] src[nxt[s, j]]: the expectation of a year's move when the components
    move together with probability w (dst holds the independent one)."""
    if w == 0.0:
        return
    for s in range(dst.shape[0]):
        acc = 0.0
        for j in range(nxt.shape[1]):
            acc += ln[s, j] * src[nxt[s, j]]
        dst[s] = (1.0 - w) * dst[s] + w * acc


@nb.njit(cache=True, nogil=True)
def _push(src, dst, w, nxt, ln):  # pragma: no cover - compiled
    """The transpose of :func:`_pull`: dst = (1 − w) dst + w (src's mass moved together)."""
    if w == 0.0:
        return
    for s in range(dst.shape[0]):
        dst[s] *= 1.0 - w
    for s in range(src.shape[0]):
        m = src[s]
        if m == 0.0:
            continue
        for j in range(nxt.shape[1]):
            dst[nxt[s, j]] += w * m * ln[s, j]


@nb.njit(cache=True, nogil=True)
def _contract(src, dst, axis, m, ptr, idx, w, r_n):  # pragma: no cover - compiled
    """dst = src contracted on ``axis`` (0, 1, 2) of the (R, R, R) tensor with matrix m of the bank:
    dst[…i…] = Σ_j M[i, j] src[…j…]; src, dst flat (R³,), distinct."""
    if axis == 2:
        for o in range(0, r_n**3, r_n):
            for i in range(r_n):
                acc = 0.0
                for k in range(ptr[m, i], ptr[m, i + 1]):
                    acc += w[m, k] * src[o + idx[m, k]]
                dst[o + i] = acc
        return
    st = r_n if axis == 1 else r_n * r_n  # a contiguous run of the later axes
    for o in range(0, r_n**3, r_n * st):
        for i in range(r_n):
            oi = o + i * st
            for q in range(st):
                dst[oi + q] = 0.0
            for k in range(ptr[m, i], ptr[m, i + 1]):
                wk = w[m, k]
                oj = o + idx[m, k] * st
                for q in range(st):
                    dst[oi + q] += wk * src[oj + q]


@nb.njit(cache=True, nogil=True)
def _chain(src, out, buf, m0, m1, m2, flag, ptr, idx, w, r_n):  # pragma: no cover - compiled
    """out = src contracted on axes 2, 1, 0 with matrices m2, m1, m0 (identities skipped); ``buf`` scratch (R³,),
    all distinct."""
    ms = (m0, m1, m2)
    n = 0
    for c in range(3):
        n += flag[ms[c]] != 1
    if n == 0:
        out[:] = src
        return
    cur = src
    for c in range(2, -1, -1):  # ping-pong so the last contraction lands in out
        m = ms[c]
        if flag[m] == 1:
            continue
        dst = out if n % 2 == 1 else buf
        _contract(cur, dst, c, m, ptr, idx, w, r_n)
        cur = dst
        n -= 1


@nb.njit(cache=True, nogil=True)
def expected_next(b, k, utility, pp, poor_top, gamma, lapse, v_next, ptr, idx, w, flag, det, mn, cnext, clen, coup, x,
                  d, buf):  # pragma: no cover - compiled
    """d[q, s] = E[the year-end reward + γ V_{t+1}(next state) | the levels s after the action, flag q] of bridge b
    (kind k) from V_{t+1} ``v_next`` (S,): the year's move (independent components, together with probability
    ``coup``) and the flag's lapse; ``pp`` the year's poor price; x (2, R³) and buf (R³,) scratch."""
    r3 = mn.shape[0]
    r_n = utility.shape[1]
    for s in range(r3):
        m = mn[s]
        end = utility[b, m] - (pp if m <= poor_top else 0.0)
        x0 = end + gamma * v_next[s]  # the flag after the year: a protected deck stays so with 1 − lapse
        x[0, s] = x0
        x[1, s] = (1.0 - lapse) * (end + gamma * v_next[r3 + s]) + lapse * x0
    _chain(x[0], d[0], buf, det[k, 0], det[k, 1], det[k, 2], flag, ptr, idx, w, r_n)
    _chain(x[1], d[1], buf, det[k, 3], det[k, 1], det[k, 2], flag, ptr, idx, w, r_n)
    _pull(x[0], d[0], coup, cnext[k, 0], clen[k, 0])
    _pull(x[1], d[1], coup, cnext[k, 1], clen[k, 1])


@nb.njit(cache=True, nogil=True)
def _backward(b, k, utility, cost, price, price_poor, poor_top, lam, gamma, lapse, protect, ptr, idx, w, flag, det,
              tr, how, ax, low, mn, dig, cnext, clen, coup, pol, v, stop, keep_lo, vkeep):  # pragma: no cover
    """Backward induction of bridge b (kind k) into ``pol`` (T, S) int8 (the best action, the first of equal
    values) for years T−1 … ``stop``; V_stop into ``v`` (S,); V_t into vkeep[t − keep_lo] (W, S) for the years
    t ≥ stop of [keep_lo, keep_lo + W) (V_T = 0 included)."""
    t_n = price.shape[1]
    a_n = protect.shape[0]
    r3 = mn.shape[0]
    r_n = utility.shape[1]
    stride = (r_n * r_n, r_n, 1)
    x = np.empty((2, r3))
    d = np.empty((2, r3))
    u = np.empty(r3)
    buf = np.empty(r3)
    vc = np.empty((2, r3))
    v[:] = 0.0
    n_keep = vkeep.shape[0]
    if keep_lo <= t_n < keep_lo + n_keep:
        vkeep[t_n - keep_lo] = 0.0
    for t in range(t_n - 1, stop - 1, -1):
        expected_next(b, k, utility, price_poor[b, t], poor_top, gamma, lapse, v, ptr, idx, w, flag, det, mn, cnext,
                      clen, coup, x, d, buf)
        vc[:] = -np.inf
        for a in range(a_n):
            if cost[b, a] != 0.0 and price[b, t] == np.inf:
                continue  # forbidden this year
            ch = (lam + price[b, t]) * cost[b, a] if cost[b, a] != 0.0 else 0.0
            h = how[k, a]
            for q in range(2):  # q: the flag after the action
                if protect[a] != 2 and protect[a] != q:
                    continue
                src = d[q]
                if h == 0:
                    u[:] = src
                elif h == 1:
                    _contract(src, u, ax[k, a], tr[k, a, ax[k, a]], ptr, idx, w, r_n)
                elif h == 2:  # every slot to a fixed distribution: one number
                    m0, m1, m2 = tr[k, a, 0], tr[k, a, 1], tr[k, a, 2]
                    acc = 0.0
                    for k0 in range(ptr[m0, 0], ptr[m0, 1]):
                        for k1 in range(ptr[m1, 0], ptr[m1, 1]):
                            for k2 in range(ptr[m2, 0], ptr[m2, 1]):
                                acc += w[m0, k0] * w[m1, k1] * w[m2, k2] * src[
                                    idx[m0, k0] * stride[0] + idx[m1, k1] * r_n + idx[m2, k2]]
                    u[:] = acc
                elif h == 3:  # only the lowest slot: its row, gathered state by state
                    for s in range(r3):
                        c = low[s]
                        m = tr[k, a, c]
                        if flag[m] == 1:
                            u[s] = src[s]
                            continue
                        rc = dig[s, c]
                        acc = 0.0
                        for kk in range(ptr[m, rc], ptr[m, rc + 1]):
                            acc += w[m, kk] * src[s + (idx[m, kk] - rc) * stride[c]]
                        u[s] = acc
                else:
                    _chain(src, u, buf, tr[k, a, 0], tr[k, a, 1], tr[k, a, 2], flag, ptr, idx, w, r_n)
                for p in range(2):
                    if protect[a] == 2 and p != q:
                        continue
                    o = p * r3
                    for s in range(r3):
                        val = u[s] - ch
                        if val > vc[p, s]:
                            vc[p, s] = val
                            pol[t, o + s] = a
        for p in range(2):
            v[p * r3 : (p + 1) * r3] = vc[p]
        if keep_lo <= t < keep_lo + n_keep:
            vkeep[t - keep_lo] = v


@nb.njit(cache=True, nogil=True)
def _forward(b, k, s0, utility, cost, price, price_poor, poor_top, lam, gamma, lapse, protect, ptr, idx, w, t_ptr,
             t_idx, t_w, flag, det, tr, how, ax, low, mn, dig, cnext, clen, coup, pol, spend, poor,
             dist):  # pragma: no cover - compiled
    """Push bridge b's start state s0 through the policy ``pol`` (T, S): its expected spend and share poor per
    year into spend[b], poor[b] (T,), the year-t distributions into dist[t] (S,) when dist has rows; returns
    (Σ γ^t E[reward without the budget price], Σ γ^t price × spend)."""
    t_n = price.shape[1]
    a_n = protect.shape[0]
    r3 = mn.shape[0]
    r_n = utility.shape[1]
    stride = (r_n * r_n, r_n, 1)
    d = np.zeros((2, r3))
    d[s0 // r3, s0 % r3] = 1.0
    post = np.zeros((2, r3))
    pool = np.zeros((a_n, 2, r3))  # mass of actions pushed by whole contractions (how 4)
    used = np.zeros((a_n, 2), dtype=np.bool_)
    rank1 = np.zeros((a_n, 2))
    out = np.empty(r3)
    buf = np.empty(r3)
    keep = dist.shape[0] > 0
    reward = 0.0
    charged = 0.0
    disc = 1.0
    for t in range(t_n):
        if keep:
            for p in range(2):
                dist[t, p * r3 : (p + 1) * r3] = d[p]
        post[:] = 0.0
        rank1[:] = 0.0
        ec = 0.0
        for p in range(2):
            for s in range(r3):
                m = d[p, s]
                if m == 0.0:
                    continue
                a = pol[t, p * r3 + s]
                ec += m * cost[b, a]
                q = p if protect[a] == 2 else protect[a]
                h = how[k, a]
                if h == 0:
                    post[q, s] += m
                elif h == 2:
                    rank1[a, q] += m
                elif h == 4:
                    if not used[a, q]:
                        pool[a, q] = 0.0
                        used[a, q] = True
                    pool[a, q, s] += m
                else:  # one slot's row scattered: the given slot, or the lowest
                    c = ax[k, a] if h == 1 else low[s]
                    mm = tr[k, a, c]
                    if flag[mm] == 1:
                        post[q, s] += m
                        continue
                    rc = dig[s, c]
                    for kk in range(ptr[mm, rc], ptr[mm, rc + 1]):
                        post[q, s + (idx[mm, kk] - rc) * stride[c]] += m * w[mm, kk]
        for a in range(a_n):
            for q in range(2):
                if rank1[a, q] > 0.0:
                    m0, m1, m2 = tr[k, a, 0], tr[k, a, 1], tr[k, a, 2]
                    for k0 in range(ptr[m0, 0], ptr[m0, 1]):
                        for k1 in range(ptr[m1, 0], ptr[m1, 1]):
                            for k2 in range(ptr[m2, 0], ptr[m2, 1]):
                                post[q, idx[m0, k0] * stride[0] + idx[m1, k1] * r_n + idx[m2, k2]] += (
                                    rank1[a, q] * w[m0, k0] * w[m1, k1] * w[m2, k2])
                if used[a, q]:
                    _chain(pool[a, q], out, buf, tr[k, a, 0], tr[k, a, 1], tr[k, a, 2], flag, t_ptr, t_idx, t_w, r_n)
                    post[q] += out
                    used[a, q] = False
        _chain(post[0], d[0], buf, det[k, 0], det[k, 1], det[k, 2], flag, t_ptr, t_idx, t_w, r_n)
        _chain(post[1], d[1], buf, det[k, 3], det[k, 1], det[k, 2], flag, t_ptr, t_idx, t_w, r_n)
        _push(post[0], d[0], coup, cnext[k, 0], clen[k, 0])
        _push(post[1], d[1], coup, cnext[k, 1], clen[k, 1])
        ep = 0.0
        eu = 0.0
        for s in range(r3):
            moved = lapse * d[1, s]
            d[1, s] -= moved
            d[0, s] += moved
            tot = d[0, s] + d[1, s]
            eu += tot * utility[b, mn[s]]
            if mn[s] <= poor_top:
                ep += tot
        spend[b, t] = ec
        poor[b, t] = ep
        reward += disc * (eu - price_poor[b, t] * ep - lam * ec)
        if ec > 0.0:
            charged += disc * price[b, t] * ec
        disc *= gamma
    if keep:
        for p in range(2):
            dist[t_n, p * r3 : (p + 1) * r3] = d[p]
    return reward, charged


@nb.njit(cache=True, nogil=True, parallel=True)
def _fleet(kind, s0, utility, cost, price, price_poor, poor_top, lam, gamma, lapse, protect, ptr, idx, w, t_ptr,
           t_idx, t_w, flag, det, tr, how, ax, low, mn, dig, cnext, clen, coup, fixed, solve_it, keep_pol, pol_out,
           value, reward, spend, poor, slot, dist):  # pragma: no cover - compiled
    """Every bridge: the backward pass (``solve_it``: optimise; else take ``fixed`` (T, B, S)) and the forward
    pass; the policy into pol_out (T, B, S) if ``keep_pol``; bridge b's distributions into dist[:, slot[b]]
    where slot[b] ≥ 0."""
    b_n = kind.shape[0]
    t_n = price.shape[1]
    s_n = 2 * mn.shape[0]
    no_dist = np.zeros((0, 1, s_n))
    no_keep = np.zeros((0, s_n), dtype=np.float32)
    for b in nb.prange(b_n):
        pol = np.zeros((t_n, s_n), dtype=np.int8)
        v = np.empty(s_n)
        if solve_it:
            _backward(b, kind[b], utility, cost, price, price_poor, poor_top, lam, gamma, lapse, protect, ptr, idx, w,
                      flag, det, tr, how, ax, low, mn, dig, cnext, clen, coup, pol, v, 0, 0, no_keep)
            value[b] = v[s0[b]]
        else:
            for t in range(t_n):
                pol[t] = fixed[t, b]
        dd = dist[:, slot[b]] if slot[b] >= 0 else no_dist[:, 0]
        r, ch = _forward(b, kind[b], s0[b], utility, cost, price, price_poor, poor_top, lam, gamma, lapse, protect, ptr,
                         idx, w, t_ptr, t_idx, t_w, flag, det, tr, how, ax, low, mn, dig, cnext, clen, coup, pol, spend,
                         poor, dd)
        reward[b] = r
        if not solve_it:
            value[b] = r - ch
        if keep_pol:
            pol_out[:, b] = pol


class ExactSolution(NamedTuple):
    """What :func:`solve` and :func:`policy_value` return.

    Attributes:
        value: float64 (B,), each bridge's value at its start state under the prices (reward units, year-0
            present value): ``reward`` less Σ_t γ^t price[b, t] × spend[b, t].
        reward: float64 (B,), Σ_t γ^t E[utility − price_poor·poor − cost_lambda·cost], the policy's objective
            without the budget price (a column's value in the master LP).
        spend: float64 (B, T) USD, expected spend per year.
        poor: float64 (B, T), probability that the lowest level ends year t at or below ``poor_top``.
        policy: int8 (T, B, S), the action in each year and state (None unless kept).
    """

    value: np.ndarray
    reward: np.ndarray
    spend: np.ndarray
    poor: np.ndarray
    policy: np.ndarray | None


def _prep(model: FleetModel, price: np.ndarray | None, price_poor: np.ndarray | None, horizon: int | None):
    model.check()
    b_n = len(model.kind)
    if price is None:
        if horizon is None:
            raise ValueError("give price (B, T) or horizon")
        price = np.zeros((b_n, horizon))
    price = np.ascontiguousarray(price, dtype=np.float64)
    if price.ndim != 2 or price.shape[0] != b_n or (price < 0).any() or np.isnan(price).any():
        raise ValueError(f"price: shape (B, T) = ({b_n}, T) with values ≥ 0 (inf allowed); got {price.shape}")
    t_n = price.shape[1]
    pp = np.zeros((b_n, t_n)) if price_poor is None else np.ascontiguousarray(price_poor, dtype=np.float64)
    if pp.shape != (b_n, t_n):
        raise ValueError(f"price_poor: shape {pp.shape}, expected {(b_n, t_n)}")
    bank = make_bank(model)
    s0 = state_index(model.start, model.levels)
    args = (np.asarray(model.kind, np.int64), s0, np.ascontiguousarray(model.utility, np.float64),
            np.ascontiguousarray(model.cost, np.float64), price, pp, int(model.poor_top), float(model.cost_lambda),
            float(model.gamma), float(model.lapse), np.asarray(model.protect, np.int64), *bank)
    return args, b_n, t_n


def solve(model: FleetModel, price: np.ndarray | None = None, price_poor: np.ndarray | None = None, *,
          horizon: int | None = None, keep_policy: bool = True) -> ExactSolution:
    """Optimal single-bridge policies of every bridge under the budget prices, exactly (backward induction on the
    finite model, then the forward pass from each start state).

    Args:
        model: the fleet (see :class:`FleetModel`).
        price: float64 (B, T), reward units per USD in year-t units, added to ``cost_lambda``; ≥ 0, inf
            forbids positive-cost actions that year. None: zeros over ``horizon`` years.
        price_poor: float64 (B, T), reward units charged in year t if the bridge ends it poor; None: zeros.
        horizon: T when ``price`` is None.
        keep_policy: return the policy (T, B, S) int8 (T·B·S bytes: 288 MB for 4,794 bridges, 30 years, R = 10).

    Returns:
        :class:`ExactSolution`; ties between actions go to the lowest action number.

    Raises:
        ValueError: see :meth:`FleetModel.check`; a price of the wrong shape, negative or NaN.
    """
    args, b_n, t_n = _prep(model, price, price_poor, horizon)
    s_n = model.states
    pol = np.zeros((t_n, b_n, s_n) if keep_policy else (0, 0, 0), dtype=np.int8)
    value, reward = np.zeros(b_n), np.zeros(b_n)
    spend, poor = np.zeros((b_n, t_n)), np.zeros((b_n, t_n))
    lanes.fleet(*lanes.blocks(model.kind), *args, np.zeros((0, 0, s_n), dtype=np.int8), True, keep_policy, pol, value,
                reward, spend, poor)
    return ExactSolution(value, reward, spend, poor, pol if keep_policy else None)


def _fixed(policy: np.ndarray, t_n: int, b_n: int, s_n: int, a_n: int) -> np.ndarray:
    pol = np.asarray(policy)
    if pol.size and (pol.min() < 0 or pol.max() >= a_n):
        raise ValueError(f"policy: actions in 0 … {a_n - 1}")
    try:
        return np.ascontiguousarray(np.broadcast_to(pol.astype(np.int8), (t_n, b_n, s_n)))
    except ValueError:
        raise ValueError(f"policy: shape {pol.shape} does not broadcast to (T, B, S) = {(t_n, b_n, s_n)}") from None


def policy_value(model: FleetModel, policy: np.ndarray | int, price: np.ndarray | None = None,
                 price_poor: np.ndarray | None = None, *, horizon: int | None = None) -> ExactSolution:
    """The exact value, spend and share poor of a given policy (e.g. 0: do nothing) from each start state.

    Args:
        policy: int, broadcast to (T, B, S): the action in year t and state s of bridge b (an action the prices
            forbid is still taken and charged at cost_lambda only).
        price, price_poor, horizon: as in :func:`solve`.

    Returns:
        :class:`ExactSolution` with ``policy`` None; value = reward − Σ_t γ^t price × spend (inf prices count 0).

    Raises:
        ValueError: as :func:`solve`; a policy that does not broadcast or names an unknown action.
    """
    args, b_n, t_n = _prep(model, price, price_poor, horizon)
    fixed = _fixed(policy, t_n, b_n, model.states, len(model.protect))
    if price is not None:  # inf × 0 spend would be NaN: an inf price charges nothing here
        args = (*args[:4], np.where(np.isinf(args[4]), 0.0, args[4]), *args[5:])
    value, reward = np.zeros(b_n), np.zeros(b_n)
    spend, poor = np.zeros((b_n, t_n)), np.zeros((b_n, t_n))
    lanes.fleet(*lanes.blocks(model.kind), *args, fixed, False, False, np.zeros((0, 0, 0), dtype=np.int8), value,
                reward, spend, poor)
    return ExactSolution(value, reward, spend, poor, None)


def distribution(model: FleetModel, policy: np.ndarray, bridges: np.ndarray | None = None) -> np.ndarray:
    """float64 (T+1, n, S): the state distribution at the start of each year t (year T: after the last) of the
    bridges ``bridges`` (int (n,), distinct; default all: mind (T+1)·n·S·8 bytes) under ``policy`` (int (T, B, S),
    e.g. :attr:`ExactSolution.policy`).

    Raises:
        ValueError: as :func:`policy_value`.
    """
    if np.ndim(policy) != 3:
        raise ValueError("policy: shape (T, B, S)")
    t_n = np.shape(policy)[0]
    args, b_n, _ = _prep(model, None, None, t_n)
    fixed = _fixed(policy, t_n, b_n, model.states, len(model.protect))
    sel = np.arange(b_n) if bridges is None else np.asarray(bridges, dtype=np.int64)
    slot = np.full(b_n, -1)
    slot[sel] = np.arange(len(sel))
    out = np.zeros((t_n + 1, len(sel), model.states))
    _fleet(*args, fixed, False, False, np.zeros((0, 0, 0), dtype=np.int8), np.zeros(b_n), np.zeros(b_n),
           np.zeros((b_n, t_n)), np.zeros((b_n, t_n)), slot, out)
    return out
