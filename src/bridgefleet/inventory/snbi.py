"""The SNBI submittal-file reader: FHWA's *Specifications for the National Bridge Inventory* (FHWA-HIF-22-017, 2022),
one JSON file per state from the March 2026 submittal on (FHWA, "NBI Submittal File Schema" v04, 2024).

The file is a JSON array of bridge records keyed by SNBI data tags (item B.C.01 → ``BC01``) with nested data sets
(``Features``, ``Elements``, ``Inspections``, ``Works`` …); ``docs/inventory.md`` ("SNBI files") lists which tag feeds
each model input and its unit. Records become the same :class:`~bridgefleet.inventory.model.Inventory` the NBI reader
gives, through the shared row machinery of :mod:`bridgefleet.inventory.rows` (dropped records with their reasons,
duplicates, the quantity checks). The ``line`` of a record is its 1-based position in the array.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bridgefleet.inventory.json_stream import _FileProblem, _JsonArray
from bridgefleet.inventory.model import (
    _BAD,
    MAX_BAD_FRACTION,
    Inventory,
    InventoryError,
    _RowProblem,
)
from bridgefleet.inventory.nbi import US_LATITUDES
from bridgefleet.inventory.rows import _collect, _inventory, _years_since, check_inventory_year, read_text_file
from bridgefleet.inventory.values import (
    _Bridge,
    _deck_area,
    _nbi_code,
    _number,
    _optional_number,
    _year_built,
    component_levels,
    state_code,
)
from bridgefleet.inventory.works_history import last_works

FT2_TO_M2 = 0.09290304
"""Square feet → m² (exact: 0.3048² ; SNBI geometry items BG15 / BG16 are in square feet)."""

MILE_TO_KM = 1.609344
"""Statute miles → km (exact). SNBI item B.H.17 bypass detour length is in miles (US customary units, as all SNBI
lengths; Coding Guide item 19 was in km)."""

DETOUR_CAP_KM = 199.0
"""The model's longest detour (Coding Guide item 19: 199 = 199 km or more); a longer SNBI detour is read as it."""

RURAL_URBAN_CODES = ("99999", "99998")
"""SNBI item B.H.02 urban codes outside any Census urban area; every other five-digit code is urban."""

URBAN_CODE = re.compile("[0-9]{1,5}")
"""SNBI item B.H.02 as the reader takes it: five ASCII digits, or fewer where a JSON number dropped the leading zeros
(``4790`` is ``04790``). Anything else (``1.0``, ``+4790``, full-width digits, ``abc``) is a bad value."""

DECK_ELEMENTS = (12, 65)
"""AASHTO element numbers of decks and slabs (Manual for Bridge Element Inspection), inclusive."""

RATING_TAGS = ("BC01", "BC02", "BC03", "BC04")
"""Deck, superstructure, substructure, culvert condition ratings (``0``–``9`` or ``N``)."""


HIGHWAY_ORDER = "the highest AADT BH09, then functional class BH01 (1 Interstate first), then file order"
"""Which highway feature carried on the bridge (``BF01`` H, ``BF02`` C) the model reads where a record has several:
the busiest, whose users a poor bridge costs most (the model's traffic weight and user cost are one highway's).
SNBI records each highway carried as its own feature with its own traffic (``BH09``); it names no main one."""


OPTIONAL_TAGS = ("BG15",)
"""Items reported only where they apply (BG15: irregular decks): not counted as not known when absent."""


class _Unknown(Exception):
    """Internal: a value is null, absent or a temporary code (not known)."""


def _temporary(text: str) -> bool:
    """Stripped text is a temporary code: ends in ``-T``, or is ``T-U`` (any case)."""
    upper = text.upper()
    return upper.endswith("-T") or upper == "T-U"


def _is_temporary(value: Any) -> bool:
    """A JSON value is a temporary code (:func:`_temporary`)."""
    return isinstance(value, str) and _temporary(value.strip())


