"""Field values of an inventory row, one function a kind: NBI condition codes and ratings, numbers as spreadsheets write
them, deck areas, years built, truck share and detour, and the bridge a row becomes (:class:`_Bridge`). Shared by
the NBI, mapped-CSV and SNBI readers and the row machinery (:mod:`bridgefleet.inventory.rows`)."""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass

from bridgefleet.config.quantities import INVENTORY, shown
from bridgefleet.inventory.model import (
    _BAD,
    _RowProblem,
    state_cost_factor,
)


def _clean(value: str) -> str:
    """Strip spaces and stray quotes from a field ("'0001   '" → "0001")."""
    return value.strip().strip("'\"").strip()


NBI_CONDITION_CODES = "0123456789N"
"""NBI items 58–62 (deck, superstructure, substructure, channel, culvert) are one character: a rating 0–9, or N
(not applicable); FHWA's Recording and Coding Guide (1995). A blank is not reported."""

SPREADSHEET_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A number as spreadsheets and ``pandas.to_csv`` write one: ASCII digits, an optional leading ``-``, decimal point
and exponent (``1000``, ``1000.5``, ``-2``, ``1e3``, ``1.5E+03``). Not Python's other spellings (``1_000``,
``nan``, ``inf``, ``+6``, full-width or other scripts' digits)."""

GROUPED_NUMBER = re.compile(r"-?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")
"""A number a spreadsheet writes with thousands separators (a cell formatted ``#,##0`` is saved as displayed,
quoted: ``"1,000"``): groups of exactly three digits after the first."""

NUMBER_SPELLING = "digits with an optional '-', decimal point and exponent (1000, 1000.5, 1e3), or '1,000'"


def spreadsheet_number(v: str) -> float | None:
    """The value of a cleaned field written as :data:`SPREADSHEET_NUMBER` or :data:`GROUPED_NUMBER`, else None."""
    if SPREADSHEET_NUMBER.fullmatch(v):
        return float(v)
    if GROUPED_NUMBER.fullmatch(v):
        return float(v.replace(",", ""))
    return None


def _not_a_number(v: str, what: str) -> str:
    """Why ``v`` (cleaned) is not a number of the inventory: what was written and what is accepted."""
    if "_" in v:
        why = "'_' between digits is Python's spelling, not a spreadsheet's"
    elif v.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        why = "not a finite number"
    elif v.startswith("+"):
        why = "a leading '+' is not how a spreadsheet writes a number"
    elif "," in v:
        why = "commas only between groups of three digits (1,000)"
    else:
        why = "not a number"
    return f"{what}: {why}; give {NUMBER_SPELLING}"


def _nbi_code(value: str, column: str) -> float | None:
    """A condition rating coded as NBI items 58–62: one character 0–9, or N / blank (None: not applicable / not
    reported); the field's padding blanks and quotes are stripped and ``n`` is read as N. Anything else (``6.5``,
    ``1e0``, ``+6``, ``07``) is a bad value: the row is dropped with its reason."""
    v = _clean(value)
    if v in ("", "N", "n"):
        return None
    if len(v) == 1 and v in NBI_CONDITION_CODES:
        return float(v)
    raise _RowProblem(_BAD, "not an NBI condition code (one character: 0–9, or N)", column, v)


def _rating(value: str, column: str, lo: float = 0.0, hi: float = 9.0, codes: bool = True) -> float | None:
    """A condition rating, or None for N / blank (not applicable / not reported). ``codes``: an NBI code
    (:func:`_nbi_code`; a mapped table may also write it as a whole number ``7.0``, as pandas writes a column with
    blanks); else an index (a spreadsheet number, :data:`SPREADSHEET_NUMBER`) in ``lo``–``hi``."""
    v = _clean(value)
    if codes:
        return _nbi_code(v[:-2] if re.fullmatch(r"[0-9]\.0", v) else v, column)
    if v in ("", "N", "n"):
        return None
    r = spreadsheet_number(v)
    if r is None:
        raise _RowProblem(_BAD, _not_a_number(v, f"not a condition rating ({lo:g}–{hi:g} or N)"), column, v)
    if not lo <= r <= hi:
        raise _RowProblem(_BAD, f"condition rating outside {lo:g}–{hi:g}", column, v)
    return r


