"""Names a user typed that bridgefleet does not know (an option, a field, a preset): each quoted in the error, with the
known name closest to it where one is close."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

TYPO_SIMILARITY = 0.8
"""Least similarity (:class:`difflib.SequenceMatcher` ratio) of a known name to suggest it: typos ('n_urbann' 0.93,
'defualt' 0.86, 'batchsize' 0.95) pass, other words do not ('learning_rate' against 'learning_starts' 0.79, which
the standard library's 0.6 would suggest for the learning rate, ``lr``)."""


def unknown_names(names: Iterable[object], known: Iterable[str]) -> str:
    """``names`` for a one-line error message, sorted, quoted and comma-separated, each followed by the known name
    closest to it where one is close enough to be a typo of it (:data:`TYPO_SIMILARITY`), e.g. ``'n_urbann' (did you
    mean 'n_urban'?)``."""
    known = list(known)
    out = []
    for name in sorted(map(str, names)):
        close = difflib.get_close_matches(name, known, n=1, cutoff=TYPO_SIMILARITY)
        out.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return ", ".join(out)
