"""Policies found by one price search, kept to start the next on the same bridges.

A column of the bound's master LP (:mod:`bridgefleet.planning.bound`) is one bridge's policy: its expected
discounted return and its expected spend, treatments and poor deck area per year. None of these depends on
the budget, the poor deck-area rule or the prices it was found at, so a column found at one budget level is a
column at every other, as long as every action it may take is allowed there (an action is allowed when its
cost fits the agency's yearly budget: a column found at a budget is valid at any budget at least as large).
``bridgefleet scenarios`` solves the relaxation at many budgets and aims on one fleet; started from the
columns of the levels before, a search needs a few DP solves instead of dozens (column generation warm-started
from a pool, Lübbecke & Desrosiers, "Selected topics in column generation", Operations Research 53(6), 2005).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

MASTER_UNITS = 1500
"""The most convexity rows of one fleet's master LP (:class:`MasterUnits`): dc-2019's 244 bridges keep one
each; larger fleets share them in blocks of similar bridges, so the master LP's simplex work (which grows with
the square of its rows and columns) stops growing with the fleet. 1,500 rather than 6,000 (Indiana's 4,794
bridges in blocks of 4; `bridgefleet scenarios` on Indiana, 2026-12-02): least budget 408 → 265 s (certified
0.1293 → 0.1295), the level at 0.25 × 267 → 139 s, at 1 × 74 → 60 s (bound 55,062.9 → 55,018.2, tighter)."""


def fingerprint(*parts: np.ndarray) -> np.ndarray:
    """float64 (K,): one number per column from ``parts`` float64 (K, T) each (its spend, treatments, poor years …;
    a fixed random weighting, so equal columns of a bridge have equal fingerprints and distinct ones almost surely
    not)."""
    probe = np.random.default_rng(0).uniform(1.0, 2.0, (len(parts), parts[0].shape[1]))
    # Row by row (numpy's sum over each row), not a BLAS product: a BLAS kernel may round a row differently
    # by where it sits in the matrix, and equal columns must get equal fingerprints wherever they are.
    return sum(part * w for part, w in zip(parts, probe, strict=True)).sum(1)


def distinct(bridge: np.ndarray, reward: np.ndarray, key: np.ndarray) -> np.ndarray:
    """int64 (K',): the columns to keep of equal ones (same ``bridge`` int (K,) and ``key`` float (K,),
    :func:`fingerprint`), the best ``reward`` float (K,) of each, in the order given."""
    order = np.lexsort((-reward, key, bridge))  # equal columns together, best reward first
    first = np.ones(len(order), dtype=bool)
    first[1:] = (bridge[order][1:] != bridge[order][:-1]) | (key[order][1:] != key[order][:-1])
    return np.sort(order[first])


@dataclass
class Columns:
    """K columns of one fleet: bridge int64 (K,) (index within the fleet), reward float64 (K,) reward units,
    spend float64 (K, T) USD, count float64 (K, T) treatments, poor float64 (K, T) m², used int64 (K,) (the
    actions the policy may take, bit a for action a: :attr:`bridgefleet.planning.dp.Solution.used`), found_at
    float64 (K, 4, T): what the DP that found the policy priced, so it can be solved again (the planner's rounded
    relaxation, :mod:`bridgefleet.planning.rounding`): the discounted price of a USD, of a treatment and of
    a m² poor at the end of each year, and the weight of the reward (1; 0 where only the prices counted, as in
    the least budget's search) in every entry of the last row."""

    bridge: np.ndarray
    reward: np.ndarray
    spend: np.ndarray
    count: np.ndarray
    poor: np.ndarray
    used: np.ndarray
    found_at: np.ndarray

    def fingerprint(self) -> np.ndarray:
        """float64 (K,): :func:`fingerprint` of its spend, treatments and poor deck area."""
        return fingerprint(self.spend, self.count, self.poor)

    def distinct(self, key: np.ndarray) -> np.ndarray:
        """:func:`distinct` of its columns."""
        return distinct(self.bridge, self.reward, key)

    @classmethod
    def empty(cls, t_n: int) -> Columns:
        """No columns, over T = ``t_n`` years."""
        z = np.zeros((0, t_n))
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0), z, z, z, np.zeros(0, dtype=np.int64),
                   np.zeros((0, 4, t_n)))

    def __add__(self, other: Columns) -> Columns:
        """These columns, then ``other``'s."""
        return Columns(*(np.concatenate([a, b]) for a, b in zip(self.arrays(), other.arrays(), strict=True)))

    def arrays(self) -> tuple[np.ndarray, ...]:
        return self.bridge, self.reward, self.spend, self.count, self.poor, self.used, self.found_at

    def take(self, keep: np.ndarray) -> Columns:
        return Columns(*(a[keep] for a in self.arrays()))


