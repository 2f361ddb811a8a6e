"""Every file the product writes goes through here: UTF-8 whatever the locale, written to a temporary file in
the same folder and renamed into place, the temporary removed on any error (a full disk, Ctrl-C), and CSV
cells that a spreadsheet would run as a formula made text.

CSV injection (OWASP "CSV Injection"): a text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return is a formula to Excel, LibreOffice and Google Sheets; such cells are written with a leading
``'`` (``=HYPERLINK(…)`` → ``'=HYPERLINK(…)``). The test reads the cell as spreadsheets in East-Asian locales
do: Unicode NFKC first, so the full-width ``＝＋－＠`` (and ``﹦``, ``﹢``, ``﹣``, ``﹫``) count, and after leading
spaces (a full-width or no-break space included). A DDE payload (``cmd|' /C calc'!A0``) anywhere in a cell is made
text too. Numbers stay numbers, also when given as text (``-0.50``).
"""

from __future__ import annotations

import contextlib
import csv
import errno
import json
import os
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
"""A number as a spreadsheet reads one (not Python's ``float``, which also takes ``1_0``, ``nan``, ``inf``)."""


DDE_PAYLOAD = re.compile(r"\w+\s*\|\s*'[^']*'\s*!")
"""A Dynamic Data Exchange reference ``application|'topic'!item`` (``cmd|' /C calc'!A0``), read after NFKC."""


def csv_cell(value: Any) -> Any:
    """``value`` as a spreadsheet reads it safely: text whose NFKC form starts (after spaces) with a formula
    character, or holds a DDE payload, gets a leading ``'`` (numbers, and text that is a number, are unchanged)."""
    if not isinstance(value, str) or PLAIN_NUMBER.fullmatch(value):
        return value
    shown = unicodedata.normalize("NFKC", value)
    if shown.lstrip(" ").startswith(FORMULA_START) or DDE_PAYLOAD.search(shown):
        return "'" + value
    return value


class SafeWriter:
    """``csv.writer`` whose cells pass through :func:`csv_cell`."""

    def __init__(self, f: IO[str], **kwargs: Any):
        self._w = csv.writer(f, **kwargs)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._w.writerow([csv_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


class SafeDictWriter(csv.DictWriter):
    """``csv.DictWriter`` whose cells pass through :func:`csv_cell`."""

    def _dict_to_list(self, rowdict: Any) -> Any:  # the one place DictWriter turns a row into cells
        return [csv_cell(v) for v in super()._dict_to_list(rowdict)]


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless n is 1: "1 bridge", "244 bridges" (nouns that take an s)."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


@contextlib.contextmanager
def atomic_open(path: str | Path, binary: bool = False) -> Iterator[IO[Any]]:
    """Open ``.NAME.PID.tmp`` beside ``path`` for writing (text: UTF-8, ``newline=""``), and rename it onto
    ``path`` when the block ends; on any exception (OSError, Ctrl-C, …) the temporary file is removed and
    ``path`` is left as it was.

    Raises:
        OSError: the write failed, naming ``path`` (not the temporary file), e.g. "No space left on device".
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # two processes never share one
    try:
        with (tmp.open("wb") if binary else tmp.open("w", encoding="utf-8", newline="")) as f:
            yield f
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno or errno.EIO, exc.strerror or str(exc), str(path)) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: str | Path, write: Callable[[IO[Any]], Any], binary: bool = False) -> None:
    """``write(f)`` into ``path`` atomically (see :func:`atomic_open`)."""
    with atomic_open(path, binary) as f:
        write(f)


def write_text(path: str | Path, text: str) -> None:
    """UTF-8 text into ``path`` atomically."""
    atomic_write(path, lambda f: f.write(text))


def write_json(path: str | Path, data: Any, indent: int | None = 2) -> None:
    """JSON (UTF-8) into ``path`` atomically."""
    atomic_write(path, lambda f: json.dump(data, f, indent=indent))


def write_csv(path: str | Path, rows: Iterable[Iterable[Any]]) -> None:
    """CSV rows (the first the header) into ``path`` atomically, cells made safe (:func:`csv_cell`)."""
    atomic_write(path, lambda f: SafeWriter(f).writerows(rows))


def write_xlsx(path: str | Path, rows: Iterable[Iterable[Any]], numeric: Collection[str] = (),
               sheet: str = "plan") -> None:
    """Rows (the first the header) as a one-sheet Excel workbook (openpyxl, write-only: memory stays flat) into
    ``path`` atomically: the cells of the ``numeric`` columns as numbers (blank where empty), every other cell as
    text, which a spreadsheet never runs as a formula (text from an inventory is data: ``=cmd|' /C calc'!A0``
    stays those characters)."""
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell

    book = Workbook(write_only=True)
    ws = book.create_sheet(sheet)
    it = iter(rows)
    header = [str(h) for h in next(it)]
    ws.append(header)
    as_number = [h in numeric for h in header]

    def cell(value: Any, number: bool) -> Any:
        if number:
            return None if value in ("", None) else float(value)
        c = WriteOnlyCell(ws, value=None)
        c.value, c.data_type = str(value), "s"  # set after: a value starting with = would be typed a formula
        return c

    for row in it:
        ws.append([cell(v, n) for v, n in zip(row, as_number, strict=True)])
    atomic_write(path, book.save, binary=True)


def save_figure(fig: Any, path: str | Path, **kwargs: Any) -> None:
    """A matplotlib figure into ``path`` atomically (format from the path's suffix), then closed (also when the
    write fails)."""
    import matplotlib.pyplot as plt

    fmt = Path(path).suffix.lstrip(".") or "png"
    try:
        atomic_write(path, lambda f: fig.savefig(f, format=fmt, **kwargs), binary=True)
    finally:
        plt.close(fig)


def svg_text(fig: Any, **kwargs: Any) -> str:
    """A matplotlib figure as an ``<svg>`` element (text, without the XML prolog: it sits inside an HTML page),
    then closed."""
    import io

    import matplotlib.pyplot as plt

    buf = io.StringIO()
    try:
        fig.savefig(buf, format="svg", **kwargs)
    finally:
        plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def figure_out(fig: Any, path: str | Path | None, **kwargs: Any) -> str | None:
    """``fig`` saved to ``path`` (:func:`save_figure`, returns None), or its ``<svg>`` text when ``path`` is None
    (:func:`svg_text`)."""
    if path is not None:
        save_figure(fig, path, **kwargs)
        return None
    return svg_text(fig)

