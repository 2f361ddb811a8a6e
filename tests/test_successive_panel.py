"""``bridgefleet calibrate --inventories``: successive yearly NBI / SNBI files of a state read as the component
panel (``calibration.successive``): three hand-written SNBI files checked pair by pair, the one-line refusals, and
the fit end to end on DC's 2019 file with a fabricated 2020 file."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bridgefleet.calibration.panel import inspection_pairs
from bridgefleet.calibration.successive import read_successive
from bridgefleet.cli import main
from bridgefleet.inventory.load import bundled_path


def _record(bid: str, ratings: str, inspected: str | None, built: int = 1990, state: Any = 11,
            works: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An SNBI record: ``ratings`` BC01–BC04 as four characters (``N`` not applicable)."""
    rec: dict[str, Any] = {
        "BID01": bid, "BL01": state, "BL02": "001", "BCL01": "S01", "BG16": 10000, "BW01": built,
        **{f"BC0{k + 1}": ratings[k] for k in range(4)},
        "Features": [{"BF01": "H", "BF02": "C", "BH02": "47900", "BH03": "Y", "BH09": 1000}]}
    if inspected is not None:
        rec["Inspections"] = [{"BIE01": "2", "BIE02": inspected, "BIE03": inspected}]
    if works is not None:
        rec["Works"] = works
    return rec


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


SP2 = {"BW02": 2015, "BW03": "SP2"}


@pytest.fixture
def three_years(tmp_path: Path) -> list[Path]:
    """Four bridges of state 11 inspected 2025–2027.

    0001: deck 7 → 6 → 8 (deck replaced, DK1, in 2027), substructure 5 → 5 → 4; SP2 of 2015 in every file's history,
    a joint repair JT1 of 2026 in the last. 0002: inspected in 2025 and 2027 only (the 2026 file repeats the 2025
    inspection). 00042: a culvert, 5 → 5 → 4. B-4: absent from the 2026 file.
    """
    return [
        _write(tmp_path / "y2025.json", [
            _record("0001", "765N", "20250315"), _record("0002", "887N", "20250601"),
            _record("00042", "NNN5", "20250401", built=1960), _record("B-4", "999N", "20250901", built=2020)]),
        _write(tmp_path / "y2026.json", [
            _record("0001", "665N", "20260310", works=[SP2]), _record("0002", "887N", "20250601"),
            _record("00042", "NNN5", "20260401", built=1960)]),
        _write(tmp_path / "y2027.json", [
            _record("0001", "864N", "2027-03-10", works=[SP2, {"BW02": 2027, "BW03": "DK1"},
                                                         {"BW02": "2026", "BW03": "JT1"}, {"BW02": 2027, "BW03": "0"}]),
            _record("0002", "786N", "20270601"), _record("00042", "NNN4", "20270401", built=1960),
            _record("B-4", "989N", "20270901", built=2020)]),
    ]


