"""Issue 79, by kind: the encoding decided from the bytes (1), codes that are codes and numbers a spreadsheet writes
(2), formulas in any width (4), numbers as people type them on the command line (6), a cached thread choice
re-probed when stale or measured under another load (7), and a mapping's constants (8)."""

from __future__ import annotations

import codecs
import csv
import datetime
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from test_inventory import HEADER, nbi_text

from bridgefleet.cli import build_parser, main
from bridgefleet.inventory.load import InventoryError, load_inventory, read_csv_inventory, read_nbi, summarize
from bridgefleet.outputs import csv_cell
from bridgefleet.textfile import TextEncodingError, decode_text
from bridgefleet.training import hardware
from bridgefleet.training.hardware import choose
from bridgefleet.typed_numbers import number, numbers, whole

SRC = Path(__file__).resolve().parents[1] / "src" / "bridgefleet"


def _nbi(tmp_path: Path, rows: list[dict[str, str]], name: str = "XX19.txt", encoding: str = "utf-8",
         bom: bool = False) -> Path:
    p = tmp_path / name
    p.write_bytes((codecs.BOM_UTF8 if bom else b"") + nbi_text(rows).encode(encoding))
    return p


# -- 1. the encoding is decided from the bytes ----------------------------------------------------------


def test_an_nbi_file_in_utf8_without_a_bom_reads_its_structure_numbers_as_written(tmp_path):
    rows = [{"STRUCTURE_NUMBER_008": "'Brücke-2'"}, {"STRUCTURE_NUMBER_008": "'MOST-Ł1'"}]
    inv = read_nbi(_nbi(tmp_path, rows))
    assert inv.bridge_id.tolist() == ["Brücke-2", "MOST-Ł1"]  # not BrÃ¼cke-2 / MOST-Å\x811
    assert "  text read as UTF-8 (valid UTF-8)" in summarize(inv).splitlines()
    bom = read_nbi(_nbi(tmp_path, rows, name="YY19.txt", bom=True))
    assert bom.bridge_id.tolist() == ["Brücke-2", "MOST-Ł1"]
    assert bom.notes[0] == "text read as UTF-8 (UTF-8 byte-order mark)"


def test_bytes_that_are_not_utf8_are_the_formats_legacy_encoding(tmp_path):
    # Latin-1 ü is byte 0xFC: not UTF-8, so the NBI's legacy Latin-1. Line 2 starts after the header's 148 bytes.
    p = _nbi(tmp_path, [{"STRUCTURE_NUMBER_008": "'Brücke-2'"}], encoding="latin-1")
    header = len(",".join(HEADER)) + 1
    inv = read_nbi(p)
    assert inv.bridge_id.tolist() == ["Brücke-2"]
    at = header + len("18,'Br")
    assert inv.notes[0] == (f"text read as Latin-1 (not valid UTF-8 (byte 0xFC at byte {at}, line 2): the NBI's "
                            "legacy encoding)")
    # a spreadsheet's CSV: Windows-1252, whose 0x96 is an en dash (a control code in Latin-1)
    t = tmp_path / "t.csv"
    t.write_bytes("id,cond,age,area,aadt\nA–1,7,10,100,500\n".encode("cp1252"))
    m = {"id": "id", "condition": "cond", "age": "age", "deck_area": "area", "aadt": "aadt", "cluster": "rural"}
    csv_inv = read_csv_inventory(t, m)
    assert csv_inv.bridge_id.tolist() == ["A–1"] and csv_inv.notes[0].startswith("text read as Windows-1252")


