"""The finite component model as the exact DP reads it: the fleet's arrays and their sparse matrix bank.

:class:`FleetModel` holds the model of a fleet (the one-year matrices, treatments, per-bridge utility and cost,
start states; see :mod:`bridgefleet.planning.exact_dp` for the year's order and the units); :func:`make_bank`
stores its R×R matrices sparse by row and tabulates the comonotone move of the three components
(:func:`comonotone`), which the DP's compiled kernels read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple

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

    def subset(self, bridges: np.ndarray) -> FleetModel:
        """The model of some of its bridges (int or bool (B,) index; the per-bridge arrays ``kind``, ``utility``,
        ``cost`` and ``start`` taken, the rest shared)."""
        return dataclasses.replace(self, **{f: np.asarray(getattr(self, f))[bridges]
                                            for f in ("kind", "utility", "cost", "start")})

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
    components move together (``coupling`` w): ``cnext`` int64 and ``clen`` float64 (K, 2, R³, J), from each level
    triple under flag q the next triples of the comonotone move (one uniform for the three rows) and their
    probabilities (interval lengths, positive ones first; J of them)."""

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
    """``cnext``, ``clen`` of :class:`Bank` (shape (K, 2, R³, J)): each triple's comonotone moves of positive
    probability first, J the most any triple has (the kernels' work per state)."""
    k_n = np.shape(model.P)[0]
    nxt = np.zeros((k_n, 2, r_n**3, 3 * r_n), dtype=np.int64)
    ln = np.zeros((k_n, 2, r_n**3, 3 * r_n))
    for k in range(k_n):
        for q in range(2):
            rows = np.asarray(model.P[k], float).copy()
            if q == 1:
                rows[0] = model.P_protected[k]
            nxt[k, q], ln[k, q] = comonotone(rows, lv)
    order = np.argsort(ln == 0.0, axis=-1, kind="stable")
    j = max(1, int((ln > 0.0).sum(-1).max()))
    return (np.ascontiguousarray(np.take_along_axis(nxt, order, -1)[..., :j]),
            np.ascontiguousarray(np.take_along_axis(ln, order, -1)[..., :j]))


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
