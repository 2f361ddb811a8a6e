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
forward at once, so the fleet's policy (T, B, S) int8 is stored only when asked.

Prices (``price``) are in reward units per USD in year-t units: a Lagrange multiplier μ in present-value
units (reward at year 0 per USD spent in year t) is μ / γ^t here. An infinite price forbids every action
of positive cost in that year (the limit of large prices; zero-cost actions stay allowed). Sources:
Puterman 1994, *Markov Decision Processes*, §4.5 (backward induction); Adelman & Mersereau 2008,
"Relaxations of weakly coupled stochastic dynamic programs", Operations Research 56(3) (single-bridge
problems under prices); Hawkins 2003 (the Lagrangian decomposition).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numba as nb
import numpy as np

C_SLOTS = 3  # component slots: deck, superstructure, substructure


@dataclass(frozen=True)
class FleetModel:
    """The finite model of a fleet (arrays as given; :meth:`check` validates them).

    Attributes:
        P: float64 (K, 3, R, R), one year's deterioration of each component slot by bridge kind, row = level
            before (rows sum to 1).
        P_protected: float64 (K, R, R), slot 0's deterioration while the deck is protected.
        lapse: probability in [0, 1] that protection lapses at the end of a year.
        treat: float64 (K, A, 3, R, R), each action's effect on each slot (row = level before; identity for a
            slot the action does not treat).
        protect: int (A,), 0 clears the flag, 1 sets it, 2 keeps it.
        lowest_only: bool (A,), the action treats only the slot of lowest level (ties: the lowest slot).
        kind: int (B,) in 0 … K−1 (0 bridge, 1 culvert).
        utility: float64 (B, R), reward units, by the lowest level at year end.
        cost: float64 (B, A) USD, ≥ 0; action 0 (do nothing) must cost 0.
        cost_lambda: reward units per USD.
        gamma: discount factor per year, in (0, 1].
        start: int (B, 4), three levels and the protection flag at the start of year 0.
        poor_top: the highest level counted poor (NBI: 4).
    """

    P: np.ndarray
    P_protected: np.ndarray
    lapse: float
    treat: np.ndarray
    protect: np.ndarray
    lowest_only: np.ndarray
    kind: np.ndarray
    utility: np.ndarray
    cost: np.ndarray
    cost_lambda: float
    gamma: float
    start: np.ndarray
    poor_top: int = 4
    coupling: float = 0.0

    @property
    def levels(self) -> int:
        """R, the number of rating levels."""
        return int(self.P.shape[-1])

    @property
    def states(self) -> int:
        """S = 2·R³."""
        return 2 * self.levels**3

    def check(self) -> None:
        """Validate shapes and values.

        Raises:
            ValueError: a wrong shape, a row that is not a distribution, a negative cost, a costly action 0,
                an out-of-range kind, start level or flag.
        """
        k_n, _, r_n, _ = np.shape(self.P)
        a_n = len(self.protect)
        b_n = len(self.kind)
        want = {"P": ((k_n, C_SLOTS, r_n, r_n), self.P), "P_protected": ((k_n, r_n, r_n), self.P_protected),
                "treat": ((k_n, a_n, C_SLOTS, r_n, r_n), self.treat), "lowest_only": ((a_n,), self.lowest_only),
                "utility": ((b_n, r_n), self.utility), "cost": ((b_n, a_n), self.cost), "start": ((b_n, 4), self.start)}
        for name, (shape, arr) in want.items():
            if np.shape(arr) != shape:
                raise ValueError(f"{name}: shape {np.shape(arr)}, expected {shape}")
        for name, arr in (("P", self.P), ("P_protected", self.P_protected), ("treat", self.treat)):
            a = np.asarray(arr)
            if (a < 0).any() or not np.allclose(a.sum(-1), 1.0, atol=1e-9):
                raise ValueError(f"{name}: rows must be probability distributions")
        if (np.asarray(self.cost) < 0).any() or (np.asarray(self.cost)[:, 0] != 0).any():
            raise ValueError("cost: must be ≥ 0, and 0 for action 0 (do nothing)")
        if not 0.0 <= self.lapse <= 1.0 or not 0.0 < self.gamma <= 1.0 or not 0.0 <= self.coupling <= 1.0:
            raise ValueError("lapse and coupling must lie in [0, 1] and gamma in (0, 1]")
        st = np.asarray(self.start)
        if (not np.isin(self.protect, (0, 1, 2)).all() or not np.isin(self.kind, np.arange(k_n)).all()
                or not np.isin(st[:, :3], np.arange(r_n)).all() or not np.isin(st[:, 3], (0, 1)).all()):
            raise ValueError("protect in {0, 1, 2}, kind in 0 … K−1, start levels in 0 … R−1 and flags 0 or 1")


