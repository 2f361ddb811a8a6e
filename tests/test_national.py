"""`bridgefleet bound --inventory 'DIR/*.txt'`: several inventories, each its own problem, one table with a total."""

import json
from pathlib import Path

import pytest

from bridgefleet.cli import main

DC = Path(__file__).resolve().parents[1] / "src" / "bridgefleet" / "data" / "DC19.txt"
FAST = ["--max-urban", "20", "--episodes", "2", "--quiet", "--bound-iters", "6", "--grid-step", "0.1"]


@pytest.fixture
def states(tmp_path):
    """Two small 'states': DC's bridges 1–40 and 41–80 in two NBI files."""
    lines = DC.read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "a.txt").write_text("".join(lines[:41]), encoding="utf-8")
    (tmp_path / "b.txt").write_text("".join([lines[0], *lines[41:81]]), encoding="utf-8")
    return tmp_path


def test_each_file_is_its_own_problem_and_the_total_sums_them(states, capsys):
    out = states / "n.json"
    assert main(["bound", "--inventory", str(states / "*.txt"), *FAST, "--json", str(out)]) == 0
    table = capsys.readouterr().out
    data = json.loads(out.read_text())
    files = data["files"]
    assert [Path(r["file"]).name for r in files] == ["a.txt", "b.txt"]
    assert [r["bridges"] for r in files] == [40, 40] and data["total"]["bridges"] == 80
    for key in ("deck_m2", "budget_usd", "bound", "planner", "spend_usd", "seconds"):
        assert data["total"][key] == pytest.approx(files[0][key] + files[1][key])
    assert all(r["seconds"] > 0 for r in files)  # each file's own wall time
    for r in files:  # the same bound as the file alone
        single = states / f"{Path(r['file']).stem}.json"
        assert main(["bound", "--inventory", r["file"], *FAST, "--json", str(single)]) == 0
        assert r["bound"] == pytest.approx(json.loads(single.read_text())["bound"]["mean"], rel=1e-12)
    assert "| total | 80 |" in table and "a.txt" in table


def test_a_pattern_that_matches_nothing_is_one_line(tmp_path, capsys):
    assert main(["bound", "--inventory", str(tmp_path / "*.txt"), *FAST]) == 2
    err = capsys.readouterr().err
    assert "no file matches" in err and "Traceback" not in err


def test_a_bad_file_is_refused_before_any_file_is_solved(states, capsys, monkeypatch):
    from bridgefleet.evaluation import national

    (states / "z.txt").write_text("", encoding="utf-8")  # sorts last: an empty "state"
    solved = []
    monkeypatch.setattr(national, "file_row", lambda c, *a, **k: solved.append(c.inventory))
    assert main(["bound", "--inventory", str(states / "*.txt"), *FAST]) == 2
    err = capsys.readouterr().err
    assert "z.txt" in err and "the file is empty" in err and "Traceback" not in err
    assert solved == []  # a.txt and b.txt were read and checked, not solved


def test_several_files_record_the_rule_and_refuse_a_certified_step(states, capsys):
    out = states / "n.json"
    assert main(["bound", "--inventory", str(states / "*.txt"), *FAST, "--max-poor-deck-area", "0.1",
                 "--json", str(out)]) == 0
    assert "rule: at most 10% of deck area poor in expectation every year, priced" in capsys.readouterr().out
    settings = json.loads(out.read_text())["settings"]
    assert settings["max_poor_deck_area"] == 0.1 and settings["episodes"] == 2
    assert main(["bound", "--inventory", str(states / "*.txt"), *FAST, "--certify-step", "0.05"]) == 2
    assert "--certify-step: the certified bound is for one inventory" in capsys.readouterr().err


def test_a_pattern_given_to_another_command_says_bound_reads_patterns(states, capsys):
    assert main(["evaluate", "--inventory", str(states / "*.txt"), "--episodes", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "several files by a pattern: `bridgefleet bound` only" in err


def test_on_the_component_model_each_file_gets_the_exact_bound(states):
    # the two 'states' on the component model: each row's bound is the exact one of the file alone (a grid planner
    # on component fleets once gave the continuous model's bound there); --grid-step is refused
    quick = ["--max-urban", "20", "--episodes", "1", "--quiet", "--fleet-model", "components-2026"]
    out = states / "n.json"
    assert main(["bound", "--inventory", str(states / "*.txt"), *quick, "--json", str(out)]) == 0
    files = json.loads(out.read_text())["files"]
    for r in files:
        single = states / f"{Path(r['file']).stem}.json"
        assert main(["bound", "--inventory", r["file"], *quick, "--json", str(single)]) == 0
        alone = json.loads(single.read_text())["bound"]
        assert alone["exact"] and r["bound"] == pytest.approx(alone["mean"], rel=1e-3)
    assert main(["bound", "--inventory", str(states / "*.txt"), *quick, "--grid-step", "0.1"]) == 2
