"""Issue 26 B and C: one writer per run folder (an OS lock naming its holder, never left by a killed process),
and a resume refused, not corrupted, when the run's config.yaml was edited."""

import os
import signal
import subprocess
import sys

import pytest
import yaml

from bridgefleet.cli import main
from bridgefleet.config.training import TrainConfig
from bridgefleet.training.runner import train

TINY = {"preset": "sarsa", "agent": "bridge", "bridge_hidden": [16], "batch_size": 32, "learning_starts": 50,
        "buffer_capacity": 1000, "num_envs": 2, "episodes": 2, "eval_every": 2, "eval_episodes": 2,
        "checkpoint_every": 2, "threads": 1, "amp": False, "fleet": {"horizon_years": 2, "n_urban": 3, "n_rural": 3}}
HOLD = ("import sys, time; from pathlib import Path; from bridgefleet.runs.folder import hold\n"
        "p = Path(sys.argv[1]); p.mkdir(parents=True, exist_ok=True)\n"
        "with hold(p):\n    print('held', flush=True); time.sleep(120)\n")


@pytest.fixture()
def holder(tmp_path):
    """A live process holding the lock of tmp_path/run (as a running `train --out` does)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "run")], stdout=subprocess.PIPE, text=True,
                            env=env)
    assert proc.stdout.readline().strip() == "held"
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _config(tmp_path, **changes):
    p = tmp_path / "train.yaml"
    p.write_text(yaml.safe_dump({**TINY, **changes}))
    return str(p)


def test_a_second_writer_is_refused_naming_the_holder_and_a_killed_holder_never_blocks(tmp_path, holder, capsys):
    run = tmp_path / "run"
    for argv in (["train", "--config", _config(tmp_path), "--out", str(run), "--quiet"],
                 ["train", "--resume", str(run), "--quiet"]):
        if argv[1] == "--resume":
            (run / "config.yaml").write_text(yaml.safe_dump(TrainConfig.from_dict(TINY).to_dict()))
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"bridgefleet train: error: {run} is in use by another bridgefleet run (PID {holder.pid}); "
                       "one process writes a run folder at a time: wait for it to end or stop it, or choose another "
                       "--out"]
    assert sorted(p.name for p in run.iterdir()) == [".bridgefleet.lock", ".bridgefleet.lock.pid", "config.yaml"]
    os.kill(holder.pid, signal.SIGKILL)  # its lock dies with it; the PID file it left does not block
    holder.wait()
    assert main(["train", "--config", _config(tmp_path), "--out", str(run), "--quiet"]) == 0
    assert (run / "final.pt").is_file() and not (run / ".bridgefleet.lock.pid").exists()


def test_a_sweep_trial_into_a_held_folder_is_refused_too(tmp_path, holder):
    from bridgefleet.runs.folder import RunLocked

    with pytest.raises(RunLocked, match=f"PID {holder.pid}"):
        train(TrainConfig.from_dict(TINY), tmp_path / "run", progress=False)  # what ray_run.trial calls


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run = tmp_path_factory.mktemp("c") / "run"
    train(TrainConfig.from_dict(TINY), run, progress=False)
    return run


@pytest.mark.parametrize(("edit", "line"), [
    (lambda c: c.update(bridge_hidden=[32]), "bridge_hidden is [32] but the checkpoint ckpt_00000002.pt was trained "
     "with [16]; a resume changes only episodes (--episodes) and device (--device): put bridge_hidden: [16] back, "
     "or train the new config with --out"),
    (lambda c: c["fleet"].update(discount=0.5), "fleet.discount is 0.5 but the checkpoint ckpt_00000002.pt was "
     "trained with 0.95; a resume changes only episodes (--episodes) and device (--device): put fleet.discount: "
     "0.95 back, or train the new config with --out"),
])
def test_resume_refuses_an_edited_config_naming_the_field_and_both_values(trained, tmp_path, capsys, edit, line):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(trained, run)
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    edit(cfg)
    (run / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    before = sorted(p.name for p in run.rglob("*"))
    assert main(["train", "--resume", str(run), "--episodes", "4", "--quiet"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"bridgefleet train: error: {run / 'config.yaml'}: {line}"]
    assert sorted(p.name for p in run.rglob("*")) == before  # nothing changed


def test_episodes_and_device_may_change_on_resume(trained, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(trained, run)
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    cfg.update(episodes=4, device="cpu")
    (run / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    assert main(["train", "--resume", str(run), "--quiet"]) == 0
    assert yaml.safe_load((run / "config.yaml").read_text())["episodes"] == 4


def test_resume_says_which_lines_of_config_yaml_the_run_never_reads(trained, tmp_path, capsys):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(trained, run)
    text = (run / "config.yaml").read_text()
    assert text.startswith("# bridgefleet training options of this run") and "urban_hidden" not in text
    (run / "config.yaml").write_text(text + "urban_hidden: [8]\nfit_epochs: 3\n")
    assert main(["train", "--resume", str(run), "--episodes", "4", "--quiet"]) == 0
    assert (f"note: {run / 'config.yaml'}: fit_epochs, urban_hidden have no effect in this run (agent: bridge, no "
            "teacher) and are left out of it") in capsys.readouterr().err
    assert "urban_hidden" not in (run / "config.yaml").read_text()


def test_resume_names_a_missing_folder_and_a_folder_that_is_not_a_run(tmp_path, capsys):
    assert main(["train", "--resume", str(tmp_path / "nosuch")]) == 2
    assert f"--resume {tmp_path / 'nosuch'}: no such folder" in capsys.readouterr().err
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "no config.yaml (not a bridgefleet run directory)" in capsys.readouterr().err
    (tmp_path / "config.yaml").write_text("{}")
    assert main(["train", "--resume", str(tmp_path / "config.yaml")]) == 2
    assert "config.yaml: not a folder (give the run's folder)" in capsys.readouterr().err
