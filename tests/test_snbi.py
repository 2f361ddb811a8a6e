"""SNBI submittal files (JSON, the NBI from 2026 on): a hand-written file checked value by value, DC 2019 written as
SNBI through the Coding Guide → SNBI crosswalk read as the same fleet, and the one-line refusals."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bridgefleet.cli import main
from bridgefleet.inventory.load import InventoryError, bundled_path, load_inventory, summarize
from bridgefleet.inventory.nbi import nbi_degrees
from bridgefleet.inventory.snbi import FT2_TO_M2, MILE_TO_KM, read_snbi


def _write(path: Path, records: Any) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def _highway(aadt: Any = 1000, trucks: Any = 100, urban: str = "47900", nhs: str = "Y", detour: Any = 5) -> dict:
    return {"BF01": "H", "BF02": "C", "BH01": "3", "BH02": urban, "BH03": nhs, "BH09": aadt, "BH10": trucks,
            "BH17": detour, "Routes": [{"BRT01": "1"}]}


def _bridge(bid: str, **items: Any) -> dict:
    rec = {"BID01": bid, "BL01": 11, "BL02": "001", "BL05": 38.9, "BL06": -77.0, "BCL01": "S01", "BG16": 10000,
           "BC01": "7", "BC02": "6", "BC03": "5", "BC04": "N", "BW01": 1990,
           "Features": [{"BF01": "W", "BF02": "B"}, _highway()],
           "Inspections": [{"BIE01": "2", "BIE02": "20250301", "BIE03": "20250315"}]}
    rec.update(items)
    return rec


# -- (a) a hand-written 3-bridge file -----------------------------------------------------------------


@pytest.fixture
def three(tmp_path: Path) -> Path:
    culvert = _bridge("00042", BC01="N", BC02="N", BC03="N", BC04="4", BG16=2000, BW01=1960, BCL01="L01",
                      BL02="003", Features=[_highway(aadt=500, trucks=None, urban="99999", nhs="N", detour=2)])
    temporary = _bridge("B-2", BC01="8", BC02="8", BC03="8", BW01=2010,
                        BG15=5000, Features=[_highway(aadt=20000, trucks="2000", urban="S-T", detour="T-U")],
                        Elements=[{"BE01": "12", "BE02": None, "BE03": 5000, "BCS01": 3000, "BCS02": 1000,
                                   "BCS03": 600, "BCS04": 400},
                                  {"BE01": "107", "BE03": 400, "BCS01": 400, "BCS02": 0, "BCS03": 0, "BCS04": 0}])
    first = _bridge("0001", Works=[{"BW02": 2015, "BW03": "DK4"}, {"BW02": 2001, "BW03": "SP2"}],
                    Elements=[{"BE01": 38, "BE03": 5000, "BCS01": 4000, "BCS02": 0, "BCS03": 1000, "BCS04": 0}])
    return _write(tmp_path / "state.json", [first, culvert, temporary])


def test_three_bridges_every_value(three: Path) -> None:
    inv = load_inventory(three)  # by its content: a JSON array with BID01
    assert inv.kept == 3 and inv.dropped == [] and inv.year == 2025
    assert inv.bridge_id.tolist() == ["0001", "00042", "B-2"]  # leading zeros kept
    assert inv.line.tolist() == [1, 2, 3]
    assert inv.state.tolist() == ["11"] * 3 and inv.county.tolist() == ["001", "003", "001"]
    assert inv.owner.tolist() == ["S01", "L01", "S01"]
    np.testing.assert_allclose(inv.latitude, [38.9] * 3)
    np.testing.assert_allclose(inv.longitude, [-77.0] * 3)
    # deck area: BG16 10,000 ft², BG16 2,000 ft² (culvert), BG15 5,000 ft² over BG16
    np.testing.assert_allclose(inv.deck_area, [929.0304, 185.80608, 464.5152], rtol=1e-6)
    assert inv.condition.tolist() == [5.0, 4.0, 8.0]
    assert inv.components.tolist() == [[7, 6, 5], [4, 9, 9], [8, 8, 8]]
    assert inv.culvert.tolist() == [False, True, False]
    assert inv.age.tolist() == [35.0, 65.0, 15.0]
    assert inv.ysm.tolist() == [10.0, 15.0, 15.0]  # last work DK4 2015; no work: min(age, 15)
    assert inv.urban.tolist() == [True, False, False]  # 47900 urban, 99999 rural, S-T not known: rural
    assert inv.nhs.tolist() == [1.0, 0.0, 1.0]
    assert inv.aadt.tolist() == [1000.0, 500.0, 20000.0]
    np.testing.assert_allclose(inv.truck_share, [0.1, np.nan, 0.1])
    np.testing.assert_allclose(inv.detour_km, [5 * MILE_TO_KM, 2 * MILE_TO_KM, np.nan], rtol=1e-6)
    assert inv.cost_factor.tolist() == [1.0] * 3  # DC 232 USD/ft² = the reference
    notes = "\n".join(inv.notes)
    assert "temporary codes: BH02 1, BH17 1" in notes
    assert "BH10 1" in notes and "BH02 (read as rural) 1" in notes
    # deck elements 38 and 12: (1000 + 600 + 400) / (5000 + 5000) = 20 %; element 107 is not a deck
    assert "deck elements (12–65) of 2 bridges: 20.0 % of quantity in condition states 3–4" in notes
    text = summarize(inv)
    assert "temporary codes" in text and "Bridges kept: 3 (urban 1, rural 2)" in text
    assert inv.filter(owner="L01").bridge_id.tolist() == ["00042"]
    assert inv.filter(county="3").bridge_id.tolist() == ["00042"]


def test_a_county_highway_agency_holds_its_budget_by_its_bl02_county(tmp_path: Path) -> None:
    """SNBI ``BCL01`` L01 in ``BL02`` 003 and 005: two agencies, "L01 county highway agency, county 003" and "…, county
    005", each sized from its own bridge; the two S01 bridges (counties 001 and 003) one agency whatever their
    county."""
    from bridgefleet.config import FleetConfig
    from bridgefleet.inventory.fleet import resolve_fleet

    path = _write(tmp_path / "counties.json", [_bridge("1", BCL01="L01", BL02="003", BG16=2000),
                                               _bridge("2", BCL01="L01", BL02="005", BG16=6000),
                                               _bridge("3"), _bridge("4", BL02="003")])
    cfg, _ = resolve_fleet(FleetConfig.named("components-2026", inventory=str(path)))
    assert cfg.agency_labels == ("L01 county highway agency, county 003", "L01 county highway agency, county 005",
                                 "S01 state transportation department")
    # deck areas 2,000 / 6,000 / 10,000 + 10,000 ft² (cost factor the same for all: one state)
    np.testing.assert_allclose(cfg.agency_budget_shares, [2 / 28, 6 / 28, 20 / 28], rtol=1e-6)


def test_year_given_and_several_states(tmp_path: Path) -> None:
    path = _write(tmp_path / "two.json", [_bridge("1"), _bridge("1", BL01=24)])
    inv = read_snbi(path, year=2020)
    assert inv.year == 2020 and inv.bridge_id.tolist() == ["11:1", "24:1"]
    assert any("2 states in the file" in n for n in inv.notes)


# -- (b) DC 2019 through the Coding Guide → SNBI crosswalk ----------------------------------------------


def _opt(v: str) -> str | None:
    v = v.strip()
    return v or None


def _dc_as_snbi(path: Path) -> Path:
    """DC19.txt's highway bridges as SNBI records (FHWA's crosswalk of Coding Guide items to SNBI tags)."""
    dc = load_inventory("dc-2019")
    with bundled_path("dc-2019").open(encoding="latin-1", newline="") as fh:
        rows = [r for r in csv.DictReader(fh, quotechar="'") if r["RECORD_TYPE_005A"].strip() == "1"]
    assert [r["STRUCTURE_NUMBER_008"].strip() for r in rows] == dc.bridge_id.tolist()
    records = []
    for r, area in zip(rows, dc.deck_area.astype(np.float64), strict=True):
        adt = int(r["ADT_029"])
        pct = _opt(r["PERCENT_ADT_TRUCK_109"])
        detour = _opt(r["DETOUR_KILOS_019"])
        recon = _opt(r["YEAR_RECONSTRUCTED_106"])
        date = r["DATE_OF_INSPECT_090"].strip().zfill(4)  # MMYY
        records.append({
            "BID01": r["STRUCTURE_NUMBER_008"].strip(),  # item 8
            "BL01": int(r["STATE_CODE_001"]), "BL02": r["COUNTY_CODE_003"].strip(),  # items 1, 3
            "BL05": nbi_degrees(r["LAT_016"], 2), "BL06": -nbi_degrees(r["LONG_017"], 3),  # items 16, 17
            "BCL01": r["OWNER_022"].strip(),  # item 22, kept as the NBI code (text), not SNBI's S01 / L03 …
            "BG16": area / FT2_TO_M2,  # DECK_AREA (m²) → ft²
            "BC01": r["DECK_COND_058"].strip(), "BC02": r["SUPERSTRUCTURE_COND_059"].strip(),  # items 58–62
            "BC03": r["SUBSTRUCTURE_COND_060"].strip(), "BC04": r["CULVERT_COND_062"].strip(),
            "BW01": int(r["YEAR_BUILT_027"]),  # item 27
            "Features": [{"BF01": "H", "BF02": "C",
                          "BH02": "47900" if int(r["FUNCTIONAL_CLASS_026"]) >= 11 else "99999",  # item 26
                          "BH03": {"1": "Y", "0": "N"}.get(r["HIGHWAY_SYSTEM_104"].strip()),  # item 104
                          "BH09": adt,  # item 29
                          "BH10": None if pct is None else adt * float(pct) / 100,  # item 109: a share → a count
                          "BH17": None if detour is None else float(detour) / MILE_TO_KM}],  # item 19 km → miles
            "Inspections": [{"BIE01": "2", "BIE03": f"20{date[2:]}{date[:2]}01"}],  # item 90
            "Works": [] if recon in (None, "0") else [{"BW02": int(recon), "BW03": "SP2"}],  # item 106
        })
    return _write(path, records)


@pytest.fixture(scope="module")
def dc_snbi(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _dc_as_snbi(tmp_path_factory.mktemp("snbi") / "dc.json")


def test_dc_as_snbi_is_the_same_fleet(dc_snbi: Path) -> None:
    nbi, snbi = load_inventory("dc-2019"), load_inventory(dc_snbi)
    assert snbi.kept == nbi.kept == 244 and snbi.dropped == [] and snbi.year == 2019
    assert snbi.bridge_id.tolist() == nbi.bridge_id.tolist()
    np.testing.assert_allclose(snbi.deck_area, nbi.deck_area, rtol=1e-3)
    for name in ("condition", "components", "culvert", "urban", "nhs", "age", "ysm", "aadt", "owner", "county",
                 "state", "cost_factor"):
        np.testing.assert_array_equal(getattr(snbi, name), getattr(nbi, name), err_msg=name)
    for name in ("truck_share", "detour_km", "latitude", "longitude"):
        np.testing.assert_allclose(getattr(snbi, name), getattr(nbi, name), rtol=1e-6, err_msg=name)


def test_dc_as_snbi_evaluates_alike(dc_snbi: Path, tmp_path: Path) -> None:
    out = {}
    for name, inv in (("nbi", "dc-2019"), ("snbi", str(dc_snbi))):
        assert main(["evaluate", "--inventory", inv, "--episodes", "2", "--no-bound", "--quiet", "--json",
                     str(tmp_path / f"{name}.json")]) == 0
        out[name] = json.loads((tmp_path / f"{name}.json").read_text())["policies"]
    assert out["snbi"] == out["nbi"]


# -- (c) refusals, one line each ----------------------------------------------------------------------


def _one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text
    return text


@pytest.mark.parametrize(("content", "words"), [
    ("this is not json", "not JSON"),
    ('{"BID01": "1"}', "the JSON is an object, not an array"),
    ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    ("[" + "9" * 5000 + "]", "not JSON"),
    ("[]", "no bridge record"),
    ('[{"BL01": 11}]', "no record has a bridge number BID01"),
])
def test_file_refusals(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InventoryError) as exc:
        load_inventory(path)
    text = _one_line(exc)
    assert str(path) in text and words in text


def _many(extra: dict, n: int = 12) -> list[dict]:
    return [_bridge(f"{k:04d}") for k in range(n)] + [extra]


@pytest.mark.parametrize(("record", "reason"), [
    ({k: v for k, v in _bridge("x").items() if k != "BID01"}, "column BID01"),
    (_bridge("0100", BC02="6.5"), "column BC02 of BID01 '0100' = '6.5': not an NBI condition code"),
    (_bridge("0101", BC02=6.5), "column BC02 of BID01 '0101' = '6.5'"),
    (_bridge("0102", BG16=2e6 / FT2_TO_M2), "BG16 of BID01 '0102' = '21527820.833419442': deck area 2,000,000 m²"),
    (_bridge("0103", BG16=-5), "column BG16 of BID01 '0103' = '-5': negative deck area"),
    (_bridge("0104", BC01="5-T"), "rating not known: column BC01 of BID01 '0104' = '5-T'"),
    (_bridge("0105", BW01=None), "missing year built"),
    (_bridge("0106", BG16=None), "no deck area"),
])
def test_bad_records_are_dropped_with_their_reason(tmp_path: Path, record: dict, reason: str) -> None:
    inv = read_snbi(_write(tmp_path / "s.json", _many(record)))
    assert inv.kept == 12
    assert len(inv.dropped) == 1 and inv.dropped[0][0] == 13, inv.dropped
    assert reason in inv.dropped[0][1], inv.dropped


def test_mostly_bad_file_refused_naming_record_and_tag(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.json", [_bridge("7", BC01="6.5"), _bridge("8")])
    with pytest.raises(InventoryError) as exc:
        read_snbi(path)
    text = _one_line(exc)
    assert text.startswith(f"{path}: record 1 (BID01 '7'), tag BC01: not an NBI condition code"), text


def test_duplicate_bridge_number_in_a_state_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.json", [_bridge("0001"), _bridge("0002"), _bridge("0001")])
    with pytest.raises(InventoryError) as exc:
        load_inventory(path)
    text = _one_line(exc)
    assert "record 3 (BID01 '0001'), tag BID01: duplicated structure number '0001' (first in record 1)" in text


def test_inventory_year_needed(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.json", [_bridge("1", Inspections=[])])
    with pytest.raises(InventoryError) as exc:
        read_snbi(path)
    assert "pass year=" in _one_line(exc)
    assert math.isclose(read_snbi(path, year=2024).age[0], 34.0)


def test_culvert_under_fill_deck_area_is_length_times_approach_width(tmp_path: Path) -> None:
    """A culvert whose BG16 is 0 takes BG02 × BG09 (23 CFR 490.411: structure length × approach roadway width);
    a bridge (not a culvert) with BG16 0 is still dropped, and so is a culvert without BG09."""
    culvert = dict(BC01="N", BC02="N", BC03="N", BC04="6")
    records = [_bridge(f"{k:04d}") for k in range(12)] + [
        _bridge("C1", BG16=0, BG02=40.0, BG09=30.0, **culvert),  # 1,200 ft²
        _bridge("B1", BG16=0, BG02=40.0, BG09=30.0),
        _bridge("C2", BG16=0, BG02=40.0, **culvert),
    ]
    inv = read_snbi(_write(tmp_path / "s.json", records))
    assert inv.kept == 13 and inv.bridge_id[-1] == "C1"
    assert inv.deck_area[-1] == pytest.approx(1200 * FT2_TO_M2, rel=1e-6)  # 111.48 m²
    assert [d[0] for d in inv.dropped] == [14, 15] and all("no deck area" in d[1] for d in inv.dropped)


def test_a_lower_case_nhs_code_reads_as_its_capital_on_every_highway(tmp_path: Path) -> None:
    # BH03 `y` / ` n ` on the highway that decides (the only one carried) reads as Y / N, as it already did on another
    # highway carried: a bridge is on the NHS or not, never "not coded" for the case of a letter
    yes = _bridge("1", Features=[_highway(nhs="y")])
    no = _bridge("2", Features=[_highway(nhs=" n ")])
    odd = _bridge("3", Features=[_highway(nhs="x")])
    inv = load_inventory(_write(tmp_path / "nhs.json", [yes, no, odd]))
    assert inv.nhs[:2].tolist() == [1.0, 0.0] and np.isnan(inv.nhs[2])
