"""A plan's treatments as SNBI ``Works`` entries (``plan --format snbi-works``): the bridge records of an SNBI
submittal file (FHWA, NBI Submittal File Schema; ``shared/reference/snbi.md``), each holding only its bridge
number and the work the plan schedules, so an agency can load them beside its own data, matched on ``BID01``.

The file is a JSON array, a record per bridge with planned work, in the plan's bridge order (as ``plan.csv``)::

    [{"BID01": "0001", "Works": [{"BW02": 2027, "BW03": "DK1"}, {"BW02": 2027, "BW03": "SP2"}, ...]}, ...]

Tags, as snbi.md gives them: ``BID01`` bridge number (text, leading zeros kept); in ``Works``, one entry per work
event: ``BW02`` year work performed, ``BW03`` work performed (a work code: ``DK4``, ``SP2``, ``BR01`` …). A treatment
of several components (``DK1+SP2+SB2`` in ``plan.csv``'s ``snbi_work_code``) is one entry per component's code,
the same year. snbi.md names the tags but not the JSON type of ``BW02``: it is written as a whole number (a calendar
year), as the project's SNBI reader (:mod:`bridgefleet.inventory.snbi`, which also takes four-digit text) and its
test files have it. Nothing beyond the SNBI tags is written (no costs: the file has no item for them; they stay in
``plan.csv``).
"""

from __future__ import annotations

import datetime
import warnings
from pathlib import Path
from typing import Any

from bridgefleet.outputs import counted, write_json

WORKS_SUFFIX = ".works.json"
"""The works file beside a plan CSV: ``plan.csv`` → ``plan.works.json``."""


def works_path(out: Path) -> Path:
    """The works file beside the plan CSV ``out``: ``<stem>.works.json`` in its folder."""
    return out.with_name(f"{out.stem}{WORKS_SUFFIX}")


def start_year_of(start_year: int | None, years: int) -> int:
    """The calendar year of the plan's year 1: ``start_year``, or this year (``datetime.date.today().year``) when
    None.

    Raises:
        ValueError: a year 1 before 1000, or a last year (``start + years − 1``) after 9999: SNBI years have four
            digits.
    """
    start = datetime.date.today().year if start_year is None else int(start_year)
    if start < 1000 or start + years - 1 > 9999:
        raise ValueError(f"--start-year {start}: the plan's years {start}–{start + years - 1} must be four-digit "
                         "calendar years (SNBI's BW02)")
    return start


def refuse_without_codes(component_model: str | None, what: str) -> None:
    """Refuse the SNBI works format where the fleet model has no SNBI work codes (the continuous models: their
    actions are not SNBI work types); ``what`` names the fleet (``"the run runs/x"``, ``"this fleet"``).

    Raises:
        ValueError: ``component_model`` is None (one line, naming the option that fixes it).
    """
    if component_model is None:
        raise ValueError(f"--format snbi-works: {what} is on a continuous fleet model, whose actions have no SNBI work "
                         "code; plan on the component model (--fleet-model components-2026) or leave --format out")


def works_records(plan: Any, start_year: int) -> list[dict[str, Any]]:
    """The plan's planned work as SNBI bridge records: ``[{"BID01": str, "Works": [{"BW02": int, "BW03": str},
    …]}, …]``, one record per bridge with any planned work (the plan's bridge order; bridges with none are left
    out), its entries by year, then by component in the code's order. Year ``y`` of the plan (1-based) is
    calendar year ``start_year + y − 1``. The plan's work in a year is its modal action's code
    (``plan.work_code``, as ``plan.csv``'s ``snbi_work_code``): do nothing ('') gives no entry; a code of
    several components joined by "+" gives an entry per component. A treatment whose model gives it no code is
    left out with a warning (it has no SNBI work type to write).

    ``plan``: its ``work_code`` str (Y, B), ``action`` int (Y, B) and ``bridge_id`` str (B,) are read.

    Raises:
        ValueError: the plan has no work codes (a continuous fleet model's plan).
    """
    if plan.work_code is None:
        refuse_without_codes(None, "the plan")
    records: list[dict[str, Any]] = []
    uncoded = 0
    for j, bid in enumerate(plan.bridge_id):  # output records, not simulation
        works = []
        for y in range(plan.years):
            code = str(plan.work_code[y, j]).strip()
            if not code:
                uncoded += int(plan.action[y, j] > 0)
                continue
            works += [{"BW02": start_year + y, "BW03": c} for c in dict.fromkeys(code.split("+")) if c]
        if works:
            records.append({"BID01": str(bid), "Works": works})
    if uncoded:
        warnings.warn(f"{counted(uncoded, 'planned treatment')} of the component model without an SNBI work code left "
                      "out of the works file (plan.csv has them)", stacklevel=2)
    return records


def write_works(plan: Any, path: Path, start_year: int) -> str:
    """Write :func:`works_records` of ``plan`` to ``path`` as JSON (UTF-8, atomically: a temporary file renamed
    into place; bridge numbers JSON-escaped); return a one-line account of what it holds."""
    records = works_records(plan, start_year)
    write_json(path, records)
    entries = sum(len(r["Works"]) for r in records)
    return (f"SNBI works: {path} ({entries} Works {'entry' if entries == 1 else 'entries'} on "
            f"{counted(len(records), 'bridge')}, BW02 {start_year}–{start_year + plan.years - 1})")
