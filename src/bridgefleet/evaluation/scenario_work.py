"""The work of ``scenarios`` on the component model, in the units of its progress bar (issue 80 item 5): a price
search of the fleet (:mod:`bridgefleet.progress`). A level near the least budget tries tighter aims in turn, each a
search of its own, and a probe of the least budget for the chance of a penalty simulates many paths at several
aims, so counting every level as one unit put most of the work in the bar's last units and its ETA short (dc-2019:
183 s predicted at 20 % of a 250 s run).

Measured on the default fleet (100 bridges, 30 years; 2-core EPYC under load, 2026-12-07): a price search about 23 s,
a simulated path 0.35 s, the least budget 108 s; the level at 0.5 × the sized budget (1.18 × the least budget) 3
searches in 97 s, at 1 × (2.4 ×) one in 29.5 s; the probes of the planner's least budget, one aim on 44 paths,
38–39 s each; a probe for the chance of a penalty, one aim on 59 paths, 41 s."""

from __future__ import annotations

LEAST = 4.5
"""The exact least budget, in price searches (108 s against 23 s a search)."""
PATH = 0.015
"""A simulated path of the planner, in price searches (0.35 s against 23 s)."""
PENALTY_SEARCHES = 1.0
"""Searches a probe of the least budget for the chance of a penalty is expected to make: one where its tightest aim
keeps the chance (at 1 × the sized budget of the default fleet: 41 s on 59 paths, 1.4 × the level at 1 × on 16);
more only near that least budget."""
NEAR = 1.5
"""A level below this multiple of the least budget tries tighter aims, and its searches take more solves: 0.5 × the
sized budget on the default fleet, 1.18 × its least budget, tried 3 aims in 3.3 × the time of the level at 1 ×, 2.4 ×
it, which tried one (97 s against 29.5 s, and 129 s against 39 s in another run)."""


def level(scale: float, least: float | None, aims: int, paths: int) -> float:
    """A budget level at ``scale`` × the sized budget, ``least`` the least budget's scale (None: not known yet),
    ``aims`` the aims it may try in turn, on ``paths`` paths: as many searches as aims below :data:`NEAR` × the
    least budget (or before it is known), else one."""
    searches = aims if least is None or scale < NEAR * least else 1
    return searches + PATH * paths


def penalty(paths: int) -> float:
    """A probe of the least budget for the chance of a penalty on ``paths`` paths: its aims are tried tightest first
    until one keeps the chance (:data:`PENALTY_SEARCHES` searches expected)."""
    return PENALTY_SEARCHES + PATH * paths


def run(aims: int, paths: int) -> float:
    """A planner run at ``aims`` aims, each a search (the most it tries), on ``paths`` paths."""
    return aims + PATH * paths


class Counted:
    """``bar`` (a :class:`bridgefleet.progress.Work` or None) in units of ``weight`` price searches, for code that
    counts in items (:func:`bridgefleet.evaluation.scenarios._planner_least`'s probes): ``update(k)`` moves it by
    k × weight, and ``total`` reads and sets it in items."""

    def __init__(self, bar, weight: float):
        self.bar, self.weight = bar, weight

    def update(self, items: float = 1.0) -> None:
        self.bar.update(items * self.weight)

    @property
    def total(self) -> float:
        return self.bar.total / self.weight

    @total.setter
    def total(self, items: float) -> None:
        self.bar.total = items * self.weight
