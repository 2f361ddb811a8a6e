"""Golden outputs: short seeded runs of both agents (and a resumed one) and the planner's numbers, pinned before
the two trainers and learners are merged.

Each case runs in a fresh folder and is compared with tests/golden/<case>/: metrics.csv (text equal without its
wall-clock column), summary.json (equal without its timing and machine fields), every tensor of final.pt
(``torch.equal`` on the CPU that stored them, within ``TENSOR_RTOL`` on another vector unit) and final.pt's
other values (steps, learning rates, best evaluation). The planner's JSON is
compared within 1e-9 relative. Runs are pinned to device cpu, one torch thread, fp32 (amp off) and no
torch.compile, so no hardware probe runs and nothing depends on the machine's cache of choices.

Regenerate (after a change that is meant to alter these numbers, and say why in the commit):

    PYTHONPATH=src python tests/test_golden.py --regenerate
    # or: BRIDGEFLEET_REGENERATE_GOLDEN=1 pytest tests/test_golden.py
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import math
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from bridgefleet.cli import main
from bridgefleet.config.presets import resolve_config
from bridgefleet.training.runner import train

GOLDEN = Path(__file__).parent / "golden"
REGENERATE = os.environ.get("BRIDGEFLEET_REGENERATE_GOLDEN", "") not in ("", "0")

TIMING_COLUMNS = ("wall_seconds",)
"""metrics.csv columns that are wall-clock times (the rest is seeded and exact)."""
VOLATILE_SUMMARY = ("wall_seconds", "seconds_per_episode", "seconds_to_target", "updates_per_second", "hardware",
                    "machine", "torch_version")
"""summary.json fields that are times or describe the host (hardware holds the probe's timings and reasons)."""
VOLATILE_BOUND = ("seconds",)
"""Fields of the planner's JSON ``bound`` section that are times."""
PLANNER_RTOL = 1e-9

DETERMINISTIC = {"device": "cpu", "threads": 1, "amp": False, "compile": "off", "seed": 0}
# agent: bridge (the default preset), 4 fleets × 4 vector episodes of 8 years: updates from the second episode
# batch on, two evaluations and two checkpoints.
# reward_scale 1.0, no user cost input, no weight average, SARSA bootstraps, updates_per_step 2 alone, the sized
# budget only, no rating ramps, an episode free to fill the replay and no learning-rate cut: the default preset's
# values when these were pinned (issue 27 changed all ten)
BRIDGE = {**DETERMINISTIC, "reward_scale": 1.0, "user_cost_feature": False, "weight_average": None,
          "budget_scale_range": None, "updates_per_step": 2.0, "rating_ramps": False, "replay_episodes": 1,
          "greedy_bootstrap": 0, "min_samples_per_transition": 0, "bridge_hidden": [16, 16], "lr_drop_factor": 1.0,
          "batch_size": 128, "learning_starts": 300,
          "buffer_capacity": 20_000, "num_envs": 4, "episodes": 16, "eval_every": 8, "eval_episodes": 3,
          "checkpoint_every": 8, "fleet": {"horizon_years": 8}}
# agent: fleet (the fleet preset: double DQN, 3-step), 4 fleets × 6 vector episodes of 5 years: updates and hard
# target syncs, three evaluations and checkpoints.
FLEET = {**DETERMINISTIC, "eval_seed": 1_000_000, "urban_hidden": [16], "rural_hidden": [16], "batch_size": 32,
         "learning_starts": 40, "buffer_capacity": 2000, "num_envs": 4, "episodes": 24, "eval_every": 8,
         "eval_episodes": 3, "checkpoint_every": 8, "target_sync_every": 5, "fleet": {"horizon_years": 5}}


# -- the cases: each writes a run folder ---------------------------------------------------------------------
def _bridge(tmp: Path) -> Path:
    cfg = dataclasses.replace(resolve_config("sarsa", None, BRIDGE), weight_average=None,
                              budget_scale_range=None)  # overrides skip None
    run, _ = train(cfg, tmp / "run", progress=False)
    return run


def _fleet(tmp: Path) -> Path:
    run, _ = train(resolve_config("fleet", None, FLEET), tmp / "run", progress=False)
    return run


def _bridge_resume(tmp: Path) -> Path:
    """`bridgefleet train` for 8 episodes, then `train --resume --episodes 16` (no replay checkpointed: learning
    starts again after learning_starts new transitions; ε keeps the first total's schedule)."""
    cfg, run = tmp / "train.yaml", tmp / "run"
    cfg.write_text(yaml.safe_dump({**BRIDGE, "episodes": 8}))
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", "--preset", "sarsa", "--config", str(cfg), "--out", str(run), "--quiet"]) == 0
        assert main(["train", "--resume", str(run), "--episodes", "16", "--quiet"]) == 0
    return run


RUNS: dict[str, Callable[[Path], Path]] = {"bridge": _bridge, "fleet": _fleet, "bridge_resume": _bridge_resume}


# -- what is kept of a run -----------------------------------------------------------------------------------
def metrics_text(path: Path) -> str:
    """metrics.csv without its timing columns, as text."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    keep = [i for i, name in enumerate(rows[0]) if name not in TIMING_COLUMNS]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([r[i] for i in keep] for r in rows)
    return out.getvalue()


def summary_data(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if k not in VOLATILE_SUMMARY}


def _split(node: Any, prefix: str, tensors: dict[str, torch.Tensor], other: dict[str, Any]) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            _split(v, f"{prefix}.{k}" if prefix else str(k), tensors, other)
    elif torch.is_tensor(node):
        tensors[prefix] = node
    elif prefix.endswith("optimizer.param_groups"):  # only the learning rate: the rest are torch's flags
        other[prefix] = [group["lr"] for group in node]
    else:
        other[prefix] = node


def final_state(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """final.pt as (tensors by dotted key, every other value by dotted key, as JSON would hold it); its
    ``config`` is left out (the settings are the case's, and config.yaml's layout is not pinned here), and of
    an optimizer's param_groups only the learning rates are kept (the other entries are flags that vary with
    the torch version)."""
    state = torch.load(path, weights_only=True, map_location="cpu")
    state.pop("config", None)
    tensors: dict[str, torch.Tensor] = {}
    other: dict[str, Any] = {}
    _split(state, "", tensors, other)
    return tensors, json.loads(json.dumps(other))


def planner_outputs(tmp: Path) -> dict[str, Any]:
    """The planner's JSON of `evaluate --policy lagrangian` and `bound` on the default fleet (timings dropped)."""
    out: dict[str, Any] = {}
    commands = {"evaluate": ["evaluate", "--policy", "lagrangian", "--episodes", "3", "--bound-iters", "4", "--quiet",
                             "--seed", "1000000"],
                "bound": ["bound", "--episodes", "2", "--bound-iters", "3", "--quiet", "--seed", "1000000"]}
    for name, argv in commands.items():
        path = tmp / f"{name}.json"
        with contextlib.redirect_stdout(io.StringIO()):
            assert main([*argv, "--json", str(path)]) == 0
        data = json.loads(path.read_text(encoding="utf-8"))
        for key in VOLATILE_BOUND:
            data.get("bound", {}).pop(key, None)
        out[name] = data
    return out


