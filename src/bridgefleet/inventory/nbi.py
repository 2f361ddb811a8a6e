"""The FHWA National Bridge Inventory reader (items of the *Recording and Coding Guide*, 1995; docs/inventory.md)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from pathlib import Path

from bridgefleet.inventory.model import (
    _BAD,
    MAX_BAD_FRACTION,
    NBI_REQUIRED,
    Inventory,
    InventoryError,
    _RowProblem,
)
from bridgefleet.inventory.rows import (
    _collect,
    _inventory,
    _missing_columns,
    _read_rows,
    _Rows,
    _years_since,
    check_inventory_year,
)
from bridgefleet.inventory.values import (
    _Bridge,
    _clean,
    _deck_area,
    _digits,
    _nbi_code,
    _number,
    _optional_year,
    _truck_detour,
    _year_built,
    component_levels,
    nhs_item_104,
    state_code,
)

# ------------------------------------------------------------------------------------------------
# NBI


def full_year(yy: int, today: int | None = None) -> int:
    """A two-digit year (FHWA's file names ``XX98.txt``, item 90 dates ``MMYY``) as the latest year ending in
    those digits that is not in the future: 98 → 1998, 19 → 2019 (in 2026). One rule for every such field."""
    today = today or datetime.date.today().year
    y = today - (today - yy) % 100
    return y


def _file_year(path: Path, header: list[str], rows: _Rows) -> tuple[int | None, str]:
    """Inventory year: YEAR column, else the file name (DC19 → 2019), else the latest inspection (item 90); from
    the distinct values ``rows`` kept of the two columns (:func:`_read_rows`'s ``keep``)."""
    if "YEAR" in header:
        years = [y for y in rows.values("YEAR") if re.fullmatch("[0-9]{4}", y)]
        if years:
            return max(int(y) for y in years), "YEAR column"
    inspected = None
    if "DATE_OF_INSPECT_090" in header:
        dates = rows.values("DATE_OF_INSPECT_090")
        yy = [int(d[-2:]) for d in dates if re.fullmatch("[0-9]{3,4}", d)]
        inspected = max(full_year(v) for v in yy) if yy else None
    stem = path.stem
    m = re.fullmatch(r"[A-Za-z]{2}([0-9]{2})", stem) or re.search(r"(?<![0-9])((?:19|20)[0-9]{2})(?![0-9])", stem)
    if m:
        y = int(m.group(1))
        y = full_year(y) if y < 100 else y
        if inspected is not None and inspected > y:  # a file cannot hold inspections after its own year
            raise InventoryError(f"the file name says inventory year {y}, but its inspection dates (item 90) "
                                 f"run to {inspected}: rename the file or add a YEAR column", path,
                                 column="DATE_OF_INSPECT_090")
        return y, f"file name {path.name}"
    if inspected is not None:
        return inspected, "latest inspection date (item 90)"
    return None, ""


RECORD_TYPE = re.compile("[12A-Za-z]")
"""NBI item 5A record type (FHWA Recording and Coding Guide, 1995): one character, ``1`` the route carried on the
structure (kept), ``2`` a single route under it, ``A``–``Z`` one of several routes under it (filtered: they repeat a
bridge); a lower-case letter is its upper case. Anything else (``1.0``, ``01``, ``+1``, full-width ``１``, blank) is a
bad value."""


def read_nbi(path: str | Path, *, year: int | None = None,
             max_bad_fraction: float = MAX_BAD_FRACTION) -> Inventory:
    """Read an FHWA NBI delimited file (one state or the national file) as published.

    Comma-separated, text quoted with ``'``, UTF-8 where the bytes are valid UTF-8, else Latin-1 (the NBI's
    legacy encoding; :mod:`bridgefleet.textfile`), ``N`` = not applicable; columns named by FHWA item
    (``STRUCTURE_NUMBER_008`` …). Keeps highway bridges (item 5A record type 1); every other data row is
    listed in ``dropped`` with its line number and reason. Mapping (details in docs/inventory.md):

    - bridge_id ← item 8 structure number (quotes/spaces stripped; ``"SS:number"`` if several states).
    - condition ← lowest of every coded item among 58 deck, 59 superstructure, 60 substructure and 62
      culvert (N / blank skipped), as 23 CFR 490.411 classes a bridge poor when any is ≤ 4. No rating at
      all → dropped.
    - age ← inventory year − item 27 year built. Item 106 (year reconstructed) is *not* used for age:
      reconstruction is major work, not a new structure, and the simulator resets age only on
      replacement; it bounds the years since maintenance instead.
    - ysm ← min(age, inventory year − item 106 when later than item 27 and not 0, :data:`YSM_CAP`).
    - deck_area (m²) ← ``DECK_AREA``; else item 49 length × item 52 deck width; for culverts (deck width
      0) item 49 × item 32 approach roadway width; still 0 → dropped.
    - aadt (vehicles/day) ← item 29. urban ← item 26 functional class 11–19 (01–09 rural).
    - rate ← :data:`RATE_BY_BAND` by FHWA band. cost_factor ← item 1 state unit cost / 232 (1.0 unknown).
    - county ← item 3, place ← item 4, owner ← item 22, state ← item 1.
    - truck_share ← item 109 / 100, detour_km ← item 19 (NaN where not coded).
    - nhs ← item 104 highway system: 1 on the National Highway System → 1.0, 0 → 0.0, blank / other → NaN.

    Args:
        path: the NBI file.
        year: inventory year for ages; default the ``YEAR`` column, else the file name (``DC19`` → 2019,
            or a 4-digit year), else the latest inspection date (item 90).
        max_bad_fraction: malformed rows (non-numeric rating, negative area, …) are dropped and reported
            while they are at most this share of the data rows; above it, or when nothing is usable,
            the first one raises.

    Raises:
        InventoryError: empty or header-only file, UTF-16/32 or binary file, missing required column,
            duplicated structure number, too many malformed rows, no usable bridge, unknown year.
    """
    path = Path(path)
    header, rows, decoded = _read_rows(path, quotechar="'", legacy="latin-1", what="the NBI", one_line=True,
                                       keep=("YEAR", "DATE_OF_INSPECT_090"))
    _missing_columns(path, header, NBI_REQUIRED)
    if "DECK_AREA" not in header:
        _missing_columns(path, header, ("STRUCTURE_LEN_MT_049", "DECK_WIDTH_MT_052"))
    notes: list[str] = [decoded.describe()]
    if year is None:
        year, how = _file_year(path, header, rows)
        if year is None:
            raise InventoryError("cannot tell the inventory year (no YEAR column, no year in the file name, "
                                 "no inspection dates): pass year=", path, line=1, column="YEAR")
        notes.append(f"inventory year {year} (from the {how})")
    else:
        how = "year given"
        notes.append(f"inventory year {year} (given)")
    check_inventory_year(year, how, path)
    col = {name: i for i, name in enumerate(header)}

    def get(fields_: list[str], name: str) -> str:
        i = col.get(name)
        return "" if i is None else fields_[i]

    def parse(line: int, f: list[str]) -> _Bridge:
        sn = _clean(get(f, "STRUCTURE_NUMBER_008"))
        if not sn:
            raise _RowProblem(_BAD, "missing structure number", "STRUCTURE_NUMBER_008", sn)
        rt = _clean(get(f, "RECORD_TYPE_005A"))
        if not RECORD_TYPE.fullmatch(rt):
            raise _RowProblem(_BAD, "not an NBI record type (one character: 1 = route on the structure, 2 or A–Z "
                              "= route(s) under it)", "RECORD_TYPE_005A", rt)
        if rt != "1":
            raise _RowProblem("not a highway bridge", "record type 1 = route on the structure is kept "
                              "(2 or A–Z = route(s) under)", "RECORD_TYPE_005A", rt, bad=False)
        # 23 CFR 490.411: a bridge is poor when any coded item among 58, 59, 60 and 62 is ≤ 4, so its rating
        # is the lowest of every coded one (N / blank skipped), item 62 included.
        items = [_nbi_code(get(f, c), c) for c in ("DECK_COND_058", "SUPERSTRUCTURE_COND_059",
                                                   "SUBSTRUCTURE_COND_060", "CULVERT_COND_062")]
        rated = [r for r in items if r is not None]
        if not rated:
            raise _RowProblem("no condition rating", "items 58, 59, 60 and 62 are all N", bad=False)
        fc_raw = _clean(get(f, "FUNCTIONAL_CLASS_026"))
        fc = int(fc_raw) if re.fullmatch("[0-9]{1,2}", fc_raw) else -1  # 7 = 07 (a spreadsheet drops the 0)
        if not (1 <= fc <= 9 or 11 <= fc <= 19):
            raise _RowProblem(_BAD, "functional class is not 01–09 (rural) or 11–19 (urban)",
                              "FUNCTIONAL_CLASS_026", fc_raw)
        built = _year_built(get(f, "YEAR_BUILT_027"), "YEAR_BUILT_027", year, nbi=True)
        age = float(year - built)
        recon = _optional_year(get(f, "YEAR_RECONSTRUCTED_106"), digits=4)
        aadt = _digits(get(f, "ADT_029"), "ADT_029", "average daily traffic", 6)
        state, factor = state_code(get(f, "STATE_CODE_001"), "STATE_CODE_001")
        return _Bridge(line, sn, fc >= 11, min(rated), age, _years_since(age, year, recon, built),
                       _nbi_area(f, get), float(aadt or 0.0), factor,
                       _clean(get(f, "COUNTY_CODE_003")), _clean(get(f, "OWNER_022")),
                       state, *_position(get(f, "LAT_016"), get(f, "LONG_017")),
                       **_truck_detour(get(f, "PERCENT_ADT_TRUCK_109"), get(f, "DETOUR_KILOS_019"), 0.01),
                       nhs=nhs_item_104(get(f, "HIGHWAY_SYSTEM_104")), place=_clean(get(f, "PLACE_CODE_004")),
                       **dict(zip(("components", "culvert"), component_levels(*items), strict=True)))

    bridges, dropped = _collect(path, rows, len(header), parse, "STRUCTURE_NUMBER_008", max_bad_fraction)
    return _inventory(path, bridges, dropped, year, notes)


def nbi_degrees(value: str, degree_digits: int) -> float:
    """Decimal degrees of an NBI position: item 16 latitude ``DDMMSSss`` (``degree_digits`` 2), item 17
    longitude ``DDDMMSSss`` (3; west of Greenwich, so the caller negates it). NaN when blank, zero or not a
    position (minutes or seconds ≥ 60) (FHWA Recording and Coding Guide, items 16 and 17)."""
    v = _clean(value)
    if not re.fullmatch("[0-9]+", v) or int(v) == 0:
        return float("nan")
    v = v.zfill(degree_digits + 6)
    d = degree_digits
    deg, minutes, sec = int(v[:d]), int(v[d:d + 2]), int(v[d + 2:]) / 100
    if minutes >= 60 or sec >= 60:
        return float("nan")
    return deg + minutes / 60 + sec / 3600


US_LATITUDES = (13.0, 72.0)
"""Degrees north spanned by the states and territories the NBI covers (Guam to Alaska's North Slope)."""


def _position(lat_016: str, long_017: str) -> tuple[float, float]:
    """(latitude, longitude) in decimal degrees, west negative; (NaN, NaN) when either is missing or outside
    where the NBI's bridges are (a miscoded item, e.g. a latitude of 0.6° or a longitude of 770°)."""
    lat, lon = nbi_degrees(lat_016, 2), -nbi_degrees(long_017, 3)
    if not (US_LATITUDES[0] <= lat <= US_LATITUDES[1] and -180.0 <= lon <= 180.0):
        return float("nan"), float("nan")
    return lat, lon


def _nbi_area(f: list[str], get: Callable[[list[str], str], str]) -> float:
    """Deck area (m²): DECK_AREA, else item 49 × item 52, else item 49 × item 32 (culverts)."""
    area = _number(get(f, "DECK_AREA"), "DECK_AREA", "deck area", required=False)
    if area:
        return _deck_area(area, "DECK_AREA", _clean(get(f, "DECK_AREA")))
    length = _number(get(f, "STRUCTURE_LEN_MT_049"), "STRUCTURE_LEN_MT_049", "structure length",
                     required=False, limits="length") or 0.0
    width = _number(get(f, "DECK_WIDTH_MT_052"), "DECK_WIDTH_MT_052", "deck width", required=False,
                    limits="width") or 0.0
    if width == 0.0:
        width = _number(get(f, "APPR_WIDTH_MT_032"), "APPR_WIDTH_MT_032", "approach roadway width",
                        required=False, limits="width") or 0.0
    if length * width <= 0.0:
        raise _RowProblem("no deck area", "DECK_AREA, item 49 × item 52 and item 49 × item 32 are all 0 or "
                          "blank", "STRUCTURE_LEN_MT_049", _clean(get(f, "STRUCTURE_LEN_MT_049")), bad=False)
    return _deck_area(length * width, "STRUCTURE_LEN_MT_049", _clean(get(f, "STRUCTURE_LEN_MT_049")))


