"""Real bridge inventories: FHWA National Bridge Inventory (NBI) files and mapped CSV tables.

An :class:`Inventory` holds one row per bridge (arrays of shape (N,)) and turns into a fixed fleet for
:class:`bridgefleet.fleet.simulator.FleetSimulator` with :meth:`Inventory.to_fleet`. Every field is
derived from a documented NBI item of the FHWA *Recording and Coding Guide for the Structure Inventory
and Appraisal of the Nation's Bridges* (1995); the full mapping table, the defaults and the error
behaviour are in ``docs/inventory.md``.

Entry points:

- :func:`read_nbi` — an NBI delimited file as FHWA publishes it (one state or the national file).
- :func:`read_csv_inventory` — any CSV table with a column mapping (dict or YAML file).
- :func:`load_inventory` — a bundled name (``"dc-2019"``) or a path; picks the reader.
- :func:`summarize` — the text printed by ``bridgefleet inventory PATH``.

Bad input raises one :class:`InventoryError` naming the file, the line and the column; a few bad rows
in an otherwise usable file are dropped and listed in :attr:`Inventory.dropped` instead.
"""

from __future__ import annotations

import codecs
import csv
import io
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from bridgefleet.config import ConfigError, read_yaml

# ------------------------------------------------------------------------------------------------
# Constants (documented in docs/inventory.md)

BUNDLED: dict[str, str] = {"dc-2019": "DC19.txt"}
"""Bundled inventories: name → file in ``bridgefleet/data`` (DC19.txt: FHWA NBI 2019, public domain)."""

BUNDLED_MAPPINGS: dict[str, str] = {"indiana": "indiana-mapping.yaml"}
"""Bundled column mappings for :func:`read_csv_inventory`: name → YAML file in ``bridgefleet/data``."""

GOOD_MIN = 7.0
"""FHWA Good: lowest condition rating ≥ 7 (rating points)."""
POOR_MAX = 4.0
"""FHWA Poor: lowest condition rating ≤ 4; 5–6 is Fair (rating points)."""

RATE_BY_BAND: dict[str, float] = {"good": 0.035, "fair": 0.045, "poor": 0.050}
"""Default deterioration rate by FHWA condition band, rating points per year.

NBI records no deterioration rate. Good = the new-structure rate of ``FleetConfig.new_structure_rate``
(0.035), Poor = the top of the synthetic range ``model.RATE_RANGE`` (0.03–0.05), Fair in between:
bridges in worse bands leave their band faster (Ontario BCI histories: two-year stay Good→Good 0.927,
Fair→Fair 0.865). A placeholder until rates are calibrated from inspection histories.
"""

YSM_CAP = 15.0
"""Upper bound of the years since maintenance assigned to real bridges, years.

NBI records major reconstruction (item 106) but no minor maintenance, so the true value is unknown;
the synthetic fleet (``model.draw_synthetic_fleet``) draws it in [0, min(age, 15)).
"""

UNIT_COST_USD_PER_FT2: dict[int, float] = {6: 194.0, 11: 232.0, 17: 188.0, 18: 309.0, 19: 132.0}
"""FHWA 2017 bridge replacement unit costs (NHS), USD per ft² of deck, by FHWA state code (item 1):
California 06, District of Columbia 11, Illinois 17, Indiana 18, Iowa 19."""
REFERENCE_UNIT_COST_USD_PER_FT2 = 232.0
"""Unit cost behind the simulator's default replacement cost (2497 USD/m² = DC 232 USD/ft² × 10.764)."""

MAX_BAD_FRACTION = 0.1
"""A file with more than this share of malformed data rows raises instead of dropping them."""

NBI_REQUIRED = (
    "STRUCTURE_NUMBER_008", "RECORD_TYPE_005A", "FUNCTIONAL_CLASS_026", "YEAR_BUILT_027", "ADT_029",
    "DECK_COND_058", "SUPERSTRUCTURE_COND_059", "SUBSTRUCTURE_COND_060", "CULVERT_COND_062",
)
"""NBI items a file must have (deck area needs in addition DECK_AREA or items 49 and 52)."""

# Category prefixes of dropped-row reasons that count as malformed data (the others are filters).
_BAD = "bad value"


class InventoryError(ValueError):
    """Unusable inventory input. The message names the file, the line number and the column.

    Attributes:
        path: the file (str) or None.
        line: 1-based line number in the file, or None.
        column: column (header) name, or None.
        value: the offending value as read, or None.
    """

    def __init__(self, what: str, path: str | Path | None = None, line: int | None = None,
                 column: str | None = None, value: str | None = None):
        self.path = None if path is None else str(path)
        self.line, self.column, self.value = line, column, value
        where = [p for p in (self.path, None if line is None else f"line {line}",
                             None if column is None else f"column {column}") if p]
        text = ", ".join(where)
        if value is not None:
            what = f"{what} (value {value!r})"
        super().__init__(f"{text}: {what}" if text else what)


class _RowProblem(Exception):
    """Internal: one row cannot be used. ``bad`` marks malformed data (vs. a documented filter)."""

    def __init__(self, category: str, detail: str, column: str | None = None, value: str | None = None,
                 bad: bool = True):
        super().__init__(detail)
        self.category, self.detail, self.column, self.value, self.bad = category, detail, column, value, bad

    def reason(self) -> str:
        col = f"column {self.column}" if self.column else ""
        val = f" = {self.value!r}" if self.value is not None else ""
        head = f"{col}{val}: " if col else ""
        return f"{self.category}: {head}{self.detail}"


# ------------------------------------------------------------------------------------------------
# The inventory


_ARRAYS = ("bridge_id", "urban", "condition", "age", "ysm", "rate", "deck_area", "aadt", "cost_factor",
           "county", "owner", "state", "line")