@pytest.mark.parametrize(("data", "says", "line"), [
    (nbi_text([{}]).encode("utf-16-le"), "NUL byte at byte 1: the file looks UTF-16-encoded", None),
    (nbi_text([{}]).encode("utf-16"), "the file is UTF-16-encoded (byte-order mark FF FE at byte 0)", None),
    # Latin-1 has no character at 0x96 (a control code): neither UTF-8 nor Latin-1
    (nbi_text([{}, {"STRUCTURE_NUMBER_008": "'A\x96B'"}]).encode("latin-1"), "byte 0x96 at byte", 3),
    # UTF-8 Ł on line 2, a Latin-1 ü on line 3: two encodings pasted together
    (nbi_text([{"STRUCTURE_NUMBER_008": "'MOST-Ł1'"}]).encode("utf-8") + "11,'Brücke-2'\n".encode("latin-1"),
     "holds UTF-8 characters but its byte 0xFC", 3),
])
def test_a_file_that_is_neither_is_refused_in_one_line(tmp_path, data, says, line):
    p = tmp_path / "XX19.txt"
    p.write_bytes(data)
    with pytest.raises(InventoryError) as exc:
        load_inventory(p)
    msg = str(exc.value)
    assert says in msg and "\n" not in msg and exc.value.line == line and "XX19.txt" in msg


def test_one_helper_decodes_for_every_reader():
    assert decode_text("Brücke-2".encode(), "cp1252").text == "Brücke-2"
    assert decode_text(b"Br\xfccke", "latin-1").encoding == "Latin-1"
    assert decode_text(b"A\x961", "cp1252").text == "A–1"
    with pytest.raises(TextEncodingError, match="Windows-1252 \\(which has no character for it\\)") as exc:
        decode_text(b"a,b\nA\x81,1\n", "cp1252")
    assert exc.value.line == 2
    # every reader of user files decodes through bridgefleet.textfile (no reader of its own)
    for path in (SRC / "inventory").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\.decode\(|encoding=\"latin", text), path.name


# -- 2. codes are codes, numbers are what a spreadsheet writes -------------------------------------------


def test_nbi_condition_codes_are_one_character_and_the_rest_are_dropped_with_their_reason(tmp_path):
    rows = [{} for _ in range(60)]
    bad = {2: "6.5", 3: "1e0", 4: "+6", 5: "07", 6: "６"}  # full-width 6 (U+FF16)
    for i, v in bad.items():
        rows[i] = {"DECK_COND_058": v}
    rows[10] = {"SUPERSTRUCTURE_COND_059": "' 5 '"}  # blank-padded as the fixed-width format pads: 5
    rows[11] = {"DECK_COND_058": "n"}  # N in either case: not applicable, the others decide (6)
    inv = read_nbi(_nbi(tmp_path, rows))
    assert inv.kept == 55 and len(inv.dropped) == 5
    for (line, reason), (i, v) in zip(inv.dropped, bad.items(), strict=True):
        assert line == i + 2 and reason == (f"bad value: column DECK_COND_058 = {v!r}: not an NBI condition code (one "
                                            "character: 0–9, or N)")
    assert inv.condition.tolist()[5:7] == [5.0, 6.0]  # rows 10 and 11 (five dropped before them)
    assert "     5  bad value (first on line 4)" in summarize(inv)


def test_nbi_numeric_items_take_their_digits_only(tmp_path):
    rows = [{} for _ in range(60)]
    rows[1] = {"ADT_029": "1_000"}  # Python's spelling, no spreadsheet's
    rows[2] = {"YEAR_BUILT_027": "1.98e3"}
    rows[3] = {"FUNCTIONAL_CLASS_026": "１４"}  # full-width digits
    rows[4] = {"YEAR_BUILT_027": "²"}  # str.isdigit() is True, int() fails: a traceback before
    rows[5] = {"FUNCTIONAL_CLASS_026": "7"}  # 07 without its 0 is 07
    rows[6] = {"STATE_CODE_001": "²"}  # not a state code: a bad value (issue 79's second probe)
    inv = read_nbi(_nbi(tmp_path, rows))
    assert [line for line, _ in inv.dropped] == [3, 4, 5, 6, 8]
    assert inv.dropped[0][1] == ("bad value: column ADT_029 = '1_000': average daily traffic is not coded as the NBI "
                                 "codes it (1 to 6 digits)")
    assert "column STATE_CODE_001 = '²': not a state code" in inv.dropped[4][1]
    assert inv.urban.tolist()[1] is False  # row 5 kept: rural


