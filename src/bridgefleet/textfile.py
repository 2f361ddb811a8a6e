"""The text of a file a user gives (an NBI inventory, a mapped CSV table, an inspection history): its encoding is
decided from its bytes, one rule for every reader.

- A UTF-8 byte-order mark, or bytes that are valid UTF-8 (what editors, spreadsheets and ``pandas.to_csv`` write
  today): UTF-8.
- Otherwise the format's legacy encoding: Latin-1 for FHWA's NBI files, Windows-1252 for CSV tables exported by
  a spreadsheet (Latin-1 with printable characters where Latin-1 has control codes, 0x80–0x9F).
- Neither (refused in one line naming the file, and the byte offset and its line where one byte is at fault; never a
  column, as an encoding is the whole file's): a UTF-16/UTF-32 byte-order mark, NUL bytes (UTF-16
  without a byte-order mark, or binary data), many control bytes (binary data), a file that mixes UTF-8 sequences
  with bytes that are not UTF-8 (two encodings pasted together), bytes the legacy encoding has no character for
  (Windows-1252's 0x81, 0x8D, 0x8F, 0x90, 0x9D) or reads as control codes (Latin-1's 0x80–0x9F).

:func:`decode_text` returns the text and the encoding it was read in (``inventory`` says which);
:func:`scan_encoding` decides the same of a file in one pass over its bytes, a chunk at a time, for readers that
stream a large file (:meth:`TextFile.open`).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

LEGACY_NAMES = {"latin-1": "Latin-1", "cp1252": "Windows-1252"}
"""Legacy encodings a format may fall back to: codec → the name a message uses."""

_UTF8_SEQUENCE = re.compile(rb"[\xC2-\xDF][\x80-\xBF]|[\xE0-\xEF][\x80-\xBF]{2}|[\xF0-\xF4][\x80-\xBF]{3}")
"""A multi-byte UTF-8 character (Latin-1 text almost never holds one: ``Ã¼`` is what UTF-8 ``ü`` reads as)."""

_C1 = re.compile("[\x80-\x9f]")


class TextEncodingError(ValueError):
    """A file whose bytes are neither UTF-8 nor its format's legacy encoding. ``what``: the one-line reason (no
    file name: the reader adds it; the byte offset where one byte is at fault); ``line``: 1-based line of the first
    offending byte, None for a problem of the whole file (a UTF-16 byte-order mark, binary data). No column: an
    encoding is the file's, not a field's."""

    def __init__(self, what: str, line: int | None = None):
        super().__init__(what)
        self.what, self.line = what, line


_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"), (codecs.BOM_UTF16_LE, "UTF-16"),
         (codecs.BOM_UTF16_BE, "UTF-16"))
"""Byte-order marks of the encodings no reader takes (UTF-32's first: its little-endian mark starts as UTF-16's)."""


def _expected(legacy: str | None, resave: str) -> str:
    """The end of every refusal: what the reader takes and how to re-save the file (``resave``: "UTF-8 CSV",
    "UTF-8 JSON", "UTF-8 YAML")."""
    takes = "UTF-8" if legacy is None else f"UTF-8 or {LEGACY_NAMES[legacy]}"
    return f"expected {takes} text: re-save it as {resave}"


def _whole_file_problem(head: bytes, expected: str) -> TextEncodingError | None:
    """The refusal of a file that is not text in any 8-bit encoding, from its first bytes ``head``: a UTF-16/32
    byte-order mark, binary data (:func:`looks_binary`), or every other byte NUL (UTF-16 without a byte-order
    mark); None otherwise (a NUL byte elsewhere is refused with its offset and line by the caller)."""
    for bom, enc in _BOMS:
        if head.startswith(bom):
            return TextEncodingError(f"the file is {enc}-encoded (byte-order mark {bom.hex(' ').upper()} at byte 0); "
                                     f"{expected}")
    if looks_binary(head):
        return TextEncodingError(f"not a text file ({control_bytes(head)} control bytes in its first {len(head)} "
                                 f"bytes); {expected}")
    quarter, half = len(head) // 4, len(head) // 2
    for enc, order, nuls, n in (("UTF-32", "little-endian", head[2::4] + head[3::4], 3 * quarter // 2),
                                ("UTF-32", "big-endian", head[0::4] + head[1::4], 3 * quarter // 2),
                                ("UTF-16", "little-endian", head[1::2], half // 2),
                                ("UTF-16", "big-endian", head[0::2], half // 2)):
        if n and nuls.count(0) > n:  # three bytes in four NUL (UTF-32), or every other (UTF-16): Latin letters
            at = head.find(b"\x00")
            return TextEncodingError(f"NUL byte at byte {at}: the file looks {enc}-encoded ({order}, no byte-order "
                                     f"mark), not 8-bit text; {expected}")
    return None


def _nul_problem(at: int, line: int, expected: str) -> TextEncodingError:
    """The refusal of a NUL byte at byte ``at`` (past the first two: binary data or a UTF-16/32 part pasted in)."""
    return TextEncodingError(f"NUL byte at byte {at}: the file looks binary or UTF-16/32-encoded there, not text; "
                             f"{expected}", line=line)


def utf8_text(raw: bytes, resave: str = "UTF-8 YAML") -> str:
    """``raw`` as UTF-8 text (a byte-order mark dropped), for formats that are UTF-8 only (a YAML config or
    mapping).

    Raises:
        TextEncodingError: UTF-16/32 (byte-order mark or NUL bytes, said so), binary data, or a byte that is not
            UTF-8 (its offset and line, and what it would be in Windows-1252).
    """
    expected = _expected(None, resave)
    problem = _whole_file_problem(raw[:4000], expected)
    if problem is not None:
        raise problem
    if (nul := raw.find(b"\x00")) >= 0:
        raise _nul_problem(nul, raw.count(b"\n", 0, nul) + 1, expected)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        at = exc.start + (3 if raw.startswith(codecs.BOM_UTF8) else 0)
        guess = "" if raw[at] in b"\x81\x8d\x8f\x90\x9d" else f" ({raw[at:at + 1].decode('cp1252')!r} in Windows-1252)"
        raise TextEncodingError(f"byte 0x{raw[at]:02X} at byte {at} is not UTF-8{guess}; {expected}",
                                line=raw.count(b"\n", 0, at) + 1) from None


@dataclass(frozen=True)
class Decoded:
    """A file's text and how it was read."""

    text: str
    encoding: str  # "UTF-8", "Latin-1" or "Windows-1252"
    why: str  # "valid UTF-8", "UTF-8 byte-order mark", "not valid UTF-8 (byte 12, line 2): the NBI's legacy …"

    def describe(self) -> str:
        """"text read as UTF-8 (valid UTF-8)": the line ``inventory`` prints."""
        return f"text read as {self.encoding} ({self.why})"


