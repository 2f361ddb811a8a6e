"""The text of a file a user gives (an NBI inventory, a mapped CSV table, an inspection history): its encoding is
decided from its bytes, one rule for every reader.

- A UTF-8 byte-order mark, or bytes that are valid UTF-8 (what editors, spreadsheets and ``pandas.to_csv`` write
  today): UTF-8.
- Otherwise the format's legacy encoding: Latin-1 for FHWA's NBI files, Windows-1252 for CSV tables exported by
  a spreadsheet (Latin-1 with printable characters where Latin-1 has control codes, 0x80–0x9F).
- Neither (refused in one line, naming the byte and its line): a UTF-16/UTF-32 byte-order mark, NUL bytes (UTF-16
  without a byte-order mark, or binary data), many control bytes (binary data), a file that mixes UTF-8 sequences
  with bytes that are not UTF-8 (two encodings pasted together), bytes the legacy encoding has no character for
  (Windows-1252's 0x81, 0x8D, 0x8F, 0x90, 0x9D) or reads as control codes (Latin-1's 0x80–0x9F).

:func:`decode_text` returns the text and the encoding it was read in (``inventory`` says which).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path

LEGACY_NAMES = {"latin-1": "Latin-1", "cp1252": "Windows-1252"}
"""Legacy encodings a format may fall back to: codec → the name a message uses."""

_UTF8_SEQUENCE = re.compile(rb"[\xC2-\xDF][\x80-\xBF]|[\xE0-\xEF][\x80-\xBF]{2}|[\xF0-\xF4][\x80-\xBF]{3}")
"""A multi-byte UTF-8 character (Latin-1 text almost never holds one: ``Ã¼`` is what UTF-8 ``ü`` reads as)."""

_C1 = re.compile("[\x80-\x9f]")


class TextEncodingError(ValueError):
    """A file whose bytes are neither UTF-8 nor its format's legacy encoding. ``what``: the one-line reason (no
    file name: the reader adds it); ``line``: 1-based line of the first offending byte; ``column``: the first
    header field where it could be read (UTF-16 text), else None."""

    def __init__(self, what: str, line: int | None = None, column: str | None = None):
        super().__init__(what)
        self.what, self.line, self.column = what, line, column


@dataclass(frozen=True)
class Decoded:
    """A file's text and how it was read."""

    text: str
    encoding: str  # "UTF-8", "Latin-1" or "Windows-1252"
    why: str  # "valid UTF-8", "UTF-8 byte-order mark", "not valid UTF-8 (byte 12, line 2): the NBI's legacy …"

    def describe(self) -> str:
        """"text read as UTF-8 (valid UTF-8)": the line ``inventory`` prints."""
        return f"text read as {self.encoding} ({self.why})"


def decode_text(raw: bytes, legacy: str, what: str = "the format") -> Decoded:
    """``raw`` decoded by the rule of this module; ``legacy``: the codec of the format's legacy encoding
    (``"latin-1"`` for NBI files, ``"cp1252"`` for spreadsheet CSV), ``what`` names the format in the reason.

    Raises:
        TextEncodingError: the bytes are neither UTF-8 nor ``legacy`` text (one line, with the line number).
    """
    name = LEGACY_NAMES[legacy]
    expected = f"expected UTF-8 or {name} text: re-save it as UTF-8 CSV"
    boms = ((codecs.BOM_UTF32_LE, "UTF-32", "utf-32"), (codecs.BOM_UTF32_BE, "UTF-32", "utf-32"),
            (codecs.BOM_UTF16_LE, "UTF-16", "utf-16"), (codecs.BOM_UTF16_BE, "UTF-16", "utf-16"))
    for bom, enc, codec in boms:
        if raw.startswith(bom):
            raise TextEncodingError(f"the file is {enc}-encoded (byte-order mark {bom.hex(' ').upper()}); {expected}",
                                    line=1, column=_first_field(raw, codec))
    head = raw[:4000]
    if looks_binary(head):
        raise TextEncodingError(f"not a text file ({control_bytes(head)} control bytes in its first {len(head)} "
                                f"bytes); {expected}", line=1)
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        guess = "UTF-16" if raw[:2].count(b"\x00") == 1 else "binary or UTF-16/32"
        first = _first_field(raw, "utf-16-le" if raw[1:2] == b"\x00" else "utf-16-be")
        raise TextEncodingError(f"NUL byte at byte {nul}: the file looks {guess}-encoded, not text; {expected}",
                                line=line, column=first if line == 1 else None)
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


def _first_field(raw: bytes, codec: str) -> str | None:
    """The first header field of ``raw`` read as ``codec``, where it reads as a plausible column name."""
    try:
        head = raw[:4000].decode(codec, errors="replace").lstrip("\ufeff")
    except LookupError:
        return None
    name = re.split(r"[,;\t\r\n]", head, maxsplit=1)[0].strip().strip("'\"")
    # Only a plausible column name is worth quoting; decoded binary is a long run of arbitrary characters.
    return name if name and len(name) <= 40 and name.isprintable() else None


def read_text(path: str | Path, legacy: str, what: str = "the format") -> Decoded:
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
        return decode_text(raw, legacy, what)
    except TextEncodingError as exc:
        where = f", line {exc.line}" if exc.line else ""
        raise ValueError(f"{path}{where}: {exc.what}") from None
