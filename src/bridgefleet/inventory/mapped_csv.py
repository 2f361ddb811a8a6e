"""Any CSV table with a column mapping (dict or YAML file; docs/inventory.md)."""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from bridgefleet.config import ConfigError, read_yaml
from bridgefleet.config.names import unknown_names
from bridgefleet.config.quantities import INVENTORY, Written, shown_value, yaml11_text_number, yaml_number
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
    _collect,
    _inventory,
    _missing_columns,
    _read_rows,
    _years_since,
    check_inventory_year,
)
from bridgefleet.inventory.values import (
    _age,
    _Bridge,
    _clean,
    _deck_area,
    _number,
    _optional_number,
    _optional_year,
    _rating,
    _truck_detour,
    _year_built,
    component_levels,
    nhs_item_104,
    spreadsheet_number,
)

# ------------------------------------------------------------------------------------------------
# Generic CSV with a column mapping

MAPPING_KEYS = {
    "name": "free text describing the table",
    "id": "column of the bridge id (required)",
    "condition": "column or list of columns; condition = lowest non-N value (required); NBI codes 0–9 / N unless "
                 "condition_scale is given",
    "culvert_condition": "culvert rating column, counted with the condition columns (lowest coded one)",
    "condition_scale": "[low, high] of an index's scale (any number in it), mapped linearly onto 0–9 (default: NBI "
                       "codes 0–9)",
    "age": "column of age in years (or give year_built; not both)",
    "year_built": "column of the year built (needs year or a year column)",
    "year_reconstructed": "column of the year of the last reconstruction (bounds ysm)",
    "year": "inventory year (number) for year_built",
    "ysm": "column of years since maintenance (default min(age, YSM_CAP))",
    "deck_area": "column of deck area (or give length and width; not both)",
    "length": "column of structure length",
    "width": "column of deck width",
    "area_scale": "multiplier turning deck_area / length × width into m² (default 1)",
    "aadt": "column of traffic, vehicles/day (required; or a constant: aadt: 10000)",
    "cluster": "rule: 'urban' | 'rural' (or {value: urban}) | {column, urban: [values], rural: [values]} | "
               "{functional_class: column}",
    "county": "column of the county code",
    "place": "column of the place code (NBI item 4: a town's or city's bridges one agency per place)",
    "truck_share": "column of the truck share of traffic (NBI item 109), a fraction 0–1 (default 0.10)",
    "truck_percent": "column of the truck share in percent 0–100 (NBI item 109 as coded)",
    "detour_km": "column of the detour length, km (NBI item 19; default 8)",
    "nhs": "National Highway System rule: column coded as NBI item 104 (1 on the NHS, 0 not) | "
           "{column, values: [values on the NHS]} (other values: not on it; blank: not coded) | 1 / 0 (or "
           "{value: 1}) for every bridge",
    "owner": "column of the owner code",
    "state_code": "FHWA state code (item 1) of every bridge: sets cost_factor and state",
    "cost_factor": "explicit cost factor (overrides state_code)",
}
"""Keys of a column mapping for :func:`read_csv_inventory`, with their meaning."""

COLUMN_OR_CONSTANT = ("condition", "culvert_condition", "age", "year_built", "year_reconstructed", "ysm",
                      "deck_area", "length", "width", "aadt", "county", "place", "owner", "truck_share",
                      "truck_percent", "detour_km")
"""Mapping keys that name a column or give a constant for every bridge: a YAML number (``aadt: 10000``) or
``{value: V}`` is a constant, a text (``aadt: ADT_029``) or ``{column: C}`` a column."""

_OPTIONAL_RANGE = ("truck_share", "truck_percent", "detour_km")
"""Inputs whose bad cell falls back to the model's default; a constant of them must be in its range
(:data:`bridgefleet.config.quantities.INVENTORY`)."""


@dataclass(frozen=True)
class Constant:
    """A mapping key's value for every bridge (``aadt: 10000``): ``text`` as a cell would hold it."""

    text: str


