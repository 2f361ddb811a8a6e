"""An inventory's data and errors: the constants of docs/inventory.md, :class:`InventoryError`, :class:`Inventory`
(one row per bridge) and the FHWA condition bands."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bridgefleet.inventory.agencies import owner_labels
from bridgefleet.inventory.works_history import preserved_years
from bridgefleet.sim.model import DEFAULT_DETOUR_KM, DEFAULT_TRUCK_SHARE, band_index

# ------------------------------------------------------------------------------------------------
# Constants (documented in docs/inventory.md)

BUNDLED: dict[str, str] = {"dc-2019": "DC19.txt"}
"""Bundled inventories: name → file in ``bridgefleet/data`` (DC19.txt: FHWA NBI 2019, public domain)."""

BUNDLED_MAPPINGS: dict[str, str] = {"indiana": "indiana-mapping.yaml"}
"""Bundled column mappings for :func:`read_csv_inventory`: name → YAML file in ``bridgefleet/data``."""

GOOD_MIN = 7.0
"""FHWA Good: lowest condition rating ≥ 7 (rating points)."""
POOR_MAX = 4.0
"""FHWA Poor: lowest condition rating ≤ 4; 5–6 is Fair (rating points)."""

RATE_BY_BAND: dict[str, float] = {"good": 0.035, "fair": 0.045, "poor": 0.050}
"""Default deterioration rate by FHWA condition band, rating points per year.

NBI records no deterioration rate. Good = the new-structure rate of ``FleetConfig.new_structure_rate``
(0.035), Poor = the top of the synthetic range ``model.RATE_RANGE`` (0.03–0.05), Fair in between:
bridges in worse bands leave their band faster (Ontario BCI histories: two-year stay Good→Good 0.927,
Fair→Fair 0.865). A placeholder until rates are calibrated from inspection histories.
"""

YSM_CAP = 15.0
"""Upper bound of the years since maintenance assigned to real bridges, years.

NBI records major reconstruction (item 106) but no minor maintenance, so the true value is unknown;
the synthetic fleet (``model.draw_synthetic_fleet``) draws it in [0, min(age, 15)).
"""

UNIT_COST_USD_PER_FT2: dict[int, float] = {6: 194.0, 11: 232.0, 17: 188.0, 18: 309.0, 19: 132.0}
"""FHWA 2017 bridge replacement unit costs (NHS), USD per ft² of deck, by FHWA state code (item 1):
California 06, District of Columbia 11, Illinois 17, Indiana 18, Iowa 19."""
REFERENCE_UNIT_COST_USD_PER_FT2 = 232.0
"""Unit cost behind the simulator's default replacement cost (2497 USD/m² = DC 232 USD/ft² × 10.764)."""

MAX_BAD_FRACTION = 0.1
"""A file with more than this share of malformed data rows raises instead of dropping them."""

NBI_REQUIRED = (
    "STRUCTURE_NUMBER_008", "RECORD_TYPE_005A", "FUNCTIONAL_CLASS_026", "YEAR_BUILT_027", "ADT_029",
    "DECK_COND_058", "SUPERSTRUCTURE_COND_059", "SUBSTRUCTURE_COND_060", "CULVERT_COND_062",
)
"""NBI items a file must have (deck area needs in addition DECK_AREA or items 49 and 52)."""

# Category prefixes of dropped-row reasons that count as malformed data (the others are filters).
_BAD = "bad value"


class InventoryError(ValueError):
    """Unusable inventory input. The message names the file, the line number and the column.

    Attributes:
        path: the file (str) or None.
        line: 1-based line number in the file, or None.
        column: column (header) name, or None.
        value: the offending value as read, or None.
    """

    def __init__(self, what: str, path: str | Path | None = None, line: int | None = None,
                 column: str | None = None, value: str | None = None):
        self.path = None if path is None else str(path)
        self.line, self.column, self.value = line, column, value
        where = [p for p in (self.path, None if line is None else f"line {line}",
                             None if column is None else f"column {column}") if p]
        text = ", ".join(where)
        if value is not None:
            what = f"{what} (value {value!r})"
        super().__init__(f"{text}: {what}" if text else what)


class _RowProblem(Exception):
    """Internal: one row cannot be used. ``bad`` marks malformed data (vs. a documented filter)."""

    def __init__(self, category: str, detail: str, column: str | None = None, value: str | None = None,
                 bad: bool = True):
        super().__init__(detail)
        self.category, self.detail, self.column, self.value, self.bad = category, detail, column, value, bad

    def reason(self) -> str:
        col = f"column {self.column}" if self.column else ""
        val = f" = {self.value!r}" if self.value is not None else ""
        head = f"{col}{val}: " if col else ""
        return f"{self.category}: {head}{self.detail}"


