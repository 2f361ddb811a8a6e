"""One progress bar per command over its whole work (issue 80, item 5).

A command opens one bar (:func:`command_bar`) whose units are its real work items, each weighed by what it costs
(a training episode, a fleet labelled at a budget level, a pass of a fit over the rows, a fleet simulated under a
policy, a budget level of ``scenarios``); the code beneath it moves that bar and never opens one of its own. A
price search, whose number of DP solves is known only when it stops, shows its solves and gap in the bar's
postfix (:func:`note`) and adds no units: its time is in the item it belongs to. The ETA is the bar's
remaining units at the rate measured since its first work was declared (tqdm ``smoothing=0``), not at the last few
items' rate, which swings between stages of different cost.

The bar is tqdm's, on stderr, shown only where stderr is a terminal (``disable=None``) and not with ``--quiet``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

import numpy as np

_BAR: ContextVar[Work | None] = ContextVar("bridgefleet_progress", default=None)


class Work:
    """A command's bar: ``total`` units of work (floats allowed: a stage weighed in fractions of a unit), the
    current one (:func:`current`) from its opening until :meth:`close`. It reads as a tqdm bar where code moved
    one (``update``, ``total``, ``refresh``, ``close``)."""

    def __init__(self, total: float, desc: str, unit: str, file: Any = None):
        from tqdm import tqdm

        self.bar: Any = tqdm(total=total, desc=desc, unit=unit, file=file, disable=None if file is None else False,
                             smoothing=0.0, dynamic_ncols=True,
                             leave=False, bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} "
                             "[{elapsed}<{remaining}, {rate_fmt}{postfix}]")
        self._token = _BAR.set(self)

    def advance(self, units: float = 1.0) -> None:
        """``units`` of work done."""
        self.bar.update(units)

    update = advance

    @property
    def done(self) -> float:
        """Units done so far."""
        return self.bar.n

    @property
    def total(self) -> float:
        return self.bar.total

    @total.setter
    def total(self, units: float) -> None:
        """The work turned out to be ``units`` (a search that stopped early takes its probes off: they are not
        done, and counting them as done would make the rate, and every later ETA, too fast). The first work
        declared starts the rate's clock: what came before (reading an inventory, building the fleets' models) is
        no unit of it."""
        if self.bar.n == 0 and not self.bar.total and units > 0:
            self.bar.reset(total=units)
            return
        self.bar.total = max(units, self.bar.n)
        self.bar.refresh()

    def refresh(self) -> None:
        self.bar.refresh()

    def stage(self, desc: str) -> None:
        """What the command is doing now (the bar's description)."""
        self.bar.set_description(desc, refresh=False)

    def note(self, text: str) -> None:
        """A detail of the work under way (the bar's postfix: a price search's solves)."""
        self.bar.set_postfix_str(text)

    def close(self) -> None:
        """The bar gone, and no longer the current one."""
        self.bar.close()
        if self._token is not None:
            _BAR.reset(self._token)
            self._token = None


def open_bar(total: float, desc: str, unit: str, enabled: bool = True, file: Any = None) -> Work | None:
    """The command's one bar over ``total`` units, current until its :meth:`Work.close`; None where not
    ``enabled`` (``--quiet``). ``file``: where it is drawn, always (default stderr, where it is a terminal)."""
    return Work(total, desc, unit, file) if enabled else None


@contextlib.contextmanager
def command_bar(total: float, desc: str, unit: str, enabled: bool = True, file: Any = None
                ) -> Iterator[Work | None]:
    """:func:`open_bar` for the code run inside the ``with``, closed at its end, also on an error."""
    work = open_bar(total, desc, unit, enabled, file)
    try:
        yield work
    finally:
        if work is not None:
            work.close()


def current() -> Work | None:
    """The bar of the command running, or None (none open, or ``--quiet``)."""
    return _BAR.get()


def advance(units: float = 1.0) -> None:
    """``units`` of the current bar's work done (nothing without a bar)."""
    if (work := _BAR.get()) is not None:
        work.advance(units)


def note(text: str) -> None:
    """A detail in the current bar's postfix (nothing without a bar)."""
    if (work := _BAR.get()) is not None:
        work.note(text)


def stage(desc: str) -> None:
    """The current bar's description (nothing without a bar)."""
    if (work := _BAR.get()) is not None:
        work.stage(desc)


BRIDGE_YEARS_PER_UNIT = 10_000.0
"""The planning commands' bar unit (``evaluate``, ``report``): a DP solve over 10,000 bridge-years (a fleet's
bridges × its horizon), about 2 s of the component model's price search on a 2-core EPYC (2026-12-07: 25 s for 35
solves over 100 bridges × 30 years, 83 s for 16 over 900)."""


FRONT_STEPS = 0.6
"""A search over several fleets at once: the share of its expected steps by which its fleets have mostly stopped
(each fleet leaves the DP when its own prices are found), so a step's work falls from all the fleets to
:data:`FRONT_TAIL` of them over these steps (`bound` on 100 fleets of the default fleet, groups of 20 fleets from
the prices of the group before: solves 1–5 took 13, 13, 12, 10 and 8 s, solves 10–19 about 1 s each; 2-core EPYC,
2026-12-07)."""
FRONT_TAIL = 0.08
"""The work of a step of a search over several fleets once most of them have stopped, as a share of its first's."""


class Share:
    """A search's part of the command's bar, whose length is known only when it stops: ``units`` spread over the
    ``expected`` steps (DP solves) of ``units / expected`` each, added to the bar's total when made; with ``front``
    (a search over several fleets, each of which leaves the DP when its prices are found) a step's work falls from
    that to :data:`FRONT_TAIL` of it over :data:`FRONT_STEPS` of the steps, and the search's part is that much less
    than ``units``. A step past ``expected`` adds its share (the last one's) to the total as it moves the bar (the
    work grew); a search that stops early takes the rest off the total (:meth:`finish`: not done, so the rate stays
    true). Nothing without a bar."""

    def __init__(self, units: float, expected: int, front: bool = False):
        self.work, self.units, self.expected = current(), float(units), max(int(expected), 1)
        k = np.arange(self.expected)
        weight = (np.maximum(1.0 - k / max(FRONT_STEPS * self.expected, 1.0), FRONT_TAIL) if front
                  else np.ones(self.expected))
        self.weights = self.units / self.expected * weight  # units of each expected step
        self.units = float(self.weights.sum())
        self.per = float(self.weights[-1])  # units of a step past those expected
        self.steps, self.moved = 0, 0.0
        if self.work is not None:
            self.work.total += self.units

    def step(self) -> None:
        """One step (a DP solve) done."""
        self.steps += 1
        if self.work is None:
            return
        units = float(self.weights[self.steps - 1]) if self.steps <= self.expected else self.per
        if self.steps > self.expected:
            self.work.total += units
            self.units += units
        self.work.advance(units)
        self.moved += units

    def finish(self) -> None:
        """The search stopped: the steps it did not need come off the bar's total."""
        if self.work is not None and self.moved < self.units:
            self.work.total -= self.units - self.moved
            self.units = self.moved
