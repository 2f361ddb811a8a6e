"""Inspection histories → do-nothing pairs (consecutive inspections of a bridge with no work between them).

A history is a CSV table with one row per inspection: bridge, year, rating (0–9, NBI items 58–60) or a
condition index with its mapping onto ratings (Ontario's Bridge Condition Index 0–100: 100 → 9, 70 → 7,
60 → 5, 0 → 0, so MTO's bands good ≥ 70 / fair 60–70 / poor < 60 coincide with FHWA's), optionally the year
built and a work flag (1 where work was done since the previous inspection). A rise of more than
``rise_tolerance`` index points also counts as work. Column names and the scale come from a mapping YAML.
"""

from __future__ import annotations

import csv
import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bridgefleet.config import ConfigError, read_yaml
from bridgefleet.inventory.rows import named_twice
from bridgefleet.textfile import read_text

YEARS = (1900, 2100)
"""The inspection years a history may hold: calendar years (a year 5 or 4005 is a typo or another unit)."""
YSM_CAP = 15.0
"""Years since maintenance where unknown, and the cap of known ones (as for inventories), years."""
BUNDLED_MAPPINGS = {"ontario-bci": Path(__file__).with_name("ontario-bci.yaml")}


@dataclass
class HistoryMapping:
    """How to read a history table.

    Attributes:
        columns: CSV column of each field: ``bridge``, ``year``, ``rating`` required; ``built``, ``work``
            optional.
        scale: (index, rating) points of a piecewise-linear map of the recorded value onto ratings (None:
            ratings 0–9 recorded directly).
        value_range: (low, high) of a valid recorded value.
        rise_tolerance: a rise above this (recorded units) between two inspections counts as work.
        missing: recorded values that stand for "not recorded" (Ontario's BCI 0.0 is such a placeholder: 219
            bridges have one between ordinary values, e.g. 91 → 0.0 → 85); a row holding one is skipped, as is a
            blank rating, so the pair spans the gap.
    """

    columns: dict[str, str] = field(default_factory=lambda: {"bridge": "bridge", "year": "year", "rating": "rating"})
    scale: list[tuple[float, float]] | None = None
    value_range: tuple[float, float] = (0.0, 9.0)
    rise_tolerance: float = 0.0
    missing: tuple[float, ...] = ()

    def to_rating(self, value: np.ndarray) -> np.ndarray:
        """Ratings (rating points, float64) of recorded values."""
        if self.scale is None:
            return np.asarray(value, dtype=np.float64)
        x, y = zip(*self.scale, strict=True)
        return np.interp(value, x, y)

    def slope(self, value: np.ndarray) -> np.ndarray:
        """Rating points per recorded unit at ``value`` (1 for ratings)."""
        if self.scale is None:
            return np.ones_like(np.asarray(value, dtype=np.float64))
        x, y = (np.asarray(v, dtype=np.float64) for v in zip(*self.scale, strict=True))
        k = np.clip(np.searchsorted(x, value, side="right") - 1, 0, len(x) - 2)
        return (y[k + 1] - y[k]) / (x[k + 1] - x[k])

    @classmethod
    def load(cls, name_or_path: str | None) -> HistoryMapping:
        """A mapping YAML (``columns:``, ``scale:``, ``range:``, ``rise_tolerance:``, ``missing:``) or a bundled
        name.

        Raises:
            ConfigError: naming the file and the key.
        """
        if name_or_path is None:
            return cls()
        path = BUNDLED_MAPPINGS.get(name_or_path, Path(name_or_path))
        if not path.is_file():
            raise ConfigError(f"--mapping {name_or_path}: no such file; bundled mappings: "
                              f"{', '.join(BUNDLED_MAPPINGS)}")
        data = read_yaml(path)
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping with 'columns:'")
        known = ("columns", "scale", "range", "rise_tolerance", "missing")
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ConfigError(f"{path}: unknown key(s) {unknown}; known: {', '.join(known)}")
        if not isinstance(data.get("columns") or {}, dict):
            raise ConfigError(f"{path}: columns: expected field: column pairs (bridge: ID, year: YEAR, rating: "
                              f"RATING), got {data['columns']!r}")
        cols = {"bridge": "bridge", "year": "year", "rating": "rating", **(data.get("columns") or {})}
        bad = sorted(set(cols) - {"bridge", "year", "rating", "built", "work"})
        if bad:
            raise ConfigError(f"{path}: columns: unknown field(s) {bad}; known: bridge, year, rating, built, work")
        try:
            scale = [(float(a), float(b)) for a, b in data["scale"]] if data.get("scale") else None
            lo, hi = (float(v) for v in data.get("range", (0.0, 9.0) if scale is None else
                                                  (scale[0][0], scale[-1][0])))
            rise = float(data.get("rise_tolerance", 0.0))
            missing = tuple(float(v) for v in (data.get("missing") or ()))
        except (TypeError, ValueError):
            raise ConfigError(f"{path}: scale must be [[value, rating], ...], range [low, high], rise_tolerance "
                              "a number, missing a list of numbers") from None
        if scale is not None and (any(b[0] <= a[0] for a, b in itertools.pairwise(scale))
                                  or any(not 0 <= r <= 9 for _, r in scale)):
            raise ConfigError(f"{path}: scale: values must increase and ratings lie in [0, 9]")
        if not (np.isfinite([lo, hi, rise, *missing]).all() and lo < hi and rise >= 0):
            raise ConfigError(f"{path}: range must be [low, high] with low < high, rise_tolerance ≥ 0")
        if scale is None and not 0 <= lo < hi <= 9:
            raise ConfigError(f"{path}: range [{lo:g}, {hi:g}] without a scale: values are read as NBI ratings 0–9; "
                              "give scale: [[value, rating], ...] to map another scale (e.g. a 0–100 BCI) onto them")
        return cls({k: str(v) for k, v in cols.items()}, scale, (lo, hi), rise, missing)