def _source(m: Mapping[str, Any], key: str, source: str) -> str | Constant | None:
    """A :data:`COLUMN_OR_CONSTANT` key's column name, its :class:`Constant`, or None where not given.

    Raises:
        InventoryError: any other form (true/false, a list where one column is meant, a mapping of other keys).
    """
    v = m.get(key)
    if isinstance(v, dict) and len(v) == 1 and set(v) <= {"value", "column"}:
        if "column" in v and isinstance(v["column"], str | int) and not isinstance(v["column"], bool):
            return str(v["column"])
        v = v.get("value")
        if isinstance(v, int | float | str) and not isinstance(v, bool):
            return Constant(str(v).strip())
    elif v is None:
        return None
    elif isinstance(v, str) and not isinstance(v, Written) and not yaml11_text_number(v):
        return v
    elif isinstance(v, int | float | str) and not isinstance(v, bool):  # aadt: 1e4 is a number to a user
        return Constant(str(v).strip())
    raise InventoryError(f"mapping key {key!r} = {m.get(key)!r}: give a column name ({key}: COLUMN) or a value for "
                         f"every bridge ({key}: 10000, or {key}: {{value: 10000}})", source)


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
    """(column or None, value → True urban / False rural / None unknown); ``urban`` / ``rural`` or
    ``{value: urban}`` / ``{value: rural}``: every bridge alike."""
    if isinstance(rule, dict) and set(rule) == {"value"}:
        rule = rule["value"] if rule["value"] in ("urban", "rural") else rule
    if rule in ("urban", "rural"):
        return None, lambda _v: rule == "urban"
    if isinstance(rule, dict) and set(rule) == {"functional_class"}:
        def fc(v: str) -> bool | None:
            n = int(v) if re.fullmatch("[0-9]{1,2}", v) else -1
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
    raise InventoryError(f"cluster must be 'urban', 'rural' ({{value: urban}}, {{value: rural}}), {{column, urban, "
                         f"rural}} or {{functional_class: column}}, got {rule!r}", source)


def _nhs_rule(rule: Any, source: str) -> tuple[str | None, Callable[[str], float]]:
    """(column or None, cleaned value → 1.0 on the NHS / 0.0 not / NaN not coded) of the mapping's ``nhs`` key.

    A column name reads NBI item 104 coding (1 / 0, anything else not coded); ``{column, values}`` marks the
    listed values NHS, any other non-blank value not NHS and a blank not coded. No key: every bridge not coded.

    Raises:
        InventoryError: any other form, or an empty ``values`` list.
    """
    if rule is None:
        return None, lambda _v: math.nan
    constant = rule["value"] if isinstance(rule, dict) and set(rule) == {"value"} else rule
    if constant in (0, 1) and type(constant) is int:  # every bridge on (1) or off (0) the NHS: {value: 1} or 1
        on = float(constant)
        return None, lambda _v: on
    if isinstance(rule, str):
        return rule, nhs_item_104
    if isinstance(rule, dict) and set(rule) == {"column", "values"} and isinstance(rule["values"], list) \
            and rule["values"]:
        on = {str(x) for x in rule["values"]}
        return str(rule["column"]), lambda v: math.nan if v == "" else 1.0 if v in on else 0.0
    raise InventoryError(f"nhs must be a column coded as NBI item 104 (1 / 0), {{column, values: [...]}} with at "
                         f"least one value, or 1 / 0 ({{value: 1}} / {{value: 0}}) for every bridge, got {rule!r}",
                         source)


def _constant(m: Mapping[str, Any], key: str, source: str, default: float | None = None) -> float:
    """A mapping's constant (cost_factor, area_scale, state_code, year, an end of condition_scale) as the quantity
    :data:`bridgefleet.config.quantities.INVENTORY` names ``key``: in its range, unit and the precision it is used
    in (a cost factor of 1e300 would be infinite in the 32-bit arrays, one of 1e-300 zero).

    Raises:
        InventoryError: one line naming the key, the value and the range (NaN, infinite, text, out of range).
    """
    value = yaml_number(m.get(key, default))  # 1e300: a number to YAML 1.2, text to PyYAML
    x = spreadsheet_number(value.strip()) if isinstance(value, str) else value  # "1,000", quoted in the YAML
    why = INVENTORY[key].problem(x)
    if why is not None:
        raise InventoryError(f"mapping key {key!r} = {shown_value(value)}: {why}", source)
    return float(x)


