"""Issue 79, kind 5: a run knows what it was trained on. inputs.json records the SHA-256 of each file it read; a
resume on a changed inventory or mapping is refused in one line naming the file (nothing written), evaluate and
plan warn in one line and go on, and a run folder written before the record loads without a word."""

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from bridgefleet.cli import main
from bridgefleet.config import FleetConfig
from bridgefleet.inventory.load import bundled_path
from bridgefleet.runs import inputs
from bridgefleet.runs.inputs import INPUTS_FILE, input_files

TABLE = "id,cond,built,area,aadt,cls\n" + "".join(
    f"B{i},{5 + i % 3},{1960 + i},{100 + 10 * i},{1000 + 100 * i},{'u' if i < 3 else 'r'}\n" for i in range(6))
MAPPING = {"id": "id", "condition": "cond", "year_built": "built", "year": 2019, "deck_area": "area", "aadt": "aadt",
           "cluster": {"column": "cls", "urban": ["u"], "rural": ["r"]}}
TINY = {"preset": "sarsa", "agent": "bridge", "bridge_hidden": [16], "batch_size": 8, "learning_starts": 8,
        "buffer_capacity": 1000, "num_envs": 2, "episodes": 4, "eval_every": 2, "eval_episodes": 2,
        "checkpoint_every": 2, "threads": 1, "amp": False}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _extent(data: bytes) -> str:
    lines = data.count(b"\n")
    return f"{len(data):,} bytes in {lines:,} line{'s' if lines != 1 else ''}"


