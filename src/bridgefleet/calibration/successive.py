"""Successive yearly inventories of one state (NBI Coding-Guide or SNBI files) → the component-rating panel and the
work records the component fit reads (``calibration.panel.Panel`` / ``Works``; ``bridgefleet calibrate
--inventories``).

Each file is one inspection year of one state (or of several, where the file holds several), read by the
inventory readers (``inventory.nbi.read_nbi``, ``inventory.snbi.read_snbi``): its year is theirs — SNBI: the latest
inspection completion date ``BIE03`` (else ``BIE02``) in the file; NBI: the ``YEAR`` column, else the year in the
file name (``DC19.txt`` → 2019), else the latest inspection date (item 90) — or the one given. Its bridges are
those the reader keeps (the records ``bridgefleet inventory FILE`` counts). Bridges are matched across files on
(state code, bridge number): NBI items 1 and 8, SNBI ``BL01`` and ``BID01`` (leading zeros of the number kept,
of the state code dropped, so an NBI 2025 file and an SNBI 2026 file of the state match).

A bridge-year row holds the file's ratings as written (the inventory's component slots hold an ``N`` at 9, so
the ratings are read again from the file): deck, superstructure, substructure, culvert = NBI items 58, 59, 60, 62
or SNBI ``BC01``–``BC04``, ``N`` and 0 read as missing (−1), as ``read_panel`` reads them. A bridge whose
inspection date (SNBI: its latest ``Inspections`` ``BIE03``, else ``BIE02``; NBI: item 90, month and year) is the
same as in the previous file was not inspected again: its ratings are that inspection's, copied, and the row
reads as no record that year (all −1, as a blank ``num_obs_in_year`` does), so a bridge inspected every two
years gives one two-year pair, not a copied one-year stay and a one-year move.

Work records: the ``Works`` entries of the SNBI files (``BW02`` year, ``BW03`` code), the union over the files
(each file repeats a bridge's history). Each is a one-year window [year, year], as a MassDOT project started and
ended that year: it leaves out the pair that runs from an earlier year into that year (work later in that year than
the bridge's inspection shows in the next pair, not left out). It touches the components its code names (SNBI
item B.W.03, FHWA-HIF-22-017; ``docs/fleet-model.md``): ``DK*`` deck, ``SP*`` superstructure, ``SB*``
substructure, ``CU*`` culvert, ``BR01`` (replacement) every component, ``IP1``–``IP4`` (widened, raised,
strengthened, seismic retrofit) deck, superstructure and substructure (no component is named; leaving a pair out
is the safe side). Bearings, joints, railings, scour countermeasures and channel work (``BG``, ``JT``, ``RT``,
``SC``, ``CP``, ``CH``) are none of the rated components: counted, left out. ``0`` is no work. A temporary or
unknown code is work of unknown kind: every component (counted). NBI Coding-Guide files have no work records:
when no SNBI record carries a ``Works`` entry the fit runs without work records (said in :attr:`Successive.lines`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from bridgefleet.calibration.component_fit import ComponentFit, _rows_text, fit_component_model
from bridgefleet.calibration.panel import COMPONENTS, Panel, Works, make_panel
from bridgefleet.inventory.load import _is_json
from bridgefleet.inventory.model import Inventory, InventoryError
from bridgefleet.inventory.nbi import read_nbi
from bridgefleet.inventory.rows import _clean, _nbi_code, _read_rows
from bridgefleet.inventory.snbi import RATING_TAGS, read_snbi, snbi_records
from bridgefleet.outputs import counted

NBI_ITEMS = ("DECK_COND_058", "SUPERSTRUCTURE_COND_059", "SUBSTRUCTURE_COND_060", "CULVERT_COND_062")
"""NBI Coding-Guide rating items, in ``COMPONENTS`` order (SNBI: ``snbi.RATING_TAGS``)."""
WHERE = {c: f"{t} / item {n[-3:]}" for c, t, n in zip(COMPONENTS, RATING_TAGS, NBI_ITEMS, strict=True)}
"""A component's SNBI tag and NBI item, for refusals."""
ALL = (True, True, True, True)
WORK_CODES: tuple[tuple[str, tuple[bool, bool, bool, bool], str], ...] = (
    (r"BR01", ALL, "replacement"),
    (r"DK[1-7]", (True, False, False, False), "deck"),
    (r"SP[1-7]", (False, True, False, False), "superstructure"),
    (r"SB[1-7]", (False, False, True, False), "substructure"),
    (r"CU[1-7]", (False, False, False, True), "culvert"),
    (r"IP[1-4]", (True, True, True, False), "improvement"),
    (r"BG[12]|JT[12]|RT[12]|SC[12]|CP[12]|CH1", (False, False, False, False), "other"),
)
"""SNBI ``BW03`` work codes (a full match, upper case) → the components (``COMPONENTS`` order) they touch, and the
group they are counted in; another code (temporary ``…-T``, unknown) touches every component ("unknown")."""


