"""Issue 26 A and E: strings from an inventory cannot break or script the outputs, files are UTF-8 whatever the
locale, and a failed write leaves nothing behind."""

import csv
import errno
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_report import CHROMIUM, _render_checked

from bridgefleet import outputs
from bridgefleet.cli import main
from bridgefleet.config.training import TrainConfig
from bridgefleet.outputs import atomic_open, csv_cell, write_csv
from bridgefleet.report import build_report, json_script
from bridgefleet.training.runner import train

HOSTILE = ["<!--<script>", "</script><b>x", '"><img src=x onerror=alert(1)>',
           "</script><script>document.title='pwned'</script>", '=HYPERLINK("http://evil.example","x")', "+1+2",
           "-2+3", "@SUM(A1:A2)", "\tTAB", "MOST-Ł1", "a\u2028b", "&amp;"]
IDS = HOSTILE + [f"B{i:02d}" for i in range(24 - len(HOSTILE))]
MAPPING = ("id: id\ncondition: cond\nage: age\ndeck_area: area\naadt: aadt\n"
           "cluster: {column: cls, urban: [U], rural: [R]}\n")


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    """A tiny per-bridge run on a 24-bridge mapped CSV whose structure numbers are hostile."""
    d = tmp_path_factory.mktemp("hostile")
    table = d / "table.csv"
    with table.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "cond", "age", "area", "aadt", "cls"])
        for i, bid in enumerate(IDS):
            w.writerow([bid, 4 + i % 5, 10 + i, 200 + 10 * i, 1000 + 100 * i, "U" if i % 2 else "R"])
    (d / "mapping.yaml").write_text(MAPPING, encoding="utf-8")
    cfg = {"agent": "bridge", "bridge_hidden": [16], "batch_size": 16, "learning_starts": 16,
           "buffer_capacity": 2000, "num_envs": 2, "episodes": 4, "eval_every": 2, "eval_episodes": 2,
           "checkpoint_every": 2, "threads": 1, "amp": False,
           "fleet": {"horizon_years": 2, "inventory": str(table), "inventory_mapping": str(d / "mapping.yaml")}}
    out = d / "run"
    train(TrainConfig.from_dict(cfg), out, progress=False)
    return out