def _text(value: Any, tag: str) -> str:
    """A scalar item as text (JSON strings as they are, numbers as Python writes them).

    Raises:
        _Unknown: null / absent, or a temporary code (ends in ``-T``, or ``T-U``).
        _RowProblem: an object, array or true/false where an item's value belongs.
    """
    if isinstance(value, str):
        text = value.strip()
        if text == "" or _temporary(text):
            raise _Unknown(tag)
        return text
    if value is None:
        raise _Unknown(tag)
    if isinstance(value, (bool, dict, list)):
        raise _RowProblem(_BAD, "not a value (an object, array or true/false)", tag,
                          json.dumps(value, ensure_ascii=False)[:40])  # as the file writes it: true, not True
    return repr(value) if isinstance(value, float) else str(value)  # a JSON number: never blank or a code


class _Record:
    """One SNBI record and the not-known items met while reading it (counted per tag by the reader)."""

    def __init__(self, data: dict[str, Any], unknown: Counter[str]):
        self.data, self.unknown = data, unknown

    def get(self, tag: str, where: dict[str, Any] | None = None) -> str | None:
        """The item's text, None where not known (null, absent, temporary code: counted)."""
        src = self.data if where is None else where
        try:
            return _text(src.get(tag), tag)
        except _Unknown:
            if tag not in OPTIONAL_TAGS:
                self.unknown[tag] += 1
            return None




