"""Numbers as people type them on the command line: one parser for every numeric option.

- One number: digits with an optional sign, decimal point and exponent (``1000000``, ``2.5``, ``1e6``), or
  thousands separated by commas or underscores in groups of exactly three digits after the first group
  (``1,000,000``, ``1_000_000``, ``1,000.5``), as the tool's own help and tables write them. ``1,00``,
  ``1.000.000``, ``nan`` and ``inf`` are refused in one line saying what is accepted; ``1.000`` (one, or a
  thousand where a point separates thousands) is refused with both readings.
- A list of numbers (``--budgets``, ``--budgets-usd``): separated by ``;`` or spaces (``"5,000,000;10,000,000"``,
  ``"5e6 1e7"``), or by commas where no reading of them as thousands separators exists (``0.25,0.5,1``,
  ``5000000,10000000``). A comma list that also reads as thousands (``5,000,000``: one level of five million, or
  three levels 5, 0 and 0) is refused, the message spelling out both readings; so is a space list that reads
  as thousands (``1 000 000``).
"""

from __future__ import annotations

import argparse
import math
import re

PLAIN = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A number without separators."""

GROUPED = re.compile(r"[+-]?[0-9]{1,3}(?:(?P<sep>[,_])[0-9]{3})(?:(?P=sep)[0-9]{3})*(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")
"""A number with thousands separators (one kind in a number): groups of exactly three digits after the first."""

DOT_GROUPED = re.compile(r"\+?[1-9][0-9]{0,2}\.[0-9]{3}")
"""A point and exactly three digits after a first group of 1–3 (``1.000``, ``12.500``): where a point separates
thousands (much of Europe) this is a thousand times what it is elsewhere."""

SPELLING = "digits with an optional decimal point and exponent (1000000, 2.5, 1e6), thousands as 1,000,000"

LIST_SEPARATORS = "separate levels with ';' or spaces"


def number(text: str, option: str) -> float:
    """``text`` as one number (:data:`PLAIN` or :data:`GROUPED`), finite.

    Raises:
        ValueError: one line naming ``option``, what was given and what is accepted.
    """
    t = text.strip()
    if DOT_GROUPED.fullmatch(t):  # 1.000 is one to some and a thousand to others: refused with both readings
        raise ValueError(f"{option} {text!r} reads two ways: {float(t):g} (a decimal point) or "
                         f"{int(t.lstrip('+').replace('.', '')):,} (a point between thousands); write "
                         f"{float(t):g} or {int(t.lstrip('+').replace('.', ''))}")
    if PLAIN.fullmatch(t) or GROUPED.fullmatch(t):
        x = float(t.replace(",", "").replace("_", ""))
        if math.isfinite(x):
            return x
        raise ValueError(f"{option} {text!r}: more than any number a budget or level can be")
    if "," in t or "_" in t:
        why = "thousands separators go between groups of exactly three digits (1,000,000)"
    elif t.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        why = "not a finite number"
    else:
        why = "not a number"
    raise ValueError(f"{option} {text!r}: {why}; give {SPELLING}")


def whole(text: str, option: str) -> int:
    """``text`` as a whole number (:func:`number` without a fraction: ``20,251,101`` as the help writes a seed).

    Raises:
        ValueError: not a number, or not whole.
    """
    x = number(text, option)
    if x != int(x):
        raise ValueError(f"{option} {text!r}: give a whole number")
    return int(x)


def _group_readings(parts: list[str]) -> list[str] | None:
    """The comma-separated ``parts`` joined where commas can be thousands separators (a part of 1–3 digits, then
    parts of exactly three digits, the last may carry a fraction); None when no commas can be."""
    merged: list[str] = []
    joined = False
    for p in parts:
        s = p.strip()
        prev = merged[-1] if merged else None
        if prev is not None and re.fullmatch(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})*", prev) and re.fullmatch(
                r"[0-9]{3}(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?", s):
            merged[-1] = f"{prev},{s}"
            joined = True
        else:
            merged.append(s)
    return merged if joined else None


def _reading(parts: list[str]) -> tuple[str, str, str]:
    """("3 levels", "5, 0 and 0", "'5;0;0'"): a reading of a list, its values and how to write it unambiguously."""
    values = [f"{float(p.strip().replace(',', '')):,.15g}" for p in parts]
    plain = [f"{float(p.strip().replace(',', '')):.15g}" for p in parts]
    count = "one level" if len(parts) == 1 else f"{len(parts)} levels"
    listed = values[0] if len(values) == 1 else f"{', '.join(values[:-1])} and {values[-1]}"
    return count, listed, plain[0] if len(plain) == 1 else f"'{';'.join(plain)}'"


def numbers(text: str | None, option: str) -> list[float] | None:
    """``text`` as a list of numbers (module docstring), each finite and ≥ 0; None for None.

    Raises:
        ValueError: an empty entry, an entry that is not a number, a negative one, or commas that read both as
            list separators and as thousands separators (both readings spelled out).
    """
    if text is None:
        return None
    example = "e.g. 0.5,1,1.5 or '5,000,000;10,000,000'"
    if re.search(r";|\s", text.strip()):
        parts = re.split(r"\s*;\s*|\s*,\s+|\s+", text.strip())
        spaced = text.strip().split()
        if ";" not in text and "," not in text and len(spaced) > 1 and re.fullmatch(r"[0-9]{1,3}", spaced[0]) \
                and all(re.fullmatch(r"[0-9]{3}(?:\.[0-9]*)?", x) for x in spaced[1:]):
            one, many = _reading(["".join(spaced)]), _reading(spaced)
            raise ValueError(f"{option} {text!r} reads two ways: {one[0]}, {one[1]} (spaces between thousands), "
                             f"or {many[0]}, {many[1]} (spaces between levels); write {one[2]} for the {one[0]}, "
                             f"{many[2]} for the {many[0]}")
    else:
        parts = text.split(",")
        if all(p.strip() for p in parts):
            grouped = _group_readings(parts)
            if grouped is not None:
                one, many = _reading(grouped), _reading(parts)
                raise ValueError(f"{option} {text!r} reads two ways: {one[0]}, {one[1]} (commas as thousands "
                                 f"separators), or {many[0]}, {many[1]} (commas between levels); write {one[2]} for "
                                 f"the {one[0]}, {many[2]} for the {many[0]} ({LIST_SEPARATORS})")
    if not all(p.strip() for p in parts):
        raise ValueError(f"{option} {text!r}: an empty entry; give numbers separated by commas, ';' or spaces, "
                         f"{example}")
    values = []
    for p in parts:
        try:
            values.append(number(p, option))
        except ValueError:
            raise ValueError(f"{option} {text!r}: give numbers separated by commas, ';' or spaces, {example} "
                             f"({p.strip()!r} is not a number)") from None
    bad = [p for p, v in zip(parts, values, strict=True) if v < 0]
    if bad:
        raise ValueError(f"{option} {bad[0].strip()}: each level must be a finite number ≥ 0")
    return values


def NUMBER(text: str) -> float:
    """An argparse type: :func:`number` (argparse names the option)."""
    try:
        return number(text, "")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"invalid value {str(exc).strip()}") from None


def WHOLE(text: str) -> int:
    """An argparse type: :func:`whole`."""
    try:
        return whole(text, "")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"invalid value {str(exc).strip()}") from None
