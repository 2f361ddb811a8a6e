"""The exact DP of :mod:`bridgefleet.planning.exact_dp` on blocks of :data:`LANES` bridges of one kind at once.

Bridges of one kind share every matrix of the model; only their utility, costs and prices differ. A block keeps
its value and distribution tensors state-major with the bridge innermost, (S, LANES) float64, so each sparse
matrix entry is applied to :data:`LANES` bridges by one vector instruction instead of one bridge at a time (the
per-bridge kernels' inner loops are 1–7 entries long and do not vectorise). The arithmetic of each bridge is that
of :func:`bridgefleet.planning.exact_dp._backward` in the same order (the same values and policies); the forward
pass sums each year's spend by action rather than by state (agreeing to rounding, about 1e-16 relative). The
last block of a kind is padded with copies of its last bridge, whose results are dropped.
"""

from __future__ import annotations

import numba as nb
import numpy as np

LANES = 16
"""Bridges a block solves together (16 float64: two AVX-512 registers; on 400 Indiana bridges 8 took 15 % longer
and 32 was within 5 %, with twice the memory a thread)."""


@nb.njit(cache=True, nogil=True)
def _contract(src, dst, axis, m, ptr, idx, w, r_n):  # pragma: no cover - compiled
    """dst = src contracted on ``axis`` (0, 1, 2) of the (R, R, R) tensor with matrix m of the bank, each entry a
    block of LANES bridges: src, dst flat (R³·LANES,), distinct. Each row of the matrix adds runs of LANES, R·LANES
    or R²·LANES contiguous numbers, taken as views (a loop over a view vectorises; one over an offset index does
    not: 1.5 × on Indiana)."""
    st = LANES if axis == 2 else (r_n * LANES if axis == 1 else r_n * r_n * LANES)
    tot = r_n * r_n * r_n * LANES
    for o in range(0, tot, r_n * st):
        for i in range(r_n):
            oi = o + i * st
            out = dst[oi : oi + st]
            for q in range(st):
                out[q] = 0.0
            for k in range(ptr[m, i], ptr[m, i + 1]):
                wk = w[m, k]
                oj = o + idx[m, k] * st
                run = src[oj : oj + st]
                for q in range(st):
                    out[q] += wk * run[q]


@nb.njit(cache=True, nogil=True)
def _chain(src, out, buf, m0, m1, m2, flag, ptr, idx, w, r_n):  # pragma: no cover - compiled
    """out = src contracted on axes 2, 1, 0 with matrices m2, m1, m0 (identities skipped); ``buf`` scratch, all
    distinct, flat (R³·LANES,)."""
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
def _pull(src, dst, wt, nxt, ln, acc):  # pragma: no cover - compiled
    """dst = (1 − wt) dst + wt Σ_j ln[s, j] src[nxt[s, j]] (the components moving together), lanes innermost;
    ``acc`` (LANES,) scratch. The moves of each state are listed positive first; the zeros add nothing."""
    if wt == 0.0:
        return
    for s in range(nxt.shape[0]):
        for q in range(LANES):
            acc[q] = 0.0
        for j in range(nxt.shape[1]):
            lj = ln[s, j]
            if lj == 0.0:
                break
            o = nxt[s, j] * LANES
            for q in range(LANES):
                acc[q] += lj * src[o + q]
        o = s * LANES
        for q in range(LANES):
            dst[o + q] = (1.0 - wt) * dst[o + q] + wt * acc[q]


@nb.njit(cache=True, nogil=True)
def _push(src, dst, wt, nxt, ln):  # pragma: no cover - compiled
    """The transpose of :func:`_pull`: dst = (1 − wt) dst + wt (src's mass moved together)."""
    if wt == 0.0:
        return
    for i in range(dst.shape[0]):
        dst[i] *= 1.0 - wt
    for s in range(nxt.shape[0]):
        o = s * LANES
        for j in range(nxt.shape[1]):
            lj = ln[s, j]
            if lj == 0.0:
                break
            t = nxt[s, j] * LANES
            for q in range(LANES):
                dst[t + q] += wt * src[o + q] * lj


