"""docs/results.md's table format (bridgefleet.bench.results_page): the provenance line and the Markdown table."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from bridgefleet.bench import results_page


def test_markdown_table_aligns_numbers_right_and_checks_rows() -> None:
    text = results_page.markdown_table(("fleet", "bound", "planner"), [("dc-2019", "-7,259.6", -7375.6)])
    assert text.splitlines() == ["| fleet | bound | planner |", "|---|---:|---:|", "| dc-2019 | -7,259.6 | -7375.6 |"]
    left = results_page.markdown_table(("a", "b"), [(1, 2)], numeric=(False, False))
    assert left.splitlines()[1] == "|---|---|"
    with pytest.raises(ValueError, match="row 1 has 1 cells for 2 columns"):
        results_page.markdown_table(("a", "b"), [(1, 2), (3,)])


def test_command_is_written_as_typed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "benchmarks" / "env_throughput.py"
    assert results_page.command([str(script), "--seconds", "3"]) == "python benchmarks/env_throughput.py --seconds 3"
    assert results_page.command(["/venv/bin/bridgefleet", "bench", "--presets", "a b"]) == \
        "bridgefleet bench --presets 'a b'"


def test_results_table_has_title_provenance_and_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(results_page, "machine", lambda: "2 cores, CPU X")
    monkeypatch.setattr(results_page, "commit", lambda: "abc1234")
    line = results_page.provenance("bridgefleet bound", date=dt.date(2026, 12, 7))
    assert line == "Machine: 2 cores, CPU X; date: 2026-12-07; commit: abc1234; command: `bridgefleet bound`"
    parts = results_page.results_table("Scale", ("n",), [(1,)], cmd="x").split("\n\n")
    assert parts[0] == "### Scale" and parts[1].endswith("command: `x`") and parts[2].startswith("| n |")


def test_commit_outside_a_checkout_is_unknown(tmp_path: Path) -> None:
    assert results_page.commit(tmp_path) == "unknown"