def _number(value: str, column: str, what: str, *, required: bool = True, minimum: float | None = 0.0,
            limits: str | None = None) -> float | None:
    """A field written as a spreadsheet writes a number (:func:`spreadsheet_number`), ≥ ``minimum`` and, where
    ``limits`` names one, in its quantity's range (:data:`bridgefleet.config.quantities.INVENTORY`: the precision and
    unit it is used in); None for a blank where not ``required``.

    Raises:
        _RowProblem: blank where required, another spelling (``1_000``, ``nan``, ``+5``), below ``minimum``, out of
            the range.
    """
    v = _clean(value)
    if v == "":
        if required:
            raise _RowProblem(_BAD, f"missing {what}", column, v)
        return None
    x = spreadsheet_number(v)
    if x is None:
        raise _RowProblem(_BAD, _not_a_number(v, f"{what} is not a number"), column, v)
    if not math.isfinite(x) and limits is None:  # 1e999 (with limits: the range says what it must be)
        raise _RowProblem(_BAD, f"{what} is not finite", column, v)
    if minimum is not None and x < minimum:
        why = f"negative {what}" if minimum == 0 else f"{what} below {minimum:g}"
        raise _RowProblem(_BAD, why, column, v)
    return x if limits is None else _in_range(x, limits, what, column, v)


def _in_range(x: float, key: str, what: str, column: str | None, value: str | None) -> float:
    """``x`` if it is the quantity :data:`bridgefleet.config.quantities.INVENTORY` names ``key`` (its range, in the
    unit and precision it is used in).

    Raises:
        _RowProblem: a bad value naming ``what``, ``x`` as written (``value``; ``1e400``, never ``inf``), the range and
            its unit (the row is dropped with it).
    """
    why = INVENTORY[key].problem(x)
    if why is not None:
        raise _RowProblem(_BAD, f"{what} {value or shown(x)}: {why}", column, value)
    return x


def state_code(value: str | None, column: str) -> tuple[str, float]:
    """(state, cost factor) of a state code: NBI item 1 (``STATE_CODE_001``: the two-digit FIPS state code, or the
    Coding Guide's three digits, FIPS code then FHWA region) or SNBI ``BL01`` (two-digit FIPS code), as the FIPS
    code written with two digits (``6``, ``06`` and ``063`` are all California, ``06``) and
    :func:`~bridgefleet.inventory.model.state_cost_factor` of it; blank or not known: ("", 1.0).

    Raises:
        _RowProblem: a bad value: anything but 1 to 3 ASCII digits (``11.0``, ``+11``, ``1_1``, full-width digits,
            ``1e1``: issue 79's probe read each as a state of its own).
    """
    v = "" if value is None else _clean(str(value))
    if v == "":
        return "", 1.0
    if not re.fullmatch("[0-9]{1,3}", v):
        raise _RowProblem(_BAD, "not a state code (the two-digit FIPS code, 1 to 3 digits with the FHWA region)",
                          column, v)
    fips = int(v[:2]) if len(v) == 3 else int(v)
    return f"{fips:02d}", state_cost_factor(fips)


def _digits(value: str, column: str, what: str, most: int) -> float:
    """An NBI numeric item coded as 1 to ``most`` ASCII digits (item 27 year built: 4; item 29 ADT: 6).

    Raises:
        _RowProblem: blank, or any other spelling (``1_000``, ``1e3``, ``2,000``, ``+5``).
    """
    v = _clean(value)
    if v == "":
        raise _RowProblem(_BAD, f"missing {what}", column, v)
    if not re.fullmatch(f"[0-9]{{1,{most}}}", v):
        raise _RowProblem(_BAD, f"{what} is not coded as the NBI codes it (1 to {most} digits)", column, v)
    return float(v)


MAX_DECK_AREA_M2 = INVENTORY["deck_area"].high
"""The largest deck area a bridge may have, m² (a million; the largest deck, the Lake Pontchartrain Causeway's, is
about 800,000 m²): a larger one is a unit or entry error, and the row is dropped with its reason
(:data:`bridgefleet.config.quantities.INVENTORY`)."""


def _deck_area(area: float, column: str, value: str) -> float:
    """``area`` (m², however it was computed: DECK_AREA, length × width, × area_scale) if a bridge may have it
    (:data:`bridgefleet.config.quantities.MIN_DECK_AREA_M2` to :data:`MAX_DECK_AREA_M2`, as the 32-bit float it is
    stored in).

    Raises:
        _RowProblem: out of range, naming the column and its value, the area and the range.
    """
    why = INVENTORY["deck_area"].problem(area)
    if why is not None:
        size = f"{area:,.0f}" if 1.0 <= abs(area) < 1e15 else shown(area)
        raise _RowProblem(_BAD, f"deck area {size} m²: {why}", column, value)
    return area


EARLIEST_YEAR_BUILT = 1700
"""Years built before this are not a year (0, 0000, a two-digit year): the row is dropped by both readers."""