@dataclass(frozen=True)
class Successive:
    """Successive inventories read as a panel.

    Attributes:
        panel: the bridge-year rows (``calibration.panel.Panel``), bridges in order of first appearance, a bridge's
            rows in year order; ``source`` the files, comma-separated, in year order.
        works: the SNBI ``Works`` entries of the panel's bridges (``Works.components`` and ``code`` set; ``usd``
            NaN: SNBI records no cost), or None: no SNBI record carries one (NBI Coding-Guide files have none).
        files: (F,) the files in year order. years: (F,) their inspection years, increasing. kinds: (F,) "NBI" or
            "SNBI".
        states: the state codes (leading zeros dropped) of the panel's bridges, sorted.
        lines: what was read, as printed by ``bridgefleet calibrate --inventories`` (one string per line).
    """

    panel: Panel
    works: Works | None
    files: tuple[str, ...]
    years: tuple[int, ...]
    kinds: tuple[str, ...]
    states: tuple[str, ...]
    lines: list[str] = field(default_factory=list)


@dataclass
class _Row:
    key: tuple[str, str]
    ratings: list[int]
    area_m2: float
    nhs: bool
    built: int
    inspected: str
    works: list[tuple[Any, Any]]


def _state(code: str) -> str:
    s = code.strip()
    return str(int(s)) if s.isdigit() else s


def _rating(value: Any, tag: str) -> int:
    """A rating as the panel holds it: 1–9, −1 for N, blank, 0 (the reader has checked the code)."""
    r = _nbi_code("" if value is None else str(value), tag)
    return -1 if r is None or r == 0 else int(r)


def _date(value: Any) -> str:
    m = re.fullmatch(r"((?:19|20)[0-9]{2})-?([01][0-9])-?([0-3][0-9])", str(value or "").strip())
    return "".join(m.groups()) if m else ""