@nb.njit(cache=True, nogil=True)
def _backward(k, util, cst, prc, ppr, poor_top, lam, gamma, lapse, protect, ptr, idx, w, flag, det, tr, how, ax, low,
              mn, dig, cnext, clen, coup, pol, v):  # pragma: no cover - compiled
    """Backward induction of a block (kind k): util (R, L), cst (A, L), prc and ppr (T, L) its bridges' utility,
    costs, prices and poor prices; the best action (the first of equal values) into pol (T, S·L) int8 and V_0 into
    v (S·L,), state-major."""
    t_n = prc.shape[0]
    a_n = protect.shape[0]
    r3 = mn.shape[0]
    r_n = util.shape[0]
    n3 = r3 * LANES
    stride = (r_n * r_n, r_n, 1)
    x = np.empty((2, n3))
    d = np.empty((2, n3))
    u = np.empty(n3)
    buf = np.empty(n3)
    vc = np.empty((2, n3))
    acc = np.empty(LANES)
    ch = np.empty(LANES)
    v[:] = 0.0
    for t in range(t_n - 1, -1, -1):
        for s in range(r3):  # the year-end reward and V_{t+1} after the flag's lapse (exact_dp.expected_next)
            mi = mn[s]
            o = s * LANES
            for q in range(LANES):
                end = util[mi, q] - (ppr[t, q] if mi <= poor_top else 0.0)
                x0 = end + gamma * v[o + q]
                x[0, o + q] = x0
                x[1, o + q] = (1.0 - lapse) * (end + gamma * v[n3 + o + q]) + lapse * x0
        _chain(x[0], d[0], buf, det[k, 0], det[k, 1], det[k, 2], flag, ptr, idx, w, r_n)
        _chain(x[1], d[1], buf, det[k, 3], det[k, 1], det[k, 2], flag, ptr, idx, w, r_n)
        _pull(x[0], d[0], coup, cnext[k, 0], clen[k, 0], acc)
        _pull(x[1], d[1], coup, cnext[k, 1], clen[k, 1], acc)
        vc[:] = -np.inf
        for a in range(a_n):
            some = False
            for q in range(LANES):  # a forbidden action's charge is inf: it never wins
                c = cst[a, q]
                if c == 0.0:
                    ch[q] = 0.0
                    some = True
                elif prc[t, q] == np.inf:
                    ch[q] = np.inf
                else:
                    ch[q] = (lam + prc[t, q]) * c
                    some = True
            if not some:
                continue
            h = how[k, a]
            for f in range(2):  # f: the flag after the action
                if protect[a] != 2 and protect[a] != f:
                    continue
                src = d[f]
                if h == 0:
                    u[:] = src
                elif h == 1:
                    _contract(src, u, ax[k, a], tr[k, a, ax[k, a]], ptr, idx, w, r_n)
                elif h == 2:  # every slot to a fixed distribution: one number a bridge
                    m0, m1, m2 = tr[k, a, 0], tr[k, a, 1], tr[k, a, 2]
                    for q in range(LANES):
                        acc[q] = 0.0
                    for k0 in range(ptr[m0, 0], ptr[m0, 1]):
                        for k1 in range(ptr[m1, 0], ptr[m1, 1]):
                            for k2 in range(ptr[m2, 0], ptr[m2, 1]):
                                wt = w[m0, k0] * w[m1, k1] * w[m2, k2]
                                o = (idx[m0, k0] * stride[0] + idx[m1, k1] * r_n + idx[m2, k2]) * LANES
                                for q in range(LANES):
                                    acc[q] += wt * src[o + q]
                    for s in range(r3):
                        for q in range(LANES):
                            u[s * LANES + q] = acc[q]
                elif h == 3:  # only the lowest slot: its row, gathered state by state
                    for s in range(r3):
                        c = low[s]
                        m = tr[k, a, c]
                        o = s * LANES
                        if flag[m] == 1:
                            for q in range(LANES):
                                u[o + q] = src[o + q]
                            continue
                        rc = dig[s, c]
                        for q in range(LANES):
                            acc[q] = 0.0
                        for kk in range(ptr[m, rc], ptr[m, rc + 1]):
                            wk = w[m, kk]
                            oj = (s + (idx[m, kk] - rc) * stride[c]) * LANES
                            for q in range(LANES):
                                acc[q] += wk * src[oj + q]
                        for q in range(LANES):
                            u[o + q] = acc[q]
                else:
                    _chain(src, u, buf, tr[k, a, 0], tr[k, a, 1], tr[k, a, 2], flag, ptr, idx, w, r_n)
                for p in range(2):
                    if protect[a] == 2 and p != f:
                        continue
                    for s in range(r3):
                        o = s * LANES
                        for q in range(LANES):
                            val = u[o + q] - ch[q]
                            if val > vc[p, o + q]:
                                vc[p, o + q] = val
                                pol[t, p * n3 + o + q] = a
        v[:n3] = vc[0]
        v[n3:] = vc[1]