def dropped_by_category(dropped: list[tuple[int, str]]) -> dict[str, tuple[int, int]]:
    """The categories of dropped rows' reasons (the text before a reason's first ``:``, :meth:`_RowProblem.reason`)
    in the order first met, each with (rows, first row's line): one pass."""
    out: dict[str, tuple[int, int]] = {}
    for line, reason in dropped:
        category = reason.split(":", 1)[0]
        n, first = out.get(category, (0, line))
        out[category] = (n + 1, first)
    return out


# ------------------------------------------------------------------------------------------------
# The inventory


_ARRAYS = ("bridge_id", "urban", "condition", "age", "ysm", "rate", "deck_area", "aadt", "cost_factor",
           "county", "owner", "state", "place", "line", "latitude", "longitude", "truck_share", "detour_km", "nhs",
           "culvert")


@dataclass
class Inventory:
    """Bridges read from a real inventory, one entry per bridge (all arrays shape (N,)).

    Attributes:
        bridge_id: str (N,), NBI item 8 structure number (quotes and spaces stripped); in a file with
            several states, prefixed with the item 1 state code as ``"SS:number"``.
        urban: bool (N,), True for urban bridges (NBI item 26 functional class 11–19).
        condition: float32 (N,), rating 0–9: lowest of items 58/59/60 (deck, superstructure,
            substructure), or item 62 (culvert) when 58–60 are all N.
        age: float32 (N,), years since construction: inventory year − item 27 (year built).
        ysm: float32 (N,), years since maintenance: min(age, inventory year − item 106, YSM_CAP).
        rate: float32 (N,), deterioration rate, rating points/year (:data:`RATE_BY_BAND` by band).
        deck_area: float32 (N,), m²: ``DECK_AREA``, else item 49 × item 52 (item 49 × item 32 for
            culverts whose deck width is 0).
        aadt: float32 (N,), average daily traffic, vehicles/day (item 29).
        cost_factor: float32 (N,), state unit cost / 232 USD/ft² (item 1), 1.0 where unknown.
        county: str (N,), county code (item 3), "" if absent.
        owner: str (N,), owner code (item 22), "" if absent.
        state: str (N,), FHWA state code (item 1), "" if absent.
        place: str (N,), place code (item 4), "" if absent; None: none read.
        line: int64 (N,), line of the record in ``source`` (the header is line 1).
        latitude, longitude: float64 (N,), decimal degrees (NBI items 16/17, west negative); NaN where the
            file has none or the coded value is not a position.
        truck_share: float32 (N,), share of trucks in ADT (NBI item 109 / 100), NaN where not coded.
        detour_km: float32 (N,), bypass/detour length, km (NBI item 19), NaN where not coded; the fleet
            uses ``model.DEFAULT_TRUCK_SHARE`` / ``DEFAULT_DETOUR_KM`` there (the user cost of a poor bridge).
        nhs: float32 (N,), National Highway System membership: 1.0 on the NHS, 0.0 not, NaN where not coded
            (NBI item 104 ``HIGHWAY_SYSTEM_104`` 1 / 0, or the mapping's ``nhs`` rule); FHWA's deck-area measures
            (23 CFR 490.407) count NHS bridges. :attr:`on_nhs` is the boolean view.
        components: int8 (N, 3), the component model's slots: deck, superstructure, substructure (items 58–60;
            N held at 9), or for a culvert (items 58–60 all N) item 62 and 9, 9; where a mapped CSV gives one
            rating, it for all three. None: the condition's whole rating for all three.
        culvert: bool (N,), the bridge is a culvert (items 58–60 all N, item 62 coded); None: none is.
        work_year: float32 (N, 3), year of the last work on each of the component model's slots (deck or a
            culvert's barrel, superstructure, substructure; SNBI ``Works``: its own work codes or a replacement
            ``BR01``, :func:`bridgefleet.inventory.works_history.last_works`), NaN where none is recorded (every
            bridge of an NBI file or mapped CSV: they record no work kinds). None: NaN.
        work_code: str (N, 3), that work's SNBI code (``DK5``, ``SP2``, ``BR01`` …), '' where none. None: ''.
        source: path of the file read.
        dropped: (line number, reason) of every data row not kept; a reason reads ``"category: ..."``.
        year: inventory (reference) year used for ages, or None when ages were given directly.
        notes: how defaults were chosen (year source, filters), for :func:`summarize`.
        kept: number of bridges kept (N), set on construction.
    """

    bridge_id: np.ndarray
    urban: np.ndarray
    condition: np.ndarray
    age: np.ndarray
    ysm: np.ndarray
    rate: np.ndarray
    deck_area: np.ndarray
    aadt: np.ndarray
    cost_factor: np.ndarray
    county: np.ndarray
    owner: np.ndarray
    state: np.ndarray
    line: np.ndarray
    source: str
    dropped: list[tuple[int, str]] = field(default_factory=list)
    year: int | None = None
    notes: list[str] = field(default_factory=list)
    latitude: np.ndarray | None = None
    longitude: np.ndarray | None = None
    truck_share: np.ndarray | None = None
    detour_km: np.ndarray | None = None
    nhs: np.ndarray | None = None
    components: np.ndarray | None = None
    culvert: np.ndarray | None = None
    work_year: np.ndarray | None = None
    work_code: np.ndarray | None = None
    place: np.ndarray | None = None
    kept: int = field(init=False)

    def __post_init__(self) -> None:
        self.bridge_id = np.asarray(self.bridge_id, dtype=str)
        self.urban = np.asarray(self.urban, dtype=bool)
        for name in ("condition", "age", "ysm", "rate", "deck_area", "aadt", "cost_factor"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=np.float32))
        for name in ("county", "owner", "state"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=str))
        self.line = np.asarray(self.line, dtype=np.int64)
        self.kept = len(self.bridge_id)
        self.place = np.full(self.kept, "") if self.place is None else np.asarray(self.place, dtype=str)
        for name in ("latitude", "longitude"):
            value = getattr(self, name)
            setattr(self, name, np.full(self.kept, np.nan) if value is None else np.asarray(value, dtype=np.float64))
        for name in ("truck_share", "detour_km", "nhs"):
            value = getattr(self, name)
            setattr(self, name, np.full(self.kept, np.nan, np.float32) if value is None
                    else np.asarray(value, dtype=np.float32))
        self.culvert = (np.zeros(self.kept, bool) if self.culvert is None
                        else np.asarray(self.culvert, dtype=bool))
        whole = np.minimum(np.floor(self.condition), 9).astype(np.int8)
        self.components = (np.repeat(whole[:, None], 3, axis=1) if self.components is None
                           else np.asarray(self.components, dtype=np.int8))
        self.work_year = (np.full((self.kept, 3), np.nan, np.float32) if self.work_year is None
                          else np.asarray(self.work_year, dtype=np.float32))
        self.work_code = (np.full((self.kept, 3), "", dtype="<U4") if self.work_code is None
                          else np.asarray(self.work_code, dtype=str))
        for name in ("components", "work_year", "work_code"):
            if getattr(self, name).shape != (self.kept, 3):
                raise ValueError(f"Inventory.{name} has shape {getattr(self, name).shape}, expected ({self.kept}, 3)")
        for name in _ARRAYS:
            if getattr(self, name).shape != (self.kept,):
                raise ValueError(f"Inventory.{name} has shape {getattr(self, name).shape}, "
                                 f"expected ({self.kept},)")

    @property
    def n_urban(self) -> int:
        """Urban bridges (functional class 11–19 or the mapping's urban rule), count."""
        return int(self.urban.sum())

    @property
    def n_rural(self) -> int:
        """Rural bridges, count."""
        return self.kept - self.n_urban

    @property
    def on_nhs(self) -> np.ndarray:
        """bool (N,), True for bridges coded on the National Highway System (``nhs`` = 1; not coded → False)."""
        return self.nhs == 1.0

    def preserved_years(self) -> np.ndarray:
        """Years since each deck's last preservation (``DK4`` / ``DK5``) where that is its last work, float32 (N,),
        NaN elsewhere (:func:`bridgefleet.inventory.works_history.preserved_years`; NaN for every NBI bridge)."""
        return preserved_years(self.work_code, self.work_year, self.year, self.culvert)

    def bands(self) -> np.ndarray:
        """FHWA condition band of each bridge: str (N,) of "good" (≥ 7), "fair" (5–6), "poor" (≤ 4)."""
        return condition_band(self.condition)

    def subset(self, mask: np.ndarray) -> Inventory:
        """The bridges where ``mask`` (bool (N,)) is True; ``dropped`` and ``notes`` are kept."""
        mask = np.asarray(mask, dtype=bool)
        arrays = {name: getattr(self, name)[mask] for name in _ARRAYS}
        return Inventory(**arrays, components=self.components[mask], work_year=self.work_year[mask],
                         work_code=self.work_code[mask], source=self.source, dropped=list(self.dropped),
                         year=self.year, notes=list(self.notes))

    def agency_labels(self, by_locality: bool) -> np.ndarray:
        """Each bridge's agency label, str (N,) (:func:`bridgefleet.inventory.agencies.owner_labels`): its owner
        code (and state), and with ``by_locality`` a county highway agency's county and a town's or city's place
        where that owner's bridges lie in several (``agencies: owners_by_locality``)."""
        local = (self.county, self.place) if by_locality else (None, None)
        return owner_labels(self.owner, self.state, *local)

    def filter(self, county: str | int | None = None, owner: str | int | None = None) -> Inventory:
        """Bridges of one county (NBI item 3) and/or one owner (NBI item 22).

        Codes compare numerically when both are numbers (``1``, ``"1"`` and ``"001"`` match county 001),
        as text otherwise.

        Raises:
            InventoryError: the inventory has no such column, or no bridge matches (the message lists
                the codes present).
        """
        mask = np.ones(self.kept, dtype=bool)
        applied = []
        for name, want, item in (("county", county, "COUNTY_CODE_003"), ("owner", owner, "OWNER_022")):
            if want is None:
                continue
            have = getattr(self, name)
            if not np.any(have != ""):
                raise InventoryError(f"no {name} codes in this inventory, cannot filter by {name}",
                                     self.source, column=item)
            match = np.array([_same_code(h, want) for h in have], dtype=bool)
            if not np.any(match & mask):
                codes = ", ".join(f"{c} ({n})" for c, n in Counter(have[mask].tolist()).most_common(12))
                raise InventoryError(f"no bridge with {name} {want!r}; codes present (count): {codes}",
                                     self.source, column=item)
            mask &= match
            applied.append(f"{name}={want}")
        out = self.subset(mask)
        if applied:
            out.notes.append(f"filter {', '.join(applied)}: {out.kept} of {self.kept} bridges")
        return out

    def fleet_order(self, max_urban: int | None = None) -> tuple[np.ndarray, int]:
        """Column order of :meth:`to_fleet`: (indices int (N,), number of controlled urban bridges).

        Urban bridges by decreasing AADT (ties: file order), then rural bridges in file order. The first
        ``max_urban`` urban bridges are controlled; the other urban bridges follow them in the rural block.
        """
        urban_idx = np.flatnonzero(self.urban)
        urban_idx = urban_idx[np.argsort(-self.aadt[urban_idx].astype(np.float64), kind="stable")]
        rural_idx = np.flatnonzero(~self.urban)
        n_ctrl = len(urban_idx) if max_urban is None else min(int(max_urban), len(urban_idx))
        return np.concatenate([urban_idx, rural_idx]).astype(np.int64), n_ctrl

    def to_fleet(self, max_urban: int | None = None) -> tuple[int, int, tuple[dict, dict]]:
        """The inventory as a fixed fleet for ``FleetSimulator(config, fleet=...)``.

        Args:
            max_urban: keep only the ``max_urban`` highest-AADT urban bridges under per-bridge control
                (urban agent); the remaining urban bridges go to the strategy-level (rural) agent. None:
                every urban bridge is controlled.

        Returns:
            (n_urban, n_rural, (profile, state)). Columns (B = N): controlled urban bridges by decreasing
            AADT, then the other urban bridges (decreasing AADT), then rural bridges (file order).
            profile: ``bridge_id`` str (B,), ``deck_area`` float32 (B,) m², ``aadt`` float32 (B,)
            vehicles/day, ``cost_factor`` float32 (B,), ``cluster`` str (B,) "urban"/"rural" (the
            bridge's real cluster, also for urban bridges handed to the rural agent), ``truck_share``
            float32 (B,) and ``detour_km`` float32 (B,) km (defaults where not coded), ``nhs`` bool (B,)
            (:attr:`on_nhs`: not coded counts as off the NHS; ``model.fhwa_weight`` counts every bridge of a
            fleet with no NHS bridge), ``owner`` str (B,) the label of the agency that owns it
            (:func:`bridgefleet.inventory.agencies.owner_labels`: item 22 / ``BCL01`` code and owner),
            ``owner_locality`` str (B,) the same with a county's, town's or city's county or place code
            (:meth:`agency_labels`).
            state: ``condition`` (rating; a whole NBI rating r starts at r + 0.5, the middle of the band
            [r, r + 1) of the continuous scale, capped at 9), ``age`` (years), ``ysm`` (years), ``rate`` (rating points/
            year), float32 (B,); ``components`` int8 (B, 3) (:attr:`components`); ``preserved_years`` float32
            (B,) (:meth:`preserved_years`: years since the deck's last preservation where that is its last work,
            NaN elsewhere; the component model's simulator starts such a deck protected,
            :func:`bridgefleet.sim.components.protected_at_start`). profile ``kind`` int64 (B,): 1 for a culvert.

        A cluster may be empty (``n_urban`` or ``n_rural`` 0: a city's or a county's inventory); the plan's fleet
        agents refuse such a fleet (:func:`bridgefleet.sim.simulator.plan_agents_problem`), every other policy
        takes it.

        Raises:
            InventoryError: ``max_urban`` < 1, or no bridge kept.
        """
        integer = isinstance(max_urban, int | np.integer) and not isinstance(max_urban, bool)
        if max_urban is not None and (not integer or max_urban < 1):
            raise InventoryError(f"--max-urban (max_urban) {max_urban!r}: must be a whole number of at least 1 "
                                 "(leave it out to keep every urban bridge)")
        order, n_ctrl = self.fleet_order(max_urban)
        n_rural = self.kept - n_ctrl
        if self.kept == 0:
            raise InventoryError("no bridge kept (every row dropped, or filtered out): nothing to plan", self.source)
        # A city's inventory may be all urban, a county's all rural: the budgets are held by the owners
        # (inventory.agencies), and only the plan's two fleet agents need both clusters
        # (bridgefleet.sim.simulator.plan_agents_problem says so where they are asked for).
        profile = {
            "bridge_id": self.bridge_id[order],
            "deck_area": self.deck_area[order].copy(),
            "aadt": self.aadt[order].copy(),
            "cost_factor": self.cost_factor[order].copy(),
            "cluster": np.where(self.urban[order], "urban", "rural"),
            "truck_share": np.where(np.isnan(self.truck_share[order]), DEFAULT_TRUCK_SHARE,
                                    self.truck_share[order]).astype(np.float32),
            "detour_km": np.where(np.isnan(self.detour_km[order]), DEFAULT_DETOUR_KM,
                                  self.detour_km[order]).astype(np.float32),
            "nhs": self.on_nhs[order],
            "kind": self.culvert[order].astype(np.int64),  # the component model's bridge kind: 1 a culvert
            "owner": self.agency_labels(False)[order],  # who holds the budget (inventory.agencies)
            "owner_locality": self.agency_labels(True)[order],
        }
        state = {name: getattr(self, name)[order].copy() for name in ("condition", "age", "ysm", "rate")}
        state["components"] = self.components[order].copy()
        state["preserved_years"] = self.preserved_years()[order]
        # An NBI rating r (a whole number) covers [r, r + 1) on the simulator's continuous scale: start at
        # the middle, so a bridge rated exactly 7 or 5 does not fall a band with the first tenth of a point.
        whole = state["condition"] == np.floor(state["condition"])
        state["condition"] = np.where(whole, np.minimum(state["condition"] + 0.5, 9.0),
                                      state["condition"]).astype(np.float32)
        return n_ctrl, n_rural, (profile, state)


