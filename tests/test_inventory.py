"""Real bridge inventories: the bundled DC 2019 NBI file, the Indiana table, and bad input."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from bridgefleet.inventory.load import (
    NBI_REQUIRED,
    RATE_BY_BAND,
    Inventory,
    InventoryError,
    bundled_path,
    load_inventory,
    read_csv_inventory,
    read_nbi,
    summarize,
)

INDIANA = Path("/work/shared/data/indiana/INDIANA2019.csv")


@pytest.fixture(scope="module")
def dc() -> Inventory:
    return load_inventory("dc-2019")


@pytest.fixture(scope="module")
def dc_raw() -> list[dict[str, str]]:
    """The bundled DC19.txt parsed independently of the reader under test."""
    with bundled_path("dc-2019").open(encoding="latin-1", newline="") as fh:
        return list(csv.DictReader(fh, quotechar="'"))


# -- the bundled DC 2019 NBI file ---------------------------------------------------------------------


def test_dc_counts(dc: Inventory) -> None:
    assert dc.kept == 244 and dc.dropped == []
    assert (dc.n_urban, dc.n_rural) == (243, 1)
    assert dc.year == 2019
    for name in ("condition", "age", "ysm", "rate", "deck_area", "aadt", "cost_factor"):
        arr = getattr(dc, name)
        assert arr.dtype == np.float32 and arr.shape == (244,) and np.isfinite(arr).all(), name
    assert np.all(dc.cost_factor == 1.0)  # DC 232 USD/ft² is the reference unit cost


def test_dc_ids_are_structure_numbers(dc: Inventory, dc_raw: list[dict[str, str]]) -> None:
    assert dc.bridge_id.tolist() == [r["STRUCTURE_NUMBER_008"].strip() for r in dc_raw]
    assert dc.bridge_id[0] == "0001"


def test_dc_condition_matches_fhwa_bridge_condition(dc: Inventory, dc_raw: list[dict[str, str]]) -> None:
    want = [{"G": "good", "F": "fair", "P": "poor"}[r["BRIDGE_CONDITION"]] for r in dc_raw]
    assert dc.bands().tolist() == want
    assert dc.condition.tolist() == [float(r["LOWEST_RATING"]) for r in dc_raw]
    assert set(np.unique(dc.rate).tolist()) <= {np.float32(v) for v in RATE_BY_BAND.values()}


def test_dc_fields_from_nbi_items(dc: Inventory, dc_raw: list[dict[str, str]]) -> None:
    np.testing.assert_allclose(dc.deck_area, [float(r["DECK_AREA"]) for r in dc_raw], rtol=1e-6)
    np.testing.assert_array_equal(dc.aadt, [float(r["ADT_029"]) for r in dc_raw])
    np.testing.assert_array_equal(dc.age, [2019 - int(r["YEAR_BUILT_027"]) for r in dc_raw])
    urban = [11 <= int(r["FUNCTIONAL_CLASS_026"]) <= 19 for r in dc_raw]
    np.testing.assert_array_equal(dc.urban, urban)
    # Chain Bridge: built 1937, reconstructed 1983 → age 82, ysm = min(82, 36, cap 15).
    assert (dc.age[0], dc.ysm[0]) == (82.0, 15.0)
    assert np.all(dc.ysm <= dc.age) and np.all(dc.ysm >= 0)


def test_dc_to_fleet_max_urban(dc: Inventory) -> None:
    n_urban, n_rural, (profile, state) = dc.to_fleet(max_urban=20)
    assert (n_urban, n_rural) == (20, 224)
    top = np.sort(dc.aadt[dc.urban])[::-1]
    np.testing.assert_array_equal(profile["aadt"][:20], top[:20])
    assert profile["aadt"][:20].min() >= profile["aadt"][20:].max()
    assert profile["cluster"][:243].tolist() == ["urban"] * 243 and profile["cluster"][243] == "rural"
    assert sorted(profile["bridge_id"].tolist()) == sorted(dc.bridge_id.tolist())
    for arr in (*[profile[k] for k in ("deck_area", "aadt", "cost_factor")],
                *[state[k] for k in ("condition", "age", "ysm", "rate")]):
        assert arr.dtype == np.float32 and arr.shape == (244,)
    assert state["components"].dtype == np.int8 and state["components"].shape == (244, 3)
    assert (profile["kind"] == 0).all()  # no culvert in DC's file
    # Columns stay consistent: every bridge's state travels with its id.
    pos = {b: i for i, b in enumerate(dc.bridge_id.tolist())}
    idx = [pos[b] for b in profile["bridge_id"].tolist()]
    # Whole NBI ratings start in the middle of their band on the continuous scale (r + 0.5, cap 9).
    np.testing.assert_array_equal(state["condition"], np.minimum(dc.condition[idx] + 0.5, 9.0))
    # The component model's slots travel with it; their lowest is the NBI condition (23 CFR 490.409).
    np.testing.assert_array_equal(state["components"].min(axis=1), dc.condition[idx])
    assert dc.to_fleet()[:2] == (243, 1)


def test_to_fleet_of_one_cluster(dc: Inventory) -> None:
    only_urban = dc.subset(dc.urban)  # DC's city bridges: the owners hold the budgets, no cluster is needed
    assert only_urban.kept == 243 and only_urban.n_rural == 0
    n_u, n_r, (profile, _) = only_urban.to_fleet()
    assert (n_u, n_r) == (243, 0) and (np.diff(profile["aadt"]) <= 0).all()
    assert only_urban.to_fleet(max_urban=10)[:2] == (10, 233)
    n_u, n_r, (profile, _) = dc.subset(~dc.urban).to_fleet()
    assert (n_u, n_r) == (0, 1) and profile["cluster"].tolist() == ["rural"]
    with pytest.raises(InventoryError, match="max_urban"):
        dc.to_fleet(max_urban=0)


def test_filter(dc: Inventory) -> None:
    assert dc.filter(county=1).kept == 244
    assert dc.filter(owner="01").kept == 205
    assert dc.filter(county="001", owner=1).kept == 205
    with pytest.raises(InventoryError, match="OWNER_022"):
        dc.filter(owner="99")


def test_summarize(dc: Inventory) -> None:
    text = summarize(dc)
    assert "Bridges kept: 244 (urban 243, rural 1)" in text
    assert "good 60" in text and "fair 174" in text and "poor 10" in text
    assert "Deck area" in text and "AADT" in text


# -- Indiana table via the bundled mapping ------------------------------------------------------------


@pytest.mark.skipif(not INDIANA.exists(), reason="shared Indiana table not available")
def test_indiana_mapping() -> None:
    inv = load_inventory(INDIANA)
    assert inv.kept == 4794 and inv.dropped == []
    assert inv.n_urban + inv.n_rural == 4794 and inv.n_urban > 0 and inv.n_rural > 0
    np.testing.assert_allclose(inv.cost_factor, 309 / 232, rtol=1e-6)
    assert read_csv_inventory(INDIANA, "indiana").kept == 4794


# -- generic CSV mapping ------------------------------------------------------------------------------


def test_csv_mapping_with_year_built_and_scale(tmp_path: Path) -> None:
    p = tmp_path / "table.csv"
    p.write_text("id,bci,built,len,wid,traffic,area\nA,70,2000,10,5,1000,x\nB,45,1990,20,5,500,y\n")
    mapping = {"id": "id", "condition": "bci", "condition_scale": [0, 100], "year_built": "built",
               "year": 2020, "length": "len", "width": "wid", "aadt": "traffic", "cluster": "rural"}
    inv = read_csv_inventory(p, mapping)
    np.testing.assert_allclose(inv.condition, [6.3, 4.05], rtol=1e-6)
    np.testing.assert_array_equal(inv.age, [20, 30])
    np.testing.assert_array_equal(inv.deck_area, [50, 100])
    assert not inv.urban.any()
    with pytest.raises(InventoryError, match="unknown mapping key"):
        read_csv_inventory(p, {**mapping, "colour": "x"})
    with pytest.raises(InventoryError, match=r"table\.csv, line 1, column traffic2"):
        read_csv_inventory(p, {**mapping, "aadt": "traffic2"})


def test_a_state_code_without_a_bundled_unit_cost_warns_and_takes_the_reference(tmp_path: Path) -> None:
    p = tmp_path / "table.csv"
    p.write_text("id,bci,traffic,area,age\nA,70,1000,50,20\nB,45,500,100,30\n")
    mapping = {"id": "id", "condition": "bci", "condition_scale": [0, 100], "aadt": "traffic", "deck_area": "area",
               "age": "age", "cluster": "rural"}
    with pytest.warns(UserWarning, match=r"state_code 99: no 2017 unit cost is bundled for it \(known: 6, 11, 17"):
        inv = read_csv_inventory(p, {**mapping, "state_code": 99})
    assert (inv.cost_factor == 1.0).all()
    inv = read_csv_inventory(p, {**mapping, "state_code": 18})  # Indiana's 309 USD/ft² over the 232 reference
    np.testing.assert_allclose(inv.cost_factor, 309.0 / 232.0, rtol=1e-6)


def test_unknown_layout_needs_mapping(tmp_path: Path) -> None:
    p = tmp_path / "other.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(InventoryError, match="mapping"):
        load_inventory(p)


# -- bad input ----------------------------------------------------------------------------------------

HEADER = ["STATE_CODE_001", *NBI_REQUIRED, "YEAR_RECONSTRUCTED_106", "STRUCTURE_LEN_MT_049",
          "DECK_WIDTH_MT_052", "APPR_WIDTH_MT_032", "DECK_AREA"]
GOOD = {"STATE_CODE_001": "18", "RECORD_TYPE_005A": "1", "FUNCTIONAL_CLASS_026": "14",
        "YEAR_BUILT_027": "1980", "ADT_029": "5000", "DECK_COND_058": "7", "SUPERSTRUCTURE_COND_059": "6",
        "SUBSTRUCTURE_COND_060": "7", "CULVERT_COND_062": "N", "YEAR_RECONSTRUCTED_106": "0",
        "STRUCTURE_LEN_MT_049": "20", "DECK_WIDTH_MT_052": "10", "APPR_WIDTH_MT_032": "8",
        "DECK_AREA": "200"}


def nbi_text(rows: list[dict[str, str]], header: list[str] = HEADER) -> str:
    lines = [",".join(header)]
    for i, row in enumerate(rows):
        r = {**GOOD, "STRUCTURE_NUMBER_008": f"'{i:05d}          '", **row}
        lines.append(",".join(r.get(h, "") for h in header))
    return "\n".join(lines) + "\n"


def write(tmp_path: Path, text: str, name: str = "XX19.txt", encoding: str = "latin-1") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode(encoding))
    return p


def check(exc: pytest.ExceptionInfo[InventoryError], path: Path, line: int, column: str) -> None:
    msg = str(exc.value)
    assert path.name in msg, msg
    assert f"line {line}" in msg, msg
    assert column in msg, msg


def test_good_small_file_and_culvert(tmp_path: Path) -> None:
    culvert = {"DECK_COND_058": "N", "SUPERSTRUCTURE_COND_059": "N", "SUBSTRUCTURE_COND_060": "N",
               "CULVERT_COND_062": "5", "DECK_WIDTH_MT_052": "0", "DECK_AREA": "",
               "FUNCTIONAL_CLASS_026": "07", "YEAR_RECONSTRUCTED_106": "2015"}
    p = write(tmp_path, nbi_text([{}, culvert, {"RECORD_TYPE_005A": "2"}]))
    inv = read_nbi(p)
    assert inv.kept == 2 and inv.bridge_id.tolist() == ["00000", "00001"]
    assert inv.condition.tolist() == [6.0, 5.0]
    assert inv.deck_area.tolist() == [200.0, 160.0]  # culvert: item 49 × item 32
    assert inv.urban.tolist() == [True, False]
    assert inv.ysm.tolist() == [15.0, 4.0]
    np.testing.assert_allclose(inv.cost_factor, 309 / 232, rtol=1e-6)
    assert inv.dropped == [(4, "not a highway bridge: column RECORD_TYPE_005A = '2': record type 1 = "
                                "route on the structure is kept (2 or A–Z = route(s) under)")]


def test_one_bad_row_is_dropped_and_reported(tmp_path: Path) -> None:
    rows: list[dict[str, str]] = [{} for _ in range(20)]
    rows[5] = {"DECK_COND_058": "X"}
    inv = read_nbi(write(tmp_path, nbi_text(rows)))
    assert inv.kept == 19
    assert len(inv.dropped) == 1 and inv.dropped[0][0] == 7
    assert "DECK_COND_058" in inv.dropped[0][1] and "'X'" in inv.dropped[0][1]
    assert "bad value" in summarize(inv)


def test_a_quote_left_open_drops_its_own_line_only(tmp_path: Path) -> None:
    # Line 6 of DC's file cut inside its quoted facility name ('30TH STREET  N.W.'): the quote never closes on
    # the line. An NBI record is one line, so line 6 is dropped with its reason and line 7 is read on its own.
    lines = bundled_path("dc-2019").read_text(encoding="latin-1").splitlines(keepends=True)
    cut = lines[5].index("'30TH STREET") + len("'30TH STREET  N.W")
    lines[5] = lines[5][:cut] + "\n"
    inv = read_nbi(write(tmp_path, "".join(lines)))
    assert inv.kept == 243
    assert len(inv.dropped) == 1 and inv.dropped[0][0] == 6
    assert "a quote opened in this column is never closed on its line" in inv.dropped[0][1]
    assert "'30TH STREET  N.W" in inv.dropped[0][1]
    assert next(csv.reader([lines[6]], quotechar="'"))[1].strip() in inv.bridge_id.tolist()  # line 7's bridge


def test_missing_column(tmp_path: Path) -> None:
    header = [h for h in HEADER if h != "ADT_029"]
    p = write(tmp_path, nbi_text([{}], header))
    with pytest.raises(InventoryError) as exc:
        read_nbi(p)
    check(exc, p, 1, "ADT_029")


def test_a_bundled_nbi_file_with_a_mapping_says_so() -> None:
    with pytest.raises(InventoryError, match="dc-2019 is a bundled NBI file, read as one; a column mapping"):
        load_inventory("dc-2019", mapping="indiana")


def test_a_column_named_twice_is_refused(tmp_path: Path) -> None:
    # A second DECK_COND_058 of 1s was read instead of the first, silently: every bridge poor (a new user's file).
    p = write(tmp_path, nbi_text([{}], [*HEADER, "DECK_COND_058"]))
    with pytest.raises(InventoryError, match="the header names this column twice") as exc:
        read_nbi(p)
    check(exc, p, 1, "DECK_COND_058")


def test_empty_file(tmp_path: Path) -> None:
    p = write(tmp_path, "")
    with pytest.raises(InventoryError, match="empty") as exc:
        load_inventory(p)
    check(exc, p, 1, "STRUCTURE_NUMBER_008")


def test_header_only(tmp_path: Path) -> None:
    p = write(tmp_path, nbi_text([]))
    with pytest.raises(InventoryError, match="header-only") as exc:
        load_inventory(p)
    check(exc, p, 2, "STATE_CODE_001")


def test_non_numeric_rating(tmp_path: Path) -> None:
    p = write(tmp_path, nbi_text([{}, {"SUPERSTRUCTURE_COND_059": "x7"}]))
    with pytest.raises(InventoryError) as exc:
        read_nbi(p)
    check(exc, p, 3, "SUPERSTRUCTURE_COND_059")
    assert "'x7'" in str(exc.value)


def test_negative_area(tmp_path: Path) -> None:
    p = write(tmp_path, nbi_text([{"DECK_AREA": "-12.5"}]))
    with pytest.raises(InventoryError, match="negative deck area") as exc:
        read_nbi(p)
    check(exc, p, 2, "DECK_AREA")


def test_a_deck_area_no_bridge_has_is_refused(tmp_path: Path) -> None:
    # A million m² at most (the largest deck, the Lake Pontchartrain Causeway's, is about 800,000 m²): 1e30 m² (a
    # unit or entry error) names its line and value, from DECK_AREA and from length × width alike.
    p = write(tmp_path, nbi_text([{"DECK_AREA": "1e30"}]))
    with pytest.raises(InventoryError, match=r"deck area 1e30 m²: must be in \[1, 1,000,000\] m²") as exc:
        read_nbi(p)
    check(exc, p, 2, "DECK_AREA")
    assert "'1e30'" in str(exc.value)
    p = write(tmp_path, nbi_text([{"DECK_AREA": "", "STRUCTURE_LEN_MT_049": "99999.9", "DECK_WIDTH_MT_052": "999"}]))
    with pytest.raises(InventoryError, match="deck area 99,899,900 m²: must be in") as exc:
        read_nbi(p)
    check(exc, p, 2, "STRUCTURE_LEN_MT_049")


def test_duplicate_structure_number(tmp_path: Path) -> None:
    same = {"STRUCTURE_NUMBER_008": "'0042 '"}
    p = write(tmp_path, nbi_text([same, {}, same]))
    with pytest.raises(InventoryError, match="duplicated") as exc:
        read_nbi(p)
    check(exc, p, 4, "STRUCTURE_NUMBER_008")
    assert "line 2" in str(exc.value)  # the first occurrence


def test_utf16_file(tmp_path: Path) -> None:
    p = write(tmp_path, nbi_text([{}]), encoding="utf-16")
    with pytest.raises(InventoryError, match="UTF-16") as exc:
        load_inventory(p)
    assert p.name in str(exc.value) and exc.value.column is None  # the file's encoding, not a column's
    q = write(tmp_path, nbi_text([{}]), name="XX19b.txt", encoding="utf-16-le")  # no byte-order mark
    with pytest.raises(InventoryError, match="UTF-16") as exc:
        load_inventory(q)
    assert q.name in str(exc.value) and exc.value.column is None


def test_binary_file(tmp_path: Path) -> None:
    noise = np.random.default_rng(0).integers(0, 256, 3000, dtype=np.uint8).tobytes()
    for name, data in (("a.csv", noise), ("a.txt", noise), ("b.csv", noise.replace(b"\x00", b"\x01"))):
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(InventoryError, match=r"NUL byte|not a text file") as exc:
            load_inventory(p)
        assert exc.value.column is None  # no garbage "column name" quoted
        assert len(str(exc.value)) < 300


def test_missing_file() -> None:
    with pytest.raises(InventoryError, match="no such file"):
        load_inventory("/nonexistent/XX19.txt")


def test_resolve_fleet_warns_when_max_urban_exceeds_urban_count(dc: Inventory) -> None:
    from bridgefleet.config import FleetConfig
    from bridgefleet.inventory.fleet import _load_fixed_fleet, resolve_fleet

    _load_fixed_fleet.cache_clear()  # the warning comes with a load, not with a cache hit
    with pytest.warns(UserWarning, match=r"max_urban = 500 but the fleet has only 243 urban"):
        cfg, _ = resolve_fleet(FleetConfig(inventory="dc-2019", max_urban=500))
    assert (cfg.n_urban, cfg.n_rural) == (243, 1)


def test_one_fleet_is_the_inventory_or_the_models_fleet_of_the_seed() -> None:
    from bridgefleet.config import FleetConfig
    from bridgefleet.inventory.fleet import one_fleet, resolve_fleet

    cfg, fleet = one_fleet(FleetConfig(n_urban=3, n_rural=2), 7)
    assert (cfg.fixed_fleet, cfg.fleet_seed, fleet) == (True, 7, None)  # every episode the same 5 bridges
    inv, inv_fleet = one_fleet(FleetConfig(inventory="dc-2019"), 7)
    ref, ref_fleet = resolve_fleet(FleetConfig(inventory="dc-2019"))
    assert inv == ref and (inv.n_urban, inv.n_rural) == (243, 1)
    assert np.array_equal(inv_fleet[0]["deck_area"], ref_fleet[0]["deck_area"])


def test_inventory_cli_max_urban_and_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bridgefleet.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["inventory", "dc-2019", "--max-urban", "0"])
    out, err = capsys.readouterr()
    assert stop.value.code == 2 and out == ""  # before any summary
    assert "--max-urban: 0: at least 1 urban bridge under per-bridge control" in err
    assert main(["inventory", "dc-2019", "--max-urban", "500"]) == 0
    assert "exceeds the 243 urban bridges" in capsys.readouterr().out
    empty = tmp_path / "empty.csv"
    empty.write_text("\n \n")
    assert main(["inventory", str(empty)]) == 2
    assert "the file is empty" in capsys.readouterr().err
    mapping = tmp_path / "map.yaml"
    mapping.write_bytes(b"\xb2\xff\x00binary")
    table = tmp_path / "t.csv"
    table.write_text("id,cond\nA,5\n")
    assert main(["inventory", str(table), "--mapping", str(mapping)]) == 2
    err = capsys.readouterr().err
    assert str(mapping) in err and "NUL byte at byte 2" in err and "expected UTF-8 text" in err
    assert len(err.splitlines()) == 1


# -- FHWA's rules: condition, inventory year, the split train needs ------------------------------------
def test_condition_is_the_lowest_coded_item_culvert_included(tmp_path: Path) -> None:
    # 23 CFR 490.411: poor when any of items 58, 59, 60, 62 is ≤ 4; 7/7/7 with item 62 = 3 is poor (3).
    rows = [{"DECK_COND_058": "7", "SUPERSTRUCTURE_COND_059": "7", "SUBSTRUCTURE_COND_060": "7",
             "CULVERT_COND_062": "3"}, {"CULVERT_COND_062": "N"}]
    inv = read_nbi(write(tmp_path, nbi_text(rows)))
    assert inv.condition.tolist() == [3.0, 6.0]


@pytest.mark.parametrize(("name", "year"), [("XX98.txt", 1998), ("XX19.txt", 2019), ("XX05.txt", 2005)])
def test_two_digit_years_in_file_names_use_the_century_rule(tmp_path: Path, name: str, year: int) -> None:
    rows = [{"YEAR_BUILT_027": "1960"}]
    inv = read_nbi(write(tmp_path, nbi_text(rows), name=name))
    assert inv.year == year and inv.age.tolist() == [year - 1960]


def test_item_90_dates_and_file_names_share_one_rule() -> None:
    from bridgefleet.inventory.nbi import full_year

    assert [full_year(y, today=2026) for y in (98, 26, 27, 0, 69, 70)] == [1998, 2026, 1927, 2000, 1969, 1970]


def test_an_implausible_inventory_year_is_refused(tmp_path: Path) -> None:
    p = write(tmp_path, nbi_text([{}]), name="bridges_2098.csv")
    with pytest.raises(InventoryError, match=r"inventory year 2098 \(from the file name bridges_2098.csv\) is "
                                             r"outside 1968"):
        read_nbi(p)


def test_inventory_reports_the_split_the_plans_fleet_agents_refuse(tmp_path: Path, capsys) -> None:
    from bridgefleet.cli import main

    p = write(tmp_path, nbi_text([{}, {}, {}]))  # all urban (functional class 14)
    assert main(["inventory", str(p)]) == 0
    out = capsys.readouterr().out
    assert "note: plan, evaluate, scenarios and train (default preset) take this inventory; the plan's fleet " \
           "agents refuse it: all 3 bridges are urban" in out and "--max-urban N with N < 3" in out
    assert main(["train", "--preset", "fleet", "--inventory", str(p), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    assert "--max-urban N" in capsys.readouterr().err and not (tmp_path / "run").exists()


def test_semicolon_delimited_files_are_named_as_such(tmp_path: Path) -> None:
    p = write(tmp_path, nbi_text([{}]).replace(",", ";"))
    with pytest.raises(InventoryError, match="separated by semicolons") as exc:
        load_inventory(p)
    assert len(str(exc.value).splitlines()) == 1


def test_a_file_name_year_before_its_inspection_dates_is_refused(tmp_path: Path) -> None:
    header = [*HEADER, "DATE_OF_INSPECT_090"]
    p = write(tmp_path, nbi_text([{"DATE_OF_INSPECT_090": "519"}], header), name="XX98.txt")
    with pytest.raises(InventoryError, match=r"file name says inventory year 1998, but its inspection dates "
                                             r"\(item 90\) run to 2019"):
        read_nbi(p)
    ok = write(tmp_path, nbi_text([{"DATE_OF_INSPECT_090": "1297"}], header), name="XX98.txt")
    assert read_nbi(ok).year == 1998


def test_nbi_positions_are_decimal_degrees_and_miscoded_ones_are_left_out() -> None:
    from bridgefleet.inventory.nbi import _position, nbi_degrees

    assert nbi_degrees("38554636", 2) == pytest.approx(38 + 55 / 60 + 46.36 / 3600)  # item 16, DDMMSSss
    lat, lon = _position("38554636", "077070228")  # item 17, DDDMMSSss, west of Greenwich
    assert (lat, lon) == pytest.approx((38.929544, -77.117300), abs=1e-6)
    for bad in (("00385444", "077032271"), ("38534500", "770301400"), ("", "077070228"), ("38996000", "0")):
        assert np.isnan(_position(*bad)).all(), bad  # latitude 0.6°, longitude 770°, blank, 99 minutes
    inv = load_inventory("dc-2019")
    ok = ~np.isnan(inv.latitude)
    assert ok.sum() == 239 and (inv.longitude[ok] < -76.9).all() and (inv.latitude[ok] > 38.8).all()


def test_lines_after_an_open_quote_are_read_one_by_one_and_an_apostrophe_is_no_open_quote() -> None:
    from bridgefleet.inventory.rows import _one_line_each, _Unclosed

    out = _one_line_each(["1,'ab,c\n", "2,O'BRIEN,3\r\n", "\n", "3,'x',4\n"], 5, "'")
    assert [line for line, _ in out] == [5, 6, 8]
    assert isinstance(out[0][1], _Unclosed) and out[0][1].column == 2 and list(out[0][1]) == ["1", "ab,c"]
    assert out[1][1] == ["2", "O'BRIEN", "3"] and not isinstance(out[1][1], _Unclosed)
    assert out[2][1] == ["3", "x", "4"]


def test_the_summary_gives_fhwas_deck_area_shares_beside_the_counts(tmp_path: Path) -> None:
    # 3 bridges of 100, 200, 700 m² rated 8, 5, 4: by count a third each; by deck area 10 / 20 / 70 %.
    def rated(r: str, area: str) -> dict[str, str]:
        return {"DECK_COND_058": r, "SUPERSTRUCTURE_COND_059": r, "SUBSTRUCTURE_COND_060": r, "DECK_AREA": area}

    inv = read_nbi(write(tmp_path, nbi_text([rated("8", "100"), rated("5", "200"), rated("4", "700")])))
    text = summarize(inv)
    assert "good 1 (33.3 %), fair 1 (33.3 %), poor 1 (33.3 %)" in text
    assert "by deck area of all bridges (FHWA's measure, 23 CFR 490.407): good 10.0 %, fair 20.0 %, poor 70.0 %" in text


def test_the_component_slots_are_items_58_to_60_and_a_culverts_item_62(tmp_path) -> None:
    from bridgefleet.inventory.rows import component_levels

    assert component_levels(7, 5, 6, None) == ((7, 5, 6), False)
    assert component_levels(None, 6, 8, None) == ((9, 6, 8), False)  # no deck (N): never the lowest
    assert component_levels(None, None, None, 4) == ((4, 9, 9), True)  # a culvert