@dataclass
class Inventory:
    """Bridges read from a real inventory, one entry per bridge (all arrays shape (N,)).

    Attributes:
        bridge_id: str (N,), NBI item 8 structure number (quotes and spaces stripped); in a file with
            several states, prefixed with the item 1 state code as ``"SS:number"``.
        urban: bool (N,), True for urban bridges (NBI item 26 functional class 11–19).
        condition: float32 (N,), rating 0–9: lowest of items 58/59/60 (deck, superstructure,
            substructure), or item 62 (culvert) when 58–60 are all N.
        age: float32 (N,), years since construction: inventory year − item 27 (year built).
        ysm: float32 (N,), years since maintenance: min(age, inventory year − item 106, YSM_CAP).
        rate: float32 (N,), deterioration rate, rating points/year (:data:`RATE_BY_BAND` by band).
        deck_area: float32 (N,), m²: ``DECK_AREA``, else item 49 × item 52 (item 49 × item 32 for
            culverts whose deck width is 0).
        aadt: float32 (N,), average daily traffic, vehicles/day (item 29).
        cost_factor: float32 (N,), state unit cost / 232 USD/ft² (item 1), 1.0 where unknown.
        county: str (N,), county code (item 3), "" if absent.
        owner: str (N,), owner code (item 22), "" if absent.
        state: str (N,), FHWA state code (item 1), "" if absent.
        line: int64 (N,), line of the record in ``source`` (the header is line 1).
        source: path of the file read.
        dropped: (line number, reason) of every data row not kept; a reason reads ``"category: ..."``.
        year: inventory (reference) year used for ages, or None when ages were given directly.
        notes: how defaults were chosen (year source, filters), for :func:`summarize`.
        kept: number of bridges kept (N), set on construction.
    """

    bridge_id: np.ndarray
    urban: np.ndarray
    condition: np.ndarray
    age: np.ndarray
    ysm: np.ndarray
    rate: np.ndarray
    deck_area: np.ndarray
    aadt: np.ndarray
    cost_factor: np.ndarray
    county: np.ndarray
    owner: np.ndarray
    state: np.ndarray
    line: np.ndarray
    source: str
    dropped: list[tuple[int, str]] = field(default_factory=list)
    year: int | None = None
    notes: list[str] = field(default_factory=list)
    kept: int = field(init=False)

    def __post_init__(self) -> None:
        self.bridge_id = np.asarray(self.bridge_id, dtype=str)
        self.urban = np.asarray(self.urban, dtype=bool)
        for name in ("condition", "age", "ysm", "rate", "deck_area", "aadt", "cost_factor"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=np.float32))
        for name in ("county", "owner", "state"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=str))
        self.line = np.asarray(self.line, dtype=np.int64)
        self.kept = len(self.bridge_id)
        for name in _ARRAYS:
            if getattr(self, name).shape != (self.kept,):
                raise ValueError(f"Inventory.{name} has shape {getattr(self, name).shape}, "
                                 f"expected ({self.kept},)")

    @property
    def n_urban(self) -> int:
        """Urban bridges (functional class 11–19 or the mapping's urban rule), count."""
        return int(self.urban.sum())

    @property
    def n_rural(self) -> int:
        """Rural bridges, count."""
        return self.kept - self.n_urban

    def bands(self) -> np.ndarray:
        """FHWA condition band of each bridge: str (N,) of "good" (≥ 7), "fair" (5–6), "poor" (≤ 4)."""
        return condition_band(self.condition)

    def subset(self, mask: np.ndarray) -> Inventory:
        """The bridges where ``mask`` (bool (N,)) is True; ``dropped`` and ``notes`` are kept."""
        mask = np.asarray(mask, dtype=bool)
        arrays = {name: getattr(self, name)[mask] for name in _ARRAYS}
        return Inventory(**arrays, source=self.source, dropped=list(self.dropped), year=self.year,
                         notes=list(self.notes))

    def filter(self, county: str | int | None = None, owner: str | int | None = None) -> Inventory:
        """Bridges of one county (NBI item 3) and/or one owner (NBI item 22).

        Codes compare numerically when both are numbers (``1``, ``"1"`` and ``"001"`` match county 001),
        as text otherwise.

        Raises:
            InventoryError: the inventory has no such column, or no bridge matches (the message lists
                the codes present).
        """
        mask = np.ones(self.kept, dtype=bool)
        applied = []
        for name, want, item in (("county", county, "COUNTY_CODE_003"), ("owner", owner, "OWNER_022")):
            if want is None:
                continue
            have = getattr(self, name)
            if not np.any(have != ""):
                raise InventoryError(f"no {name} codes in this inventory, cannot filter by {name}",
                                     self.source, column=item)
            match = np.array([_same_code(h, want) for h in have], dtype=bool)
            if not np.any(match & mask):
                codes = ", ".join(f"{c} ({n})" for c, n in Counter(have[mask].tolist()).most_common(12))
                raise InventoryError(f"no bridge with {name} {want!r}; codes present (count): {codes}",
                                     self.source, column=item)
            mask &= match
            applied.append(f"{name}={want}")
        out = self.subset(mask)
        if applied:
            out.notes.append(f"filter {', '.join(applied)}: {out.kept} of {self.kept} bridges")
        return out

    def fleet_order(self, max_urban: int | None = None) -> tuple[np.ndarray, int]:
        """Column order of :meth:`to_fleet`: (indices int (N,), number of controlled urban bridges).

        Urban bridges by decreasing AADT (ties: file order), then rural bridges in file order. The first
        ``max_urban`` urban bridges are controlled; the other urban bridges follow them in the rural block.
        """
        urban_idx = np.flatnonzero(self.urban)
        urban_idx = urban_idx[np.argsort(-self.aadt[urban_idx].astype(np.float64), kind="stable")]
        rural_idx = np.flatnonzero(~self.urban)
        n_ctrl = len(urban_idx) if max_urban is None else min(int(max_urban), len(urban_idx))
        return np.concatenate([urban_idx, rural_idx]).astype(np.int64), n_ctrl

    def to_fleet(self, max_urban: int | None = None) -> tuple[int, int, tuple[dict, dict]]:
        """The inventory as a fixed fleet for ``FleetSimulator(config, fleet=...)``.

        Args:
            max_urban: keep only the ``max_urban`` highest-AADT urban bridges under per-bridge control
                (urban agent); the remaining urban bridges go to the strategy-level (rural) agent. None:
                every urban bridge is controlled.

        Returns:
            (n_urban, n_rural, (profile, state)). Columns (B = N): controlled urban bridges by decreasing
            AADT, then the other urban bridges (decreasing AADT), then rural bridges (file order).
            profile: ``bridge_id`` str (B,), ``deck_area`` float32 (B,) m², ``aadt`` float32 (B,)
            vehicles/day, ``cost_factor`` float32 (B,), ``cluster`` str (B,) "urban"/"rural" (the
            bridge's real cluster, also for urban bridges handed to the rural agent).
            state: ``condition`` (rating; a whole NBI rating r starts at r + 0.5, the middle of the band
            [r, r + 1) of the continuous scale, capped at 9), ``age`` (years), ``ysm`` (years), ``rate`` (rating points/
            year), float32 (B,).

        Raises:
            InventoryError: ``max_urban`` < 1, or one agent would get no bridge.
        """
        integer = isinstance(max_urban, int | np.integer) and not isinstance(max_urban, bool)
        if max_urban is not None and (not integer or max_urban < 1):
            raise InventoryError(f"max_urban = {max_urban!r}: must be a positive integer or None",
                                 self.source)
        order, n_ctrl = self.fleet_order(max_urban)
        n_rural = self.kept - n_ctrl
        if n_ctrl == 0:
            raise InventoryError(
                f"no urban bridge among the {self.kept} bridges (functional class 11–19, or the mapping's "
                "urban rule), so the per-bridge (urban) agent has nothing to control; loosen the "
                "--county/--owner filter or use a mapping whose cluster rule marks some bridges urban",
                self.source)
        if n_rural == 0:
            hint = (f"use max_urban=N (--max-urban N) with N < {n_ctrl} to hand the lower-traffic urban "
                    "bridges to the strategy-level (rural) agent") if n_ctrl > 1 else \
                "add bridges (loosen the --county/--owner filter)"
            raise InventoryError(
                f"all {self.kept} bridges are under per-bridge control, none left for the strategy-level "
                f"(rural) agent; {hint}", self.source)
        profile = {
            "bridge_id": self.bridge_id[order],
            "deck_area": self.deck_area[order].copy(),
            "aadt": self.aadt[order].copy(),
            "cost_factor": self.cost_factor[order].copy(),
            "cluster": np.where(self.urban[order], "urban", "rural"),
        }
        state = {name: getattr(self, name)[order].copy() for name in ("condition", "age", "ysm", "rate")}
        # An NBI rating r (a whole number) covers [r, r + 1) on the simulator's continuous scale: start at
        # the middle, so a bridge rated exactly 7 or 5 does not fall a band with the first tenth of a point.
        whole = state["condition"] == np.floor(state["condition"])
        state["condition"] = np.where(whole, np.minimum(state["condition"] + 0.5, 9.0),
                                      state["condition"]).astype(np.float32)
        return n_ctrl, n_rural, (profile, state)


