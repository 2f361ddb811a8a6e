"""Reading text tables and turning rows into bridges: decoding, rows, kept and dropped bridges (each field's value:
:mod:`bridgefleet.inventory.values`).
Shared by the NBI reader (:mod:`bridgefleet.inventory.nbi`) and the mapped-CSV reader
(:mod:`bridgefleet.inventory.mapped_csv`); the SNBI reader shares the row machinery.

Files stream: the encoding is decided in one pass over the bytes (:func:`read_text_file`), rows are read from the
file one at a time (:class:`_Rows`) and kept bridges gathered in compact columns (:class:`_Columns`), so memory
grows by a few hundred bytes a bridge whatever the file's size (docs/inventory.md, "Large files")."""

from __future__ import annotations

import csv
import datetime
import math
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from bridgefleet.inventory.model import (
    _BAD,
    BUNDLED,
    NBI_REQUIRED,
    YSM_CAP,
    Inventory,
    InventoryError,
    _RowProblem,
    default_rate,
    dropped_by_category,
)
from bridgefleet.inventory.values import _Bridge, _clean
from bridgefleet.inventory.values import _nbi_code as _nbi_code  # re-exported: calibration.successive reads codes
from bridgefleet.inventory.values import component_levels as component_levels  # re-exported (tests)
from bridgefleet.textfile import TextEncodingError, TextFile, scan_encoding

# ------------------------------------------------------------------------------------------------
# Reading text tables


def check_delimiter(header_line: str, path: Path) -> None:
    """The readers split on commas, as FHWA's delimited NBI files do; a table exported with semicolons (a
    decimal-comma locale) or tabs is named as such in one line.

    Raises:
        InventoryError: the header line holds more semicolons or tabs than commas.
    """
    for sep, name in ((";", "semicolons (;)"), ("\t", "tabs")):
        if header_line.count(sep) > header_line.count(","):
            raise InventoryError(f"fields are separated by {name}, not commas: save it as comma-separated CSV",
                                 path, line=1)


FIRST_NBI_YEAR = 1968
"""The National Bridge Inventory began after the Federal-Aid Highway Act of 1968: no inventory is older."""


def check_inventory_year(year: int, how: str, path: Path) -> None:
    """Refuse an inventory year outside 1968 … next year (a wrong century makes every age wrong).

    Raises:
        InventoryError: naming the year and where it came from.
    """

    last = datetime.date.today().year + 1
    if not FIRST_NBI_YEAR <= year <= last:
        raise InventoryError(f"inventory year {year} (from the {how}) is outside {FIRST_NBI_YEAR}–{last}: "
                             "pass the year explicitly (YEAR column, or year: in the mapping)", path)


class _Unclosed(list):
    """The fields of a line whose quote is never closed on it (a one-line record format); ``column``: 1-based,
    the field the quote opens."""

    def __init__(self, fields_: list[str], column: int):
        super().__init__(fields_)
        self.column = column


def _one_line_each(lines: list[str], first: int, quotechar: str) -> list[tuple[int, list[str]]]:
    """A record the CSV reader ran over several lines (a quote left open), parsed one line at a time: (line,
    fields), an unclosed quote's line as :class:`_Unclosed`, so only that line is dropped, not the next ones."""
    out: list[tuple[int, list[str]]] = []
    for k, line in enumerate(lines):
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        try:  # strict: a quoted field still open at the end of the line is an error (an apostrophe inside a
            out.append((first + k, next(csv.reader([text], quotechar=quotechar, strict=True))))  # field is not)
        except csv.Error:
            fields_ = next(csv.reader([text], quotechar=quotechar))
            out.append((first + k, _Unclosed(fields_, len(fields_))))
    return out


def named_twice(header: list[str]) -> str | None:
    """The first column name a header repeats (blank names aside), None if none: a reader would take one copy of
    it silently."""
    seen: set[str] = set()
    for name in header:
        if name and name in seen:
            return name
        seen.add(name)
    return None


def _no_such_file(path: Path) -> InventoryError:
    """The error for a path that names no file: the bundled names, and where a pattern of several files works."""
    pattern = "; several files by a pattern: `bridgefleet bound` only" if any(c in str(path) for c in "*?[") else ""
    return InventoryError(f"no such file (bundled inventories: {', '.join(BUNDLED)}){pattern}", path)


PROGRESS_MIN_BYTES = 64 << 20
"""A file at least this large (64 MiB: about 150,000 Coding-Guide rows or 25,000 SNBI records) shows a progress bar
on stderr while it is read, where stderr is a terminal (tqdm's ``disable=None``)."""


