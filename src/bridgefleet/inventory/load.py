"""Real bridge inventories: FHWA National Bridge Inventory (NBI) files and mapped CSV tables.

An :class:`Inventory` holds one row per bridge (arrays of shape (N,)) and turns into a fixed fleet for
:class:`bridgefleet.sim.simulator.FleetSimulator` with :meth:`Inventory.to_fleet`. Every field is
derived from a documented NBI item of the FHWA *Recording and Coding Guide for the Structure Inventory
and Appraisal of the Nation's Bridges* (1995); the full mapping table, the defaults and the error
behaviour are in ``docs/inventory.md``.

Entry points:

- :func:`read_nbi` — an NBI delimited file as FHWA publishes it (one state or the national file).
- :func:`read_snbi` — an SNBI submittal file (JSON, the NBI from the 2026 submittal on).
- :func:`read_csv_inventory` — any CSV table with a column mapping (dict or YAML file).
- :func:`load_inventory` — a bundled name (``"dc-2019"``) or a path; picks the reader.
- :func:`summarize` — the text printed by ``bridgefleet inventory PATH``.

Modules by job: :mod:`~bridgefleet.inventory.model` (constants, errors, :class:`Inventory`),
:mod:`~bridgefleet.inventory.values` (each field's value), :mod:`~bridgefleet.inventory.rows` (decoding, rows →
bridges), :mod:`~bridgefleet.inventory.json_stream` (an SNBI file's records, streamed),
:mod:`~bridgefleet.inventory.nbi`, :mod:`~bridgefleet.inventory.mapped_csv` and :mod:`~bridgefleet.inventory.snbi`
(the three readers); this module picks the reader and summarises.

Bad input raises one :class:`InventoryError` naming the file, the line and the column; a few bad rows
in an otherwise usable file are dropped and listed in :attr:`Inventory.dropped` instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from bridgefleet.inventory.agencies import agency_lines
from bridgefleet.inventory.mapped_csv import read_csv_inventory
from bridgefleet.inventory.model import (  # re-exported: this module is the public face
    BUNDLED,
    BUNDLED_MAPPINGS,
    GOOD_MIN,
    MAX_BAD_FRACTION,
    NBI_REQUIRED,
    POOR_MAX,
    RATE_BY_BAND,
    REFERENCE_UNIT_COST_USD_PER_FT2,
    UNIT_COST_USD_PER_FT2,
    YSM_CAP,
    Inventory,
    InventoryError,
    condition_band,
    default_rate,
    dropped_by_category,
    state_cost_factor,
)
from bridgefleet.inventory.nbi import read_nbi
from bridgefleet.inventory.rows import _no_such_file, check_delimiter
from bridgefleet.inventory.snbi import read_snbi
from bridgefleet.inventory.values import _clean
from bridgefleet.inventory.works_history import works_summary
from bridgefleet.outputs import counted
from bridgefleet.sim.model import DEFAULT_DETOUR_KM, DEFAULT_TRUCK_SHARE, band_shares, fhwa_weight
from bridgefleet.textfile import TextEncodingError, decode_text

__all__ = [
    "BUNDLED", "BUNDLED_MAPPINGS", "GOOD_MIN", "MAX_BAD_FRACTION", "NBI_REQUIRED", "POOR_MAX", "RATE_BY_BAND",
    "REFERENCE_UNIT_COST_USD_PER_FT2", "UNIT_COST_USD_PER_FT2", "YSM_CAP", "Inventory", "InventoryError",
    "bundled_path", "condition_band", "default_rate", "load_inventory", "read_csv_inventory", "read_nbi",
    "read_snbi", "state_cost_factor", "summarize",
]

# ------------------------------------------------------------------------------------------------
# Loading by name, summary

_INDIANA_HEADER = {"STRUCTURE_NUMBER_008", "Road_class", "FUTURE_ADT_114", "Age", "DECK_COND_058"}


def bundled_path(name: str) -> Path:
    """Path of a bundled inventory (``"dc-2019"`` → ``bridgefleet/data/DC19.txt``)."""
    try:
        filename = BUNDLED[name]
    except KeyError:
        raise InventoryError(f"unknown bundled inventory {name!r}; bundled: {', '.join(BUNDLED)}") from None
    return Path(str(resources.files("bridgefleet").joinpath("data", filename)))


def _header(path: Path) -> list[str]:
    try:
        with path.open("rb") as fh:
            first = fh.readline(1 << 16)
            fh.seek(0)
            head = fh.read(4000)
    except FileNotFoundError:
        raise _no_such_file(path) from None
    except OSError as exc:
        raise InventoryError(f"cannot read the file ({exc.strerror})", path) from None
    if not head.strip():
        return []  # the reader raises the empty-file error
    try:  # the header line alone, only to pick the reader (which decides the whole file's encoding)
        text = decode_text(first, "cp1252").text
    except TextEncodingError:
        return []  # the reader raises the encoding or binary-file error
    check_delimiter(text, path)
    return [_clean(f) for f in text.split(",")]


def _is_json(path: Path) -> bool:
    """An SNBI submittal file by its content: the first non-space byte (after a UTF-8 byte-order mark) is ``[`` or
    ``{`` (JSON; no NBI or CSV table starts so), or the name ends in ``.json`` (read_snbi then names what it is)."""
    if path.suffix.lower() == ".json":
        return True
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False  # the readers name the problem
    return head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] in (b"[", b"{")


def own_layout(name_or_path: str | Path) -> bool:
    """Whether an inventory is read by its own layout, needing no column mapping: a bundled NBI file, an SNBI file
    (:func:`_is_json`) or a Coding-Guide NBI file (``RECORD_TYPE_005A`` in its header, or a ``.txt`` name), as
    :func:`load_inventory` decides without a mapping; False for any other table and for a file that cannot be read
    (its reader names the problem)."""
    if isinstance(name_or_path, str) and name_or_path in BUNDLED:
        return True
    path = Path(name_or_path)
    if not path.is_file():
        return False
    if _is_json(path) or path.suffix.lower() == ".txt":
        return True
    try:
        return "RECORD_TYPE_005A" in _header(path)
    except InventoryError:
        return False


def load_inventory(name_or_path: str | Path, mapping: Mapping[str, Any] | str | Path | None = None
                   ) -> Inventory:
    """Load a bundled inventory or a file, choosing the reader.

    - A bundled name (``"dc-2019"``: FHWA NBI 2019, District of Columbia) → :func:`read_nbi` on the copy
      in the package.
    - With ``mapping`` (dict, YAML path or bundled mapping name such as ``"indiana"``) →
      :func:`read_csv_inventory`.
    - A file whose header has ``RECORD_TYPE_005A``, or a ``.txt`` file → :func:`read_nbi`.
    - A CSV with the GIAMS Indiana header → :func:`read_csv_inventory` with the bundled Indiana mapping.
    - A JSON file (first non-space byte ``[`` or ``{``, whatever its name; or a ``.json`` name) → :func:`read_snbi`.

    Raises:
        InventoryError: unknown file layout without a mapping, and every error of the readers.
    """
    if isinstance(name_or_path, str) and name_or_path in BUNDLED:
        if mapping is not None:
            raise InventoryError(f"{name_or_path} is a bundled NBI file, read as one; a column mapping ({mapping}) "
                                 "is for a CSV table of another layout: leave --mapping out")
        return read_nbi(bundled_path(name_or_path))
    path = Path(name_or_path)
    if mapping is not None:
        return read_csv_inventory(path, mapping)
    if _is_json(path):
        return read_snbi(path)
    header = _header(path)
    if "RECORD_TYPE_005A" in header or path.suffix.lower() == ".txt" or not header:
        return read_nbi(path)
    if set(header) >= _INDIANA_HEADER:
        return read_csv_inventory(path, "indiana")
    named = [h for h in header if h]
    blank = f"; {len(header) - len(named)} blank column names (a multi-line header?)" if len(named) < len(
        header) else ""
    raise InventoryError(
        f"not an NBI file (no RECORD_TYPE_005A column) and no column mapping given: pass mapping= "
        f"(CLI: --mapping M.yaml; see docs/inventory.md); first line names {', '.join(named[:6])}{blank}",
        path, line=1, column=header[0] if header and header[0] else None)


def _quartiles(x: np.ndarray) -> str:
    if len(x) == 0:
        return "-"
    q = np.percentile(x.astype(np.float64), [0, 25, 50, 75, 100])
    return "  ".join(f"{v:>10,.0f}" for v in q)


def _nhs_line(inv: Inventory) -> str:
    """The summary's line on National Highway System membership (item 104 or the mapping's ``nhs`` rule)."""
    on, coded = inv.on_nhs, ~np.isnan(inv.nhs)
    if not on.any():
        why = "no bridge on the NHS" if coded.any() else "not coded"
        return f"National Highway System: {why}: FHWA deck-area measures count all bridges"
    area = inv.deck_area.astype(np.float64)
    share = 100.0 * area[on].sum() / max(area.sum(), 1e-300)
    return (f"National Highway System: {counted(int(on.sum()), 'bridge')} on the NHS ({share:.1f} % of deck "
            f"area), {int((coded & ~on).sum())} not, {int((~coded).sum())} not coded; FHWA deck-area measures "
            "count NHS bridges")


def _works_lines(inv: Inventory) -> list[str]:
    """The summary's lines on each component's last work (SNBI files; none for NBI files and mapped CSVs), decks
    starting protected counted on the component fleet model ``components-2026`` (the one that has the flag)."""
    if not (inv.work_code != "").any():
        return []
    from bridgefleet.config.fleet import FLEET_MODELS
    from bridgefleet.sim.components import ComponentModel

    name = "components-2026"
    model = ComponentModel.load(FLEET_MODELS[name]["component_model"])
    return works_summary(inv.work_code, inv.culvert, inv.preserved_years(), model.protection_years, name, inv.year)


def _agency_lines(inv: Inventory) -> list[str]:
    """The summary's lines on the agencies that hold the budgets (:mod:`bridgefleet.inventory.agencies`), each budget
    sized as the default fleet model sizes it (:func:`bridgefleet.inventory.fleet.resolve_fleet`)."""
    if not inv.kept:
        return []
    from bridgefleet.config import FleetConfig

    cfg = FleetConfig.default_model()
    unit = cfg.unit_costs_usd_per_m2[4]
    how = (f"1/{1 / cfg.budget_share_of_replacement:g} of its bridges' replacement value (deck area × USD "
           f"{unit:,.0f}/m² × cost factor; the {cfg.model_name()} fleet model)")
    size = inv.deck_area.astype(np.float64) * inv.cost_factor
    return agency_lines(inv.agency_labels(cfg.agencies == "owners_by_locality"), inv.urban, size,
                        cfg.budget_share_of_replacement * unit, how)


def summarize(inv: Inventory) -> str:
    """Text summary (the output of ``bridgefleet inventory PATH``); pure, no printing.

    Bridges kept and dropped (reasons counted), urban/rural counts, the agencies that hold the budgets (owners, with
    their bridges and sized annual budgets), coded truck shares and detours, bridges on
    the National Highway System (count and share of deck area), FHWA Good/Fair/Poor counts (lowest
    rating ≥ 7 / 5–6 / ≤ 4), quartiles (min, 25 %, median, 75 %, max) of deck area (m²), AADT
    (vehicles/day), age (years) and condition rating.
    """
    lines = [f"Inventory: {inv.source}"]
    lines += [f"  {n}" for n in inv.notes]
    lines.append(f"Bridges kept: {inv.kept} (urban {inv.n_urban}, rural {inv.n_rural})")
    lines.append(f"Rows dropped: {len(inv.dropped)}")
    lines += _agency_lines(inv)
    no_truck, no_detour = int(np.isnan(inv.truck_share).sum()), int(np.isnan(inv.detour_km).sum())
    lines.append(f"User cost of a poor bridge: truck share (item 109) coded for {inv.kept - no_truck}, default "
                 f"{100 * DEFAULT_TRUCK_SHARE:g} % for {no_truck}; detour (item 19) coded for {inv.kept - no_detour}, "
                 f"default {DEFAULT_DETOUR_KM:g} km for {no_detour}")
    lines.append(_nhs_line(inv))
    lines += _works_lines(inv)
    by_category = sorted(dropped_by_category(inv.dropped).items(), key=lambda c: -c[1][0])  # most first, stable
    for reason, (n, first) in by_category:
        lines.append(f"  {n:>6}  {reason} (first on line {first})")
    for line, r in inv.dropped[:5]:
        lines.append(f"          line {line}: {r}")
    if len(inv.dropped) > 5:
        lines.append(f"          … {len(inv.dropped) - 5} more")
    bands = inv.bands()
    n = max(inv.kept, 1)
    counts = {b: int((bands == b).sum()) for b in ("good", "fair", "poor")}
    lines.append("Condition (FHWA, lowest rating): " + ", ".join(
        f"{b} {c} ({100.0 * c / n:.1f} %)" for b, c in counts.items()))
    shares = band_shares(inv.condition, fhwa_weight(inv.deck_area, inv.on_nhs))
    lines.append(f"  by deck area of {'NHS' if inv.on_nhs.any() else 'all'} bridges (FHWA's measure, 23 CFR "
                 "490.407): " + ", ".join(f"{b} {100.0 * s:.1f} %" for b, s in zip(counts, shares, strict=True)))
    for label, mask in (("urban", inv.urban), ("rural", ~inv.urban)):
        if mask.any():
            bb = bands[mask]
            lines.append(f"  {label}: " + ", ".join(f"{b} {int((bb == b).sum())}" for b in counts))
    lines.append(f"{'':22}{'min':>10}  {'25 %':>10}  {'median':>10}  {'75 %':>10}  {'max':>10}")
    for label, arr in (("Deck area (m²)", inv.deck_area), ("AADT (veh/day)", inv.aadt),
                       ("Age (years)", inv.age), ("Condition (0–9)", inv.condition)):
        lines.append(f"{label:<22}{_quartiles(arr)}")
    if inv.kept and len(set(inv.cost_factor.tolist())) == 1:
        lines.append(f"Cost factor: {float(inv.cost_factor[0]):.3f} (the state's 2017 bridge replacement cost per "
                     "ft² over the 232 USD/ft² reference; it scales every action's cost)")
    return "\n".join(lines)