def _highways_carried(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``Features`` entries of highways carried on the bridge (``BF01`` H, ``BF02`` C), in file order."""
    features = rec.get("Features")
    if not isinstance(features, list):
        return []
    return [f for f in features if isinstance(f, dict) and str(f.get("BF01", "")).strip() == "H"
            and str(f.get("BF02", "")).strip() == "C"]


def _busiest(carried: list[dict[str, Any]]) -> dict[str, Any]:
    """The highway the model reads of a bridge carrying several (:data:`HIGHWAY_ORDER`): the highest known AADT
    ``BH09``, then the highest functional class (lowest ``BH01`` code, 1 Interstate … 7 local), then file order."""
    def key(k: int) -> tuple[float, int, int]:
        f = carried[k]
        try:
            aadt = _optional(_text(f.get("BH09"), "BH09"))
        except (_Unknown, _RowProblem):
            aadt = None
        try:
            fc = _text(f.get("BH01"), "BH01")
        except (_Unknown, _RowProblem):
            fc = ""
        return (-(aadt if aadt is not None and aadt >= 0 else -1.0), int(fc) if fc.isdigit() else 99, k)

    return carried[min(range(len(carried)), key=key)]


def _record_inspection_year(rec: Any) -> int | None:
    """The latest year of a record's inspection completion dates ``BIE03`` (else begin date ``BIE02``); dates are
    ``YYYYMMDD`` or ``YYYY-MM-DD``; None when it has none."""
    events = rec.get("Inspections") if isinstance(rec, dict) else None
    latest: int | None = None
    for ev in events if isinstance(events, list) else ():
        if not isinstance(ev, dict):
            continue
        for tag in ("BIE03", "BIE02"):
            m = re.fullmatch(r"((?:19|20)[0-9]{2})-?[01][0-9]-?[0-3][0-9]", str(ev.get(tag) or "").strip())
            if m:
                latest = max(latest or 0, int(m.group(1)))
                break
    return latest


class _Survey:
    """What the file's notes say of every record, kept or dropped, gathered one record at a time: the latest
    inspection year (where ``find_year``: the year is not given), temporary codes by tag, deck element quantities
    (:meth:`add_deck`)."""

    def __init__(self, find_year: bool) -> None:
        self.find_year = find_year
        self.year: int | None = None
        self.temporary: Counter[str] = Counter()
        self.poor = self.total = 0.0
        self.with_deck = 0

    def add_deck(self, rec: dict[str, Any]) -> None:
        """The record's deck elements 12–65 added to the file's running sums (sq ft, element by element in file
        order): quantity in condition states 3–4 (``BCS03`` + ``BCS04``), total quantity ``BE03``, and the bridge
        counted where it has such an element."""
        elements = rec.get("Elements")
        seen = False
        for e in elements if isinstance(elements, list) else ():
            if not isinstance(e, dict):
                continue
            number = str(e.get("BE01", "")).strip()
            q = _element_quantity(e.get("BE03"))
            parts = [0.0 if e.get(t) in (None, "") else _element_quantity(e.get(t)) for t in ("BCS03", "BCS04")]
            if not re.fullmatch("[0-9]{1,4}", number) or q is None or parts[0] is None or parts[1] is None:
                continue  # an element number or a quantity not written as a number: not counted
            cs = parts[0] + parts[1]
            if DECK_ELEMENTS[0] <= int(number) <= DECK_ELEMENTS[1] and q > 0 and 0 <= cs <= q:
                self.poor, self.total, seen = self.poor + cs, self.total + q, True
        self.with_deck += seen

    def add(self, rec: Any, may_be_temporary: bool = True) -> None:
        """One record; ``may_be_temporary`` False: its text holds no temporary code (json_stream)."""
        if not isinstance(rec, dict):
            return
        if self.find_year:
            y = _record_inspection_year(rec)
            if y is not None and (self.year is None or y > self.year):
                self.year = y
        if may_be_temporary:
            for t, v in _items(rec):
                if _is_temporary(v):
                    self.temporary[t] += 1
        self.add_deck(rec)

    def watch(self, records: Iterable[tuple[Any, bool]]) -> Iterator[Any]:
        """The records of ``records`` ((record, may hold a temporary code) pairs) passed on, each added on its way."""
        for rec, hint in records:
            self.add(rec, hint)
            yield rec


def _parse(rec: _Record, line: int, year: int, unknown_needed: Counter[str], highways: Counter[str]) -> _Bridge:
    """One SNBI record as a bridge; raises :class:`_RowProblem` (the record is dropped with its reason). ``highways``
    counts records carrying several highways (``"several"``) and those on the NHS by another one (``"nhs"``)."""
    d = rec.data
    if not isinstance(d, dict):
        raise _RowProblem(_BAD, "a record is not a JSON object", "BID01", str(d)[:40])
    bid = rec.get("BID01")
    if bid is None:
        raise _RowProblem(_BAD, "missing bridge number (null, absent or a temporary code)", "BID01",
                          None if d.get("BID01") is None else str(d.get("BID01")))
    ratings: list[float | None] = []
    for tag in RATING_TAGS:
        v = rec.get(tag)
        if v is None:
            unknown_needed[tag] += 1
            raise _RowProblem("rating not known", f"null, absent or a temporary code ({d.get(tag)!r}): a rating "
                              "is never guessed", tag, None if d.get(tag) is None else str(d.get(tag)), bad=False)
        ratings.append(_nbi_code(v, tag))
    rated = [r for r in ratings if r is not None]
    if not rated:
        raise _RowProblem("no condition rating", "BC01–BC04 are all N", bad=False)
    area = _snbi_area(rec, culvert=ratings[3] is not None)
    built_text = rec.get("BW01")
    if built_text is None:
        raise _RowProblem(_BAD, "missing year built (null, absent or a temporary code)", "BW01",
                          None if d.get("BW01") is None else str(d.get("BW01")))
    built = _year_built(built_text, "BW01", year)
    age = float(year - built)
    carried = _highways_carried(d)
    if not carried:
        raise _RowProblem("not a highway bridge", "no Features entry with BF01 = H and BF02 = C (a highway carried "
                          "on the bridge)", "Features", bad=False)
    hwy = _busiest(carried) if len(carried) > 1 else carried[0]
    highways["several"] += len(carried) > 1
    aadt_text = rec.get("BH09", hwy)
    if aadt_text is None:
        unknown_needed["BH09"] += 1
        raise _RowProblem("AADT not known", "null, absent or a temporary code: traffic is never guessed", "BH09",
                          None if hwy.get("BH09") is None else str(hwy.get("BH09")), bad=False)
    aadt = _number(aadt_text, "BH09", "AADT", limits="aadt")
    urban_code = rec.get("BH02", hwy)
    if urban_code is None:
        unknown_needed["BH02 (read as rural)"] += 1
    elif not URBAN_CODE.fullmatch(urban_code):
        raise _RowProblem(_BAD, "not an SNBI urban code (five digits: a Census urban area, or 99999 / 99998 outside "
                          "any)", "BH02", urban_code)
    nhs_code = rec.get("BH03", hwy)
    nhs_code = None if nhs_code is None else nhs_code.strip().upper()  # `y` as another highway's BH03 reads
    if nhs_code != "Y" and any(str(f.get("BH03", "")).strip().upper() == "Y" for f in carried if f is not hwy):
        nhs_code = "Y"  # 23 CFR 490.403: the measures count bridges carrying the NHS (its ramps too)
        highways["nhs"] += 1
    trucks = rec.get("BH10", hwy)
    t = _optional(trucks)
    share = t / aadt if t is not None and aadt else math.nan
    detour = _optional(rec.get("BH17", hwy))
    state, factor = state_code(rec.get("BL01"), "BL01")
    lat, lon = _optional(rec.get("BL05")), _optional(rec.get("BL06"))
    if lat is None or lon is None or not (US_LATITUDES[0] <= lat <= US_LATITUDES[1] and -180.0 <= lon <= 180.0):
        lat = lon = math.nan
    levels, culvert = component_levels(*ratings)
    work, work_years, work_codes = last_works(d.get("Works"), built, year, culvert)
    return _Bridge(
        line, bid, urban_code is not None and urban_code not in RURAL_URBAN_CODES, min(rated), age,
        _years_since(age, year, work, built), area, float(aadt or 0.0),
        factor,
        rec.get("BL02") or "", rec.get("BCL01") or "", state, lat, lon,
        truck_share=share if share == share and 0.0 <= share <= 1.0 else math.nan,
        detour_km=min(detour * MILE_TO_KM, DETOUR_CAP_KM) if detour is not None and detour >= 0 else math.nan,
        nhs=1.0 if nhs_code == "Y" else 0.0 if nhs_code == "N" else math.nan,
        components=levels, culvert=culvert, work_years=work_years, work_codes=work_codes)


def _optional(text: str | None) -> float | None:
    """An optional item's number (truck count ``BH10``, detour ``BH17``, position ``BL05`` / ``BL06``) read by the
    rule the required ones are (:func:`~bridgefleet.inventory.values.spreadsheet_number`: ``1_000``, ``+5``,
    ``nan``, a full-width ``５`` are not numbers); None where not known or not such a number (the model's default
    then applies, as for an NBI file's items 109 and 19)."""
    return None if text is None else _optional_number(text)


def _element_quantity(value: Any) -> float | None:
    """An element's quantity (``BE03``, ``BCS03``, ``BCS04``: a JSON number, or text written as one by
    :func:`~bridgefleet.inventory.values.spreadsheet_number`), None for anything else."""
    if value is None or isinstance(value, bool | dict | list):
        return None
    return _optional_number(repr(value) if isinstance(value, float) else str(value))


def _snbi_area(rec: _Record, culvert: bool) -> float:
    """Deck area, m²: ``BG15`` irregular deck area where given and above 0, else ``BG16`` calculated deck area; for a
    culvert (``BC04`` rated) where both are 0 or not known, ``BG02`` total bridge length × ``BG09`` approach roadway
    width, as 23 CFR 490.411 measures a culvert under fill (NBI items 49 × 32); all sq ft × :data:`FT2_TO_M2`."""
    for tag in ("BG15", "BG16"):
        v = rec.get(tag)
        if v is None:
            continue
        ft2 = _number(v, tag, "deck area")
        if ft2:
            return _deck_area(ft2 * FT2_TO_M2, tag, v)
    length, width = (rec.get("BG02"), rec.get("BG09")) if culvert else (None, None)
    if length is not None and width is not None:
        ft2 = _number(length, "BG02", "culvert length") * _number(width, "BG09", "approach roadway width")
        if ft2:
            return _deck_area(ft2 * FT2_TO_M2, "BG02", length)
    raise _RowProblem("no deck area", "BG15 and BG16 are both 0, null, absent or temporary codes (and, for a "
                      "culvert, BG02 × BG09 too)", "BG16", bad=False)


def snbi_records(path: str | Path, what: str = "reading records") -> Iterator[Any]:
    """The records of an SNBI file one at a time, in file order (record k has ``line`` k in :func:`read_snbi`'s
    inventory), streamed as :func:`read_snbi` streams them (memory: a chunk and a record); ``what`` names the pass
    on the progress bar.

    Raises:
        InventoryError: as :func:`read_snbi` for a file that is not readable text or not a JSON array.
    """
    path = Path(path)
    return _JsonArray(path, read_text_file(path, "cp1252", "an SNBI JSON file", "UTF-8 JSON")).iterate(what)


def _bid_of(records: _JsonArray, line: int | None) -> str:
    """``BID01`` of record ``line`` as the file writes it ("?" where the record is not an object), read again."""
    rec = records.record(line)
    if not isinstance(rec, dict):
        return "?"
    return str(rec.get("BID01"))


def read_snbi(path: str | Path, *, year: int | None = None, max_bad_fraction: float = MAX_BAD_FRACTION) -> Inventory:
    """Read an SNBI submittal file (JSON array of bridge records) as an :class:`Inventory` (arrays of shape (N,)).

    Mapping (units and sources in docs/inventory.md, "SNBI files"): bridge_id ← ``BID01`` (text, leading zeros
    kept), state ← ``BL01``, county ← ``BL02``, latitude / longitude ← ``BL05`` / ``BL06`` (decimal degrees), owner ←
    ``BCL01``; deck_area (m²) ← ``BG15`` where given, else ``BG16``, else for a culvert ``BG02`` × ``BG09`` (sq ft ×
    0.09290304); condition ← lowest of
    ``BC01``–``BC04`` (``N`` skipped), components ← :func:`~bridgefleet.inventory.values.component_levels`; age ←
    inventory year − ``BW01``; ysm ← min(age, inventory year − latest ``Works`` ``BW02``, 15); work_year /
    work_code ← each component's last ``Works`` entry (``BW02`` / ``BW03``: its own codes or ``BR01``;
    :func:`~bridgefleet.inventory.works_history.last_works`). From the highway
    carried (``Features`` entry ``BF01`` H, ``BF02`` C; of several, the busiest, :data:`HIGHWAY_ORDER`): urban ←
    ``BH02`` not 99999 / 99998, nhs ← ``BH03`` Y / N (Y where any highway carried is on the NHS),
    aadt ← ``BH09`` (vehicles/day), truck_share ← ``BH10`` / ``BH09``, detour_km ← ``BH17`` miles × 1.609344 (at
    most 199 km). Null, absent and temporary values (``…-T``, ``T-U``) are not known: counted in ``notes``; a record
    whose rating, deck area, year built, AADT or bridge number is not known is dropped with its reason, one without
    a known ``BH02`` read as rural (said in the notes). ``line`` of a record: its 1-based position in the array.

    The file streams (:class:`_JsonArray`): records are decoded one at a time, twice when the year is not given (a
    first pass for the year and the notes), and a kept bridge is a few hundred bytes of columns, so a nation's file
    (600,000 records, 1.6 GB) reads in about 320 MB; a file of 64 MiB or more shows a progress bar on a terminal.

    Args:
        path: the SNBI JSON file.
        year: inventory year for ages; default the latest inspection completion date (``Inspections`` ``BIE03``).
        max_bad_fraction: as :func:`~bridgefleet.inventory.nbi.read_nbi`.

    Raises:
        InventoryError: one line naming the file, the record (its position and ``BID01``) and the tag: not JSON, not
            an array, nested too deep, a huge number, no usable record, too many malformed records, a duplicate
            bridge number within a state, an unknown inventory year.
    """
    path = Path(path)
    text = read_text_file(path, "cp1252", "an SNBI JSON file", "UTF-8 JSON")
    records = _JsonArray(path, text)
    notes = [text.describe(), "SNBI submittal file: 'line' of a record is its 1-based position in the array"]
    survey = _Survey(find_year=year is None)
    try:
        if year is None:  # a first pass for the year (every record's inspections), the file's notes and its refusals
            for rec, hint in records.iterate_hinted("reading inspection dates"):
                survey.add(rec, hint)
            year = survey.year
            if year is None:
                raise InventoryError("cannot tell the inventory year (no inspection completion date BIE03 in any "
                                     "record's Inspections): pass year=", path, column="BIE03")
            how = "latest inspection date BIE03"
            notes.append(f"inventory year {year} (from the {how})")
            check_inventory_year(year, how, path)
            stream: Iterator[Any] = records.iterate("reading bridges")
        else:  # one pass: the file's refusals, then the year's, before any record's
            how = "year given"
            notes.append(f"inventory year {year} (given)")
            stream = _then(survey.watch(records.iterate_hinted("reading bridges")), check_inventory_year, year, how,
                           path)
    except _FileProblem as problem:
        raise problem.error from None
    unknown: Counter[str] = Counter()
    unknown_needed: Counter[str] = Counter()
    highways: Counter[str] = Counter()

    def parse(line: int, fields_: list[Any]) -> _Bridge:
        rec = _Record(fields_[0], unknown)
        try:
            b = _parse(rec, line, year, unknown_needed, highways)
        except _RowProblem as p:
            bid = rec.data.get("BID01") if isinstance(rec.data, dict) else None
            if bid is not None and p.column:
                p.column = f"{p.column} of BID01 {str(bid)!r}"
            raise
        return b

    try:
        bridges, dropped = _collect(path, ((k, [r]) for k, r in enumerate(stream, start=1)), 1, parse, "BID01",
                                    max_bad_fraction)
    except _FileProblem as problem:
        raise problem.error from None
    except InventoryError as exc:  # say "record N (BID01 …)" where the shared code says "line N"
        where = ", ".join(p for p in (exc.path, None if exc.line is None else f"line {exc.line}",
                                      None if exc.column is None else f"column {exc.column}") if p)
        what = str(exc)[len(where) + 2:] if where else str(exc)
        what = re.sub(r"first on line ([0-9]+)", r"first in record \1", what)
        record = "" if exc.line is None else f"record {exc.line} (BID01 {_bid_of(records, exc.line)!r}), "
        tag = "" if exc.column is None else f"tag {exc.column.split(' of BID01 ')[0]}: "
        raise InventoryError(f"{record}{tag}{what}", path) from None
    if unknown:
        notes.append("not known (null, absent or temporary code), by tag: "
                     + ", ".join(f"{t} {n}" for t, n in sorted(unknown.items())))
    if unknown_needed:
        notes.append("records affected: " + ", ".join(f"{t} {n}" for t, n in sorted(unknown_needed.items()))
                     + " (a rating or AADT not known drops the record)")
    if highways["several"]:
        notes.append(f"records carrying a highway in several Features entries (BF01 H, BF02 C): "
                     f"{highways['several']}, each read from one: {HIGHWAY_ORDER}"
                     + (f"; {highways['nhs']} on the NHS by another highway carried (BH03 Y: 23 CFR 490.403)"
                        if highways["nhs"] else ""))
    if survey.temporary:
        notes.append("temporary codes: " + ", ".join(f"{t} {n}" for t, n in sorted(survey.temporary.items())))
    if survey.total > 0:
        notes.append(f"deck elements (12–65) of {survey.with_deck} bridges: "
                     f"{100.0 * survey.poor / survey.total:.1f} % of quantity in condition states 3–4 "
                     "(BCS03 + BCS04 over BE03)")
    return _inventory(path, bridges, dropped, year, notes)


def _then(records: Iterable[Any], check: Any, *args: Any) -> Iterator[Any]:
    """``records`` passed on, then ``check(*args)``: its refusal as a :class:`_FileProblem` (after the file's own,
    before any record's)."""
    yield from records
    try:
        check(*args)
    except InventoryError as exc:
        raise _FileProblem(exc) from None


def _items(rec: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every (tag, value) of a record and of its nested data sets, one level of arrays of objects deep (and the
    ``Routes`` inside ``Features``)."""
    out: list[tuple[str, Any]] = []
    for tag, v in rec.items():
        if isinstance(v, list):
            for entry in v:
                if isinstance(entry, dict):
                    out.extend(_items(entry))
        else:
            out.append((tag, v))
    return out