def condition_band(condition: np.ndarray) -> np.ndarray:
    """FHWA Good/Fair/Poor of lowest ratings (float (N,), rating points): str (N,).

    ≥ 7 "good", ≤ 4 "poor", else "fair" (5–6); fractional ratings below 5 count as poor, as in
    ``model.band_counts``.
    """
    c = np.asarray(condition, dtype=np.float64)
    return np.where(c >= GOOD_MIN, "good", np.where(c < POOR_MAX + 1.0, "poor", "fair"))


def default_rate(condition: np.ndarray) -> np.ndarray:
    """Deterioration rate from the condition band, float32 (N,) rating points/year (:data:`RATE_BY_BAND`)."""
    bands = condition_band(condition)
    return np.array([RATE_BY_BAND[b] for b in bands.tolist()], dtype=np.float32)


def state_cost_factor(state_code: int | None) -> float:
    """Cost factor of an FHWA state code (item 1): 2017 unit cost / 232 USD/ft²; 1.0 where unknown."""
    if state_code is None or state_code not in UNIT_COST_USD_PER_FT2:
        return 1.0
    return UNIT_COST_USD_PER_FT2[state_code] / REFERENCE_UNIT_COST_USD_PER_FT2


def _same_code(have: str, want: str | int) -> bool:
    want_s = str(want).strip().strip("'\"")
    if have.isdigit() and want_s.isdigit():
        return int(have) == int(want_s)
    return have == want_s


# ------------------------------------------------------------------------------------------------
# Reading text tables


