"""Training end to end: outputs, resume after SIGKILL, compiled checkpoints, CLI commands."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
import yaml

from bridgefleet.cli import main
from bridgefleet.config.presets import PRESETS, resolve_config
from bridgefleet.config.training import TrainConfig
from bridgefleet.runs.checkpoints import latest_checkpoint
from bridgefleet.runs.load import load_agents
from bridgefleet.training.runner import train

TINY = {"urban_hidden": [16], "rural_hidden": [16], "batch_size": 32, "learning_starts": 64,
        "buffer_capacity": 2000, "num_envs": 4, "episodes": 8, "eval_every": 4, "eval_episodes": 4,
        "checkpoint_every": 4, "fleet": {"horizon_years": 5}}


def _tiny(**changes) -> TrainConfig:
    data = {**TINY, **changes}
    return TrainConfig.from_dict({**data, "fleet": {**TINY["fleet"], **changes.get("fleet", {})}})


def test_short_training_run_writes_every_output(tmp_path):
    run_dir, _ = train(_tiny(double=True, n_step=3, per=True, dueling=True), tmp_path / "run",
                             progress=False)
    for name in ("config.yaml", "metrics.csv", "final.pt", "summary.json", "training_curve.png"):
        assert (run_dir / name).is_file(), name
    assert list((run_dir / "tb").glob("events.out.tfevents.*"))
    assert latest_checkpoint(run_dir) is not None
    saved = json.loads((run_dir / "summary.json").read_text())
    for key in ("episodes", "wall_seconds", "seconds_per_episode", "final_eval_return", "target_return",
                "episodes_to_target", "seconds_to_target", "device", "torch_version", "preset"):
        assert key in saved
    assert saved["episodes"] == 8 and saved["device"] == "cpu"
    # 8 episodes of 5 years on 4 fleets = 10 vector steps; learning starts at 64 transitions (16 steps)
    # only for the 1-step buffer, so here the n-step buffer holds 8 × 5 = 40 < 64: no update yet.
    assert saved["updates"] == 0
    rows = (run_dir / "metrics.csv").read_text().splitlines()
    assert rows[0].startswith("kind,episode") and sum(r.startswith("eval,") for r in rows) == 2
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert cfg["per"] is True and cfg["fleet"]["horizon_years"] == 5


def test_checkpoints_load_with_weights_only_and_learning_happens(tmp_path):
    run_dir, summary = train(_tiny(episodes=40, learning_starts=32), tmp_path / "run", progress=False)
    # 40 episodes × 5 years / 4 fleets = 50 vector steps, one update each once 32 transitions (8 steps) exist,
    # and one more at step 8 from the credit held (capped at one update) while the replay filled
    assert summary["updates"] == 50 - 8 + 1 + 1
    state = torch.load(latest_checkpoint(run_dir), weights_only=True)
    assert state["episodes_done"] == 40
    assert not any("_orig_mod" in k for k in state["urban"]["online"])


def test_resume_after_sigkill_continues_the_step_counter(tmp_path):
    out = tmp_path / "run"
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({**TINY, "episodes": 100000, "learning_starts": 32, "checkpoint_every": 8}))
    proc = subprocess.Popen([sys.executable, "-m", "bridgefleet.cli", "train", "--preset", "baseline",
                             "--config", str(cfg), "--out",
                             str(out), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            ckpts = sorted((out / "checkpoints").glob("ckpt_*.pt")) if (out / "checkpoints").exists() else []
            if len(ckpts) >= 2:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.2)
        else:
            pytest.fail("no checkpoint within 120 s")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    ckpt = latest_checkpoint(out)
    state = torch.load(ckpt, weights_only=True)
    done_before, steps_before = state["episodes_done"], state["urban"]["step"]
    assert done_before >= 16 and steps_before > 0
    # Resume to 16 episodes more than the checkpoint: the counters continue, not restart.
    data = yaml.safe_load((out / "config.yaml").read_text())
    data["episodes"] = done_before + 16
    (out / "config.yaml").write_text(yaml.safe_dump(data))
    assert main(["train", "--resume", str(out), "--quiet"]) == 0
    final = torch.load(latest_checkpoint(out), weights_only=True)
    assert final["episodes_done"] == done_before + 16
    # 16 episodes = 20 vector steps of 4 transitions; the replay is not checkpointed, so learning resumes
    # once 32 transitions are back (at step 8): 13 steps with one update each and one more from the credit held
    # while the replay filled, counted on from the checkpoint.
    assert final["urban"]["step"] == steps_before + 14
    assert final["env_steps"] == state["env_steps"] + 80
    assert json.loads((out / "summary.json").read_text())["episodes"] == done_before + 16


def test_checkpoint_from_a_compiled_run_loads_uncompiled(tmp_path):
    if os.environ.get("BRIDGEFLEET_SKIP_COMPILE"):
        pytest.skip("compile tests disabled")
    run_dir, _ = train(_tiny(compile="default", episodes=12, learning_starts=16), tmp_path / "run", progress=False)
    state = torch.load(run_dir / "final.pt", weights_only=True)
    assert not any("_orig_mod" in k for k in state["urban"]["online"])
    cfg, urban, _ = load_agents(run_dir, "cpu")
    assert cfg.compile == "off"
    assert urban.greedy(torch.zeros(2, 81).numpy()).shape == (2, 20)


def test_resolve_config_layers_preset_file_and_flags(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("episodes: 50\nfleet:\n  n_urban: 10\n")
    cfg = resolve_config("baseline", p, {"num_envs": 3, "seed": None})
    assert (cfg.episodes, cfg.num_envs, cfg.fleet.n_urban, cfg.preset) == (50, 3, 10, "baseline")
    p.write_text("episods: 50\n")
    with pytest.raises(ValueError, match=r"unknown training option\(s\) 'episods' \(did you mean 'episodes'\?\)$"):
        resolve_config("default", p)
    with pytest.raises(ValueError, match=r"unknown preset 'fastest'; known: baseline, "):
        resolve_config("fastest")
    with pytest.raises(ValueError, match=r"unknown preset 'defualt' \(did you mean 'default'\?\); known: "):
        resolve_config("defualt")
    p.write_text("fleet:\n  n_urbann: 10\n")
    with pytest.raises(ValueError, match=r"fleet: unknown FleetConfig field\(s\) 'n_urbann' "
                       r"\(did you mean 'n_urban'\?\); known: aadt_exponent, "):
        resolve_config("default", p)
    p.write_text("a: [1, 2\nb: 3\n")
    with pytest.raises(ValueError, match=r"c\.yaml, line 2, column 2: not valid YAML \(expected ',' or ']'"):
        resolve_config("default", p)
    # a key given twice is refused (PyYAML would keep the second value silently), nested mappings too
    p.write_text("lr: 0.001\nfleet:\n  n_urban: 3\n  n_urban: 4\n")
    with pytest.raises(ValueError, match=r"^\S*c\.yaml, line 4, column 3: not valid YAML \(the key 'n_urban' is "
                                         r"given twice, first on line 3\)$"):
        resolve_config("default", p)
    # a bad value the file set names the file; the same value from a flag does not
    p.write_text("lr: -1\n")
    lr_range = (r"must be in \[1e-8, 1\] \(Adam's learning rate; default 1e-4; a smaller step is lost in 32-bit "
                r"weights\)$")
    with pytest.raises(ValueError, match=r"^\S*c\.yaml: training option lr = -1: " + lr_range):
        resolve_config("default", p)
    with pytest.raises(ValueError, match=r"^training option lr = -2: " + lr_range):
        resolve_config("default", p, {"lr": -2})


def test_cli_evaluate_plan_and_errors(tmp_path, capsys):
    run_dir, _ = train(_tiny(), tmp_path / "run", progress=False)
    assert main(["evaluate", str(run_dir), "--episodes", "4", "--quiet", "--json", str(tmp_path / "ev.json")]) == 0
    assert "trained agents vs best heuristic" in capsys.readouterr().out
    ev = json.loads((tmp_path / "ev.json").read_text())
    assert "trained" in ev["policies"] and "lagrangian" in ev["policies"]
    # the grid bound (an estimate; the certified one is tested in test_certified_bound.py) is above every policy
    # but the planner, which on these 4 test fleets of a 5-year fleet beats it (54.48 against 15.66 ± 9.59)
    assert all(ev["bound"]["mean"] >= p["mean"] for k, p in ev["policies"].items() if k != "lagrangian")
    assert ev["fleet_model"] == "continuous-2026"
    assert main(["evaluate", str(run_dir), "--episodes", "2", "--no-bound", "--policy", "worst_first"]) == 0
    assert "| worst_first |" in (out := capsys.readouterr().out) and "| random |" not in out
    assert main(["evaluate", str(run_dir), "--fleet-model", "plan-2025"]) == 2  # would be silently ignored
    assert "--fleet-model cannot change it" in capsys.readouterr().err
    plan = tmp_path / "plan.csv"
    assert main(["plan", str(run_dir), "--years", "3", "--samples", "2", "--out", str(plan)]) == 0
    rows = plan.read_text().splitlines()
    assert rows[0] == ("year,bridge_id,cluster,deck_area_m2,nhs,ratings_today,action,action_share,cost_usd,"
                       "expected_condition")  # the fleet agent decides without benefits: no reason columns
    assert len(rows) == 1 + 3 * 100 and (tmp_path / "plan.png").is_file()
    assert main(["evaluate", "--policy", "nope"]) == 2
    assert "unknown policy 'nope'" in capsys.readouterr().err
    assert main(["plan", str(tmp_path / "missing"), "--out", str(plan)]) == 2


def test_cli_help_lists_the_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for cmd in ("evaluate", "train", "plan", "inventory"):
        assert cmd in out


def test_main_job_default_preset_is_the_per_bridge_agent_and_fleet_the_plans_fastest():
    cfg = resolve_config("default")
    assert cfg.agent == "bridge" and cfg.num_envs > 1 and cfg.amp == "auto" and cfg.teacher == "lagrangian"
    assert PRESETS["distill"] is PRESETS["default"] and resolve_config("sarsa").teacher is None
    fleet = resolve_config("fleet")
    assert fleet.agent == "fleet" and fleet.num_envs > 1 and fleet.amp == "auto"


def test_training_into_an_existing_run_directory_is_refused(tmp_path, capsys):
    run_dir, _ = train(_tiny(episodes=4), tmp_path / "run", progress=False)
    before = (run_dir / "metrics.csv").read_text()
    with pytest.raises(FileExistsError, match="--resume"):
        train(_tiny(episodes=4), run_dir, progress=False)
    assert main(["train", "--preset", "sarsa", "--out", str(run_dir), "--episodes", "4", "--quiet"]) == 2
    assert "already holds a training run" in capsys.readouterr().err
    assert (run_dir / "metrics.csv").read_text() == before


@pytest.mark.parametrize("vector", ["sync", "async"])
def test_gymnasium_vector_envs_train_like_the_native_one(tmp_path, vector):
    # Same seeds, same fleets: the first training episodes' returns match the native batched simulator.
    runs = {}
    for kind in ("native", vector):
        run_dir, _ = train(_tiny(vector=kind, episodes=4, num_envs=2), tmp_path / kind, progress=False)
        rows = [r.split(",") for r in (run_dir / "metrics.csv").read_text().splitlines()[1:]]
        runs[kind] = [float(r[3]) for r in rows if r[0] == "train"]
    assert runs[vector] == pytest.approx(runs["native"], rel=1e-9)


def test_per_beta_reaches_one_by_the_end_of_a_run(tmp_path):
    # β is annealed over the updates that sample (after learning_starts), not all planned updates: a run
    # this short used to end at β ≈ 0.6.
    _, summary = train(_tiny(per=True, n_step=3, episodes=32), tmp_path / "run", progress=False)
    assert summary["updates"] > 0
    assert summary["per_beta_end"] == pytest.approx(1.0)


def test_a_training_yaml_names_its_fleet_model_and_errors_name_the_file(tmp_path):
    from bridgefleet.config import ConfigError
    from bridgefleet.config.presets import resolve_config

    path = tmp_path / "t.yaml"
    path.write_text("fleet: plan-2025\n")
    assert resolve_config(None, path).fleet.annual_budget_usd == 282_000.0
    path.write_text("fleet: {model: plan-2025, n_urban: 10}\n")
    cfg = resolve_config(None, path, {"fleet": {"model": "continuous-2026"}})  # --fleet-model continuous-2026 wins
    assert cfg.fleet.n_urban == 10 and cfg.fleet.model_name() == "continuous-2026" and cfg.fleet.carry_over_budget
    path.write_text("fleet: {model: nope}\n")
    with pytest.raises(ConfigError, match=f"{path}, fleet: unknown fleet model 'nope'"):
        resolve_config(None, path)