def test_json_script_escapes_what_could_end_the_block():
    text = json_script(HOSTILE)
    assert not re.search(r"[<>&\u2028\u2029]", text)
    assert "\\u003C!--\\u003Cscript\\u003E" in text
    assert json.loads(text) == HOSTILE  # the page reads back the same strings


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (.ci/run installs Debian's chromium)")
def test_hostile_structure_numbers_render_as_text_and_run_no_script(hostile_run, tmp_path):
    out = build_report(hostile_run, tmp_path / "r.html", episodes=2, samples=1, bound=False)
    dom, _ = _render_checked(out, tmp_path, ("fleet", "policies", "plan", "training"))
    rows = re.findall(r"<tr><td>(\d+)</td><td>(.*?)</td><td>(?:urban|rural)</td>", dom)
    assert len(rows) == 48  # 24 bridges × 2 years, every one
    import html

    from bridgefleet.inventory.load import load_inventory

    shown = {html.unescape(r[1]) for r in rows}
    inv = load_inventory(str(hostile_run.parent / "table.csv"), mapping=str(hostile_run.parent / "mapping.yaml"))
    assert shown == set(inv.bridge_id.tolist())  # as text, exactly as read from the inventory
    assert "</script><b>x" in shown and "<!--<script>" in shown and "><img src=x onerror=alert(1)>" in shown
    assert "<img" not in dom.split('id="plan-table"')[1].split("</table>")[0]  # no element made from an id

    assert "pwned" not in dom.split("<title>")[1].split("</title>")[0]
    assert "<title>Bridge maintenance plan — table.csv</title>" in dom


def test_hostile_structure_numbers_in_the_bridge_panel_are_escaped(monkeypatch, hostile_run, tmp_path):
    import html

    from bridgefleet.report import data as report_data
    from bridgefleet.report.bridges import BridgeRow, Panel, Treatment

    def hostile_panel(plan, *args, **kwargs):  # every hostile number in a row, its reason, its planner and treatment
        rows = [BridgeRow(bid, "urban", True, 100.0, "5/5/5", bid, bid, 1.0, 2.0, 2.0, 1.0, None, f"why {bid}",
                          planner=bid, agree=False, never=bid,
                          treatments=[Treatment(bid, bid, 1.0, 2.0, 2.0, 3.0, 4.0, 5.0, True)]) for bid in HOSTILE]
        return Panel(rows, len(rows), len(rows), len(rows), HOSTILE[0])

    monkeypatch.setattr(report_data, "year_one_panel", hostile_panel)
    text = build_report(hostile_run, tmp_path / "r.html", episodes=2, samples=1, bound=False).read_text()
    panel = text.split('<section id="bridges">')[1].split("</section>")[0]
    assert "<img" not in panel and "<script" not in panel and "<!--" not in panel and "</script" not in panel
    named = [html.unescape(b) for b in re.findall(r'data-bridge="([^"]*)"', panel)]
    assert named == HOSTILE  # each as text, exactly as read
    import markupsafe

    assert str(markupsafe.escape('"><img src=x onerror=alert(1)>')) in panel  # Jinja's escaping of the text


def test_a_missing_template_field_fails_the_render(monkeypatch, hostile_run, tmp_path):
    import jinja2

    from bridgefleet.report import data as report_data

    monkeypatch.setattr(report_data.FleetToday, "source_name", property(lambda self: jinja2.Undefined().missing))
    with pytest.raises(jinja2.UndefinedError):
        build_report(hostile_run, tmp_path / "r.html", episodes=2, samples=1, bound=False)
    assert not list(tmp_path.glob(".*.tmp")) and not (tmp_path / "r.html").exists()


def test_csv_cells_that_are_formulas_become_text_and_numbers_stay_numbers():
    assert csv_cell('=HYPERLINK("http://evil.example","x")') == '\'=HYPERLINK("http://evil.example","x")'
    assert [csv_cell(v) for v in ("+1+2", "-2+3", "@SUM(A1:A2)", "\tTAB", "\rx")] == [
        "'+1+2", "'-2+3", "'@SUM(A1:A2)", "'\tTAB", "'\rx"]
    assert [csv_cell(v) for v in ("-0.50", "+3", "1e5", -2, 3.5, "B01")] == ["-0.50", "+3", "1e5", -2, 3.5, "B01"]
    # what Python's float takes and a spreadsheet does not read as a number is text too
    assert [csv_cell(v) for v in ("-1_0", "-Infinity", "+nan", "-5.", "-.5")] == ["'-1_0", "'-Infinity", "'+nan",
                                                                                 "-5.", "-.5"]


def test_plan_csv_is_utf8_and_formula_safe_under_lc_all_c(hostile_run, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONUTF8", "PYTHONIO"))}
    env.update(LC_ALL="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0", PYTHONPATH=os.pathsep.join(sys.path))
    out = tmp_path / "plan.csv"
    proc = subprocess.run([sys.executable, "-m", "bridgefleet.cli", "plan", str(hostile_run), "--out", str(out),
                           "--samples", "1", "--years", "2", "--device", "cpu"], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.glob(".*.tmp"))
    with out.open(newline="", encoding="utf-8") as f:
        ids = {r["bridge_id"] for r in csv.DictReader(f)}
    assert "MOST-Ł1" in ids
    assert '\'=HYPERLINK("http://evil.example","x")' in ids and "'+1+2" in ids and "'@SUM(A1:A2)" in ids
    assert not any(i.startswith(("=", "+", "-", "@", "\t", "\r")) for i in ids)
    # plan.xlsx beside it: the same rows, every structure number a text cell as written (never a formula)
    import openpyxl

    sheet = openpyxl.load_workbook(tmp_path / "plan.xlsx").active
    header = [c.value for c in sheet[1]]
    col = header.index("bridge_id")
    cells = [row[col] for row in sheet.iter_rows(min_row=2)]
    assert {csv_cell(c.value) for c in cells} == ids and all(c.data_type == "s" for c in cells)
    assert '=HYPERLINK("http://evil.example","x")' in {c.value for c in cells}
    assert all(isinstance(row[header.index("cost_usd")].value, (int, float)) for row in sheet.iter_rows(min_row=2))


def _disk_full(monkeypatch):
    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(outputs.os, "replace", full)


def test_atomic_writes_leave_nothing_on_any_error(tmp_path, monkeypatch):
    target = tmp_path / "t.csv"
    target.write_text("old", encoding="utf-8")
    for exc in (KeyboardInterrupt, RuntimeError):
        with pytest.raises(exc), atomic_open(target) as f:
            f.write("half")
            raise exc
    _disk_full(monkeypatch)
    with pytest.raises(OSError) as info:
        write_csv(target, [["a"], ["b"]])
    assert str(info.value) == f"[Errno 28] No space left on device: '{target}'"
    assert target.read_text(encoding="utf-8") == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


@pytest.mark.parametrize("command", ["plan", "report", "evaluate"])
def test_each_writer_on_a_full_disk_says_one_line_and_leaves_nothing(hostile_run, tmp_path, monkeypatch, capsys,
                                                                    command):
    _disk_full(monkeypatch)
    out = tmp_path / "out"
    argv = {"plan": ["plan", str(hostile_run), "--out", str(out / "plan.csv"), "--samples", "1", "--years", "1"],
            "report": ["report", str(hostile_run), "--out", str(out / "r.html"), "--episodes", "2", "--samples",
                       "1", "--no-bound", "--quiet"],
            "evaluate": ["evaluate", "--policy", "worst_first", "--episodes", "2", "--no-bound", "--quiet",
                         "--json", str(out / "e.json")]}[command]
    out.mkdir()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"bridgefleet {command}: error: No space left on device: {out}")
    assert list(out.iterdir()) == []


def test_sweep_tables_on_a_full_disk_leave_nothing(tmp_path, monkeypatch):
    from bridgefleet.sweep.results import write_results

    (tmp_path / "trials").mkdir()
    _disk_full(monkeypatch)
    with pytest.raises(OSError, match="No space left on device"):
        write_results(tmp_path, ["lr"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trials"]


def test_every_text_file_the_product_opens_says_its_encoding():
    src = Path(__file__).resolve().parents[1] / "src" / "bridgefleet"
    call = re.compile(r"(\.open|\bopen|\.write_text|\.read_text)\(")
    for path in src.rglob("*.py"):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if not call.search(line) or "os.open(" in line or ("json.loads(" in line and "read_text" not in line):
                continue
            statement = line + (lines[i + 1] if i + 1 < len(lines) else "")
            if any(m in statement for m in ('"rb"', '"wb"', "binary")) or path.name == "outputs.py":
                continue
            assert "encoding" in statement or "(\"utf-8\")" in statement, f"{path.name}:{i + 1}: {line.strip()}"


def test_no_output_replaces_what_the_command_reads(hostile_run, tmp_path, capsys):
    """Defects a new user found: `--out` over the inventory, the mapping or the run's model was written."""
    table, mapping = hostile_run.parent / "table.csv", hostile_run.parent / "mapping.yaml"
    kept = {p: p.read_bytes() for p in (table, mapping, hostile_run / "final.pt", hostile_run / "config.yaml")}
    for argv, what in (
            (["plan", str(hostile_run), "--out", str(table)], "the run's inventory"),
            (["plan", "--policy", "do_nothing", "--inventory", str(table), "--mapping", str(mapping), "--out",
              str(mapping)], "the column mapping"),
            (["plan", str(hostile_run), "--out", str(hostile_run / "final.pt")], "the run's final.pt"),
            (["report", str(hostile_run), "--no-bound", "--out", str(hostile_run / "config.yaml")],
             "the run's config.yaml"),
            (["evaluate", str(hostile_run), "--json", str(hostile_run / "final.pt")], "the run's final.pt")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"is {what}, which this command reads: give another file" in err and "Traceback" not in err
    assert all(p.read_bytes() == data for p, data in kept.items())
    # a path without a suffix is a folder: an existing file of that name is refused, not overwritten
    (tmp_path / "afile").write_text("mine")
    assert main(["plan", str(hostile_run), "--out", str(tmp_path / "afile")]) == 2
    assert "is a file, and a path without a suffix is taken as a folder" in capsys.readouterr().err
    assert (tmp_path / "afile").read_text() == "mine" and not (tmp_path / "afile_summary.csv").exists()


def test_a_run_plans_on_another_mapped_table_and_records_absolute_paths(hostile_run, tmp_path, monkeypatch, capsys):
    """`plan RUN --inventory T --mapping M` reads T with M (the run's own mapping otherwise); a run trained from a
    relative path records it absolute, so it opens from any folder."""
    from bridgefleet.config import FleetConfig
    from bridgefleet.inventory.fleet import absolute_files

    table, mapping = hostile_run.parent / "table.csv", hostile_run.parent / "mapping.yaml"
    other = tmp_path / "other.csv"
    header = "id,cond,age,area,aadt,cls"
    other.write_text(table.read_text(encoding="utf-8").replace(header, header.upper()), encoding="utf-8")
    upper = MAPPING
    for key in ("id", "cond", "age", "area", "aadt"):
        upper = upper.replace(f": {key}\n", f": {key.upper()}\n")
    (tmp_path / "upper.yaml").write_text(upper.replace("column: cls", "column: CLS"), encoding="utf-8")
    out = tmp_path / "p.csv"
    assert main(["plan", str(hostile_run), "--inventory", str(other), "--samples", "1", "--out", str(out)]) == 2
    assert "column id" in capsys.readouterr().err  # the run's mapping does not read the upper-case table
    assert main(["plan", str(hostile_run), "--inventory", str(other), "--mapping", str(tmp_path / "upper.yaml"),
                 "--samples", "1", "--years", "2", "--out", str(out)]) == 0
    assert "never updated" not in capsys.readouterr().err  # trained: the second vector episode updates
    assert len(list(csv.reader(out.open(encoding="utf-8")))) == 1 + 2 * len(IDS)
    assert main(["plan", str(hostile_run), "--mapping", str(mapping), "--out", str(out)]) == 2
    assert f"--mapping {mapping}: reads the table --inventory gives" in capsys.readouterr().err
    monkeypatch.chdir(hostile_run.parent)
    cfg = absolute_files(FleetConfig(inventory="table.csv", inventory_mapping="mapping.yaml"))
    assert (cfg.inventory, cfg.inventory_mapping) == (str(table), str(mapping))
    assert absolute_files(FleetConfig(inventory="dc-2019")).inventory == "dc-2019"  # a bundled name stays a name


def test_an_untrained_run_says_so_wherever_it_is_used(tmp_path, capsys):
    """A run whose network never updated (one vector episode: its transitions are stored at its end) is named
    by evaluate, plan and report, not only by train."""
    cfg = {"agent": "bridge", "bridge_hidden": [8], "batch_size": 16, "learning_starts": 16, "num_envs": 2,
           "episodes": 2, "eval_every": 2, "eval_episodes": 2, "threads": 1, "amp": False,
           "fleet": {"n_urban": 2, "n_rural": 2, "horizon_years": 2}}
    run = tmp_path / "run"
    train(TrainConfig.from_dict(cfg), run, progress=False)
    assert "warning: no learner update happened" in capsys.readouterr().err
    for argv in (["evaluate", str(run), "--episodes", "2", "--no-bound", "--quiet"],
                 ["plan", str(run), "--samples", "1", "--years", "2", "--out", str(tmp_path / "p.csv")]):
        assert main(argv) == 0
        assert f"warning: {run}: its network was never updated" in capsys.readouterr().err