def _read(path: Path, year: int | None) -> tuple[Inventory, str, list[_Row]]:
    """One file: its inventory, its kind and a row per kept bridge (ratings read again from the file)."""
    try:
        kind = "SNBI" if _is_json(path) else "NBI"
        inv = read_snbi(path, year=year) if kind == "SNBI" else read_nbi(path, year=year)
    except InventoryError as exc:
        m = re.search(r"cannot tell the inventory year \((.*)\)", str(exc))
        if m:
            raise ValueError(f"{path}: cannot tell its inspection year ({m.group(1)}): give it (years=; bridgefleet "
                             "calibrate --years)") from None
        raise ValueError(f"{exc} (read as an {kind} inventory: successive inventories are NBI Coding-Guide or SNBI "
                         "files)") from None
    built = np.rint(inv.year - inv.age.astype(np.float64)).astype(int) if inv.year is not None else None
    rows: list[_Row] = []
    if kind == "SNBI":
        kept = {line: i for i, line in enumerate(inv.line.tolist())}
        found: dict[int, _Row] = {}
        for line, rec in enumerate(snbi_records(path, "reading ratings and works"), start=1):  # streamed again
            i = kept.get(line)
            if i is None:
                continue
            dates = [_date(ev.get("BIE03")) or _date(ev.get("BIE02")) for ev in rec.get("Inspections") or []
                     if isinstance(ev, dict)]
            works = [(w.get("BW02"), w.get("BW03")) for w in rec.get("Works") or [] if isinstance(w, dict)]
            found[i] = _Row((_state(inv.state[i]), str(rec["BID01"]).strip()),
                            [_rating(rec.get(t), t) for t in RATING_TAGS], float(inv.deck_area[i]),
                            bool(inv.nhs[i] == 1.0), int(built[i]) if built is not None else -1,
                            max(dates, default=""), works)
        rows = [found[i] for i in range(len(kept))]
    else:
        header, records, _ = _read_rows(path, quotechar="'", legacy="latin-1", what="the NBI", one_line=True)
        col = {name: k for k, name in enumerate(header)}
        kept = {line: i for i, line in enumerate(inv.line.tolist())}
        found: dict[int, list[str]] = {}

        def get(f: list[str], name: str) -> str:
            k = col.get(name)
            return "" if k is None or k >= len(f) else f[k]

        for line, f in records:  # the kept rows' items only (the reader may stream the rows)
            if line in kept:
                found[kept[line]] = [_clean(get(f, n)) for n in ("STRUCTURE_NUMBER_008", "DATE_OF_INSPECT_090",
                                                                 *NBI_ITEMS)]
        for i in range(len(kept)):
            number, date, *items = found[i]
            rows.append(_Row((_state(inv.state[i]), number), [_rating(v, c) for v, c in zip(items, NBI_ITEMS,
                                                                                                strict=True)],
                             float(inv.deck_area[i]), bool(inv.nhs[i] == 1.0),
                             int(built[i]) if built is not None else -1,
                             date if re.fullmatch("[0-9]{3,4}", date) else "", []))
    return inv, kind, rows


def _year_note(inv: Inventory) -> str:
    note = next((n for n in inv.notes if n.startswith("inventory year")), "")
    return note[note.find("(") + 1:-1] if "(" in note else "given"


def _touches(code: str) -> tuple[tuple[bool, bool, bool, bool], str]:
    for pattern, touched, group in WORK_CODES:
        if re.fullmatch(pattern, code):
            return touched, group
    return ALL, "unknown"


