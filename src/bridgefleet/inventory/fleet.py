"""The fleet a configuration names: a synthetic one (None) or an inventory's bridges, read once per file version
and sized (agencies, annual budgets) from it."""

from __future__ import annotations

import functools
import os
import warnings

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.config.fleet import BUNDLED_COMPONENT_MODELS, OWNER_AGENCIES
from bridgefleet.config.quantities import MAX_BUDGET_USD
from bridgefleet.inventory import agencies
from bridgefleet.inventory.model import BUNDLED, BUNDLED_MAPPINGS
from bridgefleet.sim import model


def resolve_fleet(config: FleetConfig) -> tuple[FleetConfig, tuple[dict, dict] | None]:
    """Load ``config.inventory`` (if set) into a fixed fleet and size the config from it.

    For an inventory each agency's annual budget is ``budget_share_of_replacement`` × the replacement value of its
    bridges (deck area × cost factor × replacement unit cost), or ``inventory_budget_usd_per_m2`` × its deck area
    where that is set. The agencies are the owners (``config.agencies`` ``owners``: one per owner code;
    ``owners_by_locality``: and a county, town or city one per county or place;
    :mod:`bridgefleet.inventory.agencies`; the fleet's profile gains ``agency`` int64 (B,), the config
    ``agency_names`` and ``agency_budget_shares``) or the urban and the rural agency (``urban_rural``). Deterioration
    rates come by condition band (``RATE_BY_BAND``); where the fleet model has rate factors of its own
    (``rating_rate_factors`` ≠ 1) every bridge gets the synthetic fleet's mean rate instead, so the rating does not
    count twice. A training run resolves its fleet in several places (trainer, vector env, every evaluation), so the
    loaded fleet is cached per file version (path, size, modification time) and options; its arrays are read-only, and
    it warns once.

    Returns:
        (config with n_urban / n_rural / budget (and its agencies) taken from the inventory, fleet tuple or None for
        synthetic).
    """
    if config.inventory is None:
        return config, None
    n_urban, n_rural, fleet = _load_fixed_fleet(
        config.inventory, config.inventory_mapping, config.county, config.owner, config.max_urban,
        _file_version(config.inventory))
    profile, state = fleet
    if config.inventory_budget_usd_per_m2 is not None:
        size = profile["deck_area"].astype(np.float64)
        per_year = config.inventory_budget_usd_per_m2
    else:
        size = profile["deck_area"].astype(np.float64) * profile["cost_factor"]
        per_year = config.budget_share_of_replacement * config.unit_costs_usd_per_m2[4]
    budget = per_year * float(size.sum())
    _check_sized_budget(config, budget, float(size.sum()), n_urban + n_rural)
    share = float(size[:n_urban].sum() / size.sum())
    if any(f != 1.0 for f in config.rating_rate_factors):
        state = {**state, "rate": np.full_like(state["rate"], model.MEAN_RATE)}
        state["rate"].flags.writeable = False
    owners: dict = {"agency_names": None, "agency_budget_shares": None}
    if config.agencies in OWNER_AGENCIES:
        names, index = agencies.group(profile["owner" if config.agencies == "owners" else "owner_locality"])
        index.flags.writeable = False
        profile = {**profile, "agency": index}
        owners = {"agency_names": names,
                  "agency_budget_shares": tuple(agencies.budget_shares(index, size, len(names)).tolist())}
    return config.replace(n_urban=n_urban, n_rural=n_rural, annual_budget_usd=budget, urban_budget_share=share,
                          **owners), (profile, state)


_FILE_FIELDS = (("inventory", BUNDLED, "inventory"), ("inventory_mapping", BUNDLED_MAPPINGS, "column mapping"),
                ("component_model", BUNDLED_COMPONENT_MODELS, "component model"))


def _files(config: FleetConfig) -> list[tuple[str, str, str]]:
    """(field, path, what it is) of ``config``'s inventory, column mapping and component model where they name
    files (a bundled name is not one)."""
    return [(field, value, what) for field, bundled, what in _FILE_FIELDS
            if (value := getattr(config, field)) is not None and value not in bundled and os.path.isfile(value)]


def absolute_files(config: FleetConfig) -> FleetConfig:
    """``config`` with its inventory, column mapping and component model as absolute paths where they name files
    (bundled names stay names), so a run's config.yaml reads the same files from any working folder (issue 79,
    kind 5: a relative ``component_model`` was read from the working folder of a later resume)."""
    changes = {field: os.path.abspath(path) for field, path, _ in _files(config)}
    return config.replace(**changes) if changes else config


def on_inventory(config: FleetConfig, inventory: str | None, mapping: str | None = None) -> FleetConfig:
    """``config``'s fleet on ``inventory`` instead (None: unchanged), read with ``mapping``; without one, with
    ``config``'s column mapping where the file is a table that needs one, and by its own layout where it is an NBI
    or SNBI file (:func:`bridgefleet.inventory.load.own_layout`): a run trained on a mapped CSV plans DC's NBI
    file, where its mapping would name columns the file does not have (issue 79's probe)."""
    from bridgefleet.inventory.load import own_layout

    return config.with_inventory(inventory, mapping, own_layout=inventory is not None and own_layout(inventory))


