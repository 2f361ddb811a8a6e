"""Numbers as people type them on the command line: one parser for every numeric option of every command.

- A real number (``--budget-usd``, ``--budget-scale``, ``--grid-step``, …): digits with an optional ``-``, decimal
  point and exponent (``1000000``, ``2.5``, ``1e6``), or thousands between commas where no other reading exists:
  two commas or more (``1,000,000``) or a comma before a decimal point (``1,000.5``).
- A whole number (``--seed``, ``--samples``, ``--episodes``, ``--years``, ``--threads``, …): digits, or
  ``20,251,101`` as the help writes a seed; no decimal point or exponent (``1e9`` is refused saying
  ``1000000000``).
- Refused in one line naming the option and what was typed, with both readings where there are two: ``1,000`` and
  ``1.000`` (one where the comma or point is decimal, a thousand where it separates thousands: a European
  ``1,000`` multiple is 1.0); ``1.000.000`` and ``1,5`` (the decimal comma's spellings); ``1_000_000`` and
  ``+1000`` (Python's spellings, which no spreadsheet writes and the inventory readers refuse); ``nan``, ``inf``;
  a number beyond a 64-bit float (``1e400``, echoed as typed) or one that rounds to 0 there (``1e-400``).
- A list of numbers (``--budgets``, ``--budgets-usd``): separated by ``;`` or spaces (``"5,000,000;10,000,000"``,
  ``"5e6 1e7"``), or by commas where no reading of them as thousands separators exists (``0.25,0.5,1``,
  ``5000000,10000000``). A comma list that also reads as thousands (``5,000,000``: one level of five million, or
  three levels 5, 0 and 0) is refused, the message spelling out both readings; so is a space list that reads
  as thousands (``1 000 000``).
- An option with a range (:class:`~bridgefleet.config.quantities.Quantity`) is refused outside it with the range
  and the value as typed (``--budget-usd 1e20: must be in [0, 1e15] USD a year``), never a product of it printed
  to 20 digits.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable

from bridgefleet.config.quantities import MAX_BUDGET_USD, Quantity

PLAIN = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A number without separators (a leading ``-`` only: ``+1000`` is Python's, not a user's)."""

DIGITS = re.compile(r"-?[0-9]+")
"""A whole number in digits."""

GROUPED = re.compile(r"-?[0-9]{1,3}(?:,[0-9]{3}){2,}|-?[0-9]{1,3}(?:,[0-9]{3})+\.[0-9]*")
"""Thousands between commas where they read no other way: two commas or more (``1,000,000``), or a comma before
a decimal point (``1,000.5``)."""

COMMA_OR_POINT = re.compile(r"-?(?P<head>[0-9]{1,3})(?P<sep>[.,])(?P<tail>[0-9]{3})")
"""One comma or point before exactly three digits, the first group not 0 (``1,000``, ``1.000``, ``12,500``):
one to some, a thousand to others."""

DECIMAL_COMMA = re.compile(r"-?[0-9]+(?:\.[0-9]{3})*,[0-9]+|-?[0-9]{1,3}(?:\.[0-9]{3}){2,}")
"""The decimal comma's spellings (``1,5``, ``1.000,50``, ``1.000.000``)."""

SPELLING = "digits with an optional decimal point and exponent (1000000, 2.5, 1e6), thousands as 1,000,000"

WHOLE_SPELLING = "a whole number in digits (1000000, or 1,000,000)"

LIST_SEPARATORS = "separate levels with ';' or spaces"

BUDGET_USD = Quantity(0.0, MAX_BUDGET_USD, "USD a year", "a thousand trillion is the most a budget may be")
"""``--budget-usd`` and each ``--budgets-usd`` level."""

BUDGET_MULTIPLE = Quantity(0.0, 100.0, "× the sized budget", "give --budget-usd for a budget in USD")
"""``--budget-scale`` and each ``--budgets`` level (the range of a trained run's ``budget_scale_range``)."""


class Refused(ValueError):
    """A typed number refused; the message is one line naming the option and the text as typed."""