@dataclass
class ColumnPool:
    """The columns found so far on E fleets of B bridges each, over T years, on one rating grid.

    A pool belongs to one set of single-bridge MDPs up to their budget (same fleets, grid and horizon):
    :meth:`valid` returns nothing for MDPs of another shape. Each fleet keeps at most ``per_bridge`` columns a
    bridge on average (the most recent; do-nothing columns always).
    """

    per_bridge: int = 30
    shape: tuple[int, int, int, int] | None = None  # (E, B, T, G) of the MDPs it belongs to
    fleets: dict[int, Columns] = field(default_factory=dict)

    def valid(self, e: int, feasible: np.ndarray, shape: tuple[int, int, int, int]) -> Columns | None:
        """Fleet e's columns whose actions are all allowed by ``feasible`` (bool (B, 5), fleet e's bridges),
        or None (a pool of other MDPs, or without a do-nothing column for every bridge)."""
        cols = self.fleets.get(e)
        if cols is None or shape != self.shape:
            return None
        if np.unique(cols.bridge[cols.used == 0]).size < shape[1]:
            return None  # not a do-nothing column for every bridge: the master LP would have no feasible point
        allowed = (feasible.astype(np.int64) << np.arange(5)).sum(1)  # bit a: action a allowed
        return cols.take((cols.used & ~allowed[cols.bridge]) == 0)

    def add(self, e: int, cols: Columns, shape: tuple[int, int, int, int]) -> None:
        """Keep fleet e's columns (a pool of other MDPs is emptied first); of equal columns (same bridge,
        spend, count and poor deck area) the one with the better reward."""
        if shape != self.shape:
            self.shape, self.fleets = shape, {}
        old = self.fleets.get(e)
        if old is not None:
            cols = old + cols
        keep = cols.distinct(cols.fingerprint())
        extra = len(keep) - self.per_bridge * shape[1]
        if extra > 0:  # drop the oldest columns that treat
            treat = np.flatnonzero(cols.used[keep] != 0)
            keep = np.delete(keep, treat[:extra])
        self.fleets[e] = cols.take(keep)


