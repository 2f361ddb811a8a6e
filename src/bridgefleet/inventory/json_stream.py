"""An SNBI submittal file's top-level JSON array read one record at a time (:class:`_JsonArray`), so a nation's
file streams through :func:`bridgefleet.inventory.snbi.read_snbi` in the memory of one chunk and one record, with
``json.loads``'s refusals in its own words."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from bridgefleet.config.quantities import Written
from bridgefleet.inventory.model import InventoryError
from bridgefleet.inventory.rows import _Progress
from bridgefleet.textfile import TextFile

_NOT_SPACE = re.compile(r"[^ \t\n\r]")
"""JSON's white space is these four characters."""

_MAY_BE_TEMPORARY = ("-T", "-t", "-U", "-u", "\\u")
"""A record's JSON text without any of these holds no temporary code (a value ending in ``-T``, or ``T-U``, any case;
``\\u`` escapes aside): its values need no look."""

_HUGE = re.compile(r"[eE]\+?[0-9]{3}|[0-9]{309}")
"""Text that may hold a number no float holds (an exponent of three digits, or 309 digits in a row): a record with it
is decoded again keeping such a number as written (:func:`_float_as_written`)."""


def _float_as_written(text: str) -> float | Written:
    """A JSON number with a fraction or exponent as a float, or as the user wrote it (:class:`Written`) where no float
    holds it (``1e400``), so a refusal echoes it, not ``inf``."""
    x = float(text)
    return x if math.isfinite(x) else Written(text)


JSON_CHUNK = 1 << 20
"""Characters read at a time by :class:`_JsonArray` (a record spanning two reads is decoded again from its start)."""


def _trailing_comma() -> tuple[str, bool]:
    """What this Python's ``json`` says of ``[0, ]`` (a comma before the end of an array), and whether it names the
    comma's position (3.13 on) rather than the bracket's."""
    try:
        json.loads("[0, ]")
    except json.JSONDecodeError as exc:
        return exc.msg, exc.pos == 2
    return "Expecting value", False  # pragma: no cover - every json refuses it


class _FileProblem(Exception):
    """Internal: an :class:`InventoryError` of the file as a whole (not JSON, not an array …), raised while its records
    stream through the row machinery, which leaves it as it is."""

    def __init__(self, error: InventoryError):
        super().__init__(str(error))
        self.error = error


class _JsonArray:
    """The records of an SNBI file, its top-level JSON array decoded one element at a time (``json``'s own decoder,
    ``raw_decode``, over :data:`JSON_CHUNK` characters at a time), so memory holds one chunk and one record whatever
    the file's size. Each iteration reads the file again.

    Raises the refusals ``json.loads`` of the whole text would give, in the same words (position, line and column
    in the whole file): not JSON, nested too deep, a huge number; and at the end of the array, none or no ``BID01``.
    A file that is not an array is read whole, as before, to say what it is."""

    def __init__(self, path: Path, text: TextFile):
        self.path, self.text = path, text
        self.decoder = json.JSONDecoder(parse_constant=Written)  # NaN, Infinity: kept as written
        self.exact = json.JSONDecoder(parse_constant=Written, parse_float=_float_as_written)

    def iterate(self, what: str) -> Iterator[Any]:
        """The records, read again; ``what`` names the pass on the progress bar."""
        for rec, _ in self._records(what, hint=False):
            yield rec

    def iterate_hinted(self, what: str) -> Iterator[tuple[Any, bool]]:
        """(record, whether its text may hold a temporary code: ``-T``, ``-U`` or an escape, any case), read again."""
        return self._records(what, hint=True)

    def _records(self, what: str, hint: bool) -> Iterator[tuple[Any, bool]]:
        with _Progress(self.path, self.text.size, what) as bar, self.text.stream() as fh:
            yield from _JsonStream(self, fh, bar).records(hint)

    def __iter__(self) -> Iterator[Any]:
        return self.iterate("reading records")

    def not_json(self, why: str | BaseException) -> _FileProblem:
        """The file is not JSON: ``why`` in ``json``'s words (a ``RecursionError``: nested too deep)."""
        reason = "nested too deep" if isinstance(why, RecursionError) else str(why)
        return _FileProblem(InventoryError(f"not an SNBI file: not JSON ({reason})", self.path))

    def record(self, line: int | None) -> Any:
        """Record ``line`` (1-based), None where there is none."""
        if line is None or line < 1:
            return None
        for k, rec in enumerate(self.iterate("finding the record"), start=1):
            if k == line:
                return rec
        return None