def _typed(option: str, text: str, quoted: bool = True) -> str:
    """``--seed '1.000'`` (or ``'1.000'`` where argparse names the option); unquoted, ``--years 0``, for a number
    outside its range."""
    said = repr(text) if quoted else text.strip()
    return f"{option} {said}" if option else said


def _both(t: str, m: re.Match[str]) -> str:
    """" reads two ways: …" of :data:`COMMA_OR_POINT`'s match ``m`` of ``t``."""
    sign = "-" if t.startswith("-") else ""
    small = float(f"{sign}{m['head']}.{m['tail']}")
    large = int(f"{sign}{m['head']}{m['tail']}")
    mark = "point" if m["sep"] == "." else "comma"
    return (f" reads two ways: {small:g} (a decimal {mark}) or {large:,} (a {mark} between thousands); write "
            f"{small:g} or {large}")


def _why(t: str, whole: bool) -> str | None:
    """Why ``t`` (stripped) is refused (the text after what was typed: ``": not a number; …"`` or ``" reads two
    ways: …"``), None where it is a number of the kind asked."""
    if not t:
        return f": empty; give {WHOLE_SPELLING if whole else SPELLING}"
    if t.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return f": not a finite number; give {WHOLE_SPELLING if whole else SPELLING}"
    if t.startswith("+"):
        return ": write it without '+'" + (f" ({t[1:]})" if _why(t[1:], whole) is None else "")
    if "_" in t:
        plain = t.replace("_", "")
        return ": '_' is not a thousands separator here; write " + (
            _plainly(plain) if DIGITS.fullmatch(plain) else WHOLE_SPELLING if whole else SPELLING)
    m = COMMA_OR_POINT.fullmatch(t)
    if m and m["head"] != "0":
        return _both(t, m)
    if DECIMAL_COMMA.fullmatch(t):
        plain = t.replace(".", "").replace(",", ".")
        if "," in t:
            return f": a decimal comma? write {float(plain):.15g} (a decimal point; commas go between thousands)"
        return f": points between thousands? write {_plainly(plain)}"
    if GROUPED.fullmatch(t) or PLAIN.fullmatch(t):
        if whole and not (DIGITS.fullmatch(t) or (GROUPED.fullmatch(t) and "." not in t)):
            x = float(t.replace(",", ""))
            if math.isfinite(x) and x == int(x):
                return f": give a whole number in digits ({_plainly(str(int(x)))})"
            return f": give {WHOLE_SPELLING}"
        return None
    if "," in t:
        return f": commas go between groups of three digits (1,000,000); give {SPELLING}"
    return f": not a number; give {WHOLE_SPELLING if whole else SPELLING}"


def _plainly(digits: str) -> str:
    """How to write whole ``digits`` so they read one way: ``1000``, or ``1000000 or 1,000,000`` (a single comma
    would read two ways)."""
    n = int(digits)
    return f"{n} or {n:,}" if abs(n) >= 1_000_000 else str(n)


def number(text: str, option: str, quantity: Quantity | None = None) -> float:
    """``text`` as one real number (module docstring), finite, nonzero where its digits are, and within
    ``quantity``'s range where given.

    Raises:
        Refused: one line naming ``option``, ``text`` as typed and what is accepted (or its two readings).
    """
    t = text.strip()
    why = _why(t, whole=False)
    if why is None:
        x = float(t.replace(",", ""))
        if quantity is not None and not (math.isfinite(x) and quantity.contains(x)):
            raise Refused(f"{_typed(option, text, quoted=False)}: {quantity.need()}")
        if math.isinf(x):
            why = ": beyond the largest number a 64-bit float holds (about 1.8e308)"
        elif x == 0 and re.search(r"[1-9]", t.lower().partition("e")[0]):
            why = ": below the smallest number a 64-bit float holds (about 5e-324): it would be 0"
        else:
            return x
    raise Refused(f"{_typed(option, text)}{why}")


