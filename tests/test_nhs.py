"""National Highway System membership: NBI item 104, the mapped-CSV ``nhs`` rule, the fleet profile and the
deck-area weight of FHWA's measures (23 CFR 490.407)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from bridgefleet.config import FleetConfig
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.inventory.load import InventoryError, bundled_path, load_inventory, read_csv_inventory, summarize
from bridgefleet.sim import model
from bridgefleet.sim.simulator import FleetSimulator

INDIANA = Path("/work/shared/data/indiana/INDIANA2019.csv")


def _clean(v: str) -> str:
    return v.strip().strip("'\"").strip()


def test_dc_nhs_is_item_104_as_coded() -> None:
    inv = load_inventory("dc-2019")
    with bundled_path("dc-2019").open(encoding="latin-1", newline="") as fh:
        raw = {_clean(r["STRUCTURE_NUMBER_008"]): _clean(r["HIGHWAY_SYSTEM_104"])
               for r in csv.DictReader(fh, quotechar="'") if _clean(r["RECORD_TYPE_005A"]) == "1"}
    kept = [raw[b] for b in inv.bridge_id.tolist()]
    assert int(inv.on_nhs.sum()) == sum(v == "1" for v in kept) == 144
    assert int((inv.nhs == 0).sum()) == sum(v == "0" for v in kept) == 100
    np.testing.assert_array_equal(inv.on_nhs, [v == "1" for v in kept])
    share = inv.deck_area[inv.on_nhs].astype(np.float64).sum() / inv.deck_area.astype(np.float64).sum()
    text = summarize(inv)
    assert f"144 bridges on the NHS ({100 * share:.1f} % of deck area), 100 not, 0 not coded" in text


@pytest.mark.skipif(not INDIANA.exists(), reason="shared Indiana table not available")
def test_indiana_nhs_is_road_class_nhs() -> None:
    inv = load_inventory(INDIANA)
    with INDIANA.open(encoding="utf-8", newline="") as fh:
        road = {_clean(r["STRUCTURE_NUMBER_008"]): _clean(r["Road_class"]) for r in csv.DictReader(fh)}
    kept = [road[b] for b in inv.bridge_id.tolist()]
    assert int(inv.on_nhs.sum()) == sum(v == "NHS" for v in kept) == 2466
    assert not np.isnan(inv.nhs).any()
    assert "2466 bridges on the NHS" in summarize(inv)


def test_mapped_nhs_rules_and_blanks(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("id,c,age,area,adt,hs,road\nA,7,10,100,1000,1,NHS\nB,6,10,200,1000,0,Local\n"
                 "C,5,10,700,1000,,\nD,5,10,50,1000,9,Major\n")
    base = {"id": "id", "condition": "c", "age": "age", "deck_area": "area", "aadt": "adt", "cluster": "rural"}
    np.testing.assert_array_equal(read_csv_inventory(p, {**base, "nhs": "hs"}).nhs, [1, 0, np.nan, np.nan])
    by_road = read_csv_inventory(p, {**base, "nhs": {"column": "road", "values": ["NHS", "Major"]}})
    np.testing.assert_array_equal(by_road.nhs, [1, 0, np.nan, 1])
    none = read_csv_inventory(p, base)
    assert np.isnan(none.nhs).all() and not none.on_nhs.any()
    assert "National Highway System: not coded: FHWA deck-area measures count all bridges" in summarize(none)
    hs = read_csv_inventory(p, {**base, "nhs": "hs"})  # A on the NHS, B not, C and D (9) not coded
    assert "National Highway System: 1 bridge on the NHS (9.5 % of deck area), 1 not, 2 not coded" in summarize(hs)
    with pytest.raises(InventoryError, match="nhs must be"):
        read_csv_inventory(p, {**base, "nhs": {"column": "road", "values": []}})
    with pytest.raises(InventoryError, match="column road2"):
        read_csv_inventory(p, {**base, "nhs": {"column": "road2", "values": ["NHS"]}})


def test_fhwa_weight_hand_cases() -> None:
    deck = np.array([100.0, 200.0, 700.0])
    np.testing.assert_array_equal(model.fhwa_weight(deck, np.array([True, False, True])), [100, 0, 700])
    np.testing.assert_array_equal(model.fhwa_weight(deck, np.zeros(3, bool)), [100, 200, 700])
    # per fleet (last axis = bridges): a fleet with no NHS bridge counts every bridge
    both = model.fhwa_weight(np.tile(deck, (2, 1)), np.array([[False, True, False], [False] * 3]))
    np.testing.assert_array_equal(both, [[0, 200, 0], [100, 200, 700]])
    shares = model.band_shares(np.array([8.0, 6.0, 3.0]), model.fhwa_weight(deck, np.array([True, False, True])))
    np.testing.assert_allclose(shares, [0.125, 0.0, 0.875])
    assert model.fhwa_basis(np.array([True, False])) == "NHS bridges"
    assert model.fhwa_basis(np.zeros((2, 3), bool)) == "all bridges (no NHS coding)"


def test_synthetic_fleet_counts_every_bridge() -> None:
    cfg = FleetConfig(n_urban=3, n_rural=4)
    sim = FleetSimulator(cfg, num_envs=2)
    sim.reset(seeds=[1, 2])
    assert sim.profile.nhs.shape == (2, 7) and sim.profile.nhs.dtype == bool and sim.profile.nhs.all()
    assert sim.profile.select(slice(0, 1)).nhs.shape == (1, 7)
    fixed = FleetSimulator(cfg.replace(fixed_fleet=True), num_envs=2)
    fixed.reset(seeds=[1, 2])
    assert fixed.profile.nhs.all()
    p = sim.profile
    default = model.FleetProfile(p.bridge_id, p.urban, p.deck_area, p.aadt, p.cost_factor, p.target_condition,
                                 p.truck_share, p.detour_km)
    assert default.nhs.shape == (2, 7) and default.nhs.all()


def test_inventory_fleet_carries_nhs() -> None:
    inv = load_inventory("dc-2019")
    cfg, fleet = resolve_fleet(FleetConfig(inventory="dc-2019", max_urban=20))
    order, _ = inv.fleet_order(20)
    np.testing.assert_array_equal(fleet[0]["nhs"], inv.on_nhs[order])
    sim = FleetSimulator(cfg, num_envs=2, fleet=fleet)
    sim.reset(seeds=[0, 1])
    np.testing.assert_array_equal(sim.profile.nhs, np.tile(inv.on_nhs[order], (2, 1)))
    weight = model.fhwa_weight(sim.profile.deck_area, sim.profile.nhs)
    np.testing.assert_allclose(weight.sum(-1), inv.deck_area[inv.on_nhs].astype(np.float64).sum(), rtol=1e-6)
    assert model.fhwa_basis(sim.profile.nhs) == "NHS bridges"