@dataclass
class MasterUnits:
    """How one fleet's B bridges enter its master LP: as U ≤ ``MASTER_UNITS`` units (blocks of bridges of one
    agency, alike in deterioration case, rating, years since maintenance and replacement cost), each with one
    convexity row; a DP solve gives each unit one column, the sum of its bridges' policies.

    Any prices are still valued by every bridge's own DP (L(κ) is a bound whatever the master LP), so blocks
    change only how fast the search finds good prices, never what a bound is worth: a blocked master is the
    partially aggregated Dantzig–Wolfe master of the same relaxation, whose cutting-plane model of L is coarser
    (Vanderbeck, "On Dantzig–Wolfe decomposition in integer programming", Operations Research 48(1), 2000).

    Attributes:
        unit: int64 (B,), each bridge's unit 0 … U − 1. agency: int64 (U,), each unit's agency.
    """

    unit: np.ndarray
    agency: np.ndarray

    @classmethod
    def of(cls, agency: np.ndarray, key: tuple[np.ndarray, ...], most: int = MASTER_UNITS) -> MasterUnits:
        """Units of one fleet: one per bridge when B ≤ ``most``, else blocks of ⌈B / (most − 1)⌉ bridges in the
        order of ``key`` (arrays (B,), the first the most significant) within each agency (so at most ``most``
        blocks in all, the two agencies' last blocks partly filled).

        Args:
            agency: int64 (B,), 0 urban, 1 rural. key: arrays (B,) the bridges are sorted by.
        """
        b_n = len(agency)
        if b_n <= most:
            return cls(np.arange(b_n), np.asarray(agency, dtype=np.int64))
        size = -(-b_n // max(most - 1, 1))
        order = np.lexsort((*reversed(key), agency))
        unit = np.empty(b_n, dtype=np.int64)
        first = 0
        agencies = []
        for g in (0, 1):
            mine = order[agency[order] == g]
            blocks = -(-len(mine) // size)
            unit[mine] = first + np.arange(len(mine)) // size
            agencies += [g] * blocks
            first += blocks
        return cls(unit, np.array(agencies, dtype=np.int64))

    @classmethod
    def per_fleet(cls, mdps, most: int = MASTER_UNITS) -> list[MasterUnits]:
        """The units of each fleet of ``mdps`` (:class:`~bridgefleet.planning.transitions.BridgeMDPs`, fleets of
        equal size one after another), bridges alike in deterioration case, rating, years since maintenance and
        replacement cost."""
        e_n = int(mdps.fleet.max()) + 1
        b_n = mdps.n // e_n
        parts = (slice(e * b_n, (e + 1) * b_n) for e in range(e_n))
        return [cls.of(mdps.agency[p], (mdps.kind[p], mdps.c0[p], mdps.ysm0[p], mdps.cost[p, 4]), most)
                for p in parts]

    @property
    def n(self) -> int:
        return len(self.agency)

    @property
    def identity(self) -> bool:
        return self.n == len(self.unit)

    def columns(self, reward: np.ndarray, spend: np.ndarray, count: np.ndarray, poor: np.ndarray,
                used: np.ndarray, prices: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                reward_weight: float = 1.0) -> Columns:
        """One column per unit from one policy per bridge: reward (B,), spend/count/poor (B, T) summed over the
        unit's bridges, used (B,) or-ed (the actions any of them may take). ``prices``: the fleet's discounted
        prices the DP solved at, of a USD (2, T) and a treatment (2, T) per agency and of a m² poor (T,)
        (None: zeros), and ``reward_weight`` the weight of its reward: each column's ``found_at``."""
        t_n = spend.shape[1]
        found = np.zeros((self.n, 4, t_n))
        if prices is not None:
            found[:, 0] = prices[0][self.agency]
            found[:, 1] = prices[1][self.agency]
            found[:, 2] = prices[2]
        found[:, 3] = reward_weight
        if self.identity:
            return Columns(np.arange(self.n), reward, spend, count, poor, used, found)
        s = self._sum
        bits = np.zeros(self.n, dtype=np.int64)
        np.bitwise_or.at(bits, self.unit, used)
        return Columns(np.arange(self.n), s @ reward, s @ spend, s @ count, s @ poor, bits, found)

    def feasible(self, feasible: np.ndarray) -> np.ndarray:
        """bool (U, 5): the actions every bridge of the unit may take, from ``feasible`` (B, 5)."""
        if self.identity:
            return feasible
        ok = np.ones((self.n, feasible.shape[1]), dtype=bool)
        np.logical_and.at(ok, self.unit, feasible)
        return ok

    @cached_property
    def _sum(self) -> sp.csr_matrix:
        """(U, B) ones: a unit's sum over its bridges."""
        b_n = len(self.unit)
        return sp.csr_matrix((np.ones(b_n), (self.unit, np.arange(b_n))), shape=(self.n, b_n))