def test_three_snbi_files_give_the_panel_its_pairs_and_the_works_by_hand(three_years: list[Path]) -> None:
    y25, y26, y27 = three_years
    s = read_successive([y27, y25, y26])  # any order: sorted by inspection year
    assert s.years == (2025, 2026, 2027) and s.kinds == ("SNBI",) * 3 and s.files == tuple(map(str, three_years))
    p = s.panel
    assert p.bridges.tolist() == ["0001", "0002", "00042", "B-4"]  # leading zeros kept
    assert p.bridge_id.tolist() == ["0001"] * 3 + ["0002"] * 3 + ["00042"] * 3 + ["B-4"] * 2
    assert p.year.tolist() == [2025, 2026, 2027] * 3 + [2025, 2027]
    assert p.bridge_index.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3]
    assert p.ratings.tolist() == [
        [7, 6, 5, -1], [6, 6, 5, -1], [8, 6, 4, -1],
        [8, 8, 7, -1], [-1, -1, -1, -1], [7, 8, 6, -1],  # 2026: the 2025 inspection again, no new rating
        [-1, -1, -1, 5], [-1, -1, -1, 5], [-1, -1, -1, 4],
        [9, 9, 9, -1], [9, 8, 9, -1]]
    assert p.year_built.tolist() == [1990] * 6 + [1960] * 3 + [2020] * 2
    np.testing.assert_allclose(p.deck_area_m2, 10000 * 0.09290304, rtol=1e-6)  # BG16 sq ft → m²
    assert p.nhs.all()
    w = s.works
    assert w is not None
    assert w.bridge_id.tolist() == ["0001", "0001"]  # SP2 once (three files repeat it); JT1 and 0 left out
    assert w.start_year.tolist() == [2015, 2027] and w.end_year.tolist() == [2015, 2027]
    assert w.code.tolist() == ["SP2", "DK1"]
    assert w.components.tolist() == [[False, True, False, False], [True, False, False, False]]
    assert np.isnan(w.usd).all()
    pairs = {c: inspection_pairs(p, w, c) for c in ("deck", "superstructure", "substructure", "culvert")}
    deck = pairs["deck"]  # 0001 2026 → 2027 crosses DK1: left out; 0002 and B-4 two years apart
    assert (deck.from_rating.tolist(), deck.to_rating.tolist(), deck.interval_years.tolist()) == (
        [7, 8, 9], [6, 7, 9], [1, 2, 2])
    assert deck.bridge_index.tolist() == [0, 1, 3] and deck.dropped_work == 1
    assert deck.age_years.tolist() == [35, 35, 5]
    sup = pairs["superstructure"]  # DK1 touches the deck only: 0001's superstructure pairs both count
    assert (sup.from_rating.tolist(), sup.to_rating.tolist(), sup.interval_years.tolist(), sup.dropped_work) == (
        [6, 6, 8, 9], [6, 6, 8, 8], [1, 1, 2, 2], 0)
    sub = pairs["substructure"]
    assert (sub.from_rating.tolist(), sub.to_rating.tolist(), sub.year_from.tolist()) == (
        [5, 5, 7, 9], [5, 4, 6, 9], [2025, 2026, 2025, 2025])
    culvert = pairs["culvert"]
    assert (culvert.from_rating.tolist(), culvert.to_rating.tolist(), culvert.bridge_index.tolist()) == (
        [5, 5], [5, 4], [2, 2])
    text = "\n".join(s.lines)
    assert f"2026  {y26}: SNBI, state 11, 3 bridges (year from the latest inspection date BIE03)" in text
    assert ("panel: 4 bridges, 11 bridge-years; 4 bridges in two files or more; 1 bridge-year with the previous "
            "file's inspection date") in text
    assert "2 distinct Works entries" in text and "deck 1, superstructure 1, substructure 0, culvert 0" in text
    assert "left out: 1 of bearings, joints, railings, scour or channel" in text


def test_files_without_inspection_dates_take_the_years_given_and_without_works_have_no_work_records(
        tmp_path: Path) -> None:
    a = _write(tmp_path / "a.json", [_record("7", "7777", None), _record("8", "6666", None)])
    b = _write(tmp_path / "b.json", [_record("7", "6777", None), _record("8", "6656", None)])
    with pytest.raises(ValueError, match=r"a\.json: cannot tell its inspection year .*give it \(years="):
        read_successive([a, b])
    s = read_successive([b, a], years=[2026, 2024])
    assert s.years == (2024, 2026) and s.files == (str(a), str(b))
    assert s.panel.year.tolist() == [2024, 2026, 2024, 2026] and s.panel.bridges.tolist() == ["7", "8"]
    assert s.panel.ratings.tolist() == [[7, 7, 7, 7], [6, 7, 7, 7], [6, 6, 6, 6], [6, 6, 5, 6]]
    assert s.works is None and "work records: none (no record of the SNBI files carries a Works entry" in s.lines[-1]