def _read_rows(path: Path, quotechar: str, encoding: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and (start line, fields) of every non-blank data row; raises on file-level problems."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        names = ", ".join(BUNDLED)
        raise InventoryError(f"no such file (bundled inventories: {names})", path) from None
    except OSError as exc:
        raise InventoryError(f"cannot read the file ({exc.strerror})", path) from None
    text = _decode(raw, path, encoding)
    if not text.strip():
        raise InventoryError("the file is empty: expected a header line naming the columns "
                             f"(e.g. {', '.join(NBI_REQUIRED[:3])}, ...) and one bridge per line", path,
                             line=1, column="(header)")
    reader = csv.reader(io.StringIO(text, newline=""), quotechar=quotechar)
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    last = 0
    try:
        for fields_ in reader:
            start = last + 1
            last = reader.line_num
            if not fields_ or all(not f.strip() for f in fields_):
                continue
            if header is None:
                header = [_clean(f) for f in fields_]
                header_line = start
            else:
                rows.append((start, fields_))
    except csv.Error as exc:
        raise InventoryError(f"not a readable CSV file ({exc})", path, line=reader.line_num) from None
    assert header is not None
    if not rows:
        more = ", ..." if len(header) > 4 else ""
        raise InventoryError(f"header-only file: no bridge records after the header on line {header_line} "
                             f"(columns {', '.join(header[:4])}{more})", path, line=header_line + 1)
    return header, rows


def _decode(raw: bytes, path: Path, encoding: str) -> str:
    """Decode, refusing UTF-16/UTF-32 (BOM or NUL bytes) and binary data with a message that says so."""
    boms = ((codecs.BOM_UTF32_LE, "UTF-32", "utf-32"), (codecs.BOM_UTF32_BE, "UTF-32", "utf-32"),
            (codecs.BOM_UTF16_LE, "UTF-16", "utf-16"), (codecs.BOM_UTF16_BE, "UTF-16", "utf-16"))
    for bom, name, codec in boms:
        if raw.startswith(bom):
            first = _first_field(raw, codec)
            raise InventoryError(
                f"the file is {name}-encoded (byte-order mark {bom.hex(' ').upper()}); inventories must be "
                "latin-1/ASCII (NBI) or UTF-8 text: re-save it as UTF-8 CSV", path, line=1, column=first)
    head = raw[:4000]
    if _looks_binary(head):
        raise InventoryError(f"not a text file ({_control_bytes(head)} control bytes in its first {len(head)} "
                             "bytes); inventories must be latin-1/ASCII (NBI) or UTF-8 text (CSV)", path, line=1)
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        guess = "UTF-16" if raw[:2].count(b"\x00") == 1 else "binary or UTF-16/32"
        first = _first_field(raw, "utf-16-le" if raw[1:2] == b"\x00" else "utf-16-be")
        raise InventoryError(f"NUL byte at byte {nul}: the file looks {guess}-encoded, not text; inventories "
                             "must be latin-1/ASCII (NBI) or UTF-8 text: re-save it as UTF-8 CSV", path,
                             line=line, column=first if line == 1 else None)
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
        encoding = "utf-8"
    if encoding == "utf-8":
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("latin-1")  # every byte decodes; older CSV exports are often latin-1/cp1252
    return raw.decode(encoding)


def _control_bytes(head: bytes) -> int:
    """C0 control bytes other than tab and line ends in ``head``: text has almost none, binary data many."""
    return sum(head.count(bytes([c])) for c in (*range(1, 9), 11, 12, *range(14, 32), 127))


def _looks_binary(head: bytes) -> bool:
    return _control_bytes(head) > len(head) // 100


def _first_field(raw: bytes, codec: str) -> str | None:
    try:
        head = raw[:4000].decode(codec, errors="replace").lstrip("\ufeff")
    except LookupError:
        return None
    name = re.split(r"[,;\t\r\n]", head, maxsplit=1)[0].strip().strip("'\"")
    # Only a plausible column name is worth quoting; decoded binary is a long run of arbitrary characters.
    return name if name and len(name) <= 40 and name.isprintable() else None


def _clean(value: str) -> str:
    """Strip spaces and stray quotes from a field ("'0001   '" → "0001")."""
    return value.strip().strip("'\"").strip()


def _rating(value: str, column: str, lo: float = 0.0, hi: float = 9.0) -> float | None:
    """A condition rating, or None for N / blank (not applicable / not reported)."""
    v = _clean(value)
    if v in ("", "N", "n"):
        return None
    try:
        r = float(v)
    except ValueError:
        raise _RowProblem(_BAD, f"not a condition rating ({lo:g}–{hi:g} or N)", column, v) from None
    if not lo <= r <= hi or math.isnan(r):
        raise _RowProblem(_BAD, f"condition rating outside {lo:g}–{hi:g}", column, v)
    return r


def _number(value: str, column: str, what: str, *, required: bool = True, minimum: float | None = 0.0
            ) -> float | None:
    v = _clean(value)
    if v == "":
        if required:
            raise _RowProblem(_BAD, f"missing {what}", column, v)
        return None
    try:
        x = float(v)
    except ValueError:
        raise _RowProblem(_BAD, f"{what} is not a number", column, v) from None
    if not math.isfinite(x):
        raise _RowProblem(_BAD, f"{what} is not finite", column, v)
    if minimum is not None and x < minimum:
        why = f"negative {what}" if minimum == 0 else f"{what} below {minimum:g}"
        raise _RowProblem(_BAD, why, column, v)
    return x


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


def _collect(path: Path, rows: Iterable[tuple[int, list[str]]], n_columns: int,
             parse: Callable[[int, list[str]], _Bridge], id_column: str, max_bad_fraction: float
             ) -> tuple[list[_Bridge], list[tuple[int, str]]]:
    """Parse rows; drop and report problems; raise when the file is not usable as a whole."""
    bridges: list[_Bridge] = []
    dropped: list[tuple[int, str]] = []
    bad: list[tuple[int, _RowProblem]] = []
    n_rows = 0
    for line, fields_ in rows:
        n_rows += 1
        try:
            if len(fields_) != n_columns:
                col = f"#{min(len(fields_), n_columns) + 1}"
                raise _RowProblem(_BAD, f"row has {len(fields_)} fields, the header has {n_columns}", col)
            bridges.append(parse(line, fields_))
        except _RowProblem as problem:
            dropped.append((line, problem.reason()))
            if problem.bad:
                bad.append((line, problem))
    if bad and (not bridges or len(bad) > max_bad_fraction * n_rows):
        line, p = bad[0]
        raise InventoryError(f"{p.detail} — {len(bad)} of {n_rows} data rows are malformed "
                             f"(first shown; at most {max_bad_fraction:.0%} are dropped and reported)",
                             path, line=line, column=p.column, value=p.value)
    if not bridges:
        counts = Counter(r.split(":", 1)[0] for _, r in dropped)
        line = dropped[0][0] if dropped else None
        raise InventoryError(f"no usable bridge: all {n_rows} rows dropped ({dict(counts)}); first: "
                             f"{dropped[0][1] if dropped else '-'}", path, line=line)
    seen: dict[tuple[str, str], int] = {}
    for b in bridges:
        key = (b.state, b.bridge_id)
        if key in seen:
            raise InventoryError(f"duplicated structure number {b.bridge_id!r} (first on line {seen[key]}); "
                                 "each bridge must appear once", path, line=b.line, column=id_column,
                                 value=b.bridge_id)
        seen[key] = b.line
    return bridges, dropped


def _inventory(path: Path, bridges: list[_Bridge], dropped: list[tuple[int, str]], year: int | None,
               notes: list[str]) -> Inventory:
    states = {b.state for b in bridges}
    ids = [f"{b.state}:{b.bridge_id}" if len(states) > 1 else b.bridge_id for b in bridges]
    if len(states) > 1:
        notes.append(f"{len(states)} states in the file: bridge ids are 'state code:structure number'")
    cond = np.array([b.condition for b in bridges], dtype=np.float32)
    return Inventory(
        bridge_id=np.array(ids, dtype=str),
        urban=np.array([b.urban for b in bridges], dtype=bool),
        condition=cond,
        age=np.array([b.age for b in bridges], dtype=np.float32),
        ysm=np.array([b.ysm for b in bridges], dtype=np.float32),
        rate=default_rate(cond),
        deck_area=np.array([b.deck_area for b in bridges], dtype=np.float32),
        aadt=np.array([b.aadt for b in bridges], dtype=np.float32),
        cost_factor=np.array([b.cost_factor for b in bridges], dtype=np.float32),
        county=np.array([b.county for b in bridges], dtype=str),
        owner=np.array([b.owner for b in bridges], dtype=str),
        state=np.array([b.state for b in bridges], dtype=str),
        line=np.array([b.line for b in bridges], dtype=np.int64),
        source=str(path), dropped=dropped, year=year, notes=notes,
    )


def _missing_columns(path: Path, header: list[str], required: Iterable[str]) -> None:
    missing = [c for c in required if c not in header]
    if missing:
        more = ", ..." if len(header) > 6 else ""
        raise InventoryError(f"missing required column(s) {', '.join(missing)}; the header has "
                             f"{len(header)} columns ({', '.join(header[:6])}{more})",
                             path, line=1, column=missing[0])


def _years_since(age: float, year: int | None, reconstructed: float | None, built: float | None) -> float:
    """Years since maintenance: min(age, year − reconstruction year, YSM_CAP)."""
    ysm = min(age, YSM_CAP)
    if year is not None and reconstructed and built is not None and built <= reconstructed <= year:
        ysm = min(ysm, year - reconstructed)
    return float(ysm)


# ------------------------------------------------------------------------------------------------
# NBI


def _file_year(path: Path, header: list[str], rows: list[tuple[int, list[str]]]) -> tuple[int | None, str]:
    """Inventory year: YEAR column, else the file name (DC19 → 2019), else the latest inspection (item 90)."""
    if "YEAR" in header:
        k = header.index("YEAR")
        years = [_clean(f[k]) for _, f in rows if len(f) > k and _clean(f[k]).isdigit()]
        if years:
            return max(int(y) for y in years), "YEAR column"
    stem = path.stem
    m = re.fullmatch(r"[A-Za-z]{2}(\d{2})", stem) or re.search(r"(?<!\d)((?:19|20)\d{2})(?!\d)", stem)
    if m:
        y = int(m.group(1))
        return (2000 + y if y < 100 else y), f"file name {path.name}"
    if "DATE_OF_INSPECT_090" in header:
        k = header.index("DATE_OF_INSPECT_090")
        dates = [_clean(f[k]) for _, f in rows if len(f) > k]
        yy = [int(d[-2:]) for d in dates if re.fullmatch(r"\d{3,4}", d)]
        if yy:
            y = max(2000 + v if v < 70 else 1900 + v for v in yy)
            return y, "latest inspection date (item 90)"
    return None, ""


def read_nbi(path: str | Path, *, year: int | None = None,
             max_bad_fraction: float = MAX_BAD_FRACTION) -> Inventory:
    """Read an FHWA NBI delimited file (one state or the national file) as published.

    Comma-separated, text quoted with ``'``, latin-1, ``N`` = not applicable; columns named by FHWA item
    (``STRUCTURE_NUMBER_008`` …). Keeps highway bridges (item 5A record type 1); every other data row is
    listed in ``dropped`` with its line number and reason. Mapping (details in docs/inventory.md):

    - bridge_id ← item 8 structure number (quotes/spaces stripped; ``"SS:number"`` if several states).
    - condition ← lowest of items 58 deck, 59 superstructure, 60 substructure (N / blank skipped);
      item 62 culvert when 58–60 are all N. No rating at all → dropped.
    - age ← inventory year − item 27 year built. Item 106 (year reconstructed) is *not* used for age:
      reconstruction is major work, not a new structure, and the simulator resets age only on
      replacement; it bounds the years since maintenance instead.
    - ysm ← min(age, inventory year − item 106 when later than item 27 and not 0, :data:`YSM_CAP`).
    - deck_area (m²) ← ``DECK_AREA``; else item 49 length × item 52 deck width; for culverts (deck width
      0) item 49 × item 32 approach roadway width; still 0 → dropped.
    - aadt (vehicles/day) ← item 29. urban ← item 26 functional class 11–19 (01–09 rural).
    - rate ← :data:`RATE_BY_BAND` by FHWA band. cost_factor ← item 1 state unit cost / 232 (1.0 unknown).
    - county ← item 3, owner ← item 22, state ← item 1.

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
    header, rows = _read_rows(path, quotechar="'", encoding="latin-1")
    _missing_columns(path, header, NBI_REQUIRED)
    if "DECK_AREA" not in header:
        _missing_columns(path, header, ("STRUCTURE_LEN_MT_049", "DECK_WIDTH_MT_052"))
    notes: list[str] = []
    if year is None:
        year, how = _file_year(path, header, rows)
        if year is None:
            raise InventoryError("cannot tell the inventory year (no YEAR column, no year in the file name, "
                                 "no inspection dates): pass year=", path, line=1, column="YEAR")
        notes.append(f"inventory year {year} (from the {how})")
    else:
        notes.append(f"inventory year {year} (given)")
    col = {name: i for i, name in enumerate(header)}

    def get(fields_: list[str], name: str) -> str:
        i = col.get(name)
        return "" if i is None else fields_[i]

    def parse(line: int, f: list[str]) -> _Bridge:
        sn = _clean(get(f, "STRUCTURE_NUMBER_008"))
        if not sn:
            raise _RowProblem(_BAD, "missing structure number", "STRUCTURE_NUMBER_008", sn)
        rt = _clean(get(f, "RECORD_TYPE_005A"))
        if rt != "1":
            raise _RowProblem("not a highway bridge", "record type 1 = route on the structure is kept "
                              "(2 = route under)", "RECORD_TYPE_005A", rt, bad=rt not in ("2",))
        ratings = [_rating(get(f, c), c) for c in
                   ("DECK_COND_058", "SUPERSTRUCTURE_COND_059", "SUBSTRUCTURE_COND_060")]
        culvert = _rating(get(f, "CULVERT_COND_062"), "CULVERT_COND_062")
        rated = [r for r in ratings if r is not None]
        if not rated and culvert is not None:
            rated = [culvert]
        if not rated:
            raise _RowProblem("no condition rating", "items 58, 59, 60 and 62 are all N", bad=False)
        fc_raw = _clean(get(f, "FUNCTIONAL_CLASS_026"))
        fc = int(fc_raw) if fc_raw.isdigit() else -1
        if not (1 <= fc <= 9 or 11 <= fc <= 19):
            raise _RowProblem(_BAD, "functional class is not 01–09 (rural) or 11–19 (urban)",
                              "FUNCTIONAL_CLASS_026", fc_raw)
        built = _number(get(f, "YEAR_BUILT_027"), "YEAR_BUILT_027", "year built")
        assert built is not None
        if built < 1700 or built > year:
            raise _RowProblem(_BAD, f"year built outside 1700–{year} (inventory year)", "YEAR_BUILT_027",
                              _clean(get(f, "YEAR_BUILT_027")))
        age = float(year - built)
        recon = _optional_number(get(f, "YEAR_RECONSTRUCTED_106"))
        aadt = _number(get(f, "ADT_029"), "ADT_029", "average daily traffic")
        return _Bridge(line, sn, fc >= 11, min(rated), age, _years_since(age, year, recon, built),
                       _nbi_area(f, get), float(aadt or 0.0), _state_factor(get(f, "STATE_CODE_001")),
                       _clean(get(f, "COUNTY_CODE_003")), _clean(get(f, "OWNER_022")),
                       _clean(get(f, "STATE_CODE_001")))

    bridges, dropped = _collect(path, rows, len(header), parse, "STRUCTURE_NUMBER_008", max_bad_fraction)
    return _inventory(path, bridges, dropped, year, notes)


def _optional_number(value: str) -> float | None:
    try:
        x = float(_clean(value))
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _state_factor(value: str) -> float:
    v = _clean(value)
    return state_cost_factor(int(v)) if v.isdigit() else 1.0


def _nbi_area(f: list[str], get: Callable[[list[str], str], str]) -> float:
    """Deck area (m²): DECK_AREA, else item 49 × item 52, else item 49 × item 32 (culverts)."""
    area = _number(get(f, "DECK_AREA"), "DECK_AREA", "deck area", required=False)
    if area:
        return area
    length = _number(get(f, "STRUCTURE_LEN_MT_049"), "STRUCTURE_LEN_MT_049", "structure length",
                     required=False) or 0.0
    width = _number(get(f, "DECK_WIDTH_MT_052"), "DECK_WIDTH_MT_052", "deck width", required=False) or 0.0
    if width == 0.0:
        width = _number(get(f, "APPR_WIDTH_MT_032"), "APPR_WIDTH_MT_032", "approach roadway width",
                        required=False) or 0.0
    if length * width <= 0.0:
        raise _RowProblem("no deck area", "DECK_AREA, item 49 × item 52 and item 49 × item 32 are all 0 or "
                          "blank", "STRUCTURE_LEN_MT_049", _clean(get(f, "STRUCTURE_LEN_MT_049")), bad=False)
    return length * width


# ------------------------------------------------------------------------------------------------
# Generic CSV with a column mapping

MAPPING_KEYS = {
    "name": "free text describing the table",
    "id": "column of the bridge id (required)",
    "condition": "column or list of columns; condition = lowest non-N value (required)",
    "culvert_condition": "column used when every condition column is N",
    "condition_scale": "[low, high] of the source scale, mapped linearly onto 0–9 (default [0, 9])",
    "age": "column of age in years (or give year_built)",
    "year_built": "column of the year built (needs year or a year column)",
    "year_reconstructed": "column of the year of the last reconstruction (bounds ysm)",
    "year": "inventory year (number) for year_built",
    "ysm": "column of years since maintenance (default min(age, YSM_CAP))",
    "deck_area": "column of deck area (or give length and width)",
    "length": "column of structure length",
    "width": "column of deck width",
    "area_scale": "multiplier turning deck_area / length × width into m² (default 1)",
    "aadt": "column of traffic, vehicles/day (required)",
    "cluster": "rule: 'urban' | 'rural' | {column, urban: [values], rural: [values]} | "
               "{functional_class: column}",
    "county": "column of the county code",
    "owner": "column of the owner code",
    "state_code": "FHWA state code (item 1) of every bridge: sets cost_factor and state",
    "cost_factor": "explicit cost factor (overrides state_code)",
}
"""Keys of a column mapping for :func:`read_csv_inventory`, with their meaning."""


def _load_mapping(mapping: Mapping[str, Any] | str | Path) -> tuple[dict[str, Any], str]:
    if isinstance(mapping, Mapping):
        return dict(mapping), "mapping"
    name = str(mapping)
    if name in BUNDLED_MAPPINGS:
        text = resources.files("bridgefleet").joinpath("data", BUNDLED_MAPPINGS[name]).read_text("utf-8")
        source = f"bundled mapping {name!r}"
        data = yaml.safe_load(text)
    else:
        p = Path(mapping)
        if not p.is_file():
            raise InventoryError(f"no such mapping file; bundled mappings: {', '.join(BUNDLED_MAPPINGS)}", p)
        try:
            data = read_yaml(p)
        except ConfigError as exc:
            raise InventoryError(f"column mapping: {exc}") from None
        source = str(p)
    if not isinstance(data, dict):
        raise InventoryError("the mapping must be a YAML mapping of keys "
                             f"({', '.join(MAPPING_KEYS)})", source)
    return data, source


def _cluster_rule(rule: Any, source: str) -> tuple[str | None, Callable[[str], bool | None]]:
    """(column or None, value → True urban / False rural / None unknown)."""
    if rule in ("urban", "rural"):
        return None, lambda _v: rule == "urban"
    if isinstance(rule, dict) and set(rule) == {"functional_class"}:
        def fc(v: str) -> bool | None:
            n = int(v) if v.isdigit() else -1
            return True if 11 <= n <= 19 else False if 1 <= n <= 9 else None
        return str(rule["functional_class"]), fc
    if isinstance(rule, dict) and "column" in rule and set(rule) <= {"column", "urban", "rural"}:
        urban = {str(x) for x in rule.get("urban") or []}
        rural = {str(x) for x in rule.get("rural") or []}
        both = urban & rural
        if both:
            raise InventoryError(f"cluster values {sorted(both)} are listed as both urban and rural", source,
                                 column=str(rule["column"]))
        return str(rule["column"]), lambda v: True if v in urban else False if v in rural else None
    raise InventoryError(f"cluster must be 'urban', 'rural', {{column, urban, rural}} or "
                         f"{{functional_class: column}}, got {rule!r}", source)


def read_csv_inventory(path: str | Path, mapping: Mapping[str, Any] | str | Path, *,
                       max_bad_fraction: float = MAX_BAD_FRACTION) -> Inventory:
    """Read a CSV table that is not in NBI layout, with a column mapping (dict, YAML path or bundled name).

    Mapping keys are listed in :data:`MAPPING_KEYS` and docs/inventory.md. The bundled ``"indiana"``
    mapping reads the GIAMS Indiana 2019 table (``INDIANA2019.csv``): condition = lowest of items 58–60,
    ``Age`` given directly, deck area = item 49 × item 52, AADT = item 114 (the *future* ADT, a proxy for
    item 29), cluster from ``Road_class`` (NHS, Major → urban; Minor, Local → rural), cost factor
    Indiana 309/232. Text is UTF-8 (latin-1 accepted), comma-separated, ``"``-quoted; ``N`` = not applicable.

    Derived fields follow :func:`read_nbi`: rate from the condition band, ysm = min(age, years since
    reconstruction, :data:`YSM_CAP`) unless a ``ysm`` column is mapped.

    Raises:
        InventoryError: bad mapping (unknown key, missing required key), a mapped column absent from the
            header, and the file-level cases of :func:`read_nbi`.
    """
    path = Path(path)
    m, msource = _load_mapping(mapping)
    unknown = sorted(set(m) - set(MAPPING_KEYS))
    if unknown:
        raise InventoryError(f"unknown mapping key(s) {unknown}; known: {', '.join(MAPPING_KEYS)}", msource)
    for key in ("id", "condition", "aadt", "cluster"):
        if m.get(key) is None:
            raise InventoryError(f"mapping key {key!r} is required ({MAPPING_KEYS[key]})", msource)
    if m.get("age") is None and m.get("year_built") is None:
        raise InventoryError("mapping needs 'age' or 'year_built'", msource)
    if m.get("deck_area") is None and (m.get("length") is None or m.get("width") is None):
        raise InventoryError("mapping needs 'deck_area' or both 'length' and 'width'", msource)
    conds = [m["condition"]] if isinstance(m["condition"], str) else list(m["condition"])
    lo, hi = (float(x) for x in (m.get("condition_scale") or (0.0, 9.0)))
    if not hi > lo:
        raise InventoryError(f"condition_scale {m.get('condition_scale')!r} must be [low, high] with "
                             "high > low", msource)
    cluster_col, cluster_of = _cluster_rule(m["cluster"], msource)
    area_scale = float(m.get("area_scale", 1.0))
    state_code = m.get("state_code")
    cost_factor = float(m["cost_factor"]) if m.get("cost_factor") is not None else state_cost_factor(
        None if state_code is None else int(state_code))
    year = None if m.get("year") is None else int(m["year"])

    header, rows = _read_rows(path, quotechar='"', encoding="utf-8")
    columns = {k: m.get(k) for k in ("id", "culvert_condition", "age", "year_built", "year_reconstructed",
                                     "ysm", "deck_area", "length", "width", "aadt", "county", "owner")}
    needed = [m["id"], *conds] + [v for k, v in columns.items() if v is not None and k != "id"]
    if cluster_col:
        needed.append(cluster_col)
    _missing_columns(path, header, dict.fromkeys(str(c) for c in needed))
    if columns["age"] is None and year is None:
        raise InventoryError("mapping gives year_built but no inventory year: add 'year: YYYY'", msource)
    col = {name: i for i, name in enumerate(header)}

    def get(f: list[str], key: str) -> str:
        name = columns.get(key)
        return "" if name is None else f[col[str(name)]]

    def parse(line: int, f: list[str]) -> _Bridge:
        bid = _clean(get(f, "id"))
        if not bid:
            raise _RowProblem(_BAD, "missing bridge id", str(m["id"]), bid)
        rated = [r for c in conds if (r := _rating(f[col[c]], c, lo, hi)) is not None]
        if not rated and columns["culvert_condition"]:
            r = _rating(get(f, "culvert_condition"), str(columns["culvert_condition"]), lo, hi)
            rated = [] if r is None else [r]
        if not rated:
            raise _RowProblem("no condition rating", f"{', '.join(conds)} are all N or blank", bad=False)
        condition = (min(rated) - lo) / (hi - lo) * 9.0
        built = recon = None
        if columns["age"] is not None:
            age = _number(get(f, "age"), str(columns["age"]), "age")
        else:
            built = _number(get(f, "year_built"), str(columns["year_built"]), "year built")
            assert built is not None and year is not None
            age = year - built
            if age < 0:
                raise _RowProblem(_BAD, f"year built after the inventory year {year}",
                                  str(columns["year_built"]), _clean(get(f, "year_built")))
        assert age is not None
        if columns["year_reconstructed"] is not None:
            recon = _optional_number(get(f, "year_reconstructed"))
            if year is not None and built is None and recon:
                built = year - age
        if columns["ysm"] is not None:
            ysm = _number(get(f, "ysm"), str(columns["ysm"]), "years since maintenance")
            assert ysm is not None
        else:
            ysm = _years_since(age, year, recon, built)
        if columns["deck_area"] is not None:
            area = _number(get(f, "deck_area"), str(columns["deck_area"]), "deck area")
        else:
            length = _number(get(f, "length"), str(columns["length"]), "structure length")
            width = _number(get(f, "width"), str(columns["width"]), "deck width")
            area = (length or 0.0) * (width or 0.0)
        area = (area or 0.0) * area_scale
        if area <= 0.0:
            raise _RowProblem("no deck area", "deck area is 0", str(columns["deck_area"] or columns["width"]),
                              bad=False)
        aadt = _number(get(f, "aadt"), str(columns["aadt"]), "traffic (AADT)")
        cval = _clean(f[col[cluster_col]]) if cluster_col else ""
        urban = cluster_of(cval)
        if urban is None:
            raise _RowProblem(_BAD, "value not covered by the mapping's cluster rule", cluster_col, cval)
        return _Bridge(line, bid, urban, condition, float(age), float(ysm), area, float(aadt or 0.0),
                       cost_factor, _clean(get(f, "county")), _clean(get(f, "owner")),
                       "" if state_code is None else f"{int(state_code):02d}")

    bridges, dropped = _collect(path, rows, len(header), parse, str(m["id"]), max_bad_fraction)
    notes = [f"columns mapped by {msource}" + (f" ({m['name']})" if m.get("name") else "")]
    if (lo, hi) != (0.0, 9.0):
        notes.append(f"condition rescaled from {lo:g}–{hi:g} to 0–9 (approximation)")
    return _inventory(path, bridges, dropped, year, notes)


# ------------------------------------------------------------------------------------------------
# Loading by name, summary

_INDIANA_HEADER = {"STRUCTURE_NUMBER_008", "Road_class", "FUTURE_ADT_114", "Age", "DECK_COND_058"}


def bundled_path(name: str) -> Path:
    """Path of a bundled inventory (``"dc-2019"`` → ``bridgefleet/data/DC19.txt``)."""
    try:
        filename = BUNDLED[name]
    except KeyError:
        raise InventoryError(f"unknown bundled inventory {name!r}; bundled: {', '.join(BUNDLED)}") from None
    return Path(str(resources.files("bridgefleet").joinpath("data", filename)))


def _header(path: Path) -> list[str]:
    try:
        with path.open("rb") as fh:
            first = fh.readline(1 << 16)
            fh.seek(0)
            head = fh.read(4000)
    except FileNotFoundError:
        raise InventoryError(f"no such file (bundled inventories: {', '.join(BUNDLED)})", path) from None
    except OSError as exc:
        raise InventoryError(f"cannot read the file ({exc.strerror})", path) from None
    if (not head.strip() or b"\x00" in first or first.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
            or _looks_binary(head)):
        return []  # the reader raises the empty-file, encoding or binary-file error
    text = first.removeprefix(codecs.BOM_UTF8).decode("latin-1")
    return [_clean(f) for f in re.split(r"[,;\t]", text)]


def load_inventory(name_or_path: str | Path, mapping: Mapping[str, Any] | str | Path | None = None
                   ) -> Inventory:
    """Load a bundled inventory or a file, choosing the reader.

    - A bundled name (``"dc-2019"``: FHWA NBI 2019, District of Columbia) → :func:`read_nbi` on the copy
      in the package.
    - With ``mapping`` (dict, YAML path or bundled mapping name such as ``"indiana"``) →
      :func:`read_csv_inventory`.
    - A file whose header has ``RECORD_TYPE_005A``, or a ``.txt`` file → :func:`read_nbi`.
    - A CSV with the GIAMS Indiana header → :func:`read_csv_inventory` with the bundled Indiana mapping.

    Raises:
        InventoryError: unknown file layout without a mapping, and every error of the readers.
    """
    if isinstance(name_or_path, str) and name_or_path in BUNDLED:
        path = bundled_path(name_or_path)
        if mapping is None:
            return read_nbi(path)
    path = Path(name_or_path)
    if mapping is not None:
        return read_csv_inventory(path, mapping)
    header = _header(path)
    if "RECORD_TYPE_005A" in header or path.suffix.lower() == ".txt" or not header:
        return read_nbi(path)
    if set(header) >= _INDIANA_HEADER:
        return read_csv_inventory(path, "indiana")
    named = [h for h in header if h]
    blank = f"; {len(header) - len(named)} blank column names (a multi-line header?)" if len(named) < len(
        header) else ""
    raise InventoryError(
        f"not an NBI file (no RECORD_TYPE_005A column) and no column mapping given: pass mapping= "
        f"(CLI: --mapping M.yaml; see docs/inventory.md); first line names {', '.join(named[:6])}{blank}",
        path, line=1, column=header[0] if header and header[0] else None)


def _quartiles(x: np.ndarray) -> str:
    if len(x) == 0:
        return "-"
    q = np.percentile(x.astype(np.float64), [0, 25, 50, 75, 100])
    return "  ".join(f"{v:>10,.0f}" for v in q)


def summarize(inv: Inventory) -> str:
    """Text summary (the output of ``bridgefleet inventory PATH``); pure, no printing.

    Bridges kept and dropped (reasons counted), urban/rural counts, FHWA Good/Fair/Poor counts (lowest
    rating ≥ 7 / 5–6 / ≤ 4), quartiles (min, 25 %, median, 75 %, max) of deck area (m²), AADT
    (vehicles/day), age (years) and condition rating.
    """
    lines = [f"Inventory: {inv.source}"]
    lines += [f"  {n}" for n in inv.notes]
    lines.append(f"Bridges kept: {inv.kept} (urban {inv.n_urban}, rural {inv.n_rural})")
    lines.append(f"Rows dropped: {len(inv.dropped)}")
    for reason, n in Counter(r.split(":", 1)[0] for _, r in inv.dropped).most_common():
        first = next(line for line, r in inv.dropped if r.split(":", 1)[0] == reason)
        lines.append(f"  {n:>6}  {reason} (first on line {first})")
    for line, r in inv.dropped[:5]:
        lines.append(f"          line {line}: {r}")
    if len(inv.dropped) > 5:
        lines.append(f"          … {len(inv.dropped) - 5} more")
    bands = inv.bands()
    n = max(inv.kept, 1)
    counts = {b: int((bands == b).sum()) for b in ("good", "fair", "poor")}
    lines.append("Condition (FHWA, lowest rating): " + ", ".join(
        f"{b} {c} ({100.0 * c / n:.1f} %)" for b, c in counts.items()))
    for label, mask in (("urban", inv.urban), ("rural", ~inv.urban)):
        if mask.any():
            bb = bands[mask]
            lines.append(f"  {label}: " + ", ".join(f"{b} {int((bb == b).sum())}" for b in counts))
    lines.append(f"{'':22}{'min':>10}  {'25 %':>10}  {'median':>10}  {'75 %':>10}  {'max':>10}")
    for label, arr in (("Deck area (m²)", inv.deck_area), ("AADT (veh/day)", inv.aadt),
                       ("Age (years)", inv.age), ("Condition (0–9)", inv.condition)):
        lines.append(f"{label:<22}{_quartiles(arr)}")
    if inv.kept and len(set(inv.cost_factor.tolist())) == 1:
        lines.append(f"Cost factor: {float(inv.cost_factor[0]):.3f}")
    return "\n".join(lines)

