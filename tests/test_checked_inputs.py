"""Issue 26 D: every value is checked where it enters (mapping constants, years built, sweep spaces, free
actions), with the one line each now gives."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from bridgefleet.cli import main
from bridgefleet.config import ConfigError
from bridgefleet.inventory.load import InventoryError, read_csv_inventory, read_nbi
from bridgefleet.sweep.space import load_space

CF = "must be in [0.01, 100] (the state's unit cost over DC's; the 2017 costs run 0.57 to 1.33)"
AS = "must be in [1e-6, 1,000,000] (the multiplier turning deck_area, or length × width, into m²; mm² is 1e-6)"

TABLE = ("id,cond,built,area,aadt\n" + "".join(f"B{i},7,{1950 + i},100,1000\n" for i in range(12))
         + "C,6,{built},150,800\n")
MAPPING = {"id": "id", "condition": "cond", "year_built": "built", "year": 2019, "deck_area": "area",
           "aadt": "aadt", "cluster": "rural"}


def _table(tmp_path: Path, built: str = "1990") -> Path:
    p = tmp_path / "table.csv"
    p.write_text(TABLE.format(built=built))
    return p


@pytest.mark.parametrize(("key", "value", "message"), [
    ("cost_factor", ".nan", f"mapping key 'cost_factor' = nan: {CF}"),
    ("cost_factor", "-1", f"mapping key 'cost_factor' = -1: {CF}"),
    ("cost_factor", ".inf", f"mapping key 'cost_factor' = inf: {CF}"),
    ("area_scale", ".nan", f"mapping key 'area_scale' = nan: {AS}"),
    ("area_scale", "0", f"mapping key 'area_scale' = 0: {AS}"),
    ("year", "2019.5", "mapping key 'year' = 2019.5: must be a whole number in [1, 9,999] (a year)"),
])
def test_mapping_constants_nan_infinite_or_out_of_range_are_refused_naming_the_key(tmp_path, key, value, message):
    m = tmp_path / "mapping.yaml"
    m.write_text(yaml.safe_dump({k: v for k, v in MAPPING.items() if k != key}) + f"{key}: {value}\n")
    with pytest.raises(InventoryError) as exc:
        read_csv_inventory(_table(tmp_path), m)
    assert str(exc.value) == f"{m}: {message}"


def test_year_built_0_is_dropped_by_both_readers_alike(tmp_path):
    for built in ("0", "0000", "1699"):
        inv = read_csv_inventory(_table(tmp_path, built), MAPPING)
        assert inv.kept == 12 and inv.age.max() == 69  # C is not kept aged 2,019 years
        assert inv.dropped == [(14, f"bad value: column built = {built!r}: year built outside 1700–2019 "
                                   "(inventory year)")]
    from test_inventory import nbi_text, write

    nbi = read_nbi(write(tmp_path, nbi_text([{}] * 12 + [{"YEAR_BUILT_027": "0000"}])))
    assert nbi.kept == 12
    assert nbi.dropped == [(14, "bad value: column YEAR_BUILT_027 = '0000': year built outside 1700–2019 "
                               "(inventory year)")]


def test_an_age_column_has_the_same_rule(tmp_path):
    p = tmp_path / "ages.csv"
    p.write_text("id,cond,age,area,aadt\n" + "".join(f"B{i},7,{20 + i},100,1000\n" for i in range(12))
                 + "C,5,2019,200,500\n")
    inv = read_csv_inventory(p, {**{k: v for k, v in MAPPING.items() if k != "year_built"}, "age": "age"})
    assert inv.kept == 12
    assert inv.dropped == [(14, "bad value: column age = '2019': age above 319 years (built before 1700)")]


def _space(tmp_path, space):
    p = tmp_path / "space.yaml"
    p.write_text(yaml.safe_dump({"preset": "sarsa", "fixed": {"episodes": 32}, "space": space}))
    return p


@pytest.mark.parametrize(("space", "message"), [
    ({"n_step": {"uniform": [1, 4]}},
     "field 'n_step' = 1.0 (uniform draws any number in [1, 4]): training option n_step = 1.0: must be a "
     "whole number"),
    ({"eps_decay_fraction": {"uniform": [0.5, 1.5]}},
     "field 'eps_decay_fraction' = 1.5 (uniform draws any number in [0.5, 1.5]): training option "
     "eps_decay_fraction = 1.5: must be in [0.001, 1] (a share of the episodes)"),
    ({"double": {"uniform": [0, 1]}},
     "field 'double' = 0.0 (uniform draws any number in [0, 1]): training option double = 0.0: must be true or "
     "false"),
    ({"lr": {"choice": [0.001, -0.1]}}, "field 'lr' = -0.1: training option lr = -0.1: must be in [1e-8, 1] (Adam's "
     "learning rate; default 1e-4; a smaller step is lost in 32-bit weights)"),
    ({"weight_average": {"uniform": [0.5, 1.0]}},
     "field 'weight_average' = 1.0 (uniform draws any number in [0.5, 1.0]): training option weight_average = 1.0: "
     "must be in [0.01, 0.999] (the average's weight on itself; 1 would never move it), or left out"),
])
def test_every_kind_of_sweep_value_is_checked_for_type_and_both_ends(tmp_path, space, message):
    p = _space(tmp_path, space)
    with pytest.raises(ConfigError) as exc:
        load_space(p)
    assert str(exc.value) == f"{p}: {message}"


def test_a_float_field_accepts_uniform(tmp_path):
    assert load_space(_space(tmp_path, {"lr": {"uniform": [0.0005, 0.002]}})).dims["lr"] == ("uniform",
                                                                                            [0.0005, 0.002])


FREE = {"unit_costs_usd_per_m2": [0, 0, 131, 1698, 2497], "horizon_years": 3}


def test_a_free_action_is_handled_by_the_planner_and_train(tmp_path, capsys):
    # A unit cost of 0 raised ZeroDivisionError in the knapsack (planner and per-bridge agent).
    cfg = tmp_path / "free.yaml"
    cfg.write_text(yaml.safe_dump(FREE))
    assert main(["evaluate", "--config", str(cfg), "--policy", "lagrangian", "--episodes", "2", "--bound-iters",
                 "2", "--quiet"]) == 0
    assert "| lagrangian |" in capsys.readouterr().out
    tcfg = tmp_path / "train.yaml"
    tcfg.write_text(yaml.safe_dump({"preset": "sarsa", "episodes": 2, "num_envs": 2, "learning_starts": 10,
                                    "batch_size": 16, "buffer_capacity": 1000, "eval_every": 2, "eval_episodes": 2,
                                    "threads": 1, "amp": False, "bridge_hidden": [8], "fleet": FREE}))
    assert main(["train", "--config", str(tcfg), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    assert (tmp_path / "run" / "final.pt").is_file()
    # the default preset (fitted to the planner, benefits per cost-equivalent USD): a free action's is 0, no NaN
    dcfg = tmp_path / "distill.yaml"
    dcfg.write_text(yaml.safe_dump({"num_envs": 2, "teacher_levels": [1.0], "dagger_rounds": 0, "fit_epochs": 2,
                                    "batch_size": 16, "eval_episodes": 2, "threads": 1, "amp": False,
                                    "bridge_hidden": [8], "fleet": FREE}))
    assert main(["train", "--config", str(dcfg), "--out", str(tmp_path / "distilled"), "--quiet"]) == 0
    assert np.isfinite(json.loads((tmp_path / "distilled" / "summary.json").read_text())["final_eval_return"])
    assert np.isfinite(yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["fleet"]["discount"])


@pytest.mark.parametrize(("extra", "message"), [
    (["--budgets", "0.5,,1"], "--budgets '0.5,,1': an empty entry"),
    (["--budgets", ""], "--budgets '': an empty entry"),
    (["--budgets-usd", "-5"], "--budgets-usd -5: each level must be a finite number ≥ 0"),
    (["--bisect", "-1"], "--bisect -1: must be ≥ 0"),
    (["--certify-step", "0"], "--certify-step 0: must be in (0, 1] rating points"),
    # 1/34 of a point misses the new structure's 8.3: refused before the least budget's minute, not after it
    (["--certify-step", "0.03"], "--certify-step 0.03: the certified bound needs the new-structure rating 8.3 on its "
                                 "grid, which a step of 0.02941 (1/34 point) misses: try 0.1, 0.05, 0.02, 0.01"),
    (["--budgets", "1e308,1"], "--budgets '1e308,1': level 1e308: must be in [0, 100] × the sized budget (give "
                               "--budget-usd for a budget in USD)"),
    (["--budgets-usd", "1e16"], "--budgets-usd 1e16: must be in [0, 1e15] USD a year (a thousand trillion is the "
                                "most a budget may be)"),
    (["--episodes", "0"], "error: --episodes 0: must be at least 1\n"),  # names only the option given
    (["--years", "0"], "error: --years 0: must be at least 1\n"),
])
def test_scenarios_refuses_bad_levels_and_options_before_any_work(tmp_path, capsys, extra, message):
    code = main(["scenarios", "--inventory", "dc-2019", "--out", str(tmp_path / "sc"), "--quiet", *extra])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "sc").exists()


def test_scenarios_refuses_an_out_folder_under_a_file_at_once(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    assert main(["scenarios", "--inventory", "dc-2019", "--out", str(tmp_path / "afile" / "sub"), "--quiet"]) == 2
    assert f"{tmp_path / 'afile'} is a file, not a folder" in capsys.readouterr().err
    (tmp_path / "sc" / "scenarios.json").mkdir(parents=True)  # a folder where one of its files goes
    assert main(["scenarios", "--inventory", "dc-2019", "--out", str(tmp_path / "sc"), "--quiet"]) == 2
    assert (f"--out {tmp_path / 'sc'}: {tmp_path / 'sc' / 'scenarios.json'} is a folder where scenarios writes its "
            "file scenarios.json: move it, or give another --out") in capsys.readouterr().err


def test_plan_refused_leaves_no_folder_behind(tmp_path, capsys):
    out = tmp_path / "p1" / "plan.csv"
    assert main(["plan", "--policy", "lagrangian", "--years", "0", "--out", str(out)]) == 2
    assert "years" in capsys.readouterr().err
    assert not (tmp_path / "p1").exists()


def test_bound_iters_below_two_names_the_option(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--bound-iters", "0"])
    assert "--bound-iters: 0: the price search needs at least 2 DP solves" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["evaluate", "--no-bound", "--max-poor-deck-area", "nan"], "--max-poor-deck-area: nan: must be a share in [0, 1]"),
    (["evaluate", "--no-bound", "--max-poor-deck-area", "2"], "--max-poor-deck-area: 2: must be a share in [0, 1]"),
    (["plan", "--policy", "lagrangian", "--max-poor-deck-area", "-0.1"], "--max-poor-deck-area: -0.1: must be a share"),
    (["evaluate", "--inventory", "dc-2019", "--max-urban", "0"], "--max-urban: 0: at least 1 urban bridge"),
    (["bound", "--inventory", "dc-2019", "--max-urban", "-3"], "--max-urban: -3: at least 1 urban bridge"),
    (["plan", "--policy", "lagrangian", "--max-urban", "0"], "--max-urban: 0: at least 1 urban bridge")])
def test_a_share_and_an_urban_count_out_of_range_are_refused_by_every_command_alike(capsys, argv, says):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and says in capsys.readouterr().err


def test_a_plan_over_a_hundred_years_is_refused_before_any_work(tmp_path, capsys):
    assert main(["plan", "--policy", "lagrangian", "--years", "1000", "--out", str(tmp_path / "p")]) == 2
    assert "--years 1000: at most 100" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()



@pytest.mark.parametrize("argv", [["scenarios", "--certify-step", "abc"], ["evaluate", "--grid-step", "abc"],
                                  ["train", "--episodes", "many"]])
def test_an_option_argparse_cannot_parse_is_refused_in_one_line(capsys, argv):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "usage:" not in err
    assert err.startswith(f"bridgefleet {argv[0]}: error: argument {argv[1]}: '{argv[2]}': not a number; give ")


def test_train_refuses_an_out_folder_it_cannot_write_before_training(tmp_path, capsys, monkeypatch):
    import bridgefleet.paths

    monkeypatch.setattr(bridgefleet.paths.os, "access", lambda path, mode: False)  # as a 555 folder to a non-root
    assert main(["train", "--preset", "sarsa", "--episodes", "1", "--out", str(tmp_path / "ro" / "run"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path / 'ro' / 'run'}: folder {tmp_path} is not writable" in err and "Traceback" not in err
    assert not (tmp_path / "ro").exists()


@pytest.mark.parametrize(("extra", "message"), [
    (["--grid-step", "-0.05"], "--grid-step -0.05: must be in (0, 1] rating points"),
    (["--certify-step", "0"], "--certify-step 0.0: must be in (0, 1] rating points"),
])
def test_bound_refuses_a_bad_grid_step_by_its_option_before_reading_any_file(tmp_path, capsys, extra, message):
    # a pattern that matches no file: were the files read first, the error would say so instead
    assert main(["bound", "--inventory", str(tmp_path / "*.txt"), "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    if extra[0] == "--grid-step":  # evaluate names the option too
        assert main(["evaluate", "--inventory", str(tmp_path / "*.txt"), "--quiet", *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1


def test_running_out_of_memory_is_one_line_naming_the_options_that_cost_it(monkeypatch, capsys):
    from bridgefleet.cli import parser

    def too_big(args):
        raise MemoryError("Unable to allocate 67.1 GiB for an array with shape (9001, 9001, 111) and data type float64")

    monkeypatch.setattr(parser, "cmd_bound", too_big)  # e.g. `bound --certify-step 1e-9`
    assert main(["bound", "--episodes", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("bridgefleet bound: error: not enough memory (Unable to allocate")
    assert err[0].endswith("try a coarser --grid-step or --certify-step, fewer --episodes, or a smaller fleet")