def decode_text(raw: bytes, legacy: str, what: str = "the format", resave: str = "UTF-8 CSV") -> Decoded:
    """``raw`` decoded by the rule of this module; ``legacy``: the codec of the format's legacy encoding
    (``"latin-1"`` for NBI files, ``"cp1252"`` for spreadsheet CSV), ``what`` names the format in the reason,
    ``resave`` what a refusal tells the user to re-save the file as (``"UTF-8 JSON"`` for an SNBI file).

    Raises:
        TextEncodingError: the bytes are neither UTF-8 nor ``legacy`` text (one line, with the byte offset and,
            where one byte is at fault, its line).
    """
    name = LEGACY_NAMES[legacy]
    expected = _expected(legacy, resave)
    problem = _whole_file_problem(raw[:4000], expected)
    if problem is not None:
        raise problem
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise _nul_problem(nul, raw.count(b"\n", 0, nul) + 1, expected)
    bom = raw.startswith(codecs.BOM_UTF8)
    body = raw[len(codecs.BOM_UTF8):] if bom else raw
    try:
        text = body.decode("utf-8")
        why = ("UTF-8 byte-order mark" if bom else "plain ASCII, which is valid UTF-8" if body.isascii()
               else "valid UTF-8")
        return Decoded(text, "UTF-8", why)
    except UnicodeDecodeError as exc:
        at = exc.start + (3 if bom else 0)
        line = raw.count(b"\n", 0, at) + 1
        byte = f"byte 0x{raw[at]:02X} at byte {at}"
        if bom or _UTF8_SEQUENCE.search(body):
            mark = "starts with a UTF-8 byte-order mark" if bom else "holds UTF-8 characters"
            raise TextEncodingError(f"the file {mark} but its {byte} is not UTF-8 (two encodings mixed?); "
                                    f"{expected}", line=line) from None
    try:
        text = body.decode(legacy)
    except UnicodeDecodeError as exc:
        at = exc.start
        raise TextEncodingError(f"byte 0x{body[at]:02X} at byte {at} is neither UTF-8 nor {name} (which has no "
                                f"character for it); {expected}", line=body.count(b"\n", 0, at) + 1) from None
    c1 = _C1.search(text)
    if c1 is not None:  # Latin-1's 0x80–0x9F are control codes: no text holds them
        at = c1.start()
        raise TextEncodingError(f"byte 0x{body[at]:02X} at byte {at} is neither UTF-8 nor a {name} character (a "
                                f"control code there); {expected}", line=body.count(b"\n", 0, at) + 1)
    return Decoded(text, name, f"not valid UTF-8 ({byte}, line {line}): {what}'s legacy encoding")