def whole(text: str, option: str, low: int | None = None, why_low: str = "") -> int:
    """``text`` as a whole number in digits (``20,251,101`` as the help writes a seed), at least ``low`` where
    given (``why_low``: the refusal's words below it, default "must be at least LOW").

    Raises:
        Refused: not a whole number in digits, or below ``low``.
    """
    t = text.strip()
    why = _why(t, whole=True)
    if why is None:
        n = int(t.replace(",", ""))
        if low is None or n >= low:
            return n
        raise Refused(f"{_typed(option, text, quoted=False)}: {why_low or f'must be at least {low}'}")
    raise Refused(f"{_typed(option, text)}{why}")


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


def numbers(text: str | None, option: str, quantity: Quantity | None = None) -> list[float] | None:
    """``text`` as a list of numbers (module docstring), each finite and ≥ 0 (within ``quantity``'s range where
    given); None for None.

    Raises:
        Refused: an empty entry, an entry that is not a number (with its reason), a negative one, one outside
            ``quantity``, or commas that read both as list separators and as thousands separators (both readings
            spelled out).
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
            raise Refused(f"{option} {text!r} reads two ways: {one[0]}, {one[1]} (spaces between thousands), "
                          f"or {many[0]}, {many[1]} (spaces between levels); write {one[2]} for the {one[0]}, "
                          f"{many[2]} for the {many[0]}")
    else:
        parts = text.split(",")
        if len(parts) == 2 and re.fullmatch(r"-?[0-9]+", parts[0].strip()) and re.fullmatch(r"[0-9]{1,2}",
                                                                                            parts[1].strip()):
            one, many = _reading([".".join(p.strip() for p in parts)]), _reading(parts)
            raise Refused(f"{option} {text!r} reads two ways: {one[0]}, {one[1]} (a decimal comma), or {many[0]}, "
                          f"{many[1]} (commas between levels); write {one[2]} for the {one[0]}, {many[2]} for the "
                          f"{many[0]}")
        if all(p.strip() for p in parts):
            grouped = _group_readings(parts)
            if grouped is not None:
                one, many = _reading(grouped), _reading(parts)
                raise Refused(f"{option} {text!r} reads two ways: {one[0]}, {one[1]} (commas as thousands "
                              f"separators), or {many[0]}, {many[1]} (commas between levels); write {one[2]} for "
                              f"the {one[0]}, {many[2]} for the {many[0]} ({LIST_SEPARATORS})")
    if not all(p.strip() for p in parts):
        raise Refused(f"{option} {text!r}: an empty entry; give numbers separated by commas, ';' or spaces, "
                      f"{example}")
    values = []
    for p in parts:
        why = _why(p.strip(), whole=False)
        if why is None and float(p.strip().replace(",", "")) < 0:
            raise Refused(f"{option} {p.strip()}: each level must be a finite number ≥ 0")
        if why is not None and why.startswith(": not a number"):
            raise Refused(f"{option} {text!r}: give numbers separated by commas, ';' or spaces, {example} "
                          f"({p.strip()!r} is not a number)")
        try:
            values.append(number(p, "", quantity))
        except Refused as exc:  # the level as typed, within the list as typed where it has several
            raise Refused(f"{option} {exc}" if len(parts) == 1 else f"{option} {text!r}: level {exc}") from None
    return values


def _argparse_type(parse: Callable[[str], float | int]) -> Callable[[str], float | int]:
    """``parse`` as an argparse type: its refusal, which argparse prefixes with ``argument --option:``."""

    def typed(text: str) -> float | int:
        try:
            return parse(text)
        except Refused as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return typed


NUMBER = _argparse_type(lambda text: number(text, ""))
"""An argparse type: :func:`number` (argparse names the option)."""

WHOLE = _argparse_type(lambda text: whole(text, ""))
"""An argparse type: :func:`whole`."""


def real_in(quantity: Quantity) -> Callable[[str], float]:
    """An argparse type: :func:`number` within ``quantity``'s range."""
    return _argparse_type(lambda text: number(text, "", quantity))


def whole_at_least(low: int, why: str = "") -> Callable[[str], int]:
    """An argparse type: :func:`whole`, at least ``low`` (``why``: the refusal's words below it)."""
    return _argparse_type(lambda text: whole(text, "", low, why))