def state_index(start: np.ndarray, levels: int) -> np.ndarray:
    """int64 (…,): the state number s = p·R³ + r0·R² + r1·R + r2 of states (…, 4) = (r0, r1, r2, p)."""
    st = np.asarray(start, dtype=np.int64)
    r = levels
    return st[..., 3] * r**3 + st[..., 0] * r * r + st[..., 1] * r + st[..., 2]


class Bank(NamedTuple):
    """The model's M R×R matrices sparse by row (CSR: ``ptr`` int64 (M, R+1), ``idx`` int64 and ``w`` float64
    (M, R·R)) and their transposes (``t_*``); ``flag`` int64 (M,): 1 identity, 2 rank one (equal rows), else 0;
    ``det`` int64 (K, 4): P[k, 0 … 2], P_protected[k]; ``tr`` int64 (K, A, 3); ``how`` int64 (K, A): 0 identity,
    1 one slot (``ax``), 2 rank one on every slot, 3 lowest only, 4 other; per level triple (R³,): ``low`` the
    lowest slot (ties: the lowest index), ``mn`` the lowest level, ``dig`` (R³, 3) the levels; the years the
    components move together (``coupling`` w): ``cnext`` int64 and ``clen`` float64 (K, 2, R³, 3R), from each level
    triple under flag q the next triples of the comonotone move (one uniform for the three rows) and their
    probabilities (interval lengths; zero-length entries point at the triple itself)."""

    ptr: np.ndarray
    idx: np.ndarray
    w: np.ndarray
    t_ptr: np.ndarray
    t_idx: np.ndarray
    t_w: np.ndarray
    flag: np.ndarray
    det: np.ndarray
    tr: np.ndarray
    how: np.ndarray
    ax: np.ndarray
    low: np.ndarray
    mn: np.ndarray
    dig: np.ndarray
    cnext: np.ndarray
    clen: np.ndarray
    coup: float


