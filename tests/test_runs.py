"""Run folders survive what users do to them: failures, Ctrl-C, damaged or GPU checkpoints, resumes."""

import csv
import json

import pytest
import torch
import yaml

from bridgefleet.cli import main
from bridgefleet.config.training import TrainConfig
from bridgefleet.runs.checkpoints import checkpoints
from bridgefleet.runs.folder import RunInterrupted
from bridgefleet.runs.load import load_policy
from bridgefleet.training import loop as train_mod
from bridgefleet.training import runner
from bridgefleet.training.runner import resume, train

TINY = {"urban_hidden": [16], "rural_hidden": [16], "batch_size": 32, "learning_starts": 32,
        "buffer_capacity": 2000, "num_envs": 4, "episodes": 8, "eval_every": 4, "eval_episodes": 4,
        "checkpoint_every": 4, "amp": False, "threads": 1, "fleet": {"horizon_years": 5}}
BRIDGE = {**TINY, "agent": "bridge", "bridge_hidden": [16], "batch_size": 64, "learning_starts": 100,
          "polyak_tau": 0.1}


def _cfg(base=TINY, **changes) -> TrainConfig:
    return TrainConfig.from_dict({**base, **changes, "fleet": {**base["fleet"], **changes.get("fleet", {})}})


def _rows(run_dir, drop_wall=True):
    with (run_dir / "metrics.csv").open() as f:
        rows = list(csv.DictReader(f))
    if drop_wall:
        for r in rows:
            r.pop("wall_seconds")
    return rows


TIMING = ("wall_seconds", "seconds_per_episode", "updates_per_second", "seconds_to_target", "hardware", "machine")


def _summary(run_dir):
    s = json.loads((run_dir / "summary.json").read_text())
    return {k: v for k, v in s.items() if k not in TIMING}


