"""Any CSV table with a column mapping (dict or YAML file; docs/inventory.md)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from bridgefleet.config import ConfigError, read_yaml
from bridgefleet.config.names import unknown_names
from bridgefleet.inventory.model import (
    _BAD,
    BUNDLED_MAPPINGS,
    MAX_BAD_FRACTION,
    UNIT_COST_USD_PER_FT2,
    Inventory,
    InventoryError,
    _RowProblem,
    state_cost_factor,
)
from bridgefleet.inventory.rows import (
    _age,
    _Bridge,
    _clean,
    _collect,
    _deck_area,
    _inventory,
    _missing_columns,
    _number,
    _optional_number,
    _rating,
    _read_rows,
    _truck_detour,
    _year_built,
    _years_since,
    check_inventory_year,
    nhs_item_104,
)

# ------------------------------------------------------------------------------------------------
# Generic CSV with a column mapping

MAPPING_KEYS = {
    "name": "free text describing the table",
    "id": "column of the bridge id (required)",
    "condition": "column or list of columns; condition = lowest non-N value (required)",
    "culvert_condition": "culvert rating column, counted with the condition columns (lowest coded one)",
    "condition_scale": "[low, high] of the source scale, mapped linearly onto 0–9 (default [0, 9])",
    "age": "column of age in years (or give year_built)",
    "year_built": "column of the year built (needs year or a year column)",
    "year_reconstructed": "column of the year of the last reconstruction (bounds ysm)",
    "year": "inventory year (number) for year_built",
    "ysm": "column of years since maintenance (default min(age, YSM_CAP))",
    "deck_area": "column of deck area (or give length and width)",
    "length": "column of structure length",
    "width": "column of deck width",
    "area_scale": "multiplier turning deck_area / length × width into m² (default 1)",
    "aadt": "column of traffic, vehicles/day (required)",
    "cluster": "rule: 'urban' | 'rural' | {column, urban: [values], rural: [values]} | "
               "{functional_class: column}",
    "county": "column of the county code",
    "truck_share": "column of the truck share of traffic (NBI item 109), a fraction 0–1 (default 0.10)",
    "truck_percent": "column of the truck share in percent 0–100 (NBI item 109 as coded)",
    "detour_km": "column of the detour length, km (NBI item 19; default 8)",
    "nhs": "National Highway System rule: column coded as NBI item 104 (1 on the NHS, 0 not) | "
           "{column, values: [values on the NHS]} (other values: not on it; blank: not coded)",
    "owner": "column of the owner code",
    "state_code": "FHWA state code (item 1) of every bridge: sets cost_factor and state",
    "cost_factor": "explicit cost factor (overrides state_code)",
}
"""Keys of a column mapping for :func:`read_csv_inventory`, with their meaning."""


def _load_mapping(mapping: Mapping[str, Any] | str | Path) -> tuple[dict[str, Any], str]:
    if isinstance(mapping, Mapping):
        return dict(mapping), "mapping"
    name = str(mapping)
    if name in BUNDLED_MAPPINGS:
        text = resources.files("bridgefleet").joinpath("data", BUNDLED_MAPPINGS[name]).read_text("utf-8")
        source = f"bundled mapping {name!r}"
        data = yaml.safe_load(text)
    else:
        p = Path(mapping)
        if not p.is_file():
            raise InventoryError(f"no such mapping file; bundled mappings: {', '.join(BUNDLED_MAPPINGS)}", p)
        try:
            data = read_yaml(p)
        except ConfigError as exc:
            raise InventoryError(f"column mapping: {exc}") from None
        source = str(p)
    if not isinstance(data, dict):
        raise InventoryError("the mapping must be a YAML mapping of keys "
                             f"({', '.join(MAPPING_KEYS)})", source)
    return data, source


def _cluster_rule(rule: Any, source: str) -> tuple[str | None, Callable[[str], bool | None]]:
    """(column or None, value → True urban / False rural / None unknown)."""
    if rule in ("urban", "rural"):
        return None, lambda _v: rule == "urban"
    if isinstance(rule, dict) and set(rule) == {"functional_class"}:
        def fc(v: str) -> bool | None:
            n = int(v) if v.isdigit() else -1
            return True if 11 <= n <= 19 else False if 1 <= n <= 9 else None
        return str(rule["functional_class"]), fc
    if isinstance(rule, dict) and "column" in rule and set(rule) <= {"column", "urban", "rural"}:
        urban = {str(x) for x in rule.get("urban") or []}
        rural = {str(x) for x in rule.get("rural") or []}
        both = urban & rural
        if both:
            raise InventoryError(f"cluster values {sorted(both)} are listed as both urban and rural", source,
                                 column=str(rule["column"]))
        return str(rule["column"]), lambda v: True if v in urban else False if v in rural else None
    raise InventoryError(f"cluster must be 'urban', 'rural', {{column, urban, rural}} or "
                         f"{{functional_class: column}}, got {rule!r}", source)


def _nhs_rule(rule: Any, source: str) -> tuple[str | None, Callable[[str], float]]:
    """(column or None, cleaned value → 1.0 on the NHS / 0.0 not / NaN not coded) of the mapping's ``nhs`` key.

    A column name reads NBI item 104 coding (1 / 0, anything else not coded); ``{column, values}`` marks the
    listed values NHS, any other non-blank value not NHS and a blank not coded. No key: every bridge not coded.

    Raises:
        InventoryError: any other form, or an empty ``values`` list.
    """
    if rule is None:
        return None, lambda _v: math.nan
    if isinstance(rule, str):
        return rule, nhs_item_104
    if isinstance(rule, dict) and set(rule) == {"column", "values"} and isinstance(rule["values"], list) \
            and rule["values"]:
        on = {str(x) for x in rule["values"]}
        return str(rule["column"]), lambda v: math.nan if v == "" else 1.0 if v in on else 0.0
    raise InventoryError(f"nhs must be a column coded as NBI item 104 (1 / 0) or {{column, values: [...]}} "
                         f"with at least one value, got {rule!r}", source)


def _constant(m: Mapping[str, Any], key: str, source: str, default: float | None = None, positive: bool = False,
              whole: bool = False) -> float:
    """A mapping's constant (cost_factor, area_scale, …) as a finite number, > 0 where ``positive``, a whole
    number where ``whole``.

    Raises:
        InventoryError: one line naming the key and the value (NaN, infinite, text, out of range).
    """
    value = m.get(key, default)
    try:
        x = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x) or (positive and x <= 0) or (whole and x != int(x)):
        need = "a whole number" if whole else "a finite number"
        raise InventoryError(f"mapping key {key!r} = {value!r}: must be {need}{' > 0' if positive else ''}", source)
    return x


def read_csv_inventory(path: str | Path, mapping: Mapping[str, Any] | str | Path, *,
                       max_bad_fraction: float = MAX_BAD_FRACTION) -> Inventory:
    """Read a CSV table that is not in NBI layout, with a column mapping (dict, YAML path or bundled name).

    Mapping keys are listed in :data:`MAPPING_KEYS` and docs/inventory.md. The bundled ``"indiana"``
    mapping reads the GIAMS Indiana 2019 table (``INDIANA2019.csv``): condition = lowest of items 58–60,
    ``Age`` given directly, deck area = item 49 × item 52, AADT = item 114 (the *future* ADT, a proxy for
    item 29), cluster from ``Road_class`` (NHS, Major → urban; Minor, Local → rural), NHS membership from
    ``Road_class`` = NHS, cost factor Indiana 309/232. Text is UTF-8 (latin-1 accepted), comma-separated,
    ``"``-quoted; ``N`` = not applicable.

    Derived fields follow :func:`read_nbi`: rate from the condition band, ysm = min(age, years since
    reconstruction, :data:`YSM_CAP`) unless a ``ysm`` column is mapped.

    Raises:
        InventoryError: bad mapping (unknown key, missing required key), a mapped column absent from the
            header, and the file-level cases of :func:`read_nbi`.
    """
    path = Path(path)
    m, msource = _load_mapping(mapping)
    unknown = sorted(set(m) - set(MAPPING_KEYS))
    if unknown:
        raise InventoryError(f"unknown mapping key(s) {unknown_names(unknown, MAPPING_KEYS)}; known: "
                             f"{', '.join(MAPPING_KEYS)}", msource)
    for key in ("id", "condition", "aadt", "cluster"):
        if m.get(key) is None:
            raise InventoryError(f"mapping key {key!r} is required ({MAPPING_KEYS[key]})", msource)
    if m.get("age") is None and m.get("year_built") is None:
        raise InventoryError("mapping needs 'age' or 'year_built'", msource)
    if m.get("deck_area") is None and (m.get("length") is None or m.get("width") is None):
        raise InventoryError("mapping needs 'deck_area' or both 'length' and 'width'", msource)
    conds = [m["condition"]] if isinstance(m["condition"], str) else list(m["condition"])
    scale = m.get("condition_scale") or (0.0, 9.0)
    if not isinstance(scale, list | tuple) or len(scale) != 2:
        raise InventoryError(f"mapping key 'condition_scale' = {scale!r}: must be [low, high]", msource)
    lo, hi = (_constant({"condition_scale": x}, "condition_scale", msource) for x in scale)
    if not hi > lo:
        raise InventoryError(f"condition_scale {m.get('condition_scale')!r} must be [low, high] with "
                             "high > low", msource)
    cluster_col, cluster_of = _cluster_rule(m["cluster"], msource)
    nhs_col, nhs_of = _nhs_rule(m.get("nhs"), msource)
    area_scale = _constant(m, "area_scale", msource, default=1.0, positive=True)
    state_code = None if m.get("state_code") is None else int(_constant(m, "state_code", msource, whole=True,
                                                                             positive=True))
    cost_factor = (_constant(m, "cost_factor", msource, positive=True) if m.get("cost_factor") is not None
                   else state_cost_factor(state_code))
    if state_code is not None and m.get("cost_factor") is None and state_code not in UNIT_COST_USD_PER_FT2:
        warnings.warn(f"{msource}: state_code {state_code}: no 2017 unit cost is bundled for it (known: "
                      f"{', '.join(map(str, sorted(UNIT_COST_USD_PER_FT2)))}), so its cost factor is 1.0 (the "
                      "232 USD/ft² reference); give cost_factor: to set the state's", stacklevel=2)
    year = None if m.get("year") is None else int(_constant(m, "year", msource, whole=True))
    if year is not None:
        check_inventory_year(year, "mapping's year:", path)

    header, rows = _read_rows(path, quotechar='"', encoding="utf-8")
    columns = {k: m.get(k) for k in ("id", "culvert_condition", "age", "year_built", "year_reconstructed",
                                     "ysm", "deck_area", "length", "width", "aadt", "county", "owner", "truck_share",
                                     "truck_percent", "detour_km")}
    needed = [m["id"], *conds] + [v for k, v in columns.items() if v is not None and k != "id"]
    needed += [c for c in (cluster_col, nhs_col) if c]
    _missing_columns(path, header, dict.fromkeys(str(c) for c in needed))
    if columns["age"] is None and year is None:
        raise InventoryError("mapping gives year_built but no inventory year: add 'year: YYYY'", msource)
    col = {name: i for i, name in enumerate(header)}

    def get(f: list[str], key: str) -> str:
        name = columns.get(key)
        return "" if name is None else f[col[str(name)]]

    def parse(line: int, f: list[str]) -> _Bridge:
        bid = _clean(get(f, "id"))
        if not bid:
            raise _RowProblem(_BAD, "missing bridge id", str(m["id"]), bid)
        rated = [r for c in conds if (r := _rating(f[col[c]], c, lo, hi)) is not None]
        if columns["culvert_condition"]:  # every coded item counts (23 CFR 490.411), the culvert's too
            r = _rating(get(f, "culvert_condition"), str(columns["culvert_condition"]), lo, hi)
            rated += [] if r is None else [r]
        if not rated:
            raise _RowProblem("no condition rating", f"{', '.join(conds)} are all N or blank", bad=False)
        condition = (min(rated) - lo) / (hi - lo) * 9.0
        built = recon = None
        if columns["age"] is not None:
            age = _age(get(f, "age"), str(columns["age"]), year)
        else:
            assert year is not None
            built = _year_built(get(f, "year_built"), str(columns["year_built"]), year)  # the NBI reader's rule
            age = year - built
        if columns["year_reconstructed"] is not None:
            recon = _optional_number(get(f, "year_reconstructed"))
            if year is not None and built is None and recon:
                built = year - age
        if columns["ysm"] is not None:
            ysm = _number(get(f, "ysm"), str(columns["ysm"]), "years since maintenance")
            assert ysm is not None
        else:
            ysm = _years_since(age, year, recon, built)
        if columns["deck_area"] is not None:
            area = _number(get(f, "deck_area"), str(columns["deck_area"]), "deck area")
        else:
            length = _number(get(f, "length"), str(columns["length"]), "structure length")
            width = _number(get(f, "width"), str(columns["width"]), "deck width")
            area = (length or 0.0) * (width or 0.0)
        area = (area or 0.0) * area_scale
        if area <= 0.0:
            raise _RowProblem("no deck area", "deck area is 0", str(columns["deck_area"] or columns["width"]),
                              bad=False)
        where = str(columns["deck_area"] or columns["length"])
        area = _deck_area(area, where, _clean(get(f, "deck_area" if columns["deck_area"] is not None else "length")))
        aadt = _number(get(f, "aadt"), str(columns["aadt"]), "traffic (AADT)")
        cval = _clean(f[col[cluster_col]]) if cluster_col else ""
        urban = cluster_of(cval)
        if urban is None:
            raise _RowProblem(_BAD, "value not covered by the mapping's cluster rule", cluster_col, cval)
        truck, scale = (get(f, "truck_percent"), 0.01) if columns["truck_percent"] else (get(f, "truck_share"), 1.0)
        return _Bridge(line, bid, urban, condition, float(age), float(ysm), area, float(aadt or 0.0),
                       cost_factor, _clean(get(f, "county")), _clean(get(f, "owner")),
                       "" if state_code is None else f"{int(state_code):02d}",
                       **_truck_detour(truck, get(f, "detour_km"), scale),
                       nhs=nhs_of(_clean(f[col[nhs_col]]) if nhs_col else ""))

    bridges, dropped = _collect(path, rows, len(header), parse, str(m["id"]), max_bad_fraction)
    notes = [f"columns mapped by {msource}" + (f" ({m['name']})" if m.get("name") else "")]
    if (lo, hi) != (0.0, 9.0):
        notes.append(f"condition rescaled from {lo:g}–{hi:g} to 0–9 (approximation)")
    return _inventory(path, bridges, dropped, year, notes)


