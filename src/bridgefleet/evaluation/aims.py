"""The planner's aims tried in turn until its simulated plan meets the poor deck-area rule (one loop for the
continuous planner's and the component model's aims)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def first_within(planner: Any, rule: float, settings: Sequence[dict[str, Any]], attempt: Callable[[], Any],
                 poor_by_year: Callable[[Any], np.ndarray], stop_at_zero: bool = False) -> tuple[Any, Any]:
    """Set each of ``settings`` on ``planner`` in turn (attribute → value) until what ``attempt()`` simulates keeps
    the mean share of deck area poor (``poor_by_year`` of it, (Y,) 0–1) ≤ ``rule`` in every year, or the
    relaxation cannot meet the planner's aim (``planner.bound.meets_rule`` False: no tighter aim can).
    ``stop_at_zero``: a rule of 0 stops at the first (every aim is 0 then).

    Returns:
        (that outcome, else the one with the least poor share in its worst year; ``planner.bound`` after the first
        attempt, the bound at the first setting's aim).
    """
    best, best_worst, first = None, np.inf, None
    for k, setting in enumerate(settings):
        for name, value in setting.items():
            setattr(planner, name, value)
        out = attempt()
        if k == 0:
            first = planner.bound
        worst = float(poor_by_year(out).max())
        if worst < best_worst:
            best, best_worst = out, worst
        if worst <= rule + 1e-12 or (stop_at_zero and rule == 0) or not planner.bound.meets_rule:
            return out, first
    return best, first