@nb.njit(cache=True, nogil=True)
def _forward(k, s0, util, cst, prc, ppr, poor_top, lam, gamma, lapse, protect, ptr, idx, w, t_ptr, t_idx, t_w, flag,
             det, tr, how, ax, low, mn, dig, cnext, clen, coup, pol, spend, poor, rew, charged):  # pragma: no cover
    """Push a block's start states s0 (L,) through pol (T, S·L): expected spend and share poor per year into spend
    and poor (L, T), Σ γ^t E[reward without the budget price] into rew (L,), Σ γ^t price × spend into charged."""
    t_n = prc.shape[0]
    a_n = protect.shape[0]
    r3 = mn.shape[0]
    r_n = util.shape[0]
    n3 = r3 * LANES
    stride = (r_n * r_n, r_n, 1)
    d = np.zeros((2, n3))
    for q in range(LANES):
        d[s0[q] // r3, (s0[q] % r3) * LANES + q] = 1.0
    post = np.zeros((2, n3))
    mass = np.empty(n3)
    out = np.empty(n3)
    buf = np.empty(n3)
    ec = np.empty(LANES)
    eu = np.empty(LANES)
    ep = np.empty(LANES)
    tot = np.empty(LANES)
    rew[:] = 0.0
    charged[:] = 0.0
    disc = 1.0
    for t in range(t_n):
        post[:] = 0.0
        ec[:] = 0.0
        for a in range(a_n):
            h = how[k, a]
            for f in range(2):  # the flag after the action: the mass of the states that take a and end with f
                if protect[a] != 2 and protect[a] != f:
                    continue
                tot[:] = 0.0
                for p in range(2):
                    if protect[a] == 2 and p != f:
                        continue
                    first = protect[a] == 2 or p == 0
                    for s in range(r3):
                        o = s * LANES
                        for q in range(LANES):
                            mm = d[p, o + q] if pol[t, p * n3 + o + q] == a else 0.0
                            mass[o + q] = mm if first else mass[o + q] + mm
                            tot[q] += mm
                some = False
                for q in range(LANES):
                    some = some or tot[q] > 0.0
                if not some:
                    continue
                if h == 0:
                    for i in range(n3):
                        post[f, i] += mass[i]
                elif h == 2:
                    m0, m1, m2 = tr[k, a, 0], tr[k, a, 1], tr[k, a, 2]
                    for k0 in range(ptr[m0, 0], ptr[m0, 1]):
                        for k1 in range(ptr[m1, 0], ptr[m1, 1]):
                            for k2 in range(ptr[m2, 0], ptr[m2, 1]):
                                o = (idx[m0, k0] * stride[0] + idx[m1, k1] * r_n + idx[m2, k2]) * LANES
                                for q in range(LANES):
                                    post[f, o + q] += tot[q] * w[m0, k0] * w[m1, k1] * w[m2, k2]
                elif h == 4:
                    _chain(mass, out, buf, tr[k, a, 0], tr[k, a, 1], tr[k, a, 2], flag, t_ptr, t_idx, t_w, r_n)
                    for i in range(n3):
                        post[f, i] += out[i]
                else:  # one slot's row scattered: the given slot, or the lowest
                    for s in range(r3):
                        c = ax[k, a] if h == 1 else low[s]
                        m = tr[k, a, c]
                        o = s * LANES
                        if flag[m] == 1:
                            for q in range(LANES):
                                post[f, o + q] += mass[o + q]
                            continue
                        rc = dig[s, c]
                        for kk in range(ptr[m, rc], ptr[m, rc + 1]):
                            wk = w[m, kk]
                            oj = (s + (idx[m, kk] - rc) * stride[c]) * LANES
                            for q in range(LANES):
                                post[f, oj + q] += mass[o + q] * wk
                for q in range(LANES):
                    ec[q] += tot[q] * cst[a, q]
        _chain(post[0], d[0], buf, det[k, 0], det[k, 1], det[k, 2], flag, t_ptr, t_idx, t_w, r_n)
        _chain(post[1], d[1], buf, det[k, 3], det[k, 1], det[k, 2], flag, t_ptr, t_idx, t_w, r_n)
        _push(post[0], d[0], coup, cnext[k, 0], clen[k, 0])
        _push(post[1], d[1], coup, cnext[k, 1], clen[k, 1])
        eu[:] = 0.0
        ep[:] = 0.0
        for s in range(r3):
            mi = mn[s]
            o = s * LANES
            bad = 1.0 if mi <= poor_top else 0.0
            for q in range(LANES):
                moved = lapse * d[1, o + q]
                d[1, o + q] -= moved
                d[0, o + q] += moved
                tm = d[0, o + q] + d[1, o + q]
                eu[q] += tm * util[mi, q]
                ep[q] += tm * bad
        for q in range(LANES):
            spend[q, t] = ec[q]
            poor[q, t] = ep[q]
            rew[q] += disc * (eu[q] - ppr[t, q] * ep[q] - lam * ec[q])
            if ec[q] > 0.0:
                charged[q] += disc * prc[t, q] * ec[q]
        disc *= gamma


@nb.njit(cache=True, nogil=True, parallel=True)
def fleet(first, count, order, kind, s0, utility, cost, price, price_poor, poor_top, lam, gamma, lapse, protect, ptr,
          idx, w, t_ptr, t_idx, t_w, flag, det, tr, how, ax, low, mn, dig, cnext, clen, coup, fixed, solve_it,
          keep_pol, pol_out, value, reward, spend, poor):  # pragma: no cover - compiled
    """Every block j (bridges order[first[j] : first[j] + count[j]], one kind, count ≤ LANES): the backward pass
    (``solve_it``: optimise; else take ``fixed`` (T, B, S)) and the forward pass, into value, reward (B,), spend,
    poor (B, T) and, if ``keep_pol``, pol_out (T, B, S)."""
    t_n = price.shape[1]
    s_n = 2 * mn.shape[0]
    r_n = utility.shape[1]
    a_n = protect.shape[0]
    for j in nb.prange(first.shape[0]):
        n = count[j]
        bl = np.empty(LANES, dtype=np.int64)
        for q in range(LANES):
            bl[q] = order[first[j] + min(q, n - 1)]
        k = kind[bl[0]]
        util = np.empty((r_n, LANES))
        cst = np.empty((a_n, LANES))
        prc = np.empty((t_n, LANES))
        ppr = np.empty((t_n, LANES))
        st = np.empty(LANES, dtype=np.int64)
        for q in range(LANES):
            b = bl[q]
            st[q] = s0[b]
            for i in range(r_n):
                util[i, q] = utility[b, i]
            for a in range(a_n):
                cst[a, q] = cost[b, a]
            for t in range(t_n):
                prc[t, q] = price[b, t]
                ppr[t, q] = price_poor[b, t]
        pol = np.zeros((t_n, s_n * LANES), dtype=np.int8)
        if solve_it:
            v = np.empty(s_n * LANES)
            _backward(k, util, cst, prc, ppr, poor_top, lam, gamma, lapse, protect, ptr, idx, w, flag, det, tr, how,
                      ax, low, mn, dig, cnext, clen, coup, pol, v)
            for q in range(n):
                value[bl[q]] = v[st[q] * LANES + q]
        else:
            for t in range(t_n):
                for i in range(s_n):
                    for q in range(LANES):
                        pol[t, i * LANES + q] = fixed[t, bl[q], i]
        sp = np.empty((LANES, t_n))
        pr = np.empty((LANES, t_n))
        rew = np.empty(LANES)
        charged = np.empty(LANES)
        _forward(k, st, util, cst, prc, ppr, poor_top, lam, gamma, lapse, protect, ptr, idx, w, t_ptr, t_idx, t_w,
                 flag, det, tr, how, ax, low, mn, dig, cnext, clen, coup, pol, sp, pr, rew, charged)
        for q in range(n):
            b = bl[q]
            reward[b] = rew[q]
            if not solve_it:
                value[b] = rew[q] - charged[q]
            for t in range(t_n):
                spend[b, t] = sp[q, t]
                poor[b, t] = pr[q, t]
            if keep_pol:
                for t in range(t_n):
                    for i in range(s_n):
                        pol_out[t, b, i] = pol[t, i * LANES + q]


def blocks(kind: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The blocks of :func:`fleet`: (first, count) int64 (J,) into ``order`` int64 (B,), the bridges sorted by kind
    (stably), each block one kind and at most :data:`LANES` bridges."""
    kind = np.asarray(kind, dtype=np.int64)
    order = np.argsort(kind, kind="stable").astype(np.int64)
    sk = kind[order]
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]]) if len(sk) else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], len(sk)].astype(np.int64)
    per = -(-(ends - starts) // LANES)  # blocks per kind
    first = np.repeat(starts, per) + LANES * (np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per))
    count = np.minimum(LANES, np.repeat(ends, per) - first)
    return first.astype(np.int64), count.astype(np.int64), order
