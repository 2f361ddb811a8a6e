"""`bridgefleet sweep` and `bench --ray` on a local Ray instance (the optional extra, which CI installs)."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

from bridgefleet.cli import main
from bridgefleet.config import ConfigError
from bridgefleet.sweep.space import load_space

FIXED = {"episodes": 32, "num_envs": 8, "eval_every": 8, "checkpoint_every": 8, "eval_episodes": 4,
         "learning_starts": 2000, "batch_size": 512, "fleet": {"horizon_years": 5}}


def _space(tmp_path, space, fixed=FIXED, name="space.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump({"preset": "sarsa", "fixed": fixed, "space": space}))
    return p


@pytest.mark.parametrize(("space", "message"), [
    ({"n_stpe": {"grid": [1, 3]}}, "field 'n_stpe': not a TrainConfig field"),
    ({"per": {"choice": []}}, "field 'per': choice needs a non-empty list"),
    ({"n_step": {"grid": [0, 3]}}, "field 'n_step' = 0"),
    ({"lr": {"between": [1, 2]}}, "field 'lr': give one of grid, choice, uniform"),
    ({"fleet": {"grid": [{}]}}, "field 'fleet': set per sweep (under fixed:), not searched"),
    ({"n_step": {"grid": [3]}, "_fixed": [1, 2]}, "'fixed' must map TrainConfig fields to values, not list"),
    ({"n_step": {"grid": [3]}, "_fixed": {"fleet": {"horizon_yearz": 5}}}, "unknown FleetConfig field"),
])
def test_a_bad_space_names_the_field(tmp_path, space, message):
    fixed = space.pop("_fixed", FIXED)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_space(_space(tmp_path, space, fixed))


def test_trials_count_grids_samples_and_seeds(tmp_path):
    space = load_space(_space(tmp_path, {"n_step": {"grid": [1, 2, 3]}, "per": {"choice": [False, True]}}))
    assert space.trials(samples=2, seeds=3) == 3 * 2 * 3


ray = pytest.importorskip("ray", reason="the [ray] extra is not installed (.ci/run installs it)")


def test_a_tiny_sweep_matches_its_trials_own_summaries(tmp_path, capsys):
    space = _space(tmp_path, {"n_step": {"grid": [1, 3]}, "per": {"grid": [False, True]}})
    out = tmp_path / "sweep"
    assert main(["sweep", str(space), "--out", str(out), "--no-asha"]) == 0
    assert "4 trial(s)" in capsys.readouterr().out
    with (out / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert sorted((r["n_step"], r["per"]) for r in rows) == [("1", "False"), ("1", "True"), ("3", "False"),
                                                             ("3", "True")]
    for r in rows:
        s = json.loads((out / "trials" / r["trial"] / "summary.json").read_text())
        cfg = yaml.safe_load((out / "trials" / r["trial"] / "config.yaml").read_text())
        assert float(r["final_eval_return"]) == pytest.approx(s["final_eval_return"])
        assert int(r["episodes"]) == s["episodes"] == 32 and cfg["threads"] == 1
        assert str(cfg["n_step"]) == r["n_step"] and str(cfg["per"]) == r["per"]
        assert cfg["fleet"]["horizon_years"] == 5  # the fixed fleet settings reach every trial
    assert "| 1 |" in (out / "sweep.md").read_text()
    assert main(["sweep", str(space), "--out", str(out)]) == 2  # a second sweep into it is refused
    assert "--resume" in capsys.readouterr().err
    before = (out / "sweep.csv").read_text()
    assert main(["sweep", "--resume", str(out)]) == 0  # a finished sweep resumed: nothing runs again
    assert (out / "sweep.csv").read_text() == before
    assert all((out / "trials" / f"{r['trial']}.attempts").read_text() == "0\n" for r in rows)


def test_trials_asha_stops_keep_their_folder_and_row(tmp_path):
    space = _space(tmp_path, {"n_step": {"grid": [1, 3]}, "per": {"grid": [False, True]}})
    out = tmp_path / "sweep"
    assert main(["sweep", str(space), "--out", str(out)]) == 0
    with (out / "sweep.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 4  # stopped or not, every trial has its row
    for r in rows:
        run = out / "trials" / r["trial"]
        assert list((run / "checkpoints").glob("ckpt_*.pt")), r  # a stopped trial can be evaluated or resumed
        if r["finished"] == "False":
            assert int(r["episodes"]) < 32


def test_a_killed_trial_resumes_from_its_checkpoint(tmp_path):
    fixed = {**FIXED, "episodes": 480, "eval_every": 160}
    space = _space(tmp_path, {"n_step": {"grid": [3]}}, fixed)
    out = tmp_path / "sweep"
    proc = subprocess.Popen([sys.executable, "-m", "bridgefleet.cli", "sweep", str(space), "--out", str(out),
                             "--no-asha"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed = None
    deadline = time.time() + 180
    while time.time() < deadline and killed is None and proc.poll() is None:
        for pid_file in (out / "trials").glob("*.pid") if (out / "trials").exists() else []:
            run = out / "trials" / pid_file.stem
            if len(list((run / "checkpoints").glob("ckpt_*.pt"))) >= 2:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)  # the trial's worker process dies
                killed = run
                break
        time.sleep(0.05)
    output = proc.communicate(timeout=300)[0]
    assert killed is not None, output[-3000:]
    assert proc.returncode == 0, output[-3000:]
    starts = [int(x) for x in (killed.parent / f"{killed.name}.attempts").read_text().split()]
    assert len(starts) == 2 and starts[0] == 0 and starts[1] >= 16  # restarted by Tune from its checkpoint
    assert json.loads((killed / "summary.json").read_text())["episodes"] == 480
    with (killed / "metrics.csv").open() as f:
        episodes = [int(r["episode"]) for r in csv.DictReader(f) if r["kind"] == "train"]
    assert episodes == list(range(1, 481))  # every episode once, across the kill


def test_unreachable_cluster_and_missing_ray_are_one_line(tmp_path, capsys, monkeypatch):
    space = _space(tmp_path, {"n_step": {"grid": [3]}})
    assert main(["sweep", str(space), "--out", str(tmp_path / "s"), "--ray-address", "127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "no Ray head answers there" in err and len(err.splitlines()) == 1
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    assert main(["sweep", str(space), "--out", str(tmp_path / "s2")]) == 2
    assert "pip install 'bridgefleet[ray]'" in capsys.readouterr().err
    assert not (tmp_path / "s").exists() and not (tmp_path / "s2").exists()


def test_bench_on_ray_writes_the_same_rows_as_the_process_runner(tmp_path):
    from bridgefleet.bench.measure import run_bench

    args = {"presets": ["baseline", "sarsa"], "seeds": 1, "tiny": True, "progress": False}
    local = run_bench(out=tmp_path / "a", isolate=False, **args)
    on_ray = run_bench(out=tmp_path / "b", ray="local", **args)
    keys = ("preset", "seed", "episode_cap", "episodes", "final_eval_return")
    assert [[r[k] for k in keys] for r in on_ray] == [[r[k] for k in keys] for r in local]
    for name in ("bench.csv", "bench_summary.csv", "bench.md", "bench.png"):
        assert (tmp_path / "b" / name).is_file()


def test_scenario_levels_on_ray_equal_the_local_run():
    from bridgefleet.config import FleetConfig
    from bridgefleet.evaluation.scenarios import SEARCH_TOL, run_scenarios

    args = {"scales": [0.5, 1.0], "years": 4, "episodes": 2, "bisect": 0, "progress": False}
    cfg = FleetConfig(n_urban=3, n_rural=3)
    local = run_scenarios(cfg, **args)
    on_ray = run_scenarios(cfg, ray="local", **args)
    for a, b in zip(local.levels, on_ray.levels, strict=True):
        np.testing.assert_array_equal(a.deck, b.deck)
        np.testing.assert_array_equal(a.agency_usd, b.agency_usd)
        # a Ray task's price search starts from the least budget's columns only, the local run's also from the
        # levels before it: the bounds agree within the two searches' tolerance
        assert abs(a.bound - b.bound) <= 2 * SEARCH_TOL * abs(a.bound) and a.aim == b.aim
    assert on_ray.certified == local.certified