class _Progress:
    """A tqdm bar over a file's bytes for one pass of a reader, or nothing for a small file; ``to(n)``: n bytes (or
    characters) done."""

    def __init__(self, path: Path, total: int, what: str):
        self.bar = None
        if total >= PROGRESS_MIN_BYTES:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, leave=False, disable=None,
                            desc=f"{path.name}: {what}")

    def to(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(min(done, self.bar.total) - self.bar.n)

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


def read_text_file(path: Path, legacy: str, what: str, resave: str = "UTF-8 CSV") -> TextFile:
    """An inventory file's encoding decided from its bytes by :func:`bridgefleet.textfile.scan_encoding` (the rule of
    :func:`bridgefleet.textfile.decode_text`, in one pass that holds no more than a chunk of the file): UTF-8 when
    the bytes are, else ``legacy``, the format's legacy encoding; ``what`` names the format. The readers then stream
    its text (:meth:`~bridgefleet.textfile.TextFile.open`); ``resave``: what a refusal says to re-save it as
    (``"UTF-8 JSON"`` for an SNBI file).

    Raises:
        InventoryError: no such file, unreadable, or neither UTF-8 nor ``legacy`` text (naming the file, the byte
            offset, and the line where one byte is at fault; never a column).
    """
    try:
        size = path.stat().st_size
        with _Progress(path, size, "checking the encoding") as bar:
            return scan_encoding(path, legacy, what, progress=bar.to, resave=resave)
    except FileNotFoundError:
        raise _no_such_file(path) from None
    except TextEncodingError as exc:
        raise InventoryError(exc.what, path, line=exc.line) from None
    except OSError as exc:
        raise InventoryError(f"cannot read the file ({exc.strerror})", path) from None


def _first_line(text: TextFile) -> str | None:
    """The first line of the file's text after leading white space (``text.lstrip().split("\\n", 1)[0]``, read
    64 KiB at a time, at most 16 MiB), None when the text is white space only."""
    buf = ""
    with text.stream() as fh:
        while len(buf) < 1 << 24 and (chunk := fh.read(1 << 16)):
            buf = (buf + chunk).lstrip() if not buf else buf + chunk
            if "\n" in buf:
                break
    return buf.split("\n", 1)[0] if buf else None


class _Rows:
    """The data rows of a text table: (start line, fields) of every non-blank row after the header, read from the
    file again each time they are iterated (one row in memory at a time).

    Built by :func:`_read_rows`, which reads the file once through to raise its file-level problems (not CSV, a
    column named twice, header only) before any row is used, counting the rows and keeping the distinct values of
    the columns ``keep`` names (:meth:`values`)."""

    def __init__(self, path: Path, text: TextFile, quotechar: str, one_line: bool, keep: Iterable[str] = ()):
        self.path, self.text, self.quotechar, self.one_line = path, text, quotechar, one_line
        self.header: list[str] = []
        self.header_line = 0
        self.count = 0
        self._values: dict[str, set[str]] = {}
        records = self._records("reading rows")
        for start, fields_ in records:
            if not self.header_line:
                self.header, self.header_line = [_clean(f) for f in fields_], start
                kept = [(name, self.header.index(name)) for name in keep if name in self.header]
                self._values = {name: set() for name, _ in kept}
                continue
            self.count += 1
            for name, k in kept:
                if len(fields_) > k:
                    self._values[name].add(_clean(fields_[k]))

    def values(self, name: str) -> set[str]:
        """The distinct values (cleaned, :func:`_clean`) of column ``name`` over the rows that reach it; the column
        must be one ``keep`` named (else an empty set)."""
        return self._values.get(name, set())

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[tuple[int, list[str]]]:
        records = self._records("reading bridges")
        next(records)  # the header
        return records

    def _records(self, what: str) -> Iterator[tuple[int, list[str]]]:
        """(start line, fields) of every non-blank record, the header first; a record the CSV reader ran over several
        lines split into its lines where ``one_line`` (:func:`_one_line_each`)."""
        recent: list[str] = []  # the physical lines of the record being read
        done = 0

        def lines(fh: Iterable[str]) -> Iterator[str]:
            nonlocal done
            for k, line in enumerate(fh):
                recent.append(line)
                done += len(line)
                if not k % 8192:
                    bar.to(done)
                yield line

        with _Progress(self.path, self.text.size, what) as bar, self.text.stream() as fh:
            reader = csv.reader(lines(fh), quotechar=self.quotechar)
            last = 0
            header = True
            try:
                for fields_ in reader:
                    start = last + 1
                    last = reader.line_num
                    if not fields_ or all(not f.strip() for f in fields_):
                        recent.clear()
                        continue
                    if header:
                        header = False
                        yield start, fields_
                    elif self.one_line and last > start:
                        yield from _one_line_each(recent[:], start, self.quotechar)
                    else:
                        yield start, fields_
                    recent.clear()
            except csv.Error as exc:
                raise InventoryError(f"not a readable CSV file ({exc})", self.path, line=reader.line_num) from None


def _read_rows(path: Path, quotechar: str, legacy: str, what: str, one_line: bool = False,
               keep: Iterable[str] = ()) -> tuple[list[str], _Rows, TextFile]:
    """Header, the data rows (:class:`_Rows`: (start line, fields) of every non-blank data row, streamed from the
    file), and how the text is decoded (:func:`read_text_file`: UTF-8 when the bytes are, else ``legacy``, the
    format's legacy encoding; ``what`` names the format); raises on file-level problems. ``one_line``: every record
    is one line (the NBI's ASCII files), so a quote left open drops its own line only, with its reason, instead of
    swallowing the lines after it into one row. ``keep``: columns whose distinct values the rows keep
    (:meth:`_Rows.values`)."""
    text = read_text_file(path, legacy, what)
    first = _first_line(text)
    if first is None:
        raise InventoryError("the file is empty: expected a header line naming the columns (an NBI file's, e.g. "
                             f"{', '.join(NBI_REQUIRED[:3])}, ..., or those its --mapping names) and one bridge per "
                             "line", path, line=1, column="(header)")
    check_delimiter(first, path)
    rows = _Rows(path, text, quotechar, one_line, keep)
    header, header_line = rows.header, rows.header_line
    if not header_line:  # white space and commas only
        raise InventoryError("the file is empty: expected a header line naming the columns (an NBI file's, e.g. "
                             f"{', '.join(NBI_REQUIRED[:3])}, ..., or those its --mapping names) and one bridge per "
                             "line", path, line=1, column="(header)")
    twice = named_twice(header)
    if twice is not None:  # a reader would take one copy silently
        raise InventoryError("the header names this column twice: which one holds the data is unclear; remove or "
                             "rename one", path, line=header_line, column=twice)
    if not rows.count:
        more = ", ..." if len(header) > 4 else ""
        raise InventoryError(f"header-only file: no bridge records after the header on line {header_line} "
                             f"(columns {', '.join(header[:4])}{more})", path, line=header_line + 1)
    return header, rows, text


class _Columns:
    """The kept bridges, field by field, in compact arrays (a few hundred bytes a bridge, no object per bridge):
    what :func:`_collect` gathers and :func:`_inventory` turns into an :class:`Inventory`. County, owner and state
    codes are shared strings (a file has few)."""

    _F32 = ("condition", "age", "ysm", "deck_area", "aadt", "cost_factor", "truck_share", "detour_km", "nhs")
    _F64 = ("latitude", "longitude")
    _CODES = ("county", "owner", "state", "place")

    def __init__(self) -> None:
        self.line = array("q")
        self.bridge_id: list[str] = []
        self.urban = bytearray()
        self.culvert = bytearray()
        self.components = array("b")  # 3 a bridge; -1, -1, -1: the condition's whole rating for all three
        self.work_years = array("f")  # 3 a bridge (SNBI Works): the last work's year on each slot, NaN none
        self.work_codes: list[str] = []  # 3 a bridge: its work code, '' none (shared strings)
        self.numbers = {name: array("f") for name in self._F32} | {name: array("d") for name in self._F64}
        self.codes: dict[str, list[str]] = {name: [] for name in self._CODES}
        self._shared: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self.line)

    def append(self, b: _Bridge) -> None:
        self.line.append(b.line)
        self.bridge_id.append(b.bridge_id)
        self.urban.append(bool(b.urban))
        self.culvert.append(bool(b.culvert))
        self.components.extend((-1, -1, -1) if b.components is None else b.components)
        self.work_years.extend((math.nan,) * 3 if b.work_years is None else b.work_years)
        self.work_codes.extend(self._shared.setdefault(c, c) for c in b.work_codes or ("", "", ""))
        for name, arr in self.numbers.items():
            arr.append(getattr(b, name))
        for name, codes in self.codes.items():
            value = getattr(b, name)
            codes.append(self._shared.setdefault(value, value))

    def column(self, name: str, dtype: type) -> np.ndarray:
        """A numeric field as a numpy array (a copy)."""
        source = self.numbers[name] if name in self.numbers else getattr(self, name)
        width = {"f": np.float32, "d": np.float64, "q": np.int64, "b": np.int8}.get(getattr(source, "typecode", ""),
                                                                                     np.uint8)
        return np.frombuffer(source, dtype=width).astype(dtype)

    def first_duplicate(self) -> tuple[int, int] | None:
        """(index, index of its first occurrence) of the first bridge in file order whose (state, bridge id) an
        earlier bridge has; None if none."""
        if len(self) < 2:
            return None
        ids = np.array(self.bridge_id, dtype=str)
        states = np.array(self.codes["state"], dtype=str)
        order = np.lexsort((ids, states))  # stable: a key's bridges in file order
        ids, states = ids[order], states[order]
        repeat = np.concatenate([[False], (ids[1:] == ids[:-1]) & (states[1:] == states[:-1])])
        if not repeat.any():
            return None
        at = np.arange(len(order))
        group_start = np.maximum.accumulate(np.where(repeat, 0, at))
        later = np.flatnonzero(repeat)
        k = later[np.argmin(order[later])]
        return int(order[k]), int(order[group_start[k]])


