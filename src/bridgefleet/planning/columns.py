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

import numpy as np


@dataclass
class Columns:
    """K columns of one fleet: bridge int64 (K,) (index within the fleet), reward float64 (K,) reward units,
    spend float64 (K, T) USD, count float64 (K, T) treatments, poor float64 (K, T) m², used int64 (K,) (the
    actions the policy may take, bit a for action a: :attr:`bridgefleet.planning.dp.Solution.used`)."""

    bridge: np.ndarray
    reward: np.ndarray
    spend: np.ndarray
    count: np.ndarray
    poor: np.ndarray
    used: np.ndarray

    def fingerprint(self) -> np.ndarray:
        """float64 (K,): one number per column from its spend, treatments and poor deck area (a fixed random
        weighting, so equal columns of a bridge have equal fingerprints and distinct ones almost surely not)."""
        probe = np.random.default_rng(0).uniform(1.0, 2.0, (3, self.spend.shape[1]))
        return self.spend @ probe[0] + self.count @ probe[1] + self.poor @ probe[2]

    def arrays(self) -> tuple[np.ndarray, ...]:
        return self.bridge, self.reward, self.spend, self.count, self.poor, self.used

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
            cols = Columns(*(np.concatenate([a, b]) for a, b in zip(old.arrays(), cols.arrays(), strict=True)))
        key = cols.fingerprint()
        order = np.lexsort((-cols.reward, key, cols.bridge))  # equal columns together, best reward first
        first = np.ones(len(order), dtype=bool)
        first[1:] = (cols.bridge[order][1:] != cols.bridge[order][:-1]) | (key[order][1:] != key[order][:-1])
        keep = np.sort(order[first])
        extra = len(keep) - self.per_bridge * shape[1]
        if extra > 0:  # drop the oldest columns that treat
            treat = np.flatnonzero(cols.used[keep] != 0)
            keep = np.delete(keep, treat[:extra])
        self.fleets[e] = cols.take(keep)
