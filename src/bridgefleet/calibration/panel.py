"""An agency's yearly NBI component-rating panel and its work records → inspection pairs per component.

The layout is Massachusetts' (``ma_bridge_timeseries_2000_2016.csv`` and ``ma_massdot_bridge_projects.csv``,
built by S. Vasserman and V. Bolotnyy, "Bridge Condition Decline and Recovery: A Markov State Approach", StanCon
2018, from MassDOT's historical NBI table and MassDOT bridge-spending records, MIT licence; the ratings are FHWA
NBI items 58 deck, 59 superstructure, 60 substructure, 62 culvert, integers 0–9). One row per bridge and year;
the rows of a bridge are together and their years strictly increase. A rating of 0 is read as missing (the data
set's README), as are ``N`` and blank, and every rating of a row whose ``num_obs_in_year`` is blank (no NBI
record that year). Every refusal is one ``ValueError`` line naming the file, the 1-based line number and the
column.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bridgefleet.textfile import read_text

COMPONENTS = ("deck", "superstructure", "substructure", "culvert")
"""Rating columns in order (NBI items 58, 59, 60, 62)."""
PANEL_COLUMNS = ("bdept_bridge_id", "year", "num_obs_in_year", "year_built", *COMPONENTS, "area_sf_col", "nhs")
WORK_COLUMNS = ("bdept_bridge_id", "project_init_year", "project_end_year", "spending_usd_per_bridge")
OPEN_END = 9999
"""``Works.end_year`` of a project whose end year is blank: its window is taken to stay open (one MassDOT row,
E10014 from 2008, has none), so no pair after its start counts as free of work."""
BIG_RISE = 2
"""A rise of this many rating points or more over a pair with no recorded work is unrecorded work (see
``inspection_pairs``)."""
_RATING = re.compile(r"[0-9](\.0)?")
_INT = re.compile(r"[0-9]+(\.0)?")


@dataclass(frozen=True)
class Panel:
    """A yearly component-rating panel, one entry per bridge-year row of the file.

    Attributes:
        bridge_id: (N,) str, the agency's bridge number.
        year: (N,) int16, calendar year of the row.
        ratings: (N, 4) int8, deck, superstructure, substructure, culvert rating 1–9; −1 = missing, not
            applicable, rated 0 or no record that year.
        deck_area_m2: (N,) float64, deck area in m² (Massachusetts' ``area_sf_col`` holds m² despite its name:
            median 336, largest 54,437); NaN where blank or 0.
        nhs: (N,) bool, on the National Highway System (False where blank).
        year_built: (N,) int16, NBI item 27 as recorded that year (it changes when a bridge is replaced); −1
            where blank or 0.
        bridges: (B,) str, the distinct bridges in order of first row.
        bridge_index: (N,) int32, index of each row's bridge into ``bridges``.
        source: the file read.
    """

    bridge_id: np.ndarray
    year: np.ndarray
    ratings: np.ndarray
    deck_area_m2: np.ndarray
    nhs: np.ndarray
    year_built: np.ndarray
    bridges: np.ndarray
    bridge_index: np.ndarray
    source: str = ""


@dataclass(frozen=True)
class Works:
    """Recorded work (projects), one entry per bridge-project row.

    Attributes:
        bridge_id: (W,) str.
        start_year: (W,) int16, ``project_init_year``.
        end_year: (W,) int16, ``project_end_year`` (``OPEN_END`` where blank).
        usd: (W,) float64, spending on the bridge, USD nominal (NaN where blank).
        source: the file read.
        components: (W, 4) bool, the components (``COMPONENTS`` order) each work touches: only their pairs are
            left out by :func:`inspection_pairs`; None (``read_works``): every component (a MassDOT project is
            the whole bridge's). SNBI ``Works`` codes give it (``calibration.successive``).
        code: (W,) str, the work code (SNBI ``BW03``) where there is one; None otherwise.
    """

    bridge_id: np.ndarray
    start_year: np.ndarray
    end_year: np.ndarray
    usd: np.ndarray
    source: str = ""
    components: np.ndarray | None = None
    code: np.ndarray | None = None


@dataclass(frozen=True)
class Pairs:
    """Consecutive valid ratings of one component of a bridge with no recorded work between them.

    Attributes:
        component: the component's name.
        from_rating, to_rating: (M,) int8, ratings 1–9.
        interval_years: (M,) int16, year_to − year_from ≥ 1.
        year_from: (M,) int16, year of the first rating.
        bridge_index: (M,) int32, index into ``Panel.bridges``.
        age_years: (M,) int16, year_from − year built (row of the first rating); −1 where unknown.
        dropped_big_rise: pairs left out as unrecorded work (a rise ≥ ``BIG_RISE`` outside every project
            window).
        dropped_work: pairs left out because a project window overlaps them.
    """

    component: str
    from_rating: np.ndarray
    to_rating: np.ndarray
    interval_years: np.ndarray
    year_from: np.ndarray
    bridge_index: np.ndarray
    age_years: np.ndarray
    dropped_big_rise: int = 0
    dropped_work: int = 0

    def __len__(self) -> int:
        return len(self.from_rating)

    def select(self, keep: np.ndarray) -> Pairs:
        """The pairs where the (M,) bool mask ``keep`` holds (drop counts carried over unchanged)."""
        return Pairs(self.component, self.from_rating[keep], self.to_rating[keep], self.interval_years[keep],
                     self.year_from[keep], self.bridge_index[keep], self.age_years[keep], self.dropped_big_rise,
                     self.dropped_work)


def _open(path: Path) -> tuple[csv.DictReader, object]:
    """A dict reader of the CSV at ``path`` (UTF-8, else Windows-1252: :func:`bridgefleet.textfile.read_text`)."""
    f = io.StringIO(read_text(path, "cp1252", "a spreadsheet CSV").text, newline="")
    return csv.DictReader(f), f


def _require(path: Path, header: list[str] | None, required: tuple[str, ...]) -> None:
    if header is None:
        raise ValueError(f"{path}: empty file; expected a header row with {', '.join(required)}")
    for c in required:
        if header is None or c not in header:
            raise ValueError(f"{path}: row 1, column {c!r}: required column missing from the header")


def _whole(path: Path, line: int, col: str, text: str, *, blank: int) -> int:
    """An integer cell written as ``2010`` or ``2010.0``; ``blank`` where empty."""
    s = text.strip()
    if s == "":
        return blank
    if not _INT.fullmatch(s):
        raise ValueError(f"{path}: row {line}, column {col!r}: {s!r} is not a whole number")
    return int(s.split(".")[0])


def read_panel(path: str | Path) -> Panel:
    """Read a yearly component-rating panel in the Massachusetts layout.

    Args:
        path: CSV with columns ``bdept_bridge_id, year, num_obs_in_year, year_built, deck, superstructure,
            substructure, culvert, area_sf_col, nhs`` (others ignored); ratings written ``7``, ``7.0``, ``N`` or
            blank.

    Returns:
        Panel (arrays described there).

    Raises:
        ValueError (one line: file, row, column): a required column missing; a rating other than 0–9 (``7`` or ``7.0``),
            ``N`` or blank (``6.5``, ``1e0``, ``+6`` refused); a year, year built or ``nhs`` that is not a whole number
            (``nhs`` 0/1); an area that is not a number ≥ 0; a bridge-year given twice or a year not after the bridge's
            previous one; a bridge's rows not together; the deck, superstructure or substructure with no rating on any
            row (the culvert may have none: an agency without culverts); an empty file; no rows.
    """
    path = Path(path)
    reader, f = _open(path)
    ids: list[str] = []
    years: list[int] = []
    ratings: list[list[int]] = []
    area: list[float] = []
    nhs: list[bool] = []
    built: list[int] = []
    first_row: dict[str, int] = {}
    with f:  # type: ignore[attr-defined]
        _require(path, reader.fieldnames, PANEL_COLUMNS)
        line = 1
        for row in reader:
            line = reader.line_num
            bid = (row["bdept_bridge_id"] or "").strip()
            if not bid:
                raise ValueError(f"{path}: row {line}, column 'bdept_bridge_id': blank bridge id")
            year = _whole(path, line, "year", row["year"] or "", blank=-1)
            if not 1900 <= year <= 2100:
                raise ValueError(f"{path}: row {line}, column 'year': {row['year']!r} is not a year 1900–2100")
            if ids and ids[-1] == bid:
                if year == years[-1]:
                    raise ValueError(f"{path}: row {line}, column 'year': bridge {bid} year {year} given twice")
                if year < years[-1]:
                    raise ValueError(f"{path}: row {line}, column 'year': bridge {bid} year {year} after "
                                     f"{years[-1]} (out of order)")
            elif bid in first_row:
                raise ValueError(f"{path}: row {line}, column 'bdept_bridge_id': bridge {bid}'s rows are not "
                                 f"together (it appeared at row {first_row[bid]})")
            else:
                first_row[bid] = line
            recorded = (row["num_obs_in_year"] or "").strip() != ""
            r = []
            for c in COMPONENTS:
                s = (row[c] or "").strip()
                if s in ("", "N"):
                    r.append(-1)
                    continue
                if not _RATING.fullmatch(s):
                    raise ValueError(f"{path}: row {line}, column {c!r}: rating {s!r} is not a whole number 0–9 "
                                     "(7 or 7.0), 'N' or blank")
                v = int(s[0])
                r.append(v if v > 0 and recorded else -1)
            a_text = (row["area_sf_col"] or "").strip()
            try:
                a = float(a_text) if a_text else float("nan")
            except ValueError:
                a = -1.0
            if not (a >= 0 or np.isnan(a)) or a_text.lower() in ("nan", "inf", "infinity"):
                raise ValueError(f"{path}: row {line}, column 'area_sf_col': {a_text!r} is not an area ≥ 0 (m²)")
            n = _whole(path, line, "nhs", row["nhs"] or "", blank=0)
            if n not in (0, 1):
                raise ValueError(f"{path}: row {line}, column 'nhs': {row['nhs']!r} is not 0 or 1")
            yb = _whole(path, line, "year_built", row["year_built"] or "", blank=-1)
            ids.append(bid)
            years.append(year)
            ratings.append(r)
            area.append(a if a > 0 else float("nan"))
            nhs.append(n == 1)
            built.append(yb if yb > 0 else -1)
    if not ids:
        raise ValueError(f"{path}: row 2, column 'bdept_bridge_id': no data rows")
    return make_panel(ids, years, ratings, area, nhs, built, str(path),
                      lambda c: f"{path}: rows 2–{line}, column {c!r}")


def make_panel(bridge_id: Sequence[str], year: Sequence[int], ratings: Sequence[Sequence[int]],
               deck_area_m2: Sequence[float], nhs: Sequence[bool], year_built: Sequence[int], source: str,
               where: Callable[[str], str]) -> Panel:
    """A :class:`Panel` of rows already checked one by one (``read_panel``, ``calibration.successive``).

    Args:
        bridge_id, year, deck_area_m2, nhs, year_built: (N,) per row as :class:`Panel` holds them (NaN area, −1
            year built where unknown); a bridge's rows together, its years strictly increasing (not checked
            here).
        ratings: (N, 4) per row, 1–9 or −1 (missing).
        source: what was read, for ``Panel.source``.
        where: a component's name → where its ratings are, for the refusal (``"FILE: rows 2–9, column 'deck'"``).

    Returns:
        Panel, ``bridges`` in order of first row.

    Raises:
        ValueError (one line, ``where(component)`` first): the deck, superstructure or substructure with no
        rating 1–9 on any row (the culvert may have none: an agency without culverts).
    """
    rat = np.asarray(ratings, dtype=np.int8).reshape(len(bridge_id), len(COMPONENTS))
    for k, c in enumerate(COMPONENTS[:3]):  # an agency may have no culverts: their rates are then not fitted
        if not (rat[:, k] >= 0).any():
            raise ValueError(f"{where(c)}: no rating 1–9 on any row")
    bridges, first, inv = np.unique(np.asarray(bridge_id, dtype=str), return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return Panel(bridge_id=np.asarray(bridge_id, dtype=str), year=np.asarray(year, dtype=np.int16), ratings=rat,
                 deck_area_m2=np.asarray(deck_area_m2, dtype=np.float64), nhs=np.asarray(nhs, dtype=bool),
                 year_built=np.asarray(year_built, dtype=np.int16), bridges=bridges[order],
                 bridge_index=rank[inv].astype(np.int32), source=source)


def read_works(path: str | Path, panel: Panel | None = None) -> Works:
    """Read an agency's work records (MassDOT projects layout).

    Args:
        path: CSV with columns ``bdept_bridge_id, project_init_year, project_end_year, spending_usd_per_bridge``
            (others ignored); years written ``2010`` or ``2010.0``; a blank end year is an open window
            (``OPEN_END``).
        panel: when given, every bridge must be one of its bridges.

    Returns:
        Works (arrays described there).

    Raises:
        ValueError (one line: file, row, column): a required column missing; a year that is not a whole number 1900–2100
            or a blank start year; an end year before the start year; spending that is not a number ≥ 0; a bridge the
            panel does not have.
    """
    path = Path(path)
    reader, f = _open(path)
    known = set(panel.bridges.tolist()) if panel is not None else None
    ids: list[str] = []
    start: list[int] = []
    end: list[int] = []
    usd: list[float] = []
    with f:  # type: ignore[attr-defined]
        _require(path, reader.fieldnames, WORK_COLUMNS)
        for row in reader:
            line = reader.line_num
            bid = (row["bdept_bridge_id"] or "").strip()
            if not bid:
                raise ValueError(f"{path}: row {line}, column 'bdept_bridge_id': blank bridge id")
            if known is not None and bid not in known:
                raise ValueError(f"{path}: row {line}, column 'bdept_bridge_id': bridge {bid} is not in the panel "
                                 f"{panel.source}")  # type: ignore[union-attr]
            s = _whole(path, line, "project_init_year", row["project_init_year"] or "", blank=-1)
            if not 1900 <= s <= 2100:
                raise ValueError(f"{path}: row {line}, column 'project_init_year': {row['project_init_year']!r} "
                                 "is not a year 1900–2100")
            e = _whole(path, line, "project_end_year", row["project_end_year"] or "", blank=OPEN_END)
            if e != OPEN_END and not s <= e <= 2100:
                raise ValueError(f"{path}: row {line}, column 'project_end_year': {row['project_end_year']!r} is "
                                 f"not a year from the start year {s} to 2100")
            u_text = (row["spending_usd_per_bridge"] or "").strip()
            try:
                u = float(u_text) if u_text else float("nan")
            except ValueError:
                u = -1.0
            if not (u >= 0 or np.isnan(u)) or u_text.lower() in ("nan", "inf", "infinity"):
                raise ValueError(f"{path}: row {line}, column 'spending_usd_per_bridge': {u_text!r} is not USD ≥ 0")
            ids.append(bid)
            start.append(s)
            end.append(e)
            usd.append(u)
    return Works(bridge_id=np.asarray(ids, dtype=str), start_year=np.asarray(start, dtype=np.int16),
                 end_year=np.asarray(end, dtype=np.int16), usd=np.asarray(usd, dtype=np.float64), source=str(path))


def _component(component: str | int) -> int:
    if isinstance(component, str):
        if component not in COMPONENTS:
            raise ValueError(f"component {component!r}: not one of {', '.join(COMPONENTS)}")
        return COMPONENTS.index(component)
    if not 0 <= component < len(COMPONENTS):
        raise ValueError(f"component {component}: not an index 0–{len(COMPONENTS) - 1}")
    return int(component)


def inspection_pairs(panel: Panel, works: Works, component: str | int, *, big_rise: str = "drop") -> Pairs:
    """Consecutive valid ratings of one component of each bridge with no recorded work overlapping them.

    A pair joins a bridge's valid rating in year a to its next valid rating of the same component in year b
    (b − a ≥ 1: a year with no record or a missing rating in between lengthens the interval). It is left out
    when a project of the bridge has a window [start_year, end_year] overlapping (a, b], i.e.
    start_year ≤ b and end_year > a, and touches the component (``Works.components``; every component where
    that is None).

    Rises of ≥ ``BIG_RISE`` (2) points outside every project window: with ``big_rise="drop"`` (the default) the
    pair is left out as unrecorded work. Evidence, Massachusetts 2000–2016 (``benchmarks/fit_deterioration_ma.py``
    prints it), deck / superstructure / substructure: such rises are 0.28 / 0.29 / 0.44 % of no-work yearly pairs
    against 15.2 / 14.9 / 12.6 % of yearly pairs inside a project window; they persist (the next year's rating is
    at or above the raised one in 89 / 95 / 95 %), 44 / 42 / 26 % of them come with a changed year built or
    reconstructed (items 27 / 106; 1 % of unchanged pairs), and 81–85 % are on bridges with no MassDOT project
    at all (work by other owners, absent from the projects file). They are work, not inspector noise; kept, a
    chain whose upward rate stands for rises without work would take them as two or more upward steps and
    inflate that rate. Rises of 1 are kept (0.77 / 0.66 / 0.88 % of no-work yearly pairs; they persist too, 95 /
    96 / 93 %, and 4–8 % change item 27/106): the fitted ``up`` rate carries them. ``big_rise="keep"`` keeps the
    rises of ≥ 2 as well.

    Args:
        panel: from ``read_panel``.
        works: from ``read_works`` (bridges not in the panel are ignored here; ``read_works(..., panel)``
            refuses them).
        component: name in ``COMPONENTS`` or its index 0–3.
        big_rise: ``"drop"`` or ``"keep"``.

    Returns:
        Pairs (arrays described there), in panel row order.

    Raises:
        ValueError: an unknown component or ``big_rise``.
    """
    k = _component(component)
    if big_rise not in ("drop", "keep"):
        raise ValueError(f"big_rise {big_rise!r}: not 'drop' or 'keep'")
    r = panel.ratings[:, k]
    valid = np.flatnonzero(r >= 0)
    i0, i1 = valid[:-1], valid[1:]
    same = panel.bridge_index[i0] == panel.bridge_index[i1]
    i0, i1 = i0[same], i1[same]
    a = panel.year[i0].astype(np.int32)
    b = panel.year[i1].astype(np.int32)
    bi = panel.bridge_index[i0]
    # work overlap: for each bridge its project windows
    pos = {name: j for j, name in enumerate(panel.bridges.tolist())}
    wb = np.asarray([pos.get(x, -1) for x in works.bridge_id.tolist()], dtype=np.int64)
    worked = np.zeros(len(i0), dtype=bool)
    if len(wb):
        order = np.argsort(bi, kind="stable")
        lo = np.searchsorted(bi[order], wb, side="left")
        hi = np.searchsorted(bi[order], wb, side="right")
        for w in range(len(wb)):
            if wb[w] < 0 or lo[w] == hi[w] or (works.components is not None and not works.components[w, k]):
                continue
            rows = order[lo[w]:hi[w]]
            hit = (works.start_year[w] <= b[rows]) & (works.end_year[w].astype(np.int32) > a[rows])
            worked[rows[hit]] = True
    fr = r[i0]
    to = r[i1]
    big = (~worked) & (to.astype(np.int16) - fr >= BIG_RISE)
    keep = ~worked & (~big if big_rise == "drop" else True)
    yb = panel.year_built[i0].astype(np.int32)
    age = np.where(yb > 0, a - yb, -1)
    return Pairs(component=COMPONENTS[k], from_rating=fr[keep], to_rating=to[keep],
                 interval_years=(b - a)[keep].astype(np.int16), year_from=a[keep].astype(np.int16),
                 bridge_index=bi[keep].astype(np.int32), age_years=age[keep].astype(np.int16),
                 dropped_big_rise=int(big.sum()) if big_rise == "drop" else 0, dropped_work=int(worked.sum()))


def joint_pairs(panel: Panel, works: Works, *, last_year: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A bridge's deck, superstructure and substructure a year apart, with no recorded work overlapping the year
    and no component rising: how the three move together (``calibration.markov.fit_coupling`` reads them).

    Each component's pair is :func:`inspection_pairs`' (so the same work rule applies); a bridge-year counts when
    all three components have a one-year pair from it. ``last_year``: pairs that end by then only.

    Returns:
        (x0, x1): int64 (M, 3) ratings in the first and the second year.
    """
    keys, tos = [], []
    for k in range(3):
        p = inspection_pairs(panel, works, k)
        one = p.interval_years == 1
        if last_year is not None:
            one &= p.year_from.astype(np.int32) + 1 <= last_year
        key = p.bridge_index[one].astype(np.int64) * 10_000 + p.year_from[one].astype(np.int64)
        keys.append(key)
        tos.append((p.from_rating[one].astype(np.int64), p.to_rating[one].astype(np.int64)))
    common = np.intersect1d(np.intersect1d(keys[0], keys[1]), keys[2])
    x0 = np.empty((len(common), 3), np.int64)
    x1 = np.empty((len(common), 3), np.int64)
    for k in range(3):
        at = np.searchsorted(keys[k], common) if np.all(np.diff(keys[k]) > 0) else \
            np.argsort(keys[k])[np.searchsorted(np.sort(keys[k]), common)]
        x0[:, k], x1[:, k] = tos[k][0][at], tos[k][1][at]
    keep = (x1 <= x0).all(axis=1)
    return x0[keep], x1[keep]