def test_a_mapped_csv_takes_the_numbers_a_spreadsheet_writes_and_drops_the_rest(tmp_path):
    t = tmp_path / "t.csv"
    cells = ["1000", "1000.5", "1e3", '"1,000"', "1_000", "+5", "nan", '"1,00"'] + ["2000"] * 72
    t.write_text("id,cond,age,area,aadt\n" + "".join(f"B{i},7,10,100,{v}\n" for i, v in enumerate(cells)),
                 encoding="utf-8")
    m = {"id": "id", "condition": "cond", "age": "age", "deck_area": "area", "aadt": "aadt", "cluster": "rural"}
    inv = read_csv_inventory(t, m)
    assert inv.aadt.tolist()[:3] == [1000.0, 1000.0, 1000.0]
    assert [line for line, _ in inv.dropped] == [3, 6, 7, 8, 9]  # 1000.5: a number, but not a count of vehicles
    reasons = [r for _, r in inv.dropped]
    assert "traffic (AADT) 1000.5: must be a whole number in [0, 999,999] vehicles/day" in reasons[0]
    assert "'_' between digits is Python's spelling, not a spreadsheet's" in reasons[1]
    assert "a leading '+'" in reasons[2] and "not a finite number" in reasons[3]
    assert "commas only between groups of three digits" in reasons[4]


def test_a_mapped_csvs_ratings_are_nbi_codes_unless_a_scale_is_given(tmp_path):
    t = tmp_path / "t.csv"
    cond = ["6.5", "1e0", "+6", "7.0", "N"] + ["6"] * 45
    t.write_text("id,cond,c2,age,area,aadt\n" + "".join(f"B{i},{v},8,10,100,500\n" for i, v in enumerate(cond)),
                 encoding="utf-8")
    m = {"id": "id", "condition": ["cond", "c2"], "age": "age", "deck_area": "area", "aadt": "aadt",
         "cluster": "rural"}
    inv = read_csv_inventory(t, m)
    assert [line for line, _ in inv.dropped] == [2, 3, 4]  # 7.0 (pandas' whole number) is 7; N leaves c2's 8
    assert inv.condition.tolist()[:2] == [7.0, 8.0]
    scaled = read_csv_inventory(t, {**m, "condition_scale": [0, 9]})  # an index: 6.5 and 1e0 are values
    assert scaled.condition.tolist()[:2] == [6.5, 1.0] and [line for line, _ in scaled.dropped] == [4]


# -- 4. formulas in any width, in every CSV the product writes -------------------------------------------


def test_full_width_formula_starts_and_dde_payloads_are_made_text():
    cells = ["＝1+1", "＋1", "－1", "＠SUM(A1)", "\u3000=1", "cmd|' /C calc'!A0", "＝cmd|'/C calc'!A0"]
    assert [csv_cell(v) for v in cells] == ["'" + v for v in cells]
    assert [csv_cell(v) for v in ("Brücke-2", "MOST-Ł1", "-0.5", "Ｂ01")] == ["Brücke-2", "MOST-Ł1", "-0.5", "Ｂ01"]