def comonotone(rows: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The comonotone joint move of three components: one uniform u draws each component's next level from its
    row (inverse CDF), so the three move together.

    Args:
        rows: float64 (3, R, R), each slot's one-year matrix; levels: int64 (N, 3) level triples.

    Returns:
        (next, prob): int64 (N, 3R) the next triples' index r0·R² + r1·R + r2 and float64 (N, 3R) their
        probabilities (the lengths of u's intervals between the rows' cumulative breakpoints; they sum to 1).
    """
    r_n = rows.shape[1]
    cum = np.stack([np.cumsum(rows[c][levels[:, c]], axis=1) for c in range(3)], axis=1)  # (N, 3, R)
    cum[..., -1] = 1.0
    cuts = np.sort(cum.reshape(len(levels), -1), axis=1)  # (N, 3R), the last is 1
    lo = np.concatenate([np.zeros((len(levels), 1)), cuts[:, :-1]], axis=1)
    mid = (lo + cuts) / 2.0
    nxt = np.zeros(mid.shape, dtype=np.int64)
    for c in range(3):
        level = np.minimum((mid[:, :, None] >= cum[:, c, None, :]).sum(axis=2), r_n - 1)
        nxt += level * r_n ** (2 - c)
    return nxt, cuts - lo


def _coupled(model: FleetModel, r_n: int, lv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``cnext``, ``clen`` of :class:`Bank` (shape (K, 2, R³, 3R))."""
    k_n = np.shape(model.P)[0]
    nxt = np.zeros((k_n, 2, r_n**3, 3 * r_n), dtype=np.int64)
    ln = np.zeros((k_n, 2, r_n**3, 3 * r_n))
    for k in range(k_n):
        for q in range(2):
            rows = np.asarray(model.P[k], float).copy()
            if q == 1:
                rows[0] = model.P_protected[k]
            nxt[k, q], ln[k, q] = comonotone(rows, lv)
    return nxt, ln


def _csr(mats: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m_n, r_n, _ = mats.shape
    ptr = np.zeros((m_n, r_n + 1), dtype=np.int64)
    idx = np.zeros((m_n, r_n * r_n), dtype=np.int64)
    w = np.zeros((m_n, r_n * r_n))
    nz = mats != 0.0
    ptr[:, 1:] = np.cumsum(nz.sum(2), axis=1)
    for m in range(m_n):  # a few dozen matrices, not bridges
        rows, cols = np.nonzero(nz[m])
        idx[m, : len(cols)] = cols
        w[m, : len(cols)] = mats[m][rows, cols]
    return ptr, idx, w


def make_bank(model: FleetModel) -> Bank:
    """The sparse matrix bank of ``model`` (see :class:`Bank`)."""
    k_n, _, r_n, _ = model.P.shape
    a_n = len(model.protect)
    mats = np.concatenate([np.asarray(model.P, float).reshape(-1, r_n, r_n),
                           np.asarray(model.P_protected, float).reshape(-1, r_n, r_n),
                           np.asarray(model.treat, float).reshape(-1, r_n, r_n)])
    det = np.concatenate([np.arange(3 * k_n).reshape(k_n, 3), 3 * k_n + np.arange(k_n)[:, None]], axis=1)
    tr = 4 * k_n + np.arange(k_n * a_n * 3).reshape(k_n, a_n, 3)
    flag = np.where(np.all(mats == np.eye(r_n), axis=(1, 2)), 1, np.where(np.all(mats == mats[:, :1], axis=(1, 2)),
                                                                             2, 0)).astype(np.int64)
    f = flag[tr]  # (K, A, 3)
    moved = (f != 1).sum(2)
    how = np.select([np.asarray(model.lowest_only)[None, :] & (moved > 0), moved == 0, moved == 1, (f == 2).all(2)],
                    [3, 0, 1, 2], 4).astype(np.int64)
    lv = np.stack(np.unravel_index(np.arange(r_n**3), (r_n,) * 3), axis=1).astype(np.int64)
    cnext, clen = _coupled(model, r_n, lv)
    return Bank(*_csr(mats), *_csr(np.ascontiguousarray(mats.transpose(0, 2, 1))), flag, det, tr, how,
                np.argmax(f != 1, axis=2).astype(np.int64), np.argmin(lv, axis=1).astype(np.int64),
                lv.min(axis=1).astype(np.int64), lv, cnext, clen, float(model.coupling))


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
def _backward(b, k, utility, cost, price, price_poor, poor_top, lam, gamma, lapse, protect, ptr, idx, w, flag, det,
              tr, how, ax, low, mn, dig, cnext, clen, coup, pol, v):  # pragma: no cover - compiled
    """Backward induction of bridge b (kind k) into ``pol`` (T, S) int8 (the best action, the first of equal
    values); V_0 into ``v`` (S,)."""
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
    for t in range(t_n - 1, -1, -1):
        pp = price_poor[b, t]
        for s in range(r3):
            m = mn[s]
            end = utility[b, m] - (pp if m <= poor_top else 0.0)
            x0 = end + gamma * v[s]  # the flag after the year: a protected deck stays so with 1 − lapse
            x[0, s] = x0
            x[1, s] = (1.0 - lapse) * (end + gamma * v[r3 + s]) + lapse * x0
        _chain(x[0], d[0], buf, det[k, 0], det[k, 1], det[k, 2], flag, ptr, idx, w, r_n)
        _chain(x[1], d[1], buf, det[k, 3], det[k, 1], det[k, 2], flag, ptr, idx, w, r_n)
        _pull(x[0], d[0], coup, cnext[k, 0], clen[k, 0])
        _pull(x[1], d[1], coup, cnext[k, 1], clen[k, 1])
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
    for b in nb.prange(b_n):
        pol = np.zeros((t_n, s_n), dtype=np.int8)
        v = np.empty(s_n)
        if solve_it:
            _backward(b, kind[b], utility, cost, price, price_poor, poor_top, lam, gamma, lapse, protect, ptr, idx, w,
                      flag, det, tr, how, ax, low, mn, dig, cnext, clen, coup, pol, v)
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
    _fleet(*args, np.zeros((0, 0, s_n), dtype=np.int8), True, keep_policy, pol, value, reward, spend, poor,
           np.full(b_n, -1), np.zeros((0, 0, s_n)))
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
    _fleet(*args, fixed, False, False, np.zeros((0, 0, 0), dtype=np.int8), value, reward, spend, poor,
           np.full(b_n, -1), np.zeros((0, 0, model.states)))
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
