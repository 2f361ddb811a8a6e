"""The work history of an SNBI record (its ``Works`` data set: ``BW02`` year, ``BW03`` work code; FHWA-HIF-22-017,
``shared/reference/snbi.md``): the year and code of the last work on each component, and what the component fleet
model takes from it, whether a deck starts protected (docs/fleet-model.md, "Where a deck starts protected").

Components are the component model's slots (:data:`bridgefleet.sim.components.SLOTS`): deck (a culvert's barrel in a
culvert record, as its rating ``BC04`` takes the deck slot), superstructure, substructure.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import numpy as np

SLOT_PREFIXES = (("DK", "CU"), ("SP", "SP"), ("SB", "SB"))
"""SNBI work-code prefixes of each slot, (bridge, culvert): deck ``DK1``–``DK7`` (a culvert: ``CU1``–``CU7``),
superstructure ``SP…``, substructure ``SB…``."""

REPLACEMENT_CODES = ("BR01",)
"""Work codes that replace the whole bridge: the last work of every slot (``BR01`` bridge replaced)."""

PRESERVATION_CODES = ("DK4", "DK5")
"""Deck preservation (``DK4`` overlaid, ``DK5`` sealed): the component model's deck preservation (action 1), which
sets the deck-protection flag."""

_CODE = re.compile(r"(DK|SP|SB|CU)[1-9]|BR01")
_YEAR = re.compile(r"[0-9]{4}")


def _work_year(value: Any) -> int | None:
    """``BW02`` as a year (a JSON whole number, or four digits as text), None otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _YEAR.fullmatch(value.strip()):
        return int(value.strip())
    return None


def last_works(works: Any, built: float, year: int, culvert: bool
               ) -> tuple[float | None, tuple[float, float, float], tuple[str, str, str]]:
    """A record's ``Works`` entries read for the model, between year built and the inventory year (inclusive).

    Args:
        works: the record's ``Works`` value (a list of objects; anything else: no works).
        built: year built (``BW01``); year: the inventory year; culvert: the record is a culvert (deck slot: ``CU…``).

    Returns:
        (the latest ``BW02`` of any work done (``BW03`` not ``0``, blank or a temporary code), None if none: the
        years-since-maintenance rule; per slot (deck, superstructure, substructure) the year of its last work, NaN
        where none; per slot that work's code, ``''`` where none). A slot's works are its own codes
        (:data:`SLOT_PREFIXES`) and a replacement (:data:`REPLACEMENT_CODES`); in one year, a deck preservation
        (:data:`PRESERVATION_CODES`) is the last (a deck is sealed or overlaid once its construction or repair is
        done), otherwise the entry later in the file.
    """
    latest: int | None = None
    best: list[tuple[int, int, int, str] | None] = [None, None, None]  # (year, preservation, position, code)
    for k, w in enumerate(works if isinstance(works, list) else ()):
        if not isinstance(w, dict):
            continue
        code = w.get("BW03")
        code = code.strip().upper() if isinstance(code, str) else "" if code is None else str(code)
        y = _work_year(w.get("BW02"))
        if code in ("", "0") or code.endswith("-T") or code == "T-U" or y is None or not built <= y <= year:
            continue
        latest = y if latest is None else max(latest, y)
        if not _CODE.fullmatch(code):
            continue
        for s, prefixes in enumerate(SLOT_PREFIXES):
            if code in REPLACEMENT_CODES or code[:2] == prefixes[int(culvert)]:
                key = (y, int(s == 0 and code in PRESERVATION_CODES), k, code)
                current = best[s]
                if current is None or key[:3] > current[:3]:
                    best[s] = key
    years = tuple(math.nan if b is None else float(b[0]) for b in best)
    codes = tuple("" if b is None else b[3] for b in best)
    return latest, years, codes  # type: ignore[return-value]


def preserved_years(code: np.ndarray, year: np.ndarray, inventory_year: int | None, culvert: np.ndarray
                    ) -> np.ndarray:
    """Years since each deck's last preservation where that is its last work, float32 (N,), NaN elsewhere.

    Args:
        code: str (N, 3) last work codes; year: float (N, 3) their years; culvert: bool (N,) (a culvert has no deck).
        inventory_year: the year ages count from; None: NaN everywhere.
    """
    out = np.full(len(code), np.nan, np.float32)
    if inventory_year is None or not len(code):
        return out
    deck = np.isin(code[:, 0], PRESERVATION_CODES) & ~np.asarray(culvert, bool)
    out[deck] = inventory_year - year[deck, 0]
    return out


def works_summary(code: np.ndarray, culvert: np.ndarray, preserved: np.ndarray, protection_years: float,
                  model_name: str, inventory_year: int | None) -> list[str]:
    """``bridgefleet inventory``'s lines on the last work of each component: counts by code per slot (a culvert's
    barrel apart from decks) and how many decks start protected on the component model ``model_name`` (a deck
    preserved fewer than ``protection_years`` years before ``inventory_year``); no line where no bridge has any
    recorded work on a component (an NBI file or a mapped CSV).

    Args:
        code: str (N, 3) last work codes ('' none); culvert: bool (N,); preserved: float (N,) years since the deck's
            last preservation (:func:`preserved_years`).
    """
    if not len(code) or not (code != "").any():
        return []
    culvert = np.asarray(culvert, bool)
    parts = []
    for label, column, rows in (("deck", 0, ~culvert), ("superstructure", 1, slice(None)),
                                ("substructure", 2, slice(None)), ("culvert", 0, culvert)):
        counts = Counter(c for c in code[rows, column].tolist() if c)
        if counts:
            parts.append(f"{label} " + ", ".join(f"{c} {n}" for c, n in sorted(counts.items())))
    with_work = int((code != "").any(axis=1).sum())
    preserved_n = int(np.isfinite(preserved).sum())
    protected = int((preserved < protection_years).sum())
    return [f"Last work on each component (SNBI Works BW03) of {with_work} bridges: " + "; ".join(parts),
            f"  decks starting protected on {model_name} (last deck work DK4 / DK5 fewer than {protection_years:g} "
            f"years before {inventory_year}): {protected} of the {preserved_n} whose last deck work is one"]
