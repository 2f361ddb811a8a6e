"""Issue 79's remaining instances on the input-file side (probe of 439d36d): an encoding refusal is the file's (no
column; the file's own format to re-save as), a mapping's condition_scale and constants checked as written, record
types that are not codes counted as bad values, tiny traffic and deck areas, the config's closed ranges echoing
the value as the user wrote it, and a constant that would override a mapped column refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_inventory import nbi_text
from test_snbi import _bridge

from bridgefleet.config import ConfigError, read_yaml
from bridgefleet.inventory.load import InventoryError, load_inventory

# -- 1. an encoding refusal names the file and its format, never a column ------------------------------------


@pytest.mark.parametrize(("codec", "says"), [
    ("utf-16", "the file is UTF-16-encoded (byte-order mark FF FE at byte 0)"),
    ("utf-16-le", "NUL byte at byte 1: the file looks UTF-16-encoded (little-endian, no byte-order mark)"),
    ("utf-16-be", "NUL byte at byte 0: the file looks UTF-16-encoded (big-endian, no byte-order mark)"),
    ("utf-32-le", "NUL byte at byte 1: the file looks UTF-32-encoded (little-endian, no byte-order mark)"),
])
def test_a_utf16_snbi_file_is_refused_as_a_json_file_not_a_column(tmp_path: Path, codec: str, says: str) -> None:
    p = tmp_path / "s.json"
    p.write_bytes(json.dumps([_bridge("Brücke-1")], ensure_ascii=False).encode(codec))
    with pytest.raises(InventoryError) as exc:
        load_inventory(p)
    msg = str(exc.value)
    assert msg == (f"{p}: {says}, not 8-bit text; " if "NUL" in says else f"{p}: {says}; ") + (
        "expected UTF-8 or Windows-1252 text: re-save it as UTF-8 JSON")
    assert exc.value.column is None and exc.value.line is None and "BID01" not in msg


def test_a_utf16_nbi_file_names_no_column(tmp_path: Path) -> None:
    p = tmp_path / "XX19.txt"
    p.write_bytes(nbi_text([{}]).encode("utf-16"))
    with pytest.raises(InventoryError) as exc:
        load_inventory(p)
    assert str(exc.value) == (f"{p}: the file is UTF-16-encoded (byte-order mark FF FE at byte 0); expected UTF-8 "
                              "or Latin-1 text: re-save it as UTF-8 CSV")


@pytest.mark.parametrize(("data", "says"), [
    ("id: id\n".encode("utf-16"), "the file is UTF-16-encoded (byte-order mark FF FE at byte 0)"),
    ("id: id\n".encode("utf-16-le"), "the file looks UTF-16-encoded (little-endian, no byte-order mark)"),
    ("id: id\n".encode("utf-32"), "the file is UTF-32-encoded (byte-order mark FF FE 00 00 at byte 0)"),
    # “ is 0x93 in Windows-1252, after the 10 bytes of "id: id\nx: " (0-based offset 10), on line 2
    ("id: id\nx: “a”\n".encode("cp1252"), "line 2: byte 0x93 at byte 10 is not UTF-8 ('“' in Windows-1252)"),
])
def test_a_yaml_file_that_is_not_utf8_says_what_it_is(tmp_path: Path, data: bytes, says: str) -> None:
    p = tmp_path / "m.yaml"
    p.write_bytes(data)
    with pytest.raises(ConfigError) as exc:
        read_yaml(p)
    assert says in str(exc.value) and str(exc.value).endswith("expected UTF-8 text: re-save it as UTF-8 YAML")
    assert "\n" not in str(exc.value)
    p.write_bytes("\ufeffid: Brücke\n".encode())  # UTF-8 with a byte-order mark is UTF-8
    assert read_yaml(p) == {"id": "Brücke"}


# -- 2. a malformed condition_scale is refused; record types, counts and areas checked as what they are -------

_MAPPING = {"id": "id", "condition": "cond", "age": "age", "deck_area": "area", "aadt": "adt", "cluster": "rural"}


def _table(tmp_path: Path, rows: list[tuple[str, str, str, str]], n: int = 40, name: str = "t.csv") -> Path:
    """A mapped CSV: ``rows`` (cond, age, area, adt) first, then good rows (7, 30, 100, 500) up to ``n``."""
    rows = rows + [("7", "30", "100", "500")] * (n - len(rows))
    p = tmp_path / name
    p.write_text("id,cond,age,area,adt\n" + "".join(f"B{k},{','.join(r)}\n" for k, r in enumerate(rows)),
                 encoding="utf-8")
    return p


@pytest.mark.parametrize(("scale", "shown"), [
    (0, "0"), ([], "[]"), ({}, "{}"), (False, "False"), ("", "''"), ([1, 1], "[1, 1]"), ([9, 0], "[9, 0]"),
    ([0], "[0]"), ([0, 9, 10], "[0, 9, 10]"),
])
def test_a_condition_scale_that_is_not_low_high_is_refused(tmp_path: Path, scale: object, shown: str) -> None:
    p = _table(tmp_path, [("6.5", "30", "100", "500")])
    with pytest.raises(InventoryError) as exc:
        load_inventory(p, {**_MAPPING, "condition_scale": scale})
    assert str(exc.value) == (f"mapping: mapping key 'condition_scale' = {shown}: must be [low, high], two finite "
                              "numbers with low < high (an index's scale, e.g. [0, 100])")


def test_a_condition_scale_reads_an_index_and_none_reads_codes(tmp_path: Path) -> None:
    p = _table(tmp_path, [("6.5", "30", "100", "500"), ("1e0", "30", "100", "500")])
    scaled = load_inventory(p, {**_MAPPING, "condition_scale": [0, 9]})
    assert scaled.condition[:2].tolist() == [6.5, 1.0] and scaled.dropped == []
    codes = load_inventory(p, {**_MAPPING, "condition_scale": None})  # null: the NBI codes
    assert [line for line, _ in codes.dropped] == [2, 3] and codes.kept == 38


def test_a_record_type_that_is_not_a_code_is_a_bad_value_not_a_filter(tmp_path: Path) -> None:
    rows = [{} for _ in range(100)]
    for k, v in enumerate(["１", "1.0", "+1", "01", "2.0", "''"]):  # not codes
        rows[k] = {"RECORD_TYPE_005A": v}
    for k, v in enumerate(["2", "A", "z"], start=6):  # routes under the structure (Coding Guide item 5A)
        rows[k] = {"RECORD_TYPE_005A": v}
    p = tmp_path / "XX19.txt"
    p.write_text(nbi_text(rows), encoding="utf-8")
    inv = load_inventory(p)
    reasons = [r.split(":", 1)[0] for _, r in inv.dropped]
    assert reasons == ["bad value"] * 6 + ["not a highway bridge"] * 3 and inv.kept == 91
    assert inv.dropped[1][1] == ("bad value: column RECORD_TYPE_005A = '1.0': not an NBI record type (one character: "
                                 "1 = route on the structure, 2 or A–Z = route(s) under it)")


def test_aadt_is_a_whole_count_of_vehicles_in_every_reader(tmp_path: Path) -> None:
    p = _table(tmp_path, [("7", "30", "100", "0.5"), ("7", "30", "100", "1e-45"), ("7", "30", "100", "1000.0"),
                          ("7", "30", "100", "1e3")])
    inv = load_inventory(p, _MAPPING)
    assert [line for line, _ in inv.dropped] == [2, 3] and inv.aadt[:2].tolist() == [1000.0, 1000.0]
    assert "traffic (AADT) 0.5: must be a whole number in [0, 999,999] vehicles/day" in inv.dropped[0][1]
    with pytest.raises(InventoryError) as exc:
        load_inventory(p, {**_MAPPING, "aadt": 0.5})
    assert str(exc.value).startswith("mapping: mapping key 'aadt' = '0.5': traffic (AADT) 0.5: must be a whole")
    recs = [_bridge(f"B{k}") for k in range(20)]
    recs[0]["Features"][1]["BH09"] = 0.5
    s = tmp_path / "s.json"
    s.write_text(json.dumps(recs), encoding="utf-8")
    snbi = load_inventory(s)
    assert snbi.kept == 19 and "AADT 0.5: must be a whole number" in snbi.dropped[0][1]


def test_a_deck_area_below_one_square_metre_is_a_bad_value(tmp_path: Path) -> None:
    p = _table(tmp_path, [("7", "30", "0.5", "500"), ("7", "30", "1e-45", "500"), ("7", "30", "1", "500"),
                          ("7", "30", "0", "500")])
    inv = load_inventory(p, _MAPPING)
    assert [r.split(":", 1)[0] for _, r in inv.dropped] == ["bad value", "bad value", "no deck area"]
    assert inv.deck_area[0] == 1.0  # B2: 1 m², the floor, kept
    assert "deck area 0.5 m²: must be in [1, 1,000,000] m²" in inv.dropped[0][1]
    recs = [_bridge(f"B{k}") for k in range(20)]
    recs[0]["BG16"], recs[1]["BG16"] = 10, 11  # sq ft: 0.929 m² (dropped) and 1.022 m² (kept)
    s = tmp_path / "s.json"
    s.write_text(json.dumps(recs), encoding="utf-8")
    snbi = load_inventory(s)
    assert [line for line, _ in snbi.dropped] == [1] and snbi.deck_area[0] == pytest.approx(11 * 0.09290304)


def test_the_snbi_optional_numbers_are_read_as_the_required_ones(tmp_path: Path) -> None:
    recs = [_bridge(f"B{k}") for k in range(4)]
    for rec, trucks, detour in zip(recs, ("1_000", "+100", "１００", "100"), ("+5", "5_0", "５", 5), strict=True):
        rec["Features"][1]["BH10"], rec["Features"][1]["BH17"] = trucks, detour
    recs[0]["BL05"] = "3_8.9"
    s = tmp_path / "s.json"
    s.write_text(json.dumps(recs, ensure_ascii=False), encoding="utf-8")
    inv = load_inventory(s)
    # BH09 1000 vehicles/day: 100 trucks = 0.1; 5 miles = 8.04672 km; the others not numbers: not known (NaN)
    assert inv.truck_share.tolist()[3] == pytest.approx(0.1) and all(x != x for x in inv.truck_share[:3].tolist())
    assert inv.detour_km.tolist()[3] == pytest.approx(8.04672) and all(x != x for x in inv.detour_km[:3].tolist())
    assert inv.latitude[0] != inv.latitude[0] and inv.latitude[1] == pytest.approx(38.9)


def test_an_snbi_urban_code_that_is_not_digits_is_a_bad_value_not_urban(tmp_path: Path) -> None:
    recs = [_bridge(f"B{k}") for k in range(60)]
    codes = ["abc", "1.0", "+4790", "４７９００", "999999", 4790, "99998", "47900"]
    for rec, code in zip(recs, codes, strict=False):
        rec["Features"][1]["BH02"] = code
    s = tmp_path / "s.json"
    s.write_text(json.dumps(recs, ensure_ascii=False), encoding="utf-8")
    inv = load_inventory(s)
    assert [line for line, _ in inv.dropped] == [1, 2, 3, 4, 5] and inv.kept == 55
    assert inv.dropped[0][1] == ("bad value: column BH02 of BID01 'B0' = 'abc': not an SNBI urban code (five digits: "
                                 "a Census urban area, or 99999 / 99998 outside any)")
    assert inv.urban[:3].tolist() == [True, False, True]  # 4790 (a JSON number: 04790), 99998 rural, 47900


def test_a_reconstruction_year_is_a_whole_year_or_not_known(tmp_path: Path) -> None:
    # built 1980, inventory year 2019: age 39, ysm min(39, 15) = 15 unless item 106 says 2015 (ysm 2019 − 2015 = 4)
    rows = [{"YEAR_RECONSTRUCTED_106": v} for v in ("2015", "2015.0", "2015.5", "2_015", "２０１５", "0")]
    p = tmp_path / "XX19.txt"
    p.write_text(nbi_text(rows), encoding="utf-8")
    assert load_inventory(p).ysm.tolist() == [4.0, 15.0, 15.0, 15.0, 15.0, 15.0]
    t = _table(tmp_path, [])
    t.write_text(t.read_text().replace("id,cond,age,area,adt\n", "id,cond,age,area,adt,rec\n").replace(
        ",500\n", ",500,2015.5\n").replace(",2015.5\n", ",2015\n", 1), encoding="utf-8")
    inv = load_inventory(t, {**_MAPPING, "year_reconstructed": "rec", "year": 2019})
    assert inv.ysm.tolist()[:2] == [4.0, 15.0]  # age 30: 2019 − 2015 = 4; 2015.5 is no year: min(30, 15)
    with pytest.raises(InventoryError, match=r"mapping key 'year_reconstructed' = '2015\.5': must be a whole year"):
        load_inventory(t, {**_MAPPING, "year_reconstructed": 2015.5, "year": 2019})


# -- 3. closed ranges, the value echoed as written ---------------------------------------------------------


@pytest.mark.parametrize(("line", "says"), [
    # 1e-300 vehicles/day made every traffic weight (AADT / it) ** 0.5 overflow: NaN returns
    ("aadt_reference: 1e-300", "aadt_reference = 1e-300: must be in [1, 999,999] vehicles/day (the AADT of traffic "
                               "weight 1, a count of vehicles; below 1 every weight (AADT / it) ** aadt_exponent "
                               "overflows)"),
    ("annual_budget_usd: 1e400", "annual_budget_usd = 1e400: must be in [0, 1e15] USD a year"),  # not "= inf"
    ("annual_budget_usd: 1.0e+400", "annual_budget_usd = 1.0e+400: must be in [0, 1e15] USD a year"),
    ("fleet_seed: 1e19", "fleet_seed = 1e19: must be a whole number in [0, 1e18] (a seed)"),
    ("fleet_seed: 2.5", "fleet_seed = 2.5: must be a whole number in [0, 1e18] (a seed)"),
    ("n_urban: 1e400", "n_urban = 1e400: must be a whole number in [1, 1e7] bridges"),
    ("cost_lambda: 1e-300", "cost_lambda = 1e-300: must be in [1e-9, 1] reward units per USD"),
    ("discount: 1e-300", "discount = 1e-300: must be in [0.5, 1] per year"),
])
def test_a_config_number_outside_its_closed_range_is_echoed_as_written(tmp_path: Path, line: str, says: str) -> None:
    from bridgefleet.config import FleetConfig

    key, value = line.split(": ")
    keys = {"n_urban": "3", "n_rural": "5", "horizon_years": "5", key: value}
    p = tmp_path / "fleet.yaml"
    p.write_text("".join(f"{k}: {v}\n" for k, v in keys.items()))
    with pytest.raises(ConfigError) as exc:
        FleetConfig.from_yaml(p)
    assert str(exc.value).startswith(f"{p}: {says}") and "inf" not in str(exc.value)


def test_a_whole_number_key_takes_its_range_however_written(tmp_path: Path) -> None:
    from bridgefleet.config import FleetConfig

    p = tmp_path / "fleet.yaml"
    p.write_text("n_urban: 3.0\nn_rural: 5\nhorizon_years: 5\nfleet_seed: 1e18\naadt_reference: 1\n")
    cfg = FleetConfig.from_yaml(p)
    assert cfg.fleet_seed == 10**18 and type(cfg.fleet_seed) is int and cfg.n_urban == 3 and type(cfg.n_urban) is int
    assert cfg.aadt_reference == 1.0


def test_a_mapping_and_an_snbi_file_echo_1e400_as_written(tmp_path: Path) -> None:
    p = _table(tmp_path, [])
    for scale, shown in (("[0, 1e400]", "1e400"), ("[0, 1.0e+400]", "1.0e+400")):
        m = tmp_path / "m.yaml"
        m.write_text("id: id\ncondition: cond\nage: age\ndeck_area: area\naadt: adt\ncluster: rural\n"
                     f"condition_scale: {scale}\n")
        with pytest.raises(InventoryError) as exc:
            load_inventory(p, m)
        assert str(exc.value) == (f"{m}: mapping key 'condition_scale' = {shown}: must be in [-1,000,000, 1,000,000] "
                                  "(an end of the index's scale)")
    recs = [_bridge(f"B{k}") for k in range(20)]
    s = tmp_path / "s.json"
    s.write_text(json.dumps(recs).replace('"BH09": 1000', '"BH09": 1e400', 1), encoding="utf-8")
    inv = load_inventory(s)
    assert inv.dropped == [(1, "bad value: column BH09 of BID01 'B0' = '1e400': AADT 1e400: must be a whole number in "
                               "[0, 999,999] vehicles/day (a count of vehicles; NBI item 29 codes 6 digits; the "
                               "busiest bridges carry about 300,000)")]


# -- 8. a mapping gives each input one way; its constants are listed ----------------------------------------


@pytest.mark.parametrize(("extra", "says"), [
    ({"year_built": 1990, "year": 2019}, "mapping keys 'age' (column age) and 'year_built' (constant 1990) both give "
                                         "the age; 'year_built' would be ignored: give one of them"),
    ({"length": 10}, "mapping keys 'deck_area' (column area) and 'length' (constant 10) both give the deck area; "
                     "'length' would be ignored: give one of them"),
    ({"truck_share": 0.2, "truck_percent": "adt"}, "mapping keys 'truck_percent' (column adt) and 'truck_share' "
                                                   "(constant 0.2) both give the truck share; 'truck_share' would be "
                                                   "ignored: give one of them"),
    ({"ysm": 3, "year_reconstructed": 2000}, "mapping keys 'ysm' (constant 3) and 'year_reconstructed' (constant "
                                             "2000) both give the years since maintenance; 'year_reconstructed' would "
                                             "be ignored: give one of them"),
])
def test_one_input_given_two_ways_is_refused_naming_both_keys(tmp_path: Path, extra: dict, says: str) -> None:
    with pytest.raises(InventoryError) as exc:
        load_inventory(tmp_path / "not-read.csv", {**_MAPPING, **extra})  # refused before the table is read
    assert str(exc.value) == f"mapping: {says}"


@pytest.mark.parametrize("key", ["deck_area", "length"])
def test_a_constant_deck_area_of_0_is_refused_before_the_table_is_read(tmp_path: Path, key: str) -> None:
    mapping = {**_MAPPING, key: 0} if key == "deck_area" else {
        **{k: v for k, v in _MAPPING.items() if k != "deck_area"}, "length": 0, "width": 5}
    with pytest.raises(InventoryError) as exc:
        load_inventory(tmp_path / "not-read.csv", mapping)
    assert str(exc.value).startswith(f"mapping: mapping key '{key}' = 0: every bridge's deck area would be 0 (none "
                                     "kept); a deck area must be in [1, 1,000,000] m²")


def test_every_constant_is_listed_cluster_and_nhs_included(tmp_path: Path) -> None:
    p = _table(tmp_path, [])
    inv = load_inventory(p, {**_MAPPING, "aadt": 500, "cluster": {"value": "urban"}, "nhs": {"value": 1}})
    assert inv.n_urban == 40 and inv.on_nhs.all()
    assert "from the mapping, the same for every bridge: aadt = 500, cluster = urban, nhs = 1 (on the NHS)" in inv.notes
    bare = load_inventory(p, {**_MAPPING, "nhs": 0})  # a YAML number is a constant, as for every other input
    assert bare.n_urban == 0 and not bare.on_nhs.any() and (bare.nhs == 0.0).all()
    assert "from the mapping, the same for every bridge: cluster = rural, nhs = 0 (not on the NHS)" in bare.notes
    state = load_inventory(p, {**_MAPPING, "state_code": 6})  # the second probe: a state constant was not listed
    assert (state.state == "06").all() and "from the mapping, the same for every bridge: cluster = rural, " \
        "state_code = 06" in " ".join(state.notes)


def test_a_cluster_or_nhs_rule_naming_a_number_column_says_how_to_give_a_constant(tmp_path: Path) -> None:
    p = _table(tmp_path, [])
    with pytest.raises(InventoryError) as exc:
        load_inventory(p, {**_MAPPING, "cluster": {"functional_class": 14}})
    assert str(exc.value) == (f"{p}, line 1, column 14: mapping key 'cluster' names column '14', which the header "
                              "lacks; every bridge alike is written cluster: urban or cluster: rural (functional class "
                              "11–19 or 01–09)")
    with pytest.raises(InventoryError, match=r"mapping key 'nhs' names column '1'.*nhs: 1 or nhs: 0"):
        load_inventory(p, {**_MAPPING, "nhs": {"column": 1, "values": [1]}})


def test_a_state_code_is_digits_and_one_state_however_padded(tmp_path: Path) -> None:
    """Issue 79's second probe (kind 2): NBI item 1 and SNBI BL01 took any text as a state of its own ('11.0',
    '+11', '1_1', full-width digits, '1e1'), and '6' was another state than '06' with another cost factor."""
    bad = ["11.0", "+11", "1_1", "１１", "1e1", "x"]
    rows = [{} for _ in range(100)]
    for k, v in enumerate(bad):
        rows[k] = {"STATE_CODE_001": v}
    for k, v in enumerate(["6", "06", "063"], start=len(bad)):  # California: FIPS 06 (063: FIPS then region 3)
        rows[k] = {"STATE_CODE_001": v}
    p = tmp_path / "XX19.txt"
    p.write_text(nbi_text(rows), encoding="utf-8")
    inv = load_inventory(p)
    assert [line - 2 for line, _ in inv.dropped] == list(range(len(bad)))
    assert inv.dropped[0][1] == ("bad value: column STATE_CODE_001 = '11.0': not a state code (the two-digit FIPS "
                                 "code, 1 to 3 digits with the FHWA region)")
    assert inv.state[:3].tolist() == ["06", "06", "06"]
    assert inv.cost_factor[0] == inv.cost_factor[1] == inv.cost_factor[2] != 1.0
    recs = [_bridge(f"B{k}") for k in range(50)]
    for k, v in enumerate([11.0, "+11", "１１", True]):
        recs[k]["BL01"] = v
    recs[4]["BL01"], recs[5]["BL01"] = 6, "06"
    s = tmp_path / "s.json"
    s.write_text(json.dumps(recs), encoding="utf-8")
    snbi = load_inventory(s)
    assert [line for line, _ in snbi.dropped] == [1, 2, 3, 4]
    assert all("column BL01" in r and "not a state code" in r for _, r in snbi.dropped[:3])
    assert snbi.dropped[3][1].endswith("'true': not a value (an object, array or true/false)")
    assert snbi.state[:2].tolist() == ["06", "06"]