def condition_band(condition: np.ndarray) -> np.ndarray:
    """FHWA Good/Fair/Poor of lowest ratings (float (N,), rating points): str (N,).

    ≥ 7 "good", ≤ 4 "poor", else "fair" (5–6); fractional ratings below 5 count as poor, as in
    ``model.band_counts``.
    """
    return np.array(["good", "fair", "poor"])[band_index(np.asarray(condition, dtype=np.float64))]


def default_rate(condition: np.ndarray) -> np.ndarray:
    """Deterioration rate from the condition band, float32 (N,) rating points/year (:data:`RATE_BY_BAND`)."""
    bands = condition_band(condition)
    return np.array([RATE_BY_BAND[b] for b in bands.tolist()], dtype=np.float32)


def state_cost_factor(state_code: int | None) -> float:
    """Cost factor of an FHWA state code (item 1): 2017 unit cost / 232 USD/ft²; 1.0 where unknown."""
    if state_code is None or state_code not in UNIT_COST_USD_PER_FT2:
        return 1.0
    return UNIT_COST_USD_PER_FT2[state_code] / REFERENCE_UNIT_COST_USD_PER_FT2


def _same_code(have: str, want: str | int) -> bool:
    want_s = str(want).strip().strip("'\"")
    if have.isdigit() and want_s.isdigit():
        return int(have) == int(want_s)
    return have == want_s