# -- store and compare ---------------------------------------------------------------------------------------
def store_run(name: str, run: Path) -> None:
    where = GOLDEN / name
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    (where / "metrics.csv").write_text(metrics_text(run / "metrics.csv"), encoding="utf-8")
    _write_json(where / "summary.json", summary_data(run / "summary.json"))
    tensors, other = final_state(run / "final.pt")
    torch.save({k: v.clone() for k, v in tensors.items()}, where / "final_tensors.pt")
    _write_json(where / "final_other.json", other)


def store_planner(data: dict[str, Any]) -> None:
    where = GOLDEN / "planner"
    where.mkdir(parents=True, exist_ok=True)
    for name, value in data.items():
        _write_json(where / f"{name}.json", value)


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


TENSOR_RTOL = 1e-5
"""How far a stored tensor may move (relative, and absolute near 0) when the run is repeated on another CPU."""


def assert_run_matches(name: str, run: Path) -> None:
    where = GOLDEN / name
    assert metrics_text(run / "metrics.csv") == (where / "metrics.csv").read_text(encoding="utf-8")
    assert summary_data(run / "summary.json") == _read_json(where / "summary.json")
    tensors, other = final_state(run / "final.pt")
    stored = torch.load(where / "final_tensors.pt", weights_only=True)
    assert sorted(tensors) == sorted(stored)
    # Bit-equal on the CPU that stored them; within TENSOR_RTOL on another vector unit (AVX2 and AVX-512 kernels of
    # torch sum in different orders, which moved the bridge agent's weights by up to 1.5e-8 on an AVX-512 machine).
    changed = {k: float((tensors[k].double() - stored[k].double()).abs().max()) for k in stored
               if tensors[k].dtype != stored[k].dtype
               or not torch.allclose(tensors[k], stored[k], rtol=TENSOR_RTOL, atol=TENSOR_RTOL)}
    assert not changed, f"final.pt tensors differ from tests/golden/{name} (largest difference): {changed}"
    assert other == _read_json(where / "final_other.json")


def assert_close(got: Any, want: Any, where: str = "") -> None:
    """Equal structure, strings, bools, None and ints; floats within PLANNER_RTOL relative."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for k in want:
            assert_close(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_close(g, w, f"{where}[{i}]")
    elif isinstance(want, float) and not isinstance(got, bool) and isinstance(got, int | float):
        assert math.isclose(got, want, rel_tol=PLANNER_RTOL, abs_tol=1e-12), f"{where}: {got!r} != {want!r}"
    else:
        assert got == want and type(got) is type(want), f"{where}: {got!r} != {want!r}"


# -- tests ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(RUNS))
def test_training_run_matches_its_golden_outputs(name, tmp_path):
    run = RUNS[name](tmp_path)
    if REGENERATE:
        store_run(name, run)
    assert_run_matches(name, run)


def test_planner_numbers_match_their_golden_outputs(tmp_path):
    data = planner_outputs(tmp_path)
    if REGENERATE:
        store_planner(data)
    for name, value in data.items():
        assert_close(value, _read_json(GOLDEN / "planner" / f"{name}.json"), name)


def regenerate() -> None:
    """Rewrite tests/golden/ from fresh runs (the same settings the tests use)."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BRIDGEFLEET_CACHE_DIR"] = str(Path(tmp) / "cache")  # as conftest: no user cache read
        for name, run_case in RUNS.items():
            case = Path(tmp) / name
            case.mkdir()
            store_run(name, run_case(case))
            print(f"wrote {GOLDEN / name}")
        store_planner(planner_outputs(Path(tmp)))
        print(f"wrote {GOLDEN / 'planner'}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: PYTHONPATH=src python tests/test_golden.py --regenerate")
    regenerate()