def input_files(config: FleetConfig, whose: str = "the") -> list[tuple[str, str]]:
    """(path, what it is) of the files ``config`` reads: its inventory, mapping and component model where files
    (for :func:`bridgefleet.paths.check_writable_file`'s ``reads``), named "``whose`` inventory" and so on."""
    return [(path, f"{whose} {what}") for _, path, what in _files(config)]


def one_fleet(config: FleetConfig, seed: int) -> tuple[FleetConfig, tuple[dict, dict] | None]:
    """:func:`resolve_fleet` of one fleet: the inventory, or the fleet model's fleet of fleet seed ``seed``
    (``fixed_fleet``), so every episode differs only in its deterioration (what a plan or a scenario of one
    agency's fleet is about)."""
    if config.inventory is None:
        config = config.replace(fixed_fleet=True, fleet_seed=seed)
    return resolve_fleet(config)


def _check_sized_budget(config: FleetConfig, budget: float, size: float, n_bridges: int) -> None:
    """The annual budget sized from an inventory (``size``: its deck area in m², or its replacement value at USD 1
    a m², summed over its ``n_bridges`` bridges) stays a budget a user can have; the message names the keys and
    files that size it, not internal fields.

    Raises:
        ValueError: above :data:`MAX_BUDGET_USD` (or not finite).
    """
    if budget <= MAX_BUDGET_USD:
        return
    if config.inventory_budget_usd_per_m2 is not None:
        how = (f"inventory_budget_usd_per_m2 {config.inventory_budget_usd_per_m2:g} USD/m² × the {size:,.0f} m² of "
               "deck")
        fix = "lower inventory_budget_usd_per_m2"
    else:
        how = (f"budget_share_of_replacement {config.budget_share_of_replacement:g} × the replacement value, USD "
               f"{config.unit_costs_usd_per_m2[4] * size:,.0f} (deck area × cost factor × unit_costs_usd_per_m2[4] "
               f"= {config.unit_costs_usd_per_m2[4]:g} USD/m²)")
        fix = "lower budget_share_of_replacement, or check the inventory's deck areas and cost factor"
    raise ValueError(f"{config.inventory}: the annual budget sized from its {n_bridges:,} bridges, {how}, is USD "
                     f"{budget:,.0f} a year, more than the USD {MAX_BUDGET_USD:,.0f} a budget may be: {fix}")


def set_budget(config: FleetConfig, scale: float | None = None, usd: float | None = None) -> FleetConfig:
    """A resolved fleet (:func:`resolve_fleet`) with its total annual budget ``scale`` × its own (the sized
    budget) or ``usd`` USD a year; the split between the agencies (urban / rural, or an inventory's owners) is
    kept. Neither given: unchanged.

    Raises:
        ValueError: both given, a negative or non-finite value, or a budget above :data:`MAX_BUDGET_USD`.
    """
    if scale is not None and usd is not None:
        raise ValueError("give --budget-scale or --budget-usd, not both")
    for name, value in (("--budget-scale", scale), ("--budget-usd", usd)):
        if value is not None and not (np.isfinite(value) and value >= 0):
            raise ValueError(f"{name} {value:g}: must be a finite number ≥ 0")
    if scale is None and usd is None:
        return config
    budgets = config.budgets_usd
    total = sum(budgets)
    share = budgets[0] / total if total > 0 else config.n_urban / max(config.n_urban + config.n_rural, 1)
    new = float(usd if usd is not None else scale * total)
    if not new <= MAX_BUDGET_USD:
        name, value = ("--budget-usd", usd) if usd is not None else ("--budget-scale", scale)
        raise ValueError(f"{name} {value:g}: USD {new:,.0f} a year is more than the USD {MAX_BUDGET_USD:,.0f} a "
                         "budget may be")
    if config.agency_budget_shares is not None:  # an inventory's owners: their shares kept as they are
        return config.replace(annual_budget_usd=new)
    return config.replace(annual_budget_usd=new, urban_budget_share=float(share))


def _file_version(name_or_path: str) -> tuple[int, int] | None:
    """(size, mtime_ns) of an inventory file, None for a bundled name or a missing file (the loader says why)."""
    try:
        st = os.stat(name_or_path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=8)
def _load_fixed_fleet(inventory: str, mapping: str | None, county: str | None, owner: str | None,
                      max_urban: int | None, version: tuple[int, int] | None
                      ) -> tuple[int, int, tuple[dict, dict]]:
    from bridgefleet.inventory.load import load_inventory

    inv = load_inventory(inventory, mapping=mapping)
    if inv.dropped:
        line, reason = inv.dropped[0]
        warnings.warn(f"{inv.source}: {len(inv.dropped)} row(s) dropped, first line {line}: {reason} "
                      f"(bridgefleet inventory {inventory}{f' --mapping {mapping}' if mapping else ''} lists them)",
                      stacklevel=3)
    if county is not None or owner is not None:
        inv = inv.filter(county=county, owner=owner)
    n_urban, n_rural, fleet = inv.to_fleet(max_urban)
    if max_urban is not None and max_urban > n_urban:
        warnings.warn(f"{inv.source}: max_urban = {max_urban} but the fleet has only {n_urban} urban "
                      f"bridge(s); all {n_urban} are under per-bridge control", stacklevel=3)
    for part in fleet:
        for arr in part.values():
            if isinstance(arr, np.ndarray):
                arr.flags.writeable = False  # shared by every caller of the cache
    return n_urban, n_rural, fleet