@dataclass
class Pairs:
    """Do-nothing pairs: float64 arrays (N,).

    Attributes:
        rating0, rating1: ratings at the two inspections, rating points; value0: the recorded start value.
        years: years between them; ysm: years since maintenance at the start (capped at :data:`YSM_CAP`).
        slope: rating points per recorded unit at the start (for the measurement noise).
        n_bridges: bridges with at least one pair.
    """

    rating0: np.ndarray
    rating1: np.ndarray
    value0: np.ndarray
    years: np.ndarray
    ysm: np.ndarray
    slope: np.ndarray
    n_bridges: int

    def select(self, keep: np.ndarray) -> Pairs:
        """The pairs where ``keep`` (bool (N,)) is true (``n_bridges`` still counts every bridge read)."""
        return Pairs(self.rating0[keep], self.rating1[keep], self.value0[keep], self.years[keep], self.ysm[keep],
                     self.slope[keep], self.n_bridges)


def read_history(path: str | Path, mapping: HistoryMapping) -> Pairs:
    """Read a history CSV (UTF-8, else Windows-1252: :func:`bridgefleet.textfile.read_text`) into do-nothing pairs.

    Raises:
        ConfigError: one line naming the file, row and column: a missing column, a value that is not a number
            or out of range, a bridge's years out of order or duplicated, or no bridge with two inspections.
    """
    path = Path(path)
    try:
        text = read_text(path, "cp1252", "a spreadsheet CSV").text
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise ConfigError(f"{path}: empty file; expected a header row with {', '.join(mapping.columns.values())}")
    header = [h.strip() for h in rows[0]]
    twice = named_twice(header)
    if twice is not None:
        raise ConfigError(f"{path}, row 1, column {twice!r}: the header names it twice (which one to read?)")
    idx = {}
    for name, col in mapping.columns.items():
        if col not in header:
            if name in ("built", "work") and name not in _explicit(mapping):
                continue
            raise ConfigError(f"{path}: no column {col!r} (the {name}); header: {', '.join(header)}")
        idx[name] = header.index(col)
    lo, hi = mapping.value_range
    by_bridge: dict[str, list[tuple[int, int, float, float | None, bool]]] = {}
    for line, r in enumerate(rows[1:], start=2):
        if not any(v.strip() for v in r):
            continue

        def cell(name: str, r: list[str] = r) -> str:
            return r[idx[name]].strip() if idx[name] < len(r) else ""

        def number(name: str, line: int = line) -> float:
            text = cell(name)
            try:
                value = float(text)
            except ValueError:
                raise ConfigError(f"{path}, row {line}, column {mapping.columns[name]!r}: {text!r} is not a "
                                  "number") from None
            if not np.isfinite(value):
                raise ConfigError(f"{path}, row {line}, column {mapping.columns[name]!r}: {text!r} is not finite")
            return value

        if len(r) > len(header):
            raise ConfigError(f"{path}, row {line}: {len(r)} fields where the header has {len(header)} (a comma "
                              "inside a value needs quotes)")
        bridge = cell("bridge")
        if not bridge:
            raise ConfigError(f"{path}, row {line}, column {mapping.columns['bridge']!r}: empty bridge identifier")
        year = number("year")
        if year != int(year) or not YEARS[0] <= year <= YEARS[1]:
            raise ConfigError(f"{path}, row {line}, column {mapping.columns['year']!r}: {year:g} is not an inspection "
                              f"year (a whole calendar year, {YEARS[0]}–{YEARS[1]})")
        if not cell("rating"):
            continue
        value = number("rating")
        if value in mapping.missing:
            continue
        if not lo <= value <= hi:
            raise ConfigError(f"{path}, row {line}, column {mapping.columns['rating']!r}: {value:g} is out of "
                              f"range [{lo:g}, {hi:g}]")
        built = number("built") if "built" in idx and cell("built") else None
        work = "work" in idx and cell("work") not in ("", "0", "0.0", "false", "False", "no")
        seen = by_bridge.setdefault(bridge, [])
        if seen and year == seen[-1][1]:
            raise ConfigError(f"{path}, row {line}: bridge {bridge!r} has year {int(year)} twice (row {seen[-1][0]})")
        if seen and year < seen[-1][1]:
            raise ConfigError(f"{path}, row {line}: bridge {bridge!r} year {int(year)} is out of order (row "
                              f"{seen[-1][0]} has {int(seen[-1][1])}); list each bridge's inspections by year")
        seen.append((line, int(year), value, built, work))
    v0, v1, years, ysm = [], [], [], []
    n_bridges = 0
    for seen in by_bridge.values():
        built = next((b for *_, b, _ in seen if b is not None), None)
        last_work = built
        had = False
        for (_, y0, a, _, _), (_, y1, b, _, work) in itertools.pairwise(seen):
            if work or b > a + mapping.rise_tolerance:
                last_work = y1
                continue
            v0.append(a)
            v1.append(b)
            years.append(y1 - y0)
            ysm.append(min(y0 - last_work, YSM_CAP) if last_work is not None and last_work <= y0 else YSM_CAP)
            had = True
        n_bridges += had
    if not v0:
        if not by_bridge:
            raise ConfigError(f"{path}: no inspection rows after the header")
        if all(len(s) < 2 for s in by_bridge.values()):
            raise ConfigError(f"{path}: every bridge has one inspection; a history needs two or more inspections "
                              "of a bridge (rows with the same bridge and later years)")
        raise ConfigError(f"{path}: no two consecutive inspections without work between them (a rise above "
                          f"{mapping.rise_tolerance:g} counts as work)")
    value0 = np.array(v0)
    return Pairs(mapping.to_rating(value0), mapping.to_rating(np.array(v1)), value0, np.array(years, float),
                 np.array(ysm, float), mapping.slope(value0), n_bridges)


def _explicit(mapping: HistoryMapping) -> set[str]:
    """Optional fields whose column the mapping names explicitly (a missing one is then an error)."""
    return {k for k in ("built", "work") if k in mapping.columns}
