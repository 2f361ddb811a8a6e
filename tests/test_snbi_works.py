"""`plan --format snbi-works`: the plan's treatments as SNBI `Works` entries (BID01; BW02 year, BW03 work code), a
hand-made plan checked entry by entry, the file a real plan writes against its plan.csv, and the refusals."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from bridgefleet.cli import main
from bridgefleet.config import FleetConfig
from bridgefleet.evaluation import work_plan
from bridgefleet.evaluation.snbi_works import start_year_of, works_path, works_records, write_works
from bridgefleet.evaluation.work_plan import Plan

COMPONENTS = ["--fleet-model", "components-2026"]


def _plan(bridge_id: list[str], action: list[list[int]], code: list[list[str]]) -> Plan:
    """A Plan of Y years × B bridges with the given modal actions and work codes (the rest zeros)."""
    act = np.array(action, dtype=np.int64)
    y, b = act.shape
    z = np.zeros((y, b))
    return Plan(np.array(bridge_id, dtype=str), np.array(["urban"] * b), np.ones(b, bool), act, z + 1.0, z, z,
                np.zeros((y, 2)), np.zeros(2), np.zeros((y, 3)), np.zeros((y, 3)), work_code=np.array(code, dtype=str))


def test_a_hand_made_plan_gives_these_entries_exactly() -> None:
    # 3 years × 4 bridges: year 1 a major rehabilitation of 0001 (three components, three entries), a deck overlay
    # of 00042 in year 2, a replacement of 0001 in year 3; 0777 does nothing (no record); B-"7" is rehabilitated.
    plan = _plan(["0001", "00042", "0777", 'B-"7"'],
                 [[3, 0, 0, 2], [0, 1, 0, 0], [4, 0, 0, 0]],
                 [["DK1+SP2+SB2", "", "", "SB2"], ["", "DK4", "", ""], ["BR01", "", "", ""]])
    assert works_records(plan, 2027) == [
        {"BID01": "0001", "Works": [{"BW02": 2027, "BW03": "DK1"}, {"BW02": 2027, "BW03": "SP2"},
                                    {"BW02": 2027, "BW03": "SB2"}, {"BW02": 2029, "BW03": "BR01"}]},
        {"BID01": "00042", "Works": [{"BW02": 2028, "BW03": "DK4"}]},
        {"BID01": 'B-"7"', "Works": [{"BW02": 2027, "BW03": "SB2"}]},
    ]


def test_a_treatment_the_model_gives_no_code_is_left_out_with_a_warning() -> None:
    plan = _plan(["010"], [[2], [1]], [[""], ["DK4"]])  # 2 years × 1 bridge
    with pytest.warns(UserWarning, match="1 planned treatment of the component model without an SNBI work code"):
        assert works_records(plan, 2030) == [{"BID01": "010", "Works": [{"BW02": 2031, "BW03": "DK4"}]}]


def test_the_file_is_json_with_bridge_numbers_as_text(tmp_path: Path) -> None:
    plan = _plan(["00７", 'x"},{"BID01":"evil'], [[3, 1]], [["DK1+SP2", "DK4"]])
    path = tmp_path / "plan.works.json"
    line = write_works(plan, path, 2026)
    assert line == f"SNBI works: {path} (3 Works entries on 2 bridges, BW02 2026–2026)"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == [{"BID01": "00７", "Works": [{"BW02": 2026, "BW03": "DK1"}, {"BW02": 2026, "BW03": "SP2"}]},
                    {"BID01": 'x"},{"BID01":"evil', "Works": [{"BW02": 2026, "BW03": "DK4"}]}]
    assert [p.name for p in tmp_path.iterdir()] == ["plan.works.json"]  # no temporary left
    assert works_path(Path("a/plan.csv")) == Path("a/plan.works.json")


def test_a_continuous_models_plan_and_bad_years_are_refused() -> None:
    plan = _plan(["1"], [[1]], [["DK4"]])
    plan.work_code = None
    with pytest.raises(ValueError, match="continuous fleet model, whose actions have no SNBI work code"):
        works_records(plan, 2026)
    assert start_year_of(2031, 30) == 2031
    with pytest.raises(ValueError, match="--start-year 9990: the plan's years 9990–10019 must be four-digit"):
        start_year_of(9990, 30)


def _snbi(path: Path) -> Path:
    """Four SNBI records (two urban, two rural), ratings (deck, superstructure, substructure) as inspectors give
    them; bridge numbers with leading zeros."""
    def record(bid: str, ratings: str, urban: str) -> dict[str, Any]:
        return {"BID01": bid, "BL01": 11, "BL02": "001", "BCL01": "S01", "BG16": 10000, "BC01": ratings[0],
                "BC02": ratings[1], "BC03": ratings[2], "BC04": "N", "BW01": 1970,
                "Features": [{"BF01": "H", "BF02": "C", "BH01": "3", "BH02": urban, "BH03": "Y", "BH09": 1000,
                              "BH10": 100, "BH17": 5, "Routes": [{"BRT01": "1"}]}],
                "Inspections": [{"BIE01": "2", "BIE02": "20250301", "BIE03": "20250315"}]}

    path.write_text(json.dumps([record("0001", "444", "47900"), record("00042", "356", "99999"),
                                record("B-7", "888", "47900"), record("000900", "555", "99999")]), encoding="utf-8")
    return path


def test_plan_writes_the_works_of_its_csv_beside_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inventory = _snbi(tmp_path / "state.json")
    out = tmp_path / "out" / "plan.csv"
    assert main(["plan", "--policy", "condition_based", *COMPONENTS, "--inventory", str(inventory), "--years", "3",
                 "--samples", "1", "--budget-usd", "1e9", "--format", "snbi-works", "--start-year", "2027",
                 "--out", str(out)]) == 0
    works = tmp_path / "out" / "plan.works.json"
    data = json.loads(works.read_text(encoding="utf-8"))
    # the same entries as plan.csv's snbi_work_code column, year 1 = 2027, a code of several components split
    expected: dict[str, list[dict[str, Any]]] = {}
    for row in csv.DictReader(out.open(encoding="utf-8")):
        for code in filter(None, row["snbi_work_code"].split("+")):
            expected.setdefault(row["bridge_id"], []).append({"BW02": 2026 + int(row["year"]), "BW03": code})
    got = {r["BID01"]: sorted(r["Works"], key=lambda w: w["BW02"]) for r in data}
    assert got == {k: sorted(v, key=lambda w: w["BW02"]) for k, v in expected.items()}
    # condition_based treats the two poor bridges in year 1 (0001 rated 4/4/4, 00042 with a deck at 3) with a
    # treatment of all three components, and leaves the good one (8/8/8) alone
    assert {w["BW03"] for w in got["0001"] if w["BW02"] == 2027} == {"DK1", "SP2", "SB2"}
    assert {w["BW03"] for w in got["00042"] if w["BW02"] == 2027} == {"DK1", "SP2", "SB2"}
    assert "B-7" not in got and {"0001", "00042"} <= {r["BID01"] for r in data}  # leading zeros kept
    assert all(2027 <= w["BW02"] <= 2029 for r in data for w in r["Works"])
    n = sum(len(r["Works"]) for r in data)
    assert f"SNBI works: {works} ({n} Works entries on {len(data)} bridges, BW02 2027–2029)" in capsys.readouterr().out


def test_an_out_ending_in_json_is_the_works_file(tmp_path: Path) -> None:
    inventory = _snbi(tmp_path / "state.json")
    assert main(["plan", "--policy", "do_nothing", *COMPONENTS, "--inventory", str(inventory), "--years", "2",
                 "--samples", "1", "--format", "snbi-works", "--out", str(tmp_path / "o" / "works.json")]) == 0
    assert {p.name for p in (tmp_path / "o").iterdir()} == {"works.json", "works.csv", "works_summary.csv",
                                                            "works.png", "works.xlsx"}
    assert json.loads((tmp_path / "o" / "works.json").read_text(encoding="utf-8")) == []  # do nothing: no work


@pytest.mark.parametrize(("argv", "message"), [
    (["--fleet-model", "plan-2025", "--format", "snbi-works"],
     "--format snbi-works: this fleet is on a continuous fleet model, whose actions have no SNBI work code; plan on "
     "the component model (--fleet-model components-2026) or leave --format out"),
    ([*COMPONENTS, "--start-year", "2030"], "--start-year 2030 dates the SNBI works file: give it with --format "
                                            "snbi-works"),
    ([*COMPONENTS, "--format", "snbi-works", "--start-year", "999"], "--start-year 999: the plan's years 999–1000"),
])
def test_what_cannot_be_written_is_refused_in_one_line_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    out = tmp_path / "o"
    out.mkdir()
    assert main(["plan", "--policy", "condition_based", "--years", "2", "--samples", "1", *argv,
                 "--out", str(out / "p.csv")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not any(out.iterdir())


def test_a_run_on_a_continuous_model_is_refused_before_its_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    cfg = SimpleNamespace(fleet=FleetConfig.named("plan-2025"))
    monkeypatch.setattr(work_plan, "load_policy", lambda run_dir, device: (cfg, None))
    monkeypatch.setattr(work_plan, "compute_plan", lambda *a, **k: pytest.fail("the plan was computed"))
    assert main(["plan", str(run), "--format", "snbi-works", "--years", "2"]) == 2
    assert (f"--format snbi-works: the run {run} is on a continuous fleet model"
            in capsys.readouterr().err)
    assert not any(run.iterdir())