@pytest.fixture()
def run(tmp_path, capsys):
    """A 4-episode run on a 6-bridge mapped inventory, trained from a --config file: (run, table, mapping, config)."""
    table, mapping, config = tmp_path / "bridges.csv", tmp_path / "mapping.yaml", tmp_path / "train.yaml"
    table.write_text(TABLE)
    mapping.write_text(yaml.safe_dump(MAPPING))
    config.write_text(yaml.safe_dump({**TINY, "fleet": {"horizon_years": 2, "inventory": str(table),
                                                        "inventory_mapping": str(mapping)}}))
    out = tmp_path / "run"
    assert main(["train", "--config", str(config), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    return out, table, mapping, config


def _files(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()
            and not p.name.startswith(".bridgefleet.lock")}


def test_a_run_records_the_sha256_of_each_input_file(run):
    out, table, mapping, config = run
    record = json.loads((out / INPUTS_FILE).read_text())
    assert [(f["key"], f["given"], f["sha256"]) for f in record["files"]] == [
        ("inventory", str(table), _sha(table)), ("inventory_mapping", str(mapping), _sha(mapping)),
        ("--config", str(config), _sha(config))]
    # a bundled name is its file in the package: an inventory's, a component model's
    assert input_files(FleetConfig(inventory="dc-2019")) == [("inventory", "dc-2019", bundled_path("dc-2019"))]
    (key, given, path), = input_files(FleetConfig(component_model="massachusetts-2026"))
    assert (key, given, path.name) == ("component_model", "massachusetts-2026", "massachusetts-2026.yaml")


@pytest.mark.parametrize(("edit", "what"), [("table", "inventory"), ("mapping", "column mapping")])
def test_a_resume_after_an_input_was_edited_in_place_is_refused_naming_the_file(run, capsys, edit, what):
    out, table, mapping, _ = run
    path = {"table": table, "mapping": mapping}[edit]
    then, original = _sha(path), path.read_bytes()
    if edit == "table":
        path.write_text(TABLE.replace("B5,7,1965,150,1500,r", "B5,7,1965,150,9999,r"))  # one AADT edited
    else:
        path.write_text(yaml.safe_dump({**MAPPING, "cost_factor": 1.5}))
    before = _files(out)
    size_then = _extent(original)
    assert main(["train", "--resume", str(out), "--episodes", "6", "--quiet"]) == 2
    now = _sha(path)
    sizes = (f"{size_then} then and now, other content" if _extent(path.read_bytes()) == size_then else
             f"{size_then} then, {_extent(path.read_bytes())} now")
    assert capsys.readouterr().err == (
        f"bridgefleet train: error: {out}: its {what} {path} changed since the run was trained (SHA-256 {then[:12]} "
        f"then, {now[:12]} now; {sizes}); a resume would continue on another fleet: put the file back as it was, or "
        "train on it anew with --out\n")
    assert _files(out) == before  # nothing written
    path.write_text(TABLE if edit == "table" else yaml.safe_dump(MAPPING))  # put back: it resumes
    assert main(["train", "--resume", str(out), "--episodes", "6", "--quiet"]) == 0
    assert "changed since" not in capsys.readouterr().err


def test_a_resume_notes_an_edited_config_file_and_goes_on(run, capsys):
    out, _, _, config = run
    then, size = _sha(config), _extent(config.read_bytes())
    config.write_text(config.read_text() + "# another experiment\n")
    assert main(["train", "--resume", str(out), "--episodes", "6", "--quiet"]) == 0
    assert (f"note: {out}: its training config (--config) {config} changed since the run was trained (SHA-256 "
            f"{then[:12]} then, {_sha(config)[:12]} now; {size} then, {_extent(config.read_bytes())} now); a resume "
            "continues with the run's config.yaml, not it\n"
            in capsys.readouterr().err)


def test_evaluate_plan_and_report_on_an_edited_inventory_warn_in_one_line_and_go_on(run, capsys):
    out, table, _, _ = run
    then, size = _sha(table), _extent(table.read_bytes())
    table.write_text(TABLE.replace("B5,7,1965,150,1500,r", "B5,7,1965,150,9999,r"))
    line = (f"warning: {out}: its inventory {table} changed since the run was trained (SHA-256 {then[:12]} then, "
            f"{_sha(table)[:12]} now; {size} then and now, other content); its policy is applied to the file as it "
            "is now")
    assert main(["evaluate", str(out), "--episodes", "2", "--no-bound", "--quiet"]) == 0
    assert capsys.readouterr().err.splitlines().count(line) == 1
    inputs._warned.clear()  # once per process and file: each command is a process of its own
    assert main(["plan", str(out), "--years", "2", "--samples", "1", "--out", str(out.parent / "plan.csv")]) == 0
    assert capsys.readouterr().err.splitlines().count(line) == 1 and (out.parent / "plan.csv").is_file()
    inputs._warned.clear()
    report = out.parent / "report.html"
    assert main(["report", str(out), "--episodes", "2", "--samples", "1", "--no-bound", "--quiet", "--out",
                 str(report)]) == 0
    assert capsys.readouterr().err.splitlines().count(line) == 1 and report.is_file()


def test_a_run_folder_written_before_the_record_loads_without_a_warning(run, capsys):
    out, table, _, _ = run
    (out / INPUTS_FILE).unlink()  # as a run trained before inputs.json
    table.write_text(TABLE.replace("B5,7,1965,150,1500,r", "B5,7,1965,150,9999,r"))
    assert main(["evaluate", str(out), "--episodes", "2", "--no-bound", "--quiet"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["train", "--resume", str(out), "--episodes", "6", "--quiet"]) == 0


def test_a_relative_component_model_is_the_file_the_run_read_from_any_folder(tmp_path, monkeypatch, capsys):
    """Issue 79 kind 5 (probe of 439d36d): a run trained on ``component_model: cm.yaml`` (relative) stored it
    relative, so a resume from another folder silently read that folder's cm.yaml. Now config.yaml holds the
    absolute path; and a run that stored it relative (as runs did) is checked against the file it would read now."""
    from bridgefleet.sim.components import BUNDLED

    model = Path(BUNDLED["massachusetts-2026"]).read_text()
    monkeypatch.chdir(tmp_path)
    Path("cm.yaml").write_text(model)
    Path("train.yaml").write_text(yaml.safe_dump({**TINY, "fleet": {
        "model": "components-2026", "component_model": "cm.yaml", "n_urban": 2, "n_rural": 2, "horizon_years": 2}}))
    assert main(["train", "--config", "train.yaml", "--out", "run", "--quiet"]) == 0
    stored = yaml.safe_load(Path("run/config.yaml").read_text())["fleet"]["component_model"]
    assert stored == str(tmp_path / "cm.yaml")
    other = tmp_path / "other"
    other.mkdir()
    (other / "cm.yaml").write_text(model.replace("coupling: 0.397", "coupling: 0.9"))
    assert (other / "cm.yaml").read_text() != model
    monkeypatch.chdir(other)
    capsys.readouterr()
    assert main(["train", "--resume", "../run", "--episodes", "6", "--quiet"]) == 0  # reads tmp_path/cm.yaml
    # a run folder as runs were written before: the relative path in config.yaml and inputs.json
    monkeypatch.chdir(tmp_path)
    for name in ("config.yaml", INPUTS_FILE):
        path = Path("run") / name
        path.write_text(path.read_text().replace(str(tmp_path / "cm.yaml"), "cm.yaml"))
    monkeypatch.chdir(other)
    then, now = _sha(tmp_path / "cm.yaml"), _sha(other / "cm.yaml")
    capsys.readouterr()
    assert main(["train", "--resume", "../run", "--episodes", "8", "--quiet"]) == 2
    sizes = f"{_extent((tmp_path / 'cm.yaml').read_bytes())} then, {_extent((other / 'cm.yaml').read_bytes())} now"
    assert capsys.readouterr().err.splitlines()[-1] + "\n" == (
        f"bridgefleet train: error: ../run: its component model cm.yaml ({other / 'cm.yaml'}) changed since the run "
        f"was trained (SHA-256 {then[:12]} then, {now[:12]} now; {sizes}); a resume would continue on another fleet: "
        "put the file back as it was, or train on it anew with --out\n")


def test_evaluate_on_a_run_whose_config_yaml_was_edited_warns_which_field(run, capsys):
    """Issue 79's probe (kind 5): evaluate, plan and report on a run whose config.yaml was hand-edited used the
    checkpoint's settings without a word."""
    out = run[0]
    path = out / "config.yaml"
    data = yaml.safe_load(path.read_text())
    data["fleet"]["horizon_years"] = 5
    path.write_text(yaml.safe_dump(data))
    assert main(["evaluate", str(out), "--episodes", "2", "--no-bound", "--quiet"]) == 0
    assert (f"warning: {path}: fleet.horizon_years is 5 but final.pt was trained with 2; its trained settings are "
            "used (train the new config with --out to use it)") in capsys.readouterr().err.splitlines()


def test_a_run_trained_on_a_mapped_csv_plans_an_nbi_file_by_its_own_layout(run, capsys, tmp_path):
    """Issue 79's probe (kind 5): ``plan RUN --inventory NBI_FILE`` applied the run's column mapping to the NBI file
    and failed 'missing required column(s) id, cond …'. An NBI or SNBI file is read by its own layout; another
    table keeps the run's mapping unless --mapping gives one."""
    out, table, _, _ = run
    plan = tmp_path / "dc" / "plan.csv"
    assert main(["plan", str(out), "--inventory", "dc-2019", "--years", "1", "--samples", "1", "--out",
                 str(plan)]) == 0
    assert len(plan.read_text(encoding="utf-8").splitlines()) == 1 + 244  # DC's 244 bridges, one row each, year 1
    from bridgefleet.inventory.fleet import on_inventory

    mapped = FleetConfig(inventory=str(table), inventory_mapping="m.yaml")
    other = tmp_path / "other.csv"  # another table of the same layout keeps the run's mapping
    other.write_text(TABLE)
    assert on_inventory(mapped, str(other)).inventory_mapping == "m.yaml"
    assert on_inventory(mapped, "dc-2019").inventory_mapping is None
    assert on_inventory(mapped, str(other), "n.yaml").inventory_mapping == "n.yaml"
