"""Run folders written before the two trainers and learners were one (commit 6ae4c48, tests/golden/legacy/: the
golden settings of test_golden.py) still open: their policy evaluates to the figure the old code printed, and
training resumes from their checkpoint."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from bridgefleet.evaluation.evaluate import evaluate_policy
from bridgefleet.runs.load import load_policy
from bridgefleet.training.runner import resume

LEGACY = Path(__file__).parent / "golden" / "legacy"
OLD_MEAN = {"bridge": -3590.428566720405, "fleet": -1252.1678346793135}
"""evaluate_policy(load_policy(run)[1], cfg.fleet, 5, 1_000_000).mean_return printed by the code of 6ae4c48."""


@pytest.mark.parametrize("agent", sorted(OLD_MEAN))
def test_a_run_of_the_old_layout_evaluates_as_it_did(agent, tmp_path):
    run = shutil.copytree(LEGACY / agent, tmp_path / agent)
    cfg, policy = load_policy(run, "cpu")
    assert evaluate_policy(policy, cfg.fleet, 5, 1_000_000, "old").mean_return == OLD_MEAN[agent]


@pytest.mark.parametrize("agent", sorted(OLD_MEAN))
def test_a_run_of_the_old_layout_resumes_from_its_checkpoint(agent, tmp_path):
    run = shutil.copytree(LEGACY / agent, tmp_path / agent)
    (run / "final.pt").unlink()
    old = torch.load(next((run / "checkpoints").glob("ckpt_*.pt")), weights_only=True)
    done, learner = old["episodes_done"], "bridge" if agent == "bridge" else "urban"
    _, summary = resume(run, progress=False, episodes=done + 8)
    assert summary["episodes"] == done + 8 and summary["updates"] > old[learner]["step"]
    new = torch.load(sorted((run / "checkpoints").glob("ckpt_*.pt"))[-1], weights_only=True)
    assert new["episodes_done"] == done + 8 and new[learner]["format"] == 2 and "optimizer" in new[learner]