def test_the_same_year_twice_is_refused_in_one_line_naming_both_files_and_nothing_is_written(
        three_years: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    again = _write(tmp_path / "again.json", [_record("0001", "5555", "20260601")])
    out = tmp_path / "fleet.yaml"
    assert main(["calibrate", "--inventories", str(three_years[1]), str(again), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("bridgefleet calibrate: error: ")
    assert (f"{three_years[1]} and {again} are both inspection year 2026 (from the latest inspection date BIE03; "
            "from the latest inspection date BIE03): bridge 0001 of state 11 given twice for 2026: give one file "
            "per year") in err
    assert not out.exists() and not (tmp_path / "fleet.components.yaml").exists()


def test_refusals_are_one_line(three_years: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    y25, y26, _ = three_years
    other = _write(tmp_path / "md.json", [_record("0001", "7777", "20260601", state=24)])
    table = tmp_path / "table.csv"
    table.write_text("a,b\n1,2\n", encoding="utf-8")
    cases = [
        ([str(y25)], "successive inventories need two files or more"),
        ([str(y25), str(y25)], "named twice"),
        ([str(y25), str(other)], f"{y25} shares no bridge with the other files (different states: {y25} is state 11, "
                                 "the others 24): successive files of one state are matched on state code + bridge "
                                 "number"),
        ([str(y25), str(table)], "missing required column(s) STRUCTURE_NUMBER_008"),
        ([str(tmp_path / "none*.json")], "--inventories " + str(tmp_path / "none*.json") + ": no file matches"),
        ([str(y25), str(y26), "--works", str(table)], "--works: not with --inventories"),
        ([str(y25), str(y26), "--years", "2025"], "--years: 1 years for 2 files"),
    ]
    for argv, message in cases:
        assert main(["calibrate", "--inventories", *argv]) == 2, argv
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and message in err, (argv, err)
    assert "read as an NBI inventory" in main_err(["calibrate", "--inventories", str(y25), str(table)], capsys)
    assert "--years: give it with --inventories" in main_err(["calibrate", "--panel", str(table), "--years", "2025"],
                                                              capsys)


def main_err(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


def _dc_2020(folder: Path) -> str:
    """DC 2019 (the bundled NBI file) and a fabricated 2020: every 4th bridge's deck, 5th's superstructure and
    7th's substructure one point lower, every bridge re-inspected in June 2020 (item 90 ``620``) but every 10th
    (its 2019 date kept). Returns the pattern naming both."""
    text = bundled_path("dc-2019").read_text(encoding="utf-8")
    (folder / "DC19.txt").write_text(text, encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text, newline=""), quotechar="'"))
    col = {name: k for k, name in enumerate(rows[0])}
    for i, row in enumerate(rows[1:]):
        for item, every in (("DECK_COND_058", 4), ("SUPERSTRUCTURE_COND_059", 5), ("SUBSTRUCTURE_COND_060", 7)):
            v = row[col[item]].strip("' ")
            if i % every == 0 and v.isdigit() and int(v) > 1:
                row[col[item]] = str(int(v) - 1)
        if i % 10 != 9:
            row[col["DATE_OF_INSPECT_090"]] = "620"
    buf = io.StringIO()
    csv.writer(buf, quotechar="'", lineterminator="\n").writerows(rows)
    (folder / "DC20.txt").write_text(buf.getvalue(), encoding="utf-8")
    return str(folder / "DC*.txt")


def test_calibrate_inventories_on_dc_fits_and_writes_a_fleet_that_loads(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from bridgefleet.config import read_yaml
    from bridgefleet.sim.components import from_mapping

    pattern = _dc_2020(tmp_path)
    out = tmp_path / "fleet.yaml"
    assert main(["calibrate", "--inventories", pattern, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"2019  {tmp_path / 'DC19.txt'}: NBI, state 11, 244 bridges (year from the file name DC19.txt)" in text
    assert f"2020  {tmp_path / 'DC20.txt'}: NBI, state 11, 244 bridges (year from the file name DC20.txt)" in text
    # 24 bridges kept their 2019 inspection date: no 2020 rating; 2 of the 220 others have no deck (item 58 N)
    assert ("panel: 244 bridges, 488 bridge-years; 244 bridges in two files or more; 24 bridge-years with the "
            "previous file's inspection date") in text
    assert "work records: none (NBI Coding-Guide files have none:" in text
    assert "deck: 218 pairs with no work between" in text and "superstructure: 220 pairs" in text
    assert "     7    103   0.728 / 0.728 [0.647-0.810]   0.272 / 0.272   0.000 / 0.000" in text  # deck from 7
    assert f"wrote {tmp_path / 'fleet.components.yaml'}" in text
    model = read_yaml(tmp_path / "fleet.components.yaml")
    assert model["name"] == "state-11-2019-2020" and model["fit"]["years"] == [2019, 2020]
    assert model["fit"]["pairs"] == {"deck": 218, "superstructure": 220, "substructure": 220, "culvert": 0}
    from_mapping(model, str(tmp_path / "fleet.components.yaml"))
    assert "--inventories " in (tmp_path / "fleet.yaml").read_text(encoding="utf-8")