def _year_built(value: str, column: str, year: int, nbi: bool = False) -> float:
    """Year built (item 27, or a mapped column) checked as one rule for every reader: a whole year
    EARLIEST_YEAR_BUILT … the inventory year, else the row is dropped as malformed; ``nbi``: coded as the NBI
    codes item 27 (four digits)."""
    built = _digits(value, column, "year built", 4) if nbi else _number(value, column, "year built")
    assert built is not None
    if built != int(built):
        raise _RowProblem(_BAD, "year built is not a whole year", column, _clean(value))
    if built < EARLIEST_YEAR_BUILT or built > year:
        raise _RowProblem(_BAD, f"year built outside {EARLIEST_YEAR_BUILT}–{year} (inventory year)", column,
                          _clean(value))
    return built


def _age(value: str, column: str, year: int | None) -> float:
    """An age column, years: the same rule as a year built (no older than EARLIEST_YEAR_BUILT)."""
    age = _number(value, column, "age")
    assert age is not None
    oldest = (year if year is not None else datetime.date.today().year) - EARLIEST_YEAR_BUILT
    if age > oldest:
        raise _RowProblem(_BAD, f"age above {oldest} years (built before {EARLIEST_YEAR_BUILT})", column,
                          _clean(value))
    return age


# ------------------------------------------------------------------------------------------------
# Row → bridge (shared by both readers)


@dataclass
class _Bridge:
    line: int
    bridge_id: str
    urban: bool
    condition: float
    age: float
    ysm: float
    deck_area: float
    aadt: float
    cost_factor: float
    county: str = ""
    owner: str = ""
    state: str = ""
    latitude: float = float("nan")
    longitude: float = float("nan")
    truck_share: float = float("nan")
    detour_km: float = float("nan")
    nhs: float = float("nan")
    components: tuple[int, int, int] | None = None
    culvert: bool = False
    work_years: tuple[float, float, float] | None = None  # SNBI: the last work's year on each slot (NaN: none)
    work_codes: tuple[str, str, str] | None = None  # SNBI: its work code ('' none)
    place: str = ""  # NBI item 4 place code (a town's or city's own budget)


def component_levels(deck: float | None, sup: float | None, sub: float | None, culvert: float | None
                     ) -> tuple[tuple[int, int, int], bool]:
    """The component model's three slots of a bridge (whole ratings; :mod:`bridgefleet.sim.components`) and
    whether it is a culvert: deck, superstructure, substructure (items 58–60; an item coded N is not applicable,
    held at 9), or, where all three are N, the culvert rating (item 62) in the deck slot and 9, 9."""
    if deck is None and sup is None and sub is None and culvert is not None:
        return (int(culvert), 9, 9), True
    return tuple(9 if r is None else int(r) for r in (deck, sup, sub)), False  # type: ignore[return-value]


def nhs_item_104(value: str) -> float:
    """NBI item 104 highway system (FHWA Recording and Coding Guide, 1995): 1.0 for code 1 (on the National
    Highway System), 0.0 for 0 (not on it), NaN for blank or any other value (not coded)."""
    v = _clean(value)
    return 1.0 if v == "1" else 0.0 if v == "0" else math.nan


def _truck_detour(truck: str, detour: str, truck_scale: float) -> dict[str, float]:
    """``truck_share`` (0–1) and ``detour_km`` of NBI item 109 (× ``truck_scale`` to a share: 0.01 for the coded
    percent) and item 19 (km; 199 = 199 km or more), NaN where blank or not a plausible value (the model's
    defaults then apply): keyword arguments of :class:`_Bridge`."""
    t = _optional_number(truck)
    share = t * truck_scale if t is not None else math.nan
    d = _optional_number(detour)
    return {"truck_share": share if INVENTORY["truck_share"].problem(share) is None else math.nan,
            "detour_km": d if d is not None and INVENTORY["detour_km"].problem(d) is None else math.nan}


def _optional_number(value: str) -> float | None:
    """An optional field's number (:func:`spreadsheet_number`), None where blank, not finite or another spelling."""
    x = spreadsheet_number(_clean(value))
    return x if x is not None and math.isfinite(x) else None


def _optional_year(value: str, digits: int | None = None) -> float | None:
    """An optional year (NBI item 106 year reconstructed, a mapped ``year_reconstructed``): a whole number
    (:func:`_optional_number`; ``digits``: exactly that many ASCII digits, as the NBI codes item 106), None where blank
    or anything else (``1999.5``, ``1_999``, ``199``): the year is then not known and bounds nothing."""
    v = _clean(value)
    if digits is not None:
        return float(v) if re.fullmatch(f"[0-9]{{{digits}}}", v) else None
    x = _optional_number(v)
    return x if x is not None and x == int(x) else None