def test_every_csv_the_product_writes_goes_through_the_escaping_writer():
    for path in SRC.rglob("*.py"):
        if path.name == "outputs.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"csv\.(writer|DictWriter)\(|\.to_csv\(|\.to_excel\(", text), path


def test_plan_csv_keeps_utf8_names_and_escapes_a_full_width_formula(tmp_path, capsys):
    names = ["'Brücke-2'", "'MOST-Ł1'", "'＝cmd| /C calc!A0'"]  # a full-width = starts a formula
    rows = [{"STRUCTURE_NUMBER_008": n, "FUNCTIONAL_CLASS_026": "14" if i % 2 else "07"}
            for i, n in enumerate(names + [f"'B{i}'" for i in range(3)])]
    inv = _nbi(tmp_path, rows)
    out = tmp_path / "plan.csv"
    assert main(["plan", "--policy", "lagrangian", "--inventory", str(inv), "--years", "2", "--samples", "1",
                 "--budget-usd", "1,000,000", "--out", str(out)]) == 0
    assert "annual budget USD 1,000,000" in capsys.readouterr().out
    with out.open(newline="", encoding="utf-8") as f:
        ids = {r["bridge_id"] for r in csv.DictReader(f)}
    assert {"Brücke-2", "MOST-Ł1", "'＝cmd| /C calc!A0"} <= ids


# -- 6. numbers as people type them on the command line ---------------------------------------------------


def test_one_number_takes_thousands_separators_in_groups_of_three():
    assert [number(t, "--x") for t in ("1,000,000", "1000000", "1e6", "1,000.5")] == [1e6, 1e6, 1e6, 1000.5]
    assert whole("20,251,101", "--seed") == 20_251_101  # the seed as --help writes it
    for text in ("1,00", "1.000.000", "nan", "1,0000", "1_000_000", "+1000"):
        with pytest.raises(ValueError, match=r"^--x '.*': "):
            number(text, "--x")
    assert build_parser().parse_args(["plan", "--policy", "lagrangian", "--budget-usd", "1,000,000"]).budget_usd == 1e6


def test_a_list_separates_by_semicolons_spaces_or_unambiguous_commas():
    assert numbers("0.25,0.5,1", "--budgets") == [0.25, 0.5, 1.0]
    assert numbers("5,000,000;10,000,000", "--budgets-usd") == [5e6, 1e7]
    assert numbers("5e6 1e7", "--budgets-usd") == [5e6, 1e7]
    assert numbers("5,000,000, 10,000,000", "--budgets-usd") == [5e6, 1e7]
    assert numbers("5000000,10000000", "--budgets-usd") == [5e6, 1e7]


def test_an_ambiguous_list_is_refused_with_both_readings(tmp_path, capsys):
    assert main(["scenarios", "--inventory", "dc-2019", "--budgets-usd", "5,000,000", "--out",
                 str(tmp_path / "sc")]) == 2
    err = capsys.readouterr().err
    assert err == ("bridgefleet scenarios: error: --budgets-usd '5,000,000' reads two ways: one level, 5,000,000 "
                   "(commas as thousands separators), or 3 levels, 5, 0 and 0 (commas between levels); write 5000000 "
                   "for the one level, '5;0;0' for the 3 levels (separate levels with ';' or spaces)\n")
    assert not (tmp_path / "sc").exists()
    with pytest.raises(ValueError, match=r"2 levels, 1,000,000 and 2,000,000 .* or 6 levels, 1, 0, 0, 2, 0 and 0"):
        numbers("1,000,000,2,000,000", "--budgets-usd")
    with pytest.raises(ValueError, match=r"one level, 1,500 .* or 2 levels, 1 and 500"):
        numbers("1,500", "--budgets")
    # spaces between thousands, or between levels
    with pytest.raises(ValueError, match=r"'1 000 000' reads two ways: one level, 1,000,000 .* or 3 levels, 1, 0 "
                                         r"and 0 .* write 1000000 for the one level, '1;0;0' for the 3 levels"):
        numbers("1 000 000", "--budgets-usd")
    assert numbers("0.5 1 2", "--budgets") == [0.5, 1.0, 2.0]  # not groups of three: levels


def test_a_point_before_three_digits_is_refused_with_both_readings():
    # 1.000 is one where a point is decimal and a thousand where it separates thousands (issue 79 kind 6)
    with pytest.raises(ValueError, match=r"^--budget-usd '1.000' reads two ways: 1 \(a decimal point\) or 1,000 "
                                         r"\(a point between thousands\); write 1 or 1000$"):
        number("1.000", "--budget-usd")
    with pytest.raises(ValueError, match=r"'12.500' reads two ways: 12.5 .* or 12,500"):
        number("12.500", "--budget-scale")
    assert [number(t, "--x") for t in ("0.250", "1.5", "1.0000", "1.000e3", "1000.000")] == [0.25, 1.5, 1.0, 1e3, 1e3]


# -- 7. a cached thread choice from a busy moment -------------------------------------------------------


def _probe():
    calls = []

    def probe(amp, threads):
        calls.append(threads)
        return 1.0 + threads

    probe.calls = calls
    return probe


def _cached_at(days_ago: float, load: float) -> None:
    """Rewrite every cached choice as probed ``days_ago`` days ago at ``load``."""
    path = hardware._cache_path()
    data = json.loads(path.read_text(encoding="utf-8"))
    then = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=days_ago)
    for v in data.values():
        v.update(probed_at=then.isoformat(timespec="seconds"), probe_load=load)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_stale_or_busy_time_choice_is_probed_again(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(hardware, "machine_load", lambda: 0.5)
    cpu = torch.device("cpu")
    probe = _probe()
    first = choose(False, "auto", cpu, probe, key="k")
    n = len(probe.calls)
    assert first.probe_load == 0.5 and first.probe_cores == 4 and first.probed_at is not None
    _cached_at(days_ago=6.0, load=1.4)  # 6 days, load 1.4 against 0.5 now: below one busy core, kept
    kept = choose(False, "auto", cpu, probe, key="k")
    assert len(probe.calls) == n and "(cached: probed " in kept.threads_reason and "at load 1.40" in kept.threads_reason
    _cached_at(days_ago=8.0, load=0.5)  # a week is the most
    old = choose(False, "auto", cpu, probe, key="k")
    assert len(probe.calls) == 2 * n and "probed again: the cached choice was probed 8.0 days ago" in old.threads_reason
    _cached_at(days_ago=0.0, load=4.5)  # probed while another job held the 4 cores: 4.0 apart ≥ max(1, 0.25 × 4)
    busy = choose(False, "auto", cpu, probe, key="k")
    assert len(probe.calls) == 3 * n
    assert "the machine's load is 0.50 now against 4.50 at the probe (4 cores" in busy.threads_reason
    assert busy.to_dict()["probe_load"] == 0.5  # what summary.json records (write_final: hardware.to_dict())


def test_a_cache_of_an_older_version_without_a_probe_time_is_probed_again():
    probe = _probe()
    choose(False, "auto", torch.device("cpu"), probe, key="old")
    path = hardware._cache_path()
    data = json.loads(path.read_text(encoding="utf-8"))
    for v in data.values():
        for k in ("probed_at", "probe_load", "probe_cores"):
            v.pop(k)
    path.write_text(json.dumps(data), encoding="utf-8")
    again = choose(False, "auto", torch.device("cpu"), probe, key="old")
    assert "records no probe time" in again.threads_reason


# -- 8. a mapping gives a column or a constant -----------------------------------------------------------


def _no_adt(tmp_path: Path) -> Path:
    t = tmp_path / "county.csv"
    t.write_text("id,cond,age,area\nA,7,10,100\nB,5,30,250\n", encoding="utf-8")
    return t


def test_a_constant_aadt_stands_for_a_missing_column(tmp_path, capsys):
    t = _no_adt(tmp_path)
    (tmp_path / "m.yaml").write_text("id: id\ncondition: cond\nage: age\ndeck_area: area\naadt: 10000\n"
                                     "truck_percent: {value: 12}\nnhs: {value: 1}\ncluster: rural\n", encoding="utf-8")
    inv = load_inventory(t, tmp_path / "m.yaml")
    assert inv.aadt.tolist() == [10000.0, 10000.0] and inv.deck_area.tolist() == [100.0, 250.0]
    np.testing.assert_allclose(inv.truck_share, [0.12, 0.12], rtol=1e-6)
    assert inv.on_nhs.tolist() == [True, True]
    assert main(["inventory", str(t), "--mapping", str(tmp_path / "m.yaml")]) == 0
    assert "from the mapping, the same for every bridge: aadt = 10000, truck_percent = 12" in capsys.readouterr().out


@pytest.mark.parametrize(("aadt", "says"), [
    (-5, "mapping key 'aadt' = '-5': negative traffic (AADT)"),
    ("10000", "mapping key 'aadt' names column '10000', which the header lacks; a value for every bridge is written "
              "aadt: 10000 (a number, unquoted) or aadt: {value: 10000}"),
    (True, "mapping key 'aadt' = True: give a column name (aadt: COLUMN) or a value for every bridge"),
    ({"value": "1_000"}, "mapping key 'aadt' = '1_000': traffic (AADT) is not a number: '_' between digits"),
])
def test_a_bad_constant_is_refused_in_one_line_naming_its_key(tmp_path, aadt, says):
    m = {"id": "id", "condition": "cond", "age": "age", "deck_area": "area", "aadt": aadt, "cluster": "rural"}
    with pytest.raises(InventoryError) as exc:
        read_csv_inventory(_no_adt(tmp_path), m)
    assert says in str(exc.value) and "\n" not in str(exc.value)
