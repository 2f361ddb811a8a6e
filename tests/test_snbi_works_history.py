"""An SNBI record's work history (``Works``) read per component, and the deck-protection flag the component fleet model
starts from: a hand-written record set where every value is known by hand, through the inventory, the fleet, the
simulator's reset and the exact DP's start state; NBI files and mapped CSVs unchanged."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bridgefleet.config import FleetConfig
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.inventory.load import load_inventory, read_csv_inventory, summarize
from bridgefleet.inventory.works_history import last_works
from bridgefleet.planning.exact_planner import fleet_model
from bridgefleet.sim.components import ComponentModel
from bridgefleet.sim.simulator import FleetSimulator

NAN = math.nan


def _highway(aadt: Any, urban: str = "99999", nhs: str = "N", trucks: int | None = None, fc: str = "5",
             detour: int = 3) -> dict:
    return {"BF01": "H", "BF02": "C", "BH01": fc, "BH02": urban, "BH03": nhs, "BH09": aadt, "BH10": trucks,
            "BH17": detour}


def _record(bid: str, works: list[dict], features: list[dict], **items: Any) -> dict:
    rec = {"BID01": bid, "BL01": 11, "BL02": "001", "BCL01": "S01", "BG16": 10000, "BC01": "7", "BC02": "6",
           "BC03": "6", "BC04": "N", "BW01": 1970, "Features": features, "Works": works,
           "Inspections": [{"BIE01": "2", "BIE03": "20250315"}]}  # inventory year 2025
    rec.update(items)
    return rec


RECORDS = [
    # a deck sealed (DK5) 2 years before the inventory year; an older superstructure rehabilitation
    _record("D5", [{"BW02": 2023, "BW03": "DK5"}, {"BW02": 2010, "BW03": "SP3"}], [_highway(5000, "47900", "Y")]),
    # a deck overlaid (DK4) in 2005, the bridge replaced (BR01) in 2012: every component's last work is the BR01
    _record("RPL", [{"BW02": 2005, "BW03": "DK4"}, {"BW02": 2012, "BW03": "BR01"}], [_highway(900)]),
    # overlaid 21 years before (21 ≥ 20.9 years, the model's protection life): not protected
    _record("OLD", [{"BW02": 2004, "BW03": "DK4"}], [_highway(800)]),
    # sealed 20 years before (< 20.9): protected
    _record("S20", [{"BW02": 2005, "BW03": "dk5 "}], [_highway(700)]),
    # a new bridge sealed in the year it was built: the seal is the deck's last work
    _record("NEW", [{"BW02": 2020, "BW03": "BR01"}, {"BW02": 2020, "BW03": "DK5"}], [_highway(400)], BW01=2020,
            BC01="8", BC02="8", BC03="8"),
    # a culvert: its barrel's work (CU2) in the deck slot, never a protected deck
    _record("C1", [{"BW02": 2018, "BW03": "CU2"}], [_highway(300)], BC01="N", BC02="N", BC03="N", BC04="5",
            BG16=2000),
]


@pytest.fixture
def works_file(tmp_path: Path) -> Path:
    path = tmp_path / "works.json"
    path.write_text(json.dumps(RECORDS), encoding="utf-8")
    return path


def test_last_work_on_each_component_by_hand(works_file: Path) -> None:
    inv = load_inventory(works_file)
    assert inv.year == 2025 and inv.bridge_id.tolist() == ["D5", "RPL", "OLD", "S20", "NEW", "C1"]
    assert inv.work_code.tolist() == [["DK5", "SP3", ""], ["BR01", "BR01", "BR01"], ["DK4", "", ""],
                                      ["DK5", "", ""], ["DK5", "BR01", "BR01"], ["CU2", "", ""]]
    np.testing.assert_array_equal(inv.work_year, [[2023, 2010, NAN], [2012, 2012, 2012], [2004, NAN, NAN],
                                                  [2005, NAN, NAN], [2020, 2020, 2020], [2018, NAN, NAN]])
    # years since the deck's last preservation, where that is its last work
    np.testing.assert_array_equal(inv.preserved_years(), [2, NAN, 21, 20, 5, NAN])
    # years since maintenance as before: min(age, 2025 − latest BW02, 15)
    assert inv.ysm.tolist() == [2.0, 13.0, 15.0, 15.0, 5.0, 7.0]
    assert inv.subset(np.array([False, True, False, False, False, True])).work_code.tolist() == [
        ["BR01", "BR01", "BR01"], ["CU2", "", ""]]
    text = summarize(inv)
    assert ("Last work on each component (SNBI Works BW03) of 6 bridges: deck BR01 1, DK4 1, DK5 3; superstructure "
            "BR01 2, SP3 1; substructure BR01 2; culvert CU2 1") in text
    assert ("  decks starting protected on components-2026 (last deck work DK4 / DK5 fewer than 20.9 years before "
            "2025): 3 of the 4 whose last deck work is one") in text


def test_works_entries_not_read() -> None:
    works = [{"BW02": 2019, "BW03": "DK5-T"},  # a temporary code: not known
             {"BW02": 2018, "BW03": None},  # null: not known
             {"BW02": 2017, "BW03": "0"},  # no work
             {"BW02": 1950, "BW03": "SP2"},  # before the bridge was built
             {"BW02": 2030, "BW03": "SB2"},  # after the inventory year
             {"BW02": "n/a", "BW03": "DK1"},  # no year
             {"BW02": "2011", "BW03": "RT1"},  # railings: work done (ysm), on no component
             {"BW02": 2009, "BW03": "DK3"}, {"BW02": 2009, "BW03": "DK2"}]  # one year: the later entry
    latest, years, codes = last_works(works, 1960, 2025, culvert=False)
    assert latest == 2011 and codes == ("DK2", "", "") and years[0] == 2009.0 and math.isnan(years[1])
    assert last_works("not a list", 1960, 2025, culvert=False)[2] == ("", "", "")
    # a culvert's deck slot takes CU codes, not DK codes
    assert last_works([{"BW02": 2000, "BW03": "DK4"}], 1960, 2025, culvert=True)[2] == ("", "", "")


def test_the_busiest_of_several_highways_carried(tmp_path: Path) -> None:
    records = [
        # a rural local road and an urban NHS arterial carried, a waterway below: the arterial (AADT 12,000) is read
        _record("TWO", [], [_highway(800, detour=9), {"BF01": "W", "BF02": "B"},
                            _highway(12000, urban="47900", nhs="Y", trucks=1200, detour=2)]),
        # the same AADT: the higher functional class (BH01 1, Interstate) is read
        _record("TIE", [], [_highway(3000, fc="5", detour=4), _highway(3000, fc="1", detour=6)]),
        # the busiest (AADT 5,000) is off the NHS, a ramp carried is on it: the bridge carries the NHS
        _record("RAMP", [], [_highway(5000, detour=1), _highway(400, nhs="Y", detour=7)]),
        # an AADT not known (temporary code) is never the busiest
        _record("TMP", [], [_highway("T-U", urban="47900", detour=8), _highway(600, detour=5)]),
        # one highway carried, one above it (BF02 A): not counted as several
        _record("ONE", [], [_highway(700), {**_highway(90000), "BF02": "A"}]),
    ]
    path = tmp_path / "highways.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    inv = load_inventory(path)
    assert inv.bridge_id.tolist() == ["TWO", "TIE", "RAMP", "TMP", "ONE"]
    assert inv.aadt.tolist() == [12000.0, 3000.0, 5000.0, 600.0, 700.0]
    assert inv.urban.tolist() == [True, False, False, False, False]
    assert inv.nhs.tolist() == [1.0, 0.0, 1.0, 0.0, 0.0]
    np.testing.assert_allclose(inv.truck_share, [0.1, NAN, NAN, NAN, NAN])
    np.testing.assert_allclose(inv.detour_km, np.array([2, 6, 1, 5, 3]) * 1.609344, rtol=1e-6)
    assert ("records carrying a highway in several Features entries (BF01 H, BF02 C): 4, each read from one: the "
            "highest AADT BH09, then functional class BH01 (1 Interstate first), then file order; 1 on the NHS by "
            "another highway carried (BH03 Y: 23 CFR 490.403)") in inv.notes


def _fleet(path: Path | str, **fields: Any) -> tuple[FleetConfig, tuple[dict, dict]]:
    cfg, fleet = resolve_fleet(FleetConfig.named("components-2026", inventory=str(path), **fields))
    assert fleet is not None
    return cfg, fleet


def test_simulator_and_exact_dp_start_from_the_works(works_file: Path) -> None:
    cfg, fleet = _fleet(works_file)
    ids = fleet[0]["bridge_id"].tolist()
    by_id = dict(zip(ids, fleet[1]["preserved_years"].tolist(), strict=True))
    assert by_id["D5"] == 2 and by_id["S20"] == 20 and by_id["OLD"] == 21 and math.isnan(by_id["RPL"])
    assert ComponentModel.load("massachusetts-2026").protection_years == 20.9
    want = {"D5": True, "RPL": False, "OLD": False, "S20": True, "NEW": True, "C1": False}
    sim = FleetSimulator(cfg, num_envs=3, fleet=fleet)
    sim.reset(seeds=[0, 1, 2])
    expected = np.array([want[b] for b in ids])
    np.testing.assert_array_equal(sim.protected, np.tile(expected, (3, 1)))  # every fleet alike, whatever its seed
    # the exact DP's start state (deck, superstructure, substructure, protected) of each bridge
    model, _, _ = fleet_model(sim, np.arange(1))
    np.testing.assert_array_equal(model.start[:, 3], expected.astype(np.int64))
    np.testing.assert_array_equal(model.start[:, :3], fleet[1]["components"])
    # a reset starts the flags again (a year of preservation or lapse in between does not carry over)
    sim.protected[:] = ~sim.protected
    sim.reset(np.array([1]), seeds=[7])
    np.testing.assert_array_equal(sim.protected[1], expected)


def test_nbi_and_mapped_csv_unchanged(tmp_path: Path) -> None:
    nbi = load_inventory("dc-2019")
    assert (nbi.work_code == "").all() and np.isnan(nbi.work_year).all() and np.isnan(nbi.preserved_years()).all()
    assert "Last work on each component" not in summarize(nbi)
    cfg, fleet = _fleet("dc-2019")
    assert np.isnan(fleet[1]["preserved_years"]).all()
    sim = FleetSimulator(cfg, num_envs=2, fleet=fleet)
    sim.reset(seeds=[0, 1])
    assert not sim.protected.any()
    assert not fleet_model(sim, np.arange(1))[0].start[:, 3].any()
    table = tmp_path / "t.csv"
    table.write_text("id,cond,age,area,adt\nA,6,30,500,1000\nB,5,40,800,20000\n", encoding="utf-8")
    csv_inv = read_csv_inventory(table, {"id": "id", "condition": "cond", "age": "age", "deck_area": "area",
                                         "aadt": "adt", "cluster": "rural"})
    assert csv_inv.work_code.tolist() == [["", "", ""]] * 2 and np.isnan(csv_inv.preserved_years()).all()