# -- A. a run folder is never a dead end ----------------------------------------------------------------
def test_refused_commands_leave_no_trace(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--out", str(out), "--device", "cuda", "--quiet"]) == 2
    assert "CUDA is not available" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("STRUCTURE_NUMBER_008;DECK_COND_058\n1;7\n")
    assert main(["train", "--out", str(out), "--inventory", str(bad), "--quiet"]) == 2
    assert "semicolon" in capsys.readouterr().err
    assert not out.exists()


def test_a_run_failing_before_its_first_checkpoint_removes_what_it_wrote(tmp_path, monkeypatch):
    def boom(self):
        raise RuntimeError("error in the first episode")

    monkeypatch.setattr(train_mod.Trainer, "run", boom)
    with pytest.raises(RuntimeError, match="first episode"):
        train(_cfg(), tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()
    kept = tmp_path / "mine"  # a folder the user made: only the run's own files go
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    with pytest.raises(RuntimeError):
        train(_cfg(), kept, progress=False)
    assert sorted(p.name for p in kept.iterdir()) == ["notes.txt"]


def test_a_folder_killed_before_its_first_checkpoint_restarts_from_zero(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "checkpoints").mkdir()
    (out / "config.yaml").write_text(yaml.safe_dump(_cfg().to_dict()))
    (out / "metrics.csv").write_text("kind,episode\ntrain,1\n")
    assert main(["train", "--resume", str(out), "--quiet"]) == 0
    assert "starts again from episode 0" in capsys.readouterr().err
    assert [int(r["episode"]) for r in _rows(out) if r["kind"] == "train"] == list(range(1, 9))
    shutil_out = tmp_path / "run2"  # and train --out over such a folder starts it again too
    shutil_out.mkdir()
    (shutil_out / "config.yaml").write_text("episodes: 4\n")
    _run_dir, summary = train(_cfg(), shutil_out, progress=False)
    assert summary["episodes"] == 8 and "started again from episode 0" in capsys.readouterr().err


def test_ctrl_c_writes_a_checkpoint_and_the_message_says_how_to_resume(tmp_path, monkeypatch, capsys):
    calls = {"n": 0}
    real = train_mod.Trainer.evaluate

    def interrupt_second_eval(self):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(self)

    monkeypatch.setattr(train_mod.Trainer, "evaluate", interrupt_second_eval)
    out = tmp_path / "run"
    assert main(["train", "--preset", "baseline", "--config", str(_write(tmp_path, TINY)), "--out", str(out),
                 "--quiet"]) == 130
    err = capsys.readouterr().err
    assert "interrupted at episode 8" in err and f"--resume {out}" in err
    assert [p.name for p in checkpoints(out)] == ["ckpt_00000004.pt", "ckpt_00000008.pt"]
    monkeypatch.setattr(train_mod.Trainer, "evaluate", real)
    _, summary = resume(out, progress=False, episodes=12)
    assert summary["episodes"] == 12


def _write(tmp_path, data):
    p = tmp_path / "cfg.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


# -- B. damaged and foreign checkpoints -----------------------------------------------------------------
def test_damaged_checkpoints_are_named_and_the_newest_intact_one_is_used(tmp_path, capsys):
    run_dir, _ = train(_cfg(episodes=12), tmp_path / "run", progress=False)
    newest = checkpoints(run_dir)[-1]
    newest.write_bytes(newest.read_bytes()[:1000])  # truncated
    final = run_dir / "final.pt"
    final.write_bytes(final.read_bytes()[:500])
    load_policy(run_dir, "cpu")
    err = capsys.readouterr().err
    assert "final.pt: damaged checkpoint" in err and "ckpt_00000012.pt: damaged checkpoint" in err
    assert "using ckpt_00000008.pt (episode 8)" in err
    assert main(["evaluate", str(run_dir), "--episodes", "2", "--no-bound"]) == 0
    assert "using ckpt_00000008.pt" in capsys.readouterr().err
    _, summary = resume(run_dir, progress=False, episodes=16)
    assert summary["episodes"] == 16
    assert "ckpt_00000012.pt: damaged checkpoint" in capsys.readouterr().err


def test_evaluate_without_final_pt_names_the_checkpoint(tmp_path, capsys):
    run_dir, _ = train(_cfg(), tmp_path / "run", progress=False)
    (run_dir / "final.pt").unlink()
    load_policy(run_dir, "cpu")
    assert "no final.pt; using ckpt_00000008.pt (episode 8)" in capsys.readouterr().err


_AS_CUDA = {"on": False}
# PyTorch's own hook (registered once): while on, storages are written tagged "cuda:0", as a GPU run writes them
torch.serialization.register_package(-7, lambda storage: "cuda:0" if _AS_CUDA["on"] else None,
                                     lambda storage, location: None)


@pytest.mark.parametrize("base", [TINY, BRIDGE], ids=["fleet", "bridge"])
def test_a_run_saved_on_cuda_opens_on_a_cpu_only_machine(tmp_path, base):
    run_dir, _ = train(_cfg(base), tmp_path / "run", progress=False)
    _AS_CUDA["on"] = True
    try:
        for path in [run_dir / "final.pt", *checkpoints(run_dir)]:
            torch.save(torch.load(path, weights_only=True), path)
    finally:
        _AS_CUDA["on"] = False
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(run_dir / "final.pt", weights_only=True)  # the failure the map_location avoids
    assert main(["evaluate", str(run_dir), "--episodes", "2", "--no-bound", "--device", "cpu"]) == 0
    assert main(["plan", str(run_dir), "--samples", "2", "--years", "3", "--device", "cpu"]) == 0
    _, summary = resume(run_dir, progress=False, episodes=12)
    assert summary["episodes"] == 12


# -- C. resume means "as if never stopped" --------------------------------------------------------------
def test_resume_with_more_episodes_keeps_the_exploration_and_beta_schedules(tmp_path):
    run_dir, s8 = train(_cfg(per=True, eps_decay_fraction=0.5), tmp_path / "run", progress=False)
    eps8 = [float(r["epsilon"]) for r in _rows(run_dir) if r["kind"] == "train"]
    assert eps8[-4:] == [0.05] * 4  # decayed over 4 of the 8 episodes
    _, s16 = resume(run_dir, progress=False, episodes=16)
    eps = [float(r["epsilon"]) for r in _rows(run_dir) if r["kind"] == "train"]
    assert eps[8:] == [0.05] * 8  # not back to 0.525
    assert s8["per_beta_end"] == pytest.approx(1.0) and s16["per_beta_end"] == pytest.approx(1.0)
    data = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert data["episodes"] == 16 and data["schedule_episodes"] == 8


def test_metrics_hold_every_episode_once_after_a_crash_between_checkpoints(tmp_path):
    run_dir, _ = train(_cfg(episodes=12), tmp_path / "run", progress=False)
    checkpoints(run_dir)[-1].unlink()  # as if killed after episode 12 was logged, before its checkpoint
    (run_dir / "final.pt").unlink()
    with (run_dir / "metrics.csv").open("a") as f:
        f.write("train,13,1.0")  # a row torn by the kill
    resume(run_dir, progress=False)
    eps = [int(r["episode"]) for r in _rows(run_dir) if r["kind"] == "train"]
    assert eps == list(range(1, 13))
    assert [int(r["episode"]) for r in _rows(run_dir) if r["kind"] == "eval"] == [4, 8, 12]
    # TensorBoard: the steps the stopped run logged after its checkpoint are purged, none appears twice
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir / "tb"))
    acc.Reload()
    steps = [e.step for e in acc.Scalars("eval/return")]
    assert steps == [4, 8, 12]
    assert [e.step for e in acc.Scalars("train/return")] == [4, 8, 12]