def _condition_scale(scale: Any, source: str) -> tuple[bool, float, float]:
    """(whether ratings are NBI codes, low, high) of the mapping's ``condition_scale``: none (the key absent or
    null) reads NBI codes 0–9; otherwise exactly ``[low, high]``, two finite numbers in the range of
    :data:`bridgefleet.config.quantities.INVENTORY` with low < high (an index's scale). ``0``, ``[]``, ``{}``,
    ``false`` or ``""`` is not a scale (it never falls back to the codes, nor turns the index scale on).

    Raises:
        InventoryError: one line naming the key and the value as written.
    """
    if scale is None:
        return True, 0.0, 9.0
    need = "must be [low, high], two finite numbers with low < high (an index's scale, e.g. [0, 100])"
    if not isinstance(scale, list | tuple) or len(scale) != 2:
        raise InventoryError(f"mapping key 'condition_scale' = {shown_value(scale)}: {need}", source)
    lo, hi = (_constant({"condition_scale": x}, "condition_scale", source) for x in scale)
    if not lo < hi:
        raise InventoryError(f"mapping key 'condition_scale' = {shown_value(scale)}: {need}", source)
    return False, lo, hi


def read_csv_inventory(path: str | Path, mapping: Mapping[str, Any] | str | Path, *,
                       max_bad_fraction: float = MAX_BAD_FRACTION) -> Inventory:
    """Read a CSV table that is not in NBI layout, with a column mapping (dict, YAML path or bundled name).

    Mapping keys are listed in :data:`MAPPING_KEYS` and docs/inventory.md; each input of
    :data:`COLUMN_OR_CONSTANT` names a column or gives a constant for every bridge (``aadt: 10000``; the summary
    lists them). The bundled ``"indiana"`` mapping reads the GIAMS Indiana 2019 table (``INDIANA2019.csv``):
    condition = lowest of items 58–60, ``Age`` given directly, deck area = item 49 × item 52, AADT = item 114 (the
    *future* ADT, a proxy for item 29), cluster from ``Road_class`` (NHS, Major → urban; Minor, Local → rural), NHS
    membership from ``Road_class`` = NHS, cost factor Indiana 309/232. Text is UTF-8 where the bytes are valid
    UTF-8, else Windows-1252 (a spreadsheet's legacy CSV encoding; :mod:`bridgefleet.textfile`), comma-separated,
    ``"``-quoted; ``N`` = not applicable. Numbers as a spreadsheet writes them (``1000``, ``1000.5``, ``1e3``,
    ``"1,000"``); ratings NBI codes (0–9, N) unless ``condition_scale`` is given.

    Derived fields follow :func:`read_nbi`: rate from the condition band, ysm = min(age, years since
    reconstruction, :data:`YSM_CAP`) unless a ``ysm`` column is mapped.

    Raises:
        InventoryError: bad mapping (unknown key, missing required key, a constant out of range), a mapped column
            absent from the header, and the file-level cases of :func:`read_nbi`.
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
    if not isinstance(m["id"], str):
        raise InventoryError(f"mapping key 'id' = {m['id']!r}: must name the column of each bridge's own id", msource)
    if m.get("age") is None and m.get("year_built") is None:
        raise InventoryError("mapping needs 'age' or 'year_built'", msource)
    if m.get("deck_area") is None and (m.get("length") is None or m.get("width") is None):
        raise InventoryError("mapping needs 'deck_area' or both 'length' and 'width'", msource)
    codes, lo, hi = _condition_scale(m.get("condition_scale"), msource)
    cluster_col, cluster_of = _cluster_rule(m["cluster"], msource)
    nhs_col, nhs_of = _nhs_rule(m.get("nhs"), msource)
    area_scale = _constant(m, "area_scale", msource, default=1.0)
    state_code = None if m.get("state_code") is None else int(_constant(m, "state_code", msource))
    cost_factor = (_constant(m, "cost_factor", msource) if m.get("cost_factor") is not None
                   else state_cost_factor(state_code))
    if state_code is not None and m.get("cost_factor") is None and state_code not in UNIT_COST_USD_PER_FT2:
        warnings.warn(f"{msource}: state_code {state_code}: no 2017 unit cost is bundled for it (known: "
                      f"{', '.join(map(str, sorted(UNIT_COST_USD_PER_FT2)))}), so its cost factor is 1.0 (the "
                      "232 USD/ft² reference); give cost_factor: to set the state's", stacklevel=2)
    year = None if m.get("year") is None else int(_constant(m, "year", msource))
    if year is not None:
        check_inventory_year(year, "mapping's year:", path)
    conds: list[str] = []
    if isinstance(m["condition"], list):
        conds = [str(c) for c in m["condition"]]
        sources: dict[str, str | Constant | None] = {"condition": None}
    else:
        sources = {"condition": _source(m, "condition", msource)}
    sources.update({k: _source(m, k, msource) for k in COLUMN_OR_CONSTANT if k != "condition"})
    _one_way_each(sources, msource)
    columns = {k: v for k, v in sources.items() if isinstance(v, str)}
    constants = {k: v.text for k, v in sources.items() if isinstance(v, Constant)}
    if sources["age"] is None and year is None:
        raise InventoryError("mapping gives year_built but no inventory year: add 'year: YYYY'", msource)

    def rated(v: str, where: str) -> float | None:
        return _rating(v, where, lo, hi, codes)

    convert: dict[str, Callable[[str, str], Any]] = {
        "condition": rated,
        "culvert_condition": rated,
        "age": lambda v, c: _age(v, c, year),
        "year_built": lambda v, c: _number(v, c, "year built") if year is None else _year_built(v, c, year),
        "ysm": lambda v, c: _number(v, c, "years since maintenance", limits="ysm"),
        "deck_area": lambda v, c: _number(v, c, "deck area"),  # in m² once × area_scale (_deck_area)
        "length": lambda v, c: _number(v, c, "structure length", limits="length"),
        "width": lambda v, c: _number(v, c, "deck width", limits="width"),
        "aadt": lambda v, c: _number(v, c, "traffic (AADT)", limits="aadt"),
    }
    _check_constants(constants, convert, msource)
    _check_constant_area(constants, area_scale, msource, sources["deck_area"] is not None)

    header, rows, decoded = _read_rows(path, quotechar='"', legacy="cp1252", what="a spreadsheet CSV")
    needed = [m["id"], *conds, *columns.values()] + [c for c in (cluster_col, nhs_col) if c]
    _constant_hint(path, header, columns, {k: c for k, c in (("cluster", cluster_col), ("nhs", nhs_col)) if c})
    _missing_columns(path, header, dict.fromkeys(str(c) for c in needed))
    col = {name: i for i, name in enumerate(header)}

    def get(f: list[str], key: str) -> str:
        if key in constants:
            return constants[key]
        name = columns.get(key)
        return "" if name is None else f[col[name]]

    def where(key: str) -> str:
        return columns.get(key) or f"(mapping {key}: {constants.get(key, '')})"

    def value(f: list[str], key: str) -> Any:
        return convert[key](get(f, key), where(key))

    def parse(line: int, f: list[str]) -> _Bridge:
        bid = _clean(f[col[m["id"]]])
        if not bid:
            raise _RowProblem(_BAD, "missing bridge id", str(m["id"]), bid)
        listed = [rated(f[col[c]], c) for c in conds]
        ratings = list(listed)
        for key in ("condition", "culvert_condition"):  # every coded item counts (23 CFR 490.411)
            if key in columns or key in constants:
                ratings.append(value(f, key))
        ratings = [r for r in ratings if r is not None]
        if not ratings:
            named = ", ".join(conds) or where("condition")
            raise _RowProblem("no condition rating", f"{named} are all N or blank", bad=False)
        condition = (min(ratings) - lo) / (hi - lo) * 9.0
        # Three listed columns are deck, superstructure, substructure (in that order) for the component model;
        # otherwise one rating stands for all three (_inventory's default).
        culvert = value(f, "culvert_condition") if sources["culvert_condition"] is not None else None
        levels = (component_levels(*((r - lo) / (hi - lo) * 9.0 if r is not None else None for r in listed),
                                   None if culvert is None else (culvert - lo) / (hi - lo) * 9.0)
                  if len(listed) == 3 else (None, False))
        built = recon = None
        if sources["age"] is not None:
            age = value(f, "age")
        else:
            built = value(f, "year_built")  # the NBI reader's rule
            assert year is not None
            age = year - built
        if sources["year_reconstructed"] is not None:
            recon = _optional_year(get(f, "year_reconstructed"))
            if year is not None and built is None and recon:
                built = year - age
        ysm = value(f, "ysm") if sources["ysm"] is not None else _years_since(age, year, recon, built)
        if sources["deck_area"] is not None:
            area = value(f, "deck_area")
        else:
            area = (value(f, "length") or 0.0) * (value(f, "width") or 0.0)
        area = (area or 0.0) * area_scale
        if area <= 0.0:
            raise _RowProblem("no deck area", "deck area is 0", where("deck_area" if sources["deck_area"] is not None
                                                                       else "width"), bad=False)
        key = "deck_area" if sources["deck_area"] is not None else "length"
        area = _deck_area(area, where(key), _clean(get(f, key)))
        aadt = value(f, "aadt")
        cval = _clean(f[col[cluster_col]]) if cluster_col else ""
        urban = cluster_of(cval)
        if urban is None:
            raise _RowProblem(_BAD, "value not covered by the mapping's cluster rule", cluster_col, cval)
        percent = sources["truck_percent"] is not None
        truck, share = (get(f, "truck_percent"), 0.01) if percent else (get(f, "truck_share"), 1.0)
        return _Bridge(line, bid, urban, condition, float(age), float(ysm), area, float(aadt or 0.0),
                       cost_factor, _clean(get(f, "county")), _clean(get(f, "owner")),
                       "" if state_code is None else f"{int(state_code):02d}",
                       **_truck_detour(truck, get(f, "detour_km"), share),
                       nhs=nhs_of(_clean(f[col[nhs_col]]) if nhs_col else ""), components=levels[0],
                       culvert=levels[1], place=_clean(get(f, "place")))

    bridges, dropped = _collect(path, rows, len(header), parse, str(m["id"]), max_bad_fraction)
    notes = [decoded.describe(), f"columns mapped by {msource}" + (f" ({m['name']})" if m.get("name") else "")]
    alike = dict(constants)
    if cluster_col is None:
        alike["cluster"] = str(m["cluster"]["value"] if isinstance(m["cluster"], dict) else m["cluster"])
    if nhs_col is None and m.get("nhs") is not None:
        alike["nhs"] = "1 (on the NHS)" if nhs_of("") == 1.0 else "0 (not on the NHS)"
    if state_code is not None:  # the state and, unless cost_factor is given, the cost factor of every bridge
        alike["state_code"] = f"{int(state_code):02d}"
    if alike:
        notes.append("from the mapping, the same for every bridge: "
                     + ", ".join(f"{k} = {v}" for k, v in alike.items()))
    if (lo, hi) != (0.0, 9.0):
        notes.append(f"condition rescaled from {lo:g}–{hi:g} to 0–9 (approximation)")
    return _inventory(path, bridges, dropped, year, notes)


ALTERNATIVES = (("age", "year_built", "the age"), ("deck_area", "length", "the deck area"),
                ("deck_area", "width", "the deck area"), ("truck_percent", "truck_share", "the truck share"),
                ("ysm", "year_reconstructed", "the years since maintenance"))
"""Mapping keys that give one input two ways, the first used where both are given (an age over a year built, a deck
area over length × width, a truck percent over a share, years since maintenance over a reconstruction year): given
both, the second would be ignored without a word, so the mapping is refused (:func:`_one_way_each`)."""


def _one_way_each(sources: Mapping[str, str | Constant | None], source: str) -> None:
    """Each input given one way: no pair of :data:`ALTERNATIVES` both given (a column or a constant each).

    Raises:
        InventoryError: one line naming both keys, what each gives, and which would be ignored.
    """
    def given(v: str | Constant) -> str:
        return f"constant {v.text}" if isinstance(v, Constant) else f"column {v}"

    for first, second, what in ALTERNATIVES:
        a, b = sources.get(first), sources.get(second)
        if a is not None and b is not None:
            raise InventoryError(f"mapping keys {first!r} ({given(a)}) and {second!r} ({given(b)}) both give {what}; "
                                 f"{second!r} would be ignored: give one of them", source)


def _check_constants(constants: dict[str, str], convert: Mapping[str, Callable[[str, str], Any]],
                     source: str) -> None:
    """Each constant of the mapping passes the check its column's cells would (one line naming the key otherwise;
    not a dropped row per bridge).

    Raises:
        InventoryError: naming the key, the value and the rule it breaks.
    """
    for key, text in constants.items():
        try:
            if key in convert:
                if convert[key](text, key) is None:
                    raise _RowProblem(_BAD, "not applicable (N) or blank: no value for any bridge")
            elif key in _OPTIONAL_RANGE:
                why = INVENTORY[key].problem(_optional_number(text))
                if why is not None:
                    raise _RowProblem(_BAD, why)
            elif key == "year_reconstructed":
                if _optional_year(text) is None:
                    raise _RowProblem(_BAD, "must be a whole year (2015)")
            elif not _clean(text):
                raise _RowProblem(_BAD, "blank")
        except _RowProblem as p:
            raise InventoryError(f"mapping key {key!r} = {text!r}: {p.detail}", source) from None


def _check_constant_area(constants: Mapping[str, str], area_scale: float, source: str, deck_area: bool) -> None:
    """A deck area the constants give every bridge (``deck_area``, or ``length`` and ``width`` where the mapping has
    no ``deck_area``), × area_scale, is one a bridge may have: refused in one line naming the keys, not a dropped
    row per bridge; a constant ``deck_area``, ``length`` or ``width`` of 0 (every deck area 0) is refused alike.

    Raises:
        InventoryError: 0, below 1 m² or above :data:`bridgefleet.inventory.values.MAX_DECK_AREA_M2` m², naming the
            keys and values.
    """
    for k in ("deck_area", "length", "width"):
        if k in constants and not spreadsheet_number(_clean(constants[k])):
            raise InventoryError(f"mapping key {k!r} = {constants[k]}: every bridge's deck area would be 0 (none "
                                 f"kept); a deck area {INVENTORY['deck_area'].need()}", source)
    keys = [k for k in ((("deck_area",),) if deck_area else (("length", "width"),)) if all(x in constants for x in k)]
    if not keys:
        return
    area = area_scale
    for k in keys[0]:
        area *= spreadsheet_number(_clean(constants[k])) or 0.0
    try:
        _deck_area(area, "", "")
    except _RowProblem as p:
        given = " × ".join(f"{k!r} = {constants[k]}" for k in keys[0])
        scale = f" × area_scale {area_scale:g}" if area_scale != 1.0 else ""
        raise InventoryError(f"mapping key{'s' if len(keys[0]) > 1 else ''} {given}{scale}: {p.detail}",
                             source) from None


_RULE_CONSTANTS = {"cluster": "cluster: urban or cluster: rural (functional class 11–19 or 01–09)",
                   "nhs": "nhs: 1 or nhs: 0 (on the NHS or not)"}
"""How a rule key (``cluster``, ``nhs``) gives every bridge the same value, for :func:`_constant_hint`."""


def _constant_hint(path: Path, header: list[str], columns: Mapping[str, str],
                   rules: Mapping[str, str] | None = None) -> None:
    """A mapped column absent from the header whose name is a number (``aadt: "10000"``, quoted; ``cluster:
    {functional_class: 14}``; ``rules``: the column a ``cluster`` or ``nhs`` rule names) was meant as a constant: say
    how to write one.

    Raises:
        InventoryError: naming the key, the column and the constant's spelling.
    """
    for key, name in (rules or {}).items():
        if name not in header and spreadsheet_number(name.strip()) is not None:
            raise InventoryError(f"mapping key {key!r} names column {name!r}, which the header lacks; every bridge "
                                 f"alike is written {_RULE_CONSTANTS[key]}", path, line=1, column=name)
    for key, name in columns.items():
        if name not in header and spreadsheet_number(name.strip()) is not None:
            raise InventoryError(f"mapping key {key!r} names column {name!r}, which the header lacks; a value for "
                                 f"every bridge is written {key}: {name.strip()} (a number, unquoted) or {key}: "
                                 f"{{value: {name.strip()}}}", path, line=1, column=name)