def _collect(path: Path, rows: Iterable[tuple[int, list[str]]], n_columns: int,
             parse: Callable[[int, list[str]], _Bridge], id_column: str, max_bad_fraction: float
             ) -> tuple[_Columns, list[tuple[int, str]]]:
    """Parse rows (streamed: one at a time); drop and report problems; raise when the file is not usable as a
    whole. The kept bridges come back as :class:`_Columns`."""
    bridges = _Columns()
    dropped: list[tuple[int, str]] = []
    first_bad: tuple[int, _RowProblem] | None = None
    n_bad = n_rows = 0
    for line, fields_ in rows:
        n_rows += 1
        try:
            if isinstance(fields_, _Unclosed):
                raise _RowProblem(_BAD, "a quote opened in this column is never closed on its line",
                                  f"#{fields_.column}", fields_[-1][:40])
            if len(fields_) != n_columns:
                col = f"#{min(len(fields_), n_columns) + 1}"
                raise _RowProblem(_BAD, f"row has {len(fields_)} fields, the header has {n_columns}", col)
            bridges.append(parse(line, fields_))
        except _RowProblem as problem:
            dropped.append((line, problem.reason()))
            if problem.bad:
                n_bad += 1
                if first_bad is None:
                    first_bad = (line, problem.with_traceback(None))
    if first_bad is not None and (not len(bridges) or n_bad > max_bad_fraction * n_rows):
        line, p = first_bad
        raise InventoryError(f"{p.detail} — {n_bad} of {n_rows} data rows are malformed "
                             f"(first shown; at most {max_bad_fraction:.0%} are dropped and reported)",
                             path, line=line, column=p.column, value=p.value)
    if not len(bridges):
        counts = {category: n for category, (n, _) in dropped_by_category(dropped).items()}
        line = dropped[0][0] if dropped else None
        raise InventoryError(f"no usable bridge: all {n_rows} rows dropped ({counts}); first: "
                             f"{dropped[0][1] if dropped else '-'}", path, line=line)
    twice = bridges.first_duplicate()
    if twice is not None:
        k, first = twice
        bid = bridges.bridge_id[k]
        raise InventoryError(f"duplicated structure number {bid!r} (first on line {bridges.line[first]}); "
                             "each bridge must appear once", path, line=bridges.line[k], column=id_column,
                             value=bid)
    return bridges, dropped