@pytest.mark.parametrize("base", [TINY, BRIDGE], ids=["fleet", "bridge"])
def test_same_seed_same_results_and_a_replay_checkpoint_resumes_exactly(tmp_path, monkeypatch, base):
    cfg = _cfg(base, episodes=16, checkpoint_every=8, eval_every=8, checkpoint_replay=True)
    a, _ = train(cfg, tmp_path / "a", progress=False)
    b, _ = train(cfg, tmp_path / "b", progress=False)
    assert _rows(a) == _rows(b) and _summary(a) == _summary(b)
    assert any(float(r["train_return"] or 0) != 0 for r in _rows(a))

    trainer_cls = runner._trainer(cfg, tmp_path / "probe", False, False).__class__
    real = trainer_cls.save_checkpoint

    def stop_after_first(self):
        path = real(self)
        if self.episodes_done == 8 and not getattr(self, "_stopped", False):
            self._stopped = True
            raise KeyboardInterrupt
        return path

    monkeypatch.setattr(trainer_cls, "save_checkpoint", stop_after_first)
    with pytest.raises(RunInterrupted):
        train(cfg, tmp_path / "c", progress=False)
    monkeypatch.setattr(trainer_cls, "save_checkpoint", real)
    assert (tmp_path / "c" / "checkpoints" / "ckpt_00000008.replay.npz").is_file()
    c, _ = resume(tmp_path / "c", progress=False)
    assert _rows(c) == _rows(a) and _summary(c) == _summary(a)
    na, nc = _net(a), _net(c)
    assert na.keys() == nc.keys() and all(torch.equal(na[k], nc[k]) for k in na)


def _net(run_dir):
    state = torch.load(run_dir / "final.pt", weights_only=True)
    return (state.get("bridge") or state["urban"])["online"]


# -- E. interfaces --------------------------------------------------------------------------------------
def test_rounded_episodes_horizon_warnings_and_help_defaults(tmp_path, capsys):
    run_dir, summary = train(_cfg(episodes=6), tmp_path / "run", progress=False)
    assert summary["episodes"] == 8
    assert "6 episodes run as 8, the next multiple of the 4 fleets" in capsys.readouterr().err
    with pytest.warns(UserWarning, match="--years 12 goes beyond the 5-year horizon the policy was trained on"):
        assert main(["plan", str(run_dir), "--samples", "2", "--years", "12", "--device", "cpu"]) == 0
    capsys.readouterr()
    for command, shown in (("train", "(sarsa: 2000;"), ("plan", "(default: 30)")):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert shown in " ".join(capsys.readouterr().out.split())
    assert main(["train", "--resume", str(run_dir), "--seed", "3"]) == 2
    assert "--seed cannot change it" in capsys.readouterr().err
    assert main(["train", "--config", str(_write(tmp_path, {**TINY, "episodes": 8})), "--preset", "baseline",
                 "--checkpoint-replay", "--out", str(tmp_path / "cr"), "--quiet"]) == 0
    assert (tmp_path / "cr" / "checkpoints" / "ckpt_00000008.replay.npz").is_file()


def test_what_a_new_user_tried_gets_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["train", "--out", str(afile / "sub"), "--quiet"]) == 2
    assert f"{afile} is a file, not a folder" in capsys.readouterr().err
    assert main(["train", "--out", "", "--quiet"]) == 2
    assert "--out '': give a folder name" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["train", "--threads", "abc", "--quiet"])
    assert stop.value.code == 2
    assert "bridgefleet train: error: argument --threads: 'abc': not a number; give a whole number in digits" in \
        capsys.readouterr().err

    def ctrl_c(cfg):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "preflight", ctrl_c)  # Ctrl-C before the loop: still a message
    assert main(["train", "--out", str(tmp_path / "x"), "--quiet"]) == 130
    assert capsys.readouterr().err.strip() == "bridgefleet train: interrupted"


def test_a_damaged_metrics_file_is_set_aside_on_resume(tmp_path, capsys):
    run_dir, _ = train(_cfg(learning_starts=1000), tmp_path / "run", progress=False)
    # 8 episodes × 5 years = 40 transitions per agent < learning_starts: said, not silently "trained"
    assert "warning: no learner update happened" in capsys.readouterr().err
    (run_dir / "metrics.csv").write_text("hello\n")
    _, summary = resume(run_dir, progress=False, episodes=12)
    assert summary["episodes"] == 12
    assert "kept as metrics.csv.damaged" in capsys.readouterr().err
    assert (run_dir / "metrics.csv.damaged").read_text() == "hello\n"
    assert [int(r["episode"]) for r in _rows(run_dir) if r["kind"] == "train"] == [9, 10, 11, 12]
    with pytest.raises(ValueError, match=r"already trained 12 episodes and --episodes 12 would add none"):
        resume(run_dir, progress=False, episodes=12)