def _work_year(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    y = value if isinstance(value, int) else int(value.strip()) if (
        isinstance(value, str) and re.fullmatch(r"[0-9]{4}", value.strip())) else None
    return y if y is not None and 1900 <= y <= 2100 else None


def read_successive(paths: Sequence[str | Path], years: Sequence[int] | None = None) -> Successive:
    """Read successive yearly inventories of one state as a component-rating panel and its work records.

    Args:
        paths: two or more NBI Coding-Guide (delimited text) or SNBI (JSON) files, one inspection year each, in any
            order.
        years: each file's inspection year, in the order of ``paths``; default each file's own (module docstring).

    Returns:
        Successive (its panel and works as ``read_panel`` / ``read_works`` give them; see the module docstring).

    Raises:
        ValueError (one line naming the file or files): fewer than two files; a file named twice; ``years`` not one
            whole year 1900–2100 per file; a file that is not an NBI or SNBI inventory (the reader's refusal, naming its
            line and column); a file whose year cannot be told (give ``years``); two files of the same year (a
            bridge-year given twice: one of the bridges they share is named); a file that shares no bridge (state +
            bridge number) with the others (different states: their codes are named); the deck, superstructure or
            substructure with no rating 1–9 in any file.
    """
    paths = [Path(p) for p in paths]
    if len(paths) < 2:
        raise ValueError(f"{', '.join(map(str, paths)) or 'no file'}: successive inventories need two files or "
                         "more (two inspection years of one state), one file per year")
    seen: dict[Path, Path] = {}
    for p in paths:
        real = p.resolve()
        if real in seen:
            raise ValueError(f"{p}: named twice ({seen[real]}): give each year's file once")
        seen[real] = p
    if years is not None and (len(years) != len(paths) or not all(
            isinstance(y, int) and not isinstance(y, bool) and 1900 <= y <= 2100 for y in years)):
        raise ValueError(f"years {list(years)}: give one inspection year 1900–2100 per file ({len(paths)} files)")
    read = [(p, *_read(p, None if years is None else years[k])) for k, p in enumerate(paths)]
    read.sort(key=lambda r: r[1].year)
    for (p0, inv0, _, rows0), (p1, inv1, _, rows1) in pairwise(read):
        if inv0.year == inv1.year:
            both = sorted({r.key for r in rows0} & {r.key for r in rows1})
            shared = (f": bridge {both[0][1]} of state {both[0][0]} given twice for {inv0.year}" if both else "")
            raise ValueError(f"{p0} and {p1} are both inspection year {inv0.year} ({_year_note(inv0)}; "
                             f"{_year_note(inv1)}){shared}: give one file per year")
    count: dict[tuple[str, str], int] = {}
    for _, _, _, rows in read:
        for r in rows:
            count[r.key] = count.get(r.key, 0) + 1
    for p, _, _, rows in read:
        if not any(count[r.key] > 1 for r in rows):
            mine = sorted({r.key[0] for r in rows})
            theirs = sorted({r.key[0] for q, _, _, rs in read if q != p for r in rs})
            why = (f"different states: {p} is state {', '.join(mine)}, the others {', '.join(theirs)}"
                   if set(mine).isdisjoint(theirs) else f"state {', '.join(mine)}")
            raise ValueError(f"{p} shares no bridge with the other files ({why}): successive files of one state "
                             "are matched on state code + bridge number")
    states = sorted({r.key[0] for *_, rows in read for r in rows})
    several = len(states) > 1

    def name(key: tuple[str, str]) -> str:
        return f"{key[0]}:{key[1]}" if several else key[1]

    by_bridge: dict[tuple[str, str], list[tuple[int, _Row]]] = {}
    for _, inv, _, rows in read:
        for r in rows:
            by_bridge.setdefault(r.key, []).append((int(inv.year), r))
    ids: list[str] = []
    yr: list[int] = []
    ratings: list[list[int]] = []
    area: list[float] = []
    nhs: list[bool] = []
    built: list[int] = []
    carried = 0
    for key, rows_of in by_bridge.items():  # in order of first appearance, files in year order
        previous = ""
        for y, r in rows_of:
            same = r.inspected != "" and r.inspected == previous
            carried += same
            previous = r.inspected
            ids.append(name(key))
            yr.append(y)
            ratings.append([-1] * len(COMPONENTS) if same else r.ratings)
            area.append(r.area_m2 if r.area_m2 > 0 else float("nan"))
            nhs.append(r.nhs)
            built.append(r.built if r.built > 0 else -1)
    files = tuple(str(p) for p, *_ in read)
    source = ", ".join(files)
    panel = make_panel(ids, yr, ratings, area, nhs, built, source,
                       lambda c: f"{source}: every bridge-year, {WHERE[c]} ({c})")
    kinds = tuple(k for _, _, k, _ in read)
    lines = ["inventories, matched on state code + bridge number, in year order:"]
    for p, inv, kind, rows in read:
        dropped = f"; {len(inv.dropped)} records not kept (bridgefleet inventory {p})" if inv.dropped else ""
        lines.append(f"  {inv.year}  {p}: {kind}, state {', '.join(sorted({r.key[0] for r in rows}))}, "
                     f"{counted(len(rows), 'bridge')} (year {_year_note(inv)}){dropped}")
    matched = sum(n > 1 for n in count.values())
    lines.append(f"panel: {counted(len(panel.bridges), 'bridge')}, {counted(len(ids), 'bridge-year')}; "
                 f"{counted(matched, 'bridge')} in two files or more; {counted(carried, 'bridge-year')} with the "
                 "previous file's inspection date (not inspected again: read as no new rating)")
    works, work_lines = _works(read, name)
    return Successive(panel, works, files, tuple(int(inv.year) for _, inv, _, _ in read), kinds, tuple(states),
                      lines + work_lines)


def _works(read: list[tuple[Path, Inventory, str, list[_Row]]], name: Any) -> tuple[Works | None, list[str]]:
    """The SNBI files' Works entries (union over the files) and the lines saying what was read."""
    nbi = [str(p) for p, _, kind, _ in read if kind == "NBI"]
    snbi = [str(p) for p, _, kind, _ in read if kind == "SNBI"]
    entries: dict[tuple[str, int, str], tuple[bool, bool, bool, bool]] = {}
    groups: dict[str, int] = {}
    bad_year = 0
    any_entry = False
    for _, _, kind, rows in read:
        for r in rows if kind == "SNBI" else ():
            for y_raw, code_raw in r.works:
                any_entry = True
                code = "" if code_raw is None else str(code_raw).strip().upper()
                if code in ("", "0"):
                    continue
                y = _work_year(y_raw)
                if y is None:
                    bad_year += 1
                    continue
                k = (name(r.key), y, code)
                if k in entries:
                    continue
                touched, group = _touches(code)
                groups[group] = groups.get(group, 0) + 1
                if any(touched):
                    entries[k] = touched
    if not any_entry:
        why = "; ".join(x for x in (f"NBI Coding-Guide files have none: {', '.join(nbi)}" if nbi else "",
                                    f"no record of the SNBI files carries a Works entry: {', '.join(snbi)}" if snbi
                                    else "") if x)
        return None, [f"work records: none ({why}); every pair counts but those rising two levels or more (read as "
                      "unrecorded work), and the bundled model's treatments are kept"]
    keys = sorted(entries)
    works = Works(bridge_id=np.asarray([k[0] for k in keys], dtype=str),
                  start_year=np.asarray([k[1] for k in keys], dtype=np.int16),
                  end_year=np.asarray([k[1] for k in keys], dtype=np.int16),
                  usd=np.full(len(keys), np.nan), source=", ".join(snbi),
                  components=np.asarray([entries[k] for k in keys], dtype=bool).reshape(-1, len(COMPONENTS)),
                  code=np.asarray([k[2] for k in keys], dtype=str))
    order = ("deck", "superstructure", "substructure", "culvert", "replacement", "improvement", "unknown")
    by_code = ", ".join(f"{g} {groups.get(g, 0)}" for g in order)
    lines = [f"work records: {len(keys):,} distinct Works entr{'y' if len(keys) == 1 else 'ies'} (bridge, year, code) "
             "of the SNBI files, by code: "
             f"{by_code} (improvement IP1-IP4: deck, superstructure, substructure; unknown or temporary codes: "
             "every component); each a window [year, year]"]
    left = [f"{groups['other']} of bearings, joints, railings, scour or channel (none of the rated components)"
            if groups.get("other") else "", f"{bad_year} without a year BW02 1900-2100" if bad_year else ""]
    lines += [f"  left out: {x}" for x in left if x]
    if nbi:
        lines.append(f"  NBI Coding-Guide files {', '.join(nbi)} have none: their years' work is what the SNBI files' "
                     "Works history holds")
    return works, lines


def fit_successive(successive: Successive, **options: Any) -> ComponentFit:
    """Fit the component model to successive inventories (``component_fit.fit_component_model``, ``options``
    passed on; its name ``state-SS-FIRST-LAST``, its sources the files).

    Returns:
        ComponentFit.

    Raises:
        ValueError: one line naming the files (``fit_component_model``'s refusals, e.g. too few pairs to fit).
    """
    s = successive
    kinds = "/".join(sorted(set(s.kinds)))
    options.setdefault("name", f"state-{'+'.join(s.states)}-{s.years[0]}-{s.years[-1]}")
    options.setdefault("data_source", f"{kinds} files of inspection years {', '.join(map(str, s.years))}, "
                                      f"matched on state + bridge number ({s.panel.source})")
    options.setdefault("works_name", "SNBI Works")
    try:
        return fit_component_model(s.panel, s.works, **options)
    except ValueError as exc:
        raise ValueError(str(exc).replace(_rows_text(s.panel), f"{s.panel.source} ({len(s.panel.year):,} "
                                                               "bridge-years)")) from None