class _JsonStream:
    """One pass of :class:`_JsonArray` over its file: a buffer of text, the position in it, and where the buffer
    starts in the file (characters, lines, the last newline before it) to name an error's place."""

    def __init__(self, source: _JsonArray, fh: TextIO, bar: _Progress):
        self.source, self.fh, self.bar = source, fh, bar
        self.buf, self.i, self.eof = "", 0, False
        self.base = self.base_lines = 0  # characters and newlines before buf
        self.base_newline = -1  # position in the file of the last newline before buf

    def more(self) -> bool:
        """Read on (dropping the text already decoded); False at the end of the file (the buffer then unchanged)."""
        if self.eof:
            return False
        chunk = self.fh.read(max(JSON_CHUNK, len(self.buf) - self.i))  # a record longer than a chunk: twice as much
        if not chunk:
            self.eof = True
            return False
        if self.i:
            done = self.buf[:self.i]
            self.base_lines += done.count("\n")
            k = done.rfind("\n")
            if k >= 0:
                self.base_newline = self.base + k
            self.base += self.i
            self.buf, self.i = self.buf[self.i:], 0
        self.buf += chunk
        self.bar.to(self.base + len(self.buf))
        return True

    def error(self, msg: str, pos: int) -> _FileProblem:
        """``json``'s words for an error at ``pos`` in the buffer, placed in the whole file."""
        line = self.base_lines + self.buf.count("\n", 0, pos) + 1
        k = self.buf.rfind("\n", 0, pos)
        column = pos - k if k >= 0 else self.base + pos - self.base_newline
        return self.source.not_json(f"{msg}: line {line} column {column} (char {self.base + pos})")

    def skip(self) -> str:
        """The next character that is not white space ("" at the end of the file), the position moved to it."""
        while True:
            m = _NOT_SPACE.search(self.buf, self.i)
            if m:
                self.i = m.start()
                return self.buf[self.i]
            self.i = len(self.buf)
            if not self.more():
                return ""

    def element(self) -> tuple[Any, int]:
        """The JSON value at the position, read on where the buffer cuts it, and where it starts in the buffer; the
        position moved past it."""
        while True:
            try:
                value, end = self.source.decoder.raw_decode(self.buf, self.i)
            except json.JSONDecodeError as exc:  # cut by the buffer's end, or not JSON
                cut = exc.pos >= len(self.buf) - 64 or exc.msg.startswith("Unterminated string")
                if cut and self.more():
                    continue
                raise self.error(exc.msg, exc.pos) from None
            except (ValueError, RecursionError) as exc:  # a 5,000-digit number; nested too deep
                raise self.source.not_json(exc) from None
            if end > len(self.buf) - 64 and self.more():  # a number may go on (123.5 of 123.5e3)
                continue
            start, self.i = self.i, end
            if _HUGE.search(self.buf, start, end):  # a number no float holds (1e400): kept as written
                value = self.source.exact.raw_decode(self.buf, start)[0]
            return value, start

    def records(self, hint: bool) -> Iterator[tuple[Any, bool]]:
        """(record, whether its text may hold a temporary code), the text searched only where ``hint`` (else True:
        it may)."""
        path = self.source.path
        self.more()
        if self.skip() != "[":
            yield from self.whole()
            return
        self.i += 1
        n, named = 0, False
        c = self.skip()
        if c == "]":
            self.i += 1
        else:
            while True:
                rec, start = self.element()
                n += 1
                named = named or (isinstance(rec, dict) and "BID01" in rec)
                yield rec, not hint or any(self.buf.find(s, start, self.i) >= 0 for s in _MAY_BE_TEMPORARY)
                c = self.skip()
                if c == "]":
                    self.i += 1
                    break
                if c != ",":
                    raise self.error("Expecting ',' delimiter", self.i)
                comma = self.i
                self.i += 1
                if self.skip() == "]":
                    msg, at_comma = _trailing_comma()
                    raise self.error(msg, comma if at_comma else self.i)
        if self.skip():
            raise self.error("Extra data", self.i)
        if not n:
            raise _FileProblem(InventoryError("an SNBI file with no bridge record (an empty array)", path))
        if not named:
            raise _FileProblem(InventoryError("not an SNBI file: no record has a bridge number BID01", path, line=1,
                                              column="BID01"))

    def whole(self) -> Iterator[Any]:
        """A file whose JSON is not an array: read whole, to say what it is (or why it is not JSON)."""
        with self.source.text.stream() as fh:
            text = fh.read()
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:  # ValueError: JSON's, and a 5,000-digit number
            raise self.source.not_json(exc) from None
        what = {dict: "an object", str: "a string", type(None): "null"}.get(type(data), "a number")
        raise _FileProblem(InventoryError(f"not an SNBI file: the JSON is {what}, not an array of bridge records",
                                          self.source.path))
        yield  # pragma: no cover - a generator