def _inventory(path: Path, bridges: _Columns, dropped: list[tuple[int, str]], year: int | None,
               notes: list[str]) -> Inventory:
    states = set(bridges.codes["state"])
    ids = np.array(bridges.bridge_id, dtype=str)
    if len(states) > 1:
        ids = np.char.add(np.char.add(np.array(bridges.codes["state"], dtype=str), ":"), ids)
        notes.append(f"{len(states)} states in the file: bridge ids are 'state code:structure number'")
    cond = bridges.column("condition", np.float32)
    whole = np.minimum(np.floor(cond), 9).astype(np.int8)
    comps = bridges.column("components", np.int8).reshape(-1, 3)
    unset = comps[:, 0] < 0
    comps[unset] = whole[unset, None]
    f32 = {name: bridges.column(name, np.float32) for name in ("age", "ysm", "deck_area", "aadt", "cost_factor",
                                                               "truck_share", "detour_km", "nhs")}
    return Inventory(
        bridge_id=ids, urban=bridges.column("urban", bool), condition=cond, rate=default_rate(cond),
        county=np.array(bridges.codes["county"], dtype=str), owner=np.array(bridges.codes["owner"], dtype=str),
        state=np.array(bridges.codes["state"], dtype=str), place=np.array(bridges.codes["place"], dtype=str),
        line=bridges.column("line", np.int64),
        source=str(path), dropped=dropped, year=year, notes=notes, components=comps,
        culvert=bridges.column("culvert", bool), latitude=bridges.column("latitude", np.float64),
        longitude=bridges.column("longitude", np.float64),
        work_year=bridges.column("work_years", np.float32).reshape(-1, 3),
        work_code=np.array(bridges.work_codes, dtype=str).reshape(-1, 3), **f32)


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