def control_bytes(head: bytes) -> int:
    """C0 control bytes other than tab and line ends in ``head``: text has almost none, binary data many."""
    return sum(head.count(bytes([c])) for c in (*range(1, 9), 11, 12, *range(14, 32), 127))


def looks_binary(head: bytes) -> bool:
    """More than 1 % of ``head`` is control bytes (:func:`control_bytes`)."""
    return control_bytes(head) > len(head) // 100


def read_text(path: str | Path, legacy: str, what: str = "the format", resave: str = "UTF-8 CSV") -> Decoded:
    """The text of the file at ``path`` decoded by :func:`decode_text`.

    Raises:
        ValueError: one line naming the file: it cannot be read, or its bytes are neither UTF-8 nor ``legacy``
            text (with the line).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return decode_text(raw, legacy, what, resave)
    except TextEncodingError as exc:
        where = f", line {exc.line}" if exc.line else ""
        raise ValueError(f"{path}{where}: {exc.what}") from None


# ------------------------------------------------------------------------------------------------
# A large file, streamed: the same rule, decided in one pass over its bytes without holding them

_LEGACY_BAD = {"latin-1": re.compile(rb"[\x80-\x9f]"), "cp1252": re.compile(rb"[\x81\x8d\x8f\x90\x9d]")}
"""The first byte that :func:`decode_text` refuses in each legacy encoding: Windows-1252 has no character for five
bytes, Latin-1 reads 0x80–0x9F as control codes."""

STREAM_CHUNK = 1 << 22
"""Bytes read at a time by :func:`scan_encoding` (4 MiB)."""


@dataclass(frozen=True)
class TextFile:
    """A file whose encoding :func:`scan_encoding` decided (the text itself not read): what :class:`Decoded` says
    of it, and ``codec``, the Python codec that reads it (``utf-8-sig`` drops a byte-order mark as
    :func:`decode_text` does)."""

    path: Path
    encoding: str
    why: str
    codec: str
    size: int

    def describe(self) -> str:
        """"text read as UTF-8 (valid UTF-8)": the line ``inventory`` prints (as :meth:`Decoded.describe`)."""
        return f"text read as {self.encoding} ({self.why})"

    def stream(self) -> TextIO:
        """The text, streamed in its encoding: lines split as ``io.StringIO(text, newline="")`` splits them."""
        return open(self.path, encoding=self.codec, newline="")


def scan_encoding(path: str | Path, legacy: str, what: str = "the format", progress=None,
                  resave: str = "UTF-8 CSV") -> TextFile:
    """The encoding :func:`decode_text` would read the file at ``path`` in, and its reason, decided in one pass over
    the bytes ``STREAM_CHUNK`` at a time (the memory of a chunk, whatever the file's size); ``progress``: a callable
    given the bytes read after each chunk.

    Raises:
        TextEncodingError: the one :func:`decode_text` raises on the same bytes (same words, byte and line).
        OSError: the file cannot be read.
    """
    path = Path(path)
    name = LEGACY_NAMES[legacy]
    expected = _expected(legacy, resave)
    legacy_bad = _LEGACY_BAD[legacy]
    with path.open("rb") as fh:
        head = fh.read(4000)
        problem = _whole_file_problem(head, expected)
        if problem is not None:
            raise problem
        bom = head.startswith(codecs.BOM_UTF8)
        fh.seek(len(codecs.BOM_UTF8) if bom else 0)
        start = len(codecs.BOM_UTF8) if bom else 0  # raw offset of the next chunk
        newlines = 0  # before it
        nul: tuple[int, int] | None = None  # (raw offset, line) of the first NUL byte
        bad: tuple[int, int, int] | None = None  # (raw offset, line, byte) of the first byte that is not UTF-8
        other: tuple[int, int, int] | None = None  # the same, of the first byte the legacy encoding refuses
        utf8_seq = False  # a multi-byte UTF-8 character somewhere
        ascii_only = True
        carry = b""  # a UTF-8 character cut by the chunk's end, carried to the next
        tail = b""  # the last bytes of the previous chunk (a UTF-8 character across two chunks)
        while chunk := fh.read(STREAM_CHUNK):
            if nul is None and (k := chunk.find(b"\x00")) >= 0:
                nul = (start + k, newlines + chunk.count(b"\n", 0, k) + 1)
            if not chunk.isascii():
                ascii_only = False
                utf8_seq = utf8_seq or _UTF8_SEQUENCE.search(tail + chunk) is not None
                if other is None and (m := legacy_bad.search(chunk)):
                    other = (start + m.start(), newlines + chunk.count(b"\n", 0, m.start()) + 1, chunk[m.start()])
            if bad is None and not (carry == b"" and chunk.isascii()):
                data = carry + chunk
                try:
                    data.decode("utf-8")
                    carry = b""
                except UnicodeDecodeError as exc:
                    if exc.reason == "unexpected end of data" and exc.end == len(data):
                        carry = data[exc.start:]  # completed, or refused, by the next chunk (or the end)
                    else:
                        at = exc.start - len(carry)  # in this chunk; a carried byte is never a newline
                        bad = (start + at, newlines + chunk.count(b"\n", 0, max(at, 0)) + 1, data[exc.start])
                        carry = b""
            newlines += chunk.count(b"\n")
            start += len(chunk)
            tail = (tail + chunk)[-3:]
            if progress is not None:
                progress(start)
        if bad is None and carry:  # the file ends inside a UTF-8 character
            bad = (start - len(carry), newlines + 1, carry[0])
    size = start
    if nul is not None:
        raise _nul_problem(*nul, expected)
    if bad is None:
        why = "UTF-8 byte-order mark" if bom else "plain ASCII, which is valid UTF-8" if ascii_only else "valid UTF-8"
        return TextFile(path, "UTF-8", why, "utf-8-sig" if bom else "utf-8", size)
    at, line, value = bad
    byte = f"byte 0x{value:02X} at byte {at}"
    if bom or utf8_seq:
        mark = "starts with a UTF-8 byte-order mark" if bom else "holds UTF-8 characters"
        raise TextEncodingError(f"the file {mark} but its {byte} is not UTF-8 (two encodings mixed?); {expected}",
                                line=line)
    if other is not None:
        o_at, o_line, o_value = other
        why = (f"is neither UTF-8 nor {name} (which has no character for it)" if legacy == "cp1252" else
               f"is neither UTF-8 nor a {name} character (a control code there)")
        raise TextEncodingError(f"byte 0x{o_value:02X} at byte {o_at} {why}; {expected}", line=o_line)
    return TextFile(path, name, f"not valid UTF-8 ({byte}, line {line}): {what}'s legacy encoding", legacy, size)
