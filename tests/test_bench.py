"""Tests of ``bridgefleet.bench`` (aggregation on hand-made rows, a tiny end-to-end run) and the SB3 peer script."""

from __future__ import annotations

import csv
import importlib.util
import math
import sys
from pathlib import Path

import pytest

from bridgefleet.bench import measure as bench
from bridgefleet.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def _row(preset: str, seed: int, ett: int | None, t2t: float | None, wall: float, steady: float,
         ups: float = 10.0, ret: float = -1000.0, spe: float = 0.5) -> dict:
    return {"preset": preset, "seed": seed, "reached": ett is not None, "episodes_to_target": ett,
            "seconds_to_target": t2t, "wall_seconds": wall, "seconds_per_episode": spe,
            "seconds_per_episode_steady": steady, "updates_per_second": ups, "final_eval_return": ret}


def test_summarize_hand_computed() -> None:
    rows = [
        _row("baseline", 0, 100, 50.0, 60.0, 1.0, ups=10, ret=-1000),
        _row("mid", 0, 50, 10.0, 11.0, 1.0),
        _row("fast", 0, 20, 5.0, 6.0, 0.5),
        _row("baseline", 1, 300, 150.0, 160.0, 2.0, ups=20, ret=-1100),
        _row("mid", 1, 60, 20.0, 21.0, 1.0),
        _row("fast", 1, None, None, 10.0, 0.25),
        _row("baseline", 2, None, None, 400.0, 3.0, ups=30, ret=-1200),
        _row("mid", 2, 70, 30.0, 31.0, 1.0),
        _row("fast", 2, None, None, 12.0, 1.0),
    ]
    s = {r["preset"]: r for r in bench.summarize(rows)}
    assert list(s) == ["baseline", "mid", "fast"]
    b = s["baseline"]
    assert (b["runs"], b["reached"]) == (3, 2)
    assert b["episodes_to_target_median"] == 300  # median of (100, 300, ∞)
    assert (b["episodes_to_target_min"], b["episodes_to_target_max"]) == (100, 300)
    assert b["seconds_to_target_median"] == 150.0
    assert b["seconds_per_episode_steady_median"] == 2.0
    assert b["updates_per_second_median"] == 20.0
    assert b["final_eval_return_median"] == -1100.0
    assert b["speedup_seconds_per_episode"] == 1.0
    assert b["speedup_time_to_target"] == 1.0 and b["speedup_time_to_target_bound"] == "="
    assert b["plan_episodes"] == 2000 and b["plan_speedup"] == 1.0
    m = s["mid"]
    assert m["reached"] == 3 and m["episodes_to_target_median"] == 60
    assert m["speedup_seconds_per_episode"] == 2.0
    assert m["speedup_time_to_target"] == pytest.approx(7.5)  # 150 / 20
    f = s["fast"]
    assert f["reached"] == 1
    assert f["episodes_to_target_median"] is None  # median of (20, ∞, ∞): not reached
    assert (f["episodes_to_target_min"], f["episodes_to_target_max"]) == (20, 20)
    assert f["seconds_to_target_median"] is None
    assert f["speedup_seconds_per_episode"] == pytest.approx(4.0)  # 2.0 / 0.5
    assert f["speedup_time_to_target"] is None and f["speedup_time_to_target_bound"] == ""
    assert f["plan_label"] == "" and f["plan_speedup"] is None


def test_summarize_baseline_never_reached_gives_lower_bound() -> None:
    rows = [_row("baseline", i, None, None, w, 2.0) for i, w in enumerate((100.0, 200.0, 300.0))]
    rows += [_row("default", i, 40, 10.0, 11.0, 0.1) for i in range(3)]
    s = {r["preset"]: r for r in bench.summarize(rows)}
    assert s["baseline"]["speedup_time_to_target"] is None
    assert s["default"]["speedup_time_to_target"] == pytest.approx(20.0)  # ≥ 200 / 10
    assert s["default"]["speedup_time_to_target_bound"] == ">="
    assert s["default"]["speedup_seconds_per_episode"] == pytest.approx(20.0)
    assert "≥ 20.00×" in bench.markdown_table(list(s.values()))


def test_summarize_falls_back_to_run_seconds_per_episode() -> None:
    rows = [_row("baseline", 0, None, None, 10.0, math.nan, spe=2.0), _row("x", 0, None, None, 1.0, math.nan, spe=0.5)]
    s = {r["preset"]: r for r in bench.summarize(rows)}
    assert s["x"]["speedup_seconds_per_episode"] == pytest.approx(4.0)
    # Baseline has a steady figure (1.0), x does not: both use whole-run s/episode (2.0 / 0.5), never 1.0 / 0.5.
    rows[0]["seconds_per_episode_steady"] = 1.0
    s = {r["preset"]: r for r in bench.summarize(rows)}
    assert s["x"]["speedup_seconds_per_episode"] == pytest.approx(4.0)


def test_plan_targets_cover_plan_presets() -> None:
    from bridgefleet.config.presets import PRESETS

    assert set(bench.PLAN_TARGETS) == set(PRESETS) - {"default", "sarsa", "fleet", "distill"}
    assert bench.PLAN_TARGETS["all"] == ("+ All optimizations", 600, 6.0, 10.0)


def test_bench_config_and_caps() -> None:
    cfg = bench.bench_config("baseline", 2, "full", device="cpu")
    assert cfg.stop_at_target and cfg.seed == 2 and cfg.episodes == bench.PROFILES["full"].caps["1env"]
    assert bench.bench_config("vectorized", 0, "quick", caps={"vec": 77}).episodes == 77
    assert bench.bench_config("sarsa", 0, "quick", caps={"sarsa": 99}).episodes == 99
    assert bench._parse_caps("1env=60, sarsa=2000") == {"1env": 60, "sarsa": 2000}
    with pytest.raises(ValueError):
        bench._parse_caps("1env")
    with pytest.raises(ValueError, match="at least 1"):
        bench._parse_caps("1env=-5")
    with pytest.raises(ConfigError, match="--device 'tpu'"):
        bench.run_bench(presets=["baseline"], device="tpu", tiny=True)
    with pytest.raises(ConfigError):
        bench.bench_config("nope", 0)
    with pytest.raises(ConfigError):
        bench.run_bench(profile="slow")


def test_tiny_bench_end_to_end(tmp_path: Path) -> None:
    rows = bench.run_bench(profile="quick", seeds=1, presets=["baseline", "sarsa"], device="cpu", out=tmp_path,
                           tiny=True, isolate=False, progress=False)
    assert [r["preset"] for r in rows] == ["baseline", "sarsa"]
    for name in ("bench.csv", "bench_summary.csv", "bench.md", "bench.png"):
        assert (tmp_path / name).stat().st_size > 0
    with (tmp_path / "bench.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == bench.RUN_FIELDS
        assert len(list(reader)) == 2
    with (tmp_path / "bench_summary.csv").open(newline="") as f:
        summary = {r["preset"]: r for r in csv.DictReader(f)}
    assert float(summary["baseline"]["speedup_seconds_per_episode"]) == 1.0
    md = (tmp_path / "bench.md").read_text(encoding="utf-8")
    for text in ("torch", "threads", "machine", "| baseline |", "| sarsa |", "60 min", "interleaved",
                 "4 evaluation fleets", "precision and threads"):
        assert text in md
    with (tmp_path / "bench.csv").open(newline="") as f:
        for r in csv.DictReader(f):  # what amp: auto / threads: auto chose, and why
            assert r["amp"] in ("bf16", "off") and int(r["threads"]) >= 1 and "threads" in r["hardware_reason"]
    assert "| 1.00× |" in md


def test_cli_parser_wiring(tmp_path: Path) -> None:
    import argparse

    p = bench.add_arguments(argparse.ArgumentParser())
    args = p.parse_args(["--profile", "full", "--seeds", "2", "--presets", "baseline,default", "--out", str(tmp_path)])
    assert (args.profile, args.seeds, args.presets, args.tiny) == ("full", 2, "baseline,default", False)


@pytest.mark.parametrize(("argv", "message"), [
    (["--presets", "baseline,,double", "--tiny"], "--presets 'baseline,,double': an empty entry"),
    (["--device", "tpu", "--tiny"], "--device 'tpu': use cpu, cuda or auto"),
    (["--tiny", "--out", "AFILE"], "is a file, not a folder"),
])
def test_bad_bench_options_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                               message: str) -> None:
    from bridgefleet.cli import main

    (tmp_path / "afile").write_text("mine")
    argv = [str(tmp_path / "afile") if a == "AFILE" else a for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "bench")]
    assert main(["bench", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert (tmp_path / "afile").read_text() == "mine" and not (tmp_path / "bench").exists()


@pytest.fixture
def peer(monkeypatch: pytest.MonkeyPatch):
    """The peer script as a module (it imports Stable-Baselines3 only when a row needs it)."""
    spec = importlib.util.spec_from_file_location("peer_sb3", ROOT / "benchmarks" / "peer_sb3.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "peer_sb3", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_peer_summary_hand_computed(peer) -> None:
    run = peer.Run
    results = {
        "sb3": [run(20.0, -396.0, 7250), run(22.0, -398.0, 7250), run(30.0, -400.0, 7250)],
        "fast": [run(4.0, -395.0, 1812), run(4.4, -400.0, 1812), run(3.0, -400.0, 1812)],
    }
    sb3, fast = peer.summarize(results)
    assert (sb3.speedup, sb3.diff_mean, sb3.diff_se) == (1.0, 0.0, 0.0)
    assert (fast.wall_median, fast.wall_min, fast.wall_max) == (4.0, 3.0, 4.4)
    assert fast.speedup == pytest.approx(22.0 / 4.0)  # ratio of medians, not of means
    assert fast.ret_mean == pytest.approx(-398.3333333)
    # paired differences +1, −2, 0: mean −1/3, sd √(7/3), se √(7/3)/√3 = 0.8819
    assert fast.diff_mean == pytest.approx(-1 / 3)
    assert fast.diff_se == pytest.approx(math.sqrt(7 / 3) / math.sqrt(3))
    assert fast.meets_target  # 5.5× and −0.33 − 2 × 0.88 = −2.10 ≥ −1 % × 398.0 = −3.98
    slower = peer.summarize({"sb3": results["sb3"], "fast": [run(5.0, r.ret, 1) for r in results["fast"]]})[1]
    assert slower.speedup == pytest.approx(4.4) and not slower.meets_target
    worse = peer.summarize({"sb3": results["sb3"], "fast": [run(4.0, r.ret - 5.0, 1) for r in results["sb3"]]})[1]
    assert worse.diff_mean == -5.0 and worse.diff_se == 0.0 and not worse.meets_target
    # One collapsed seed: the standard error is large, the lower bound far below −1 %.
    noisy = peer.summarize({"sb3": results["sb3"], "fast": [run(4.0, -396.0, 1), run(4.0, -398.0, 1),
                                                              run(4.0, -900.0, 1)]})[1]
    assert noisy.diff_mean == pytest.approx(-500 / 3) and not noisy.meets_target
    two = peer.summarize({k: v[:2] for k, v in results.items()})[1]
    assert two.meets_target is None  # too few seeds for a verdict
    with pytest.raises(ValueError, match="same seeds"):
        peer.summarize({"sb3": results["sb3"], "fast": results["fast"][:2]})


@pytest.mark.parametrize("argv", [["--rows", "sb3,turbo"], ["--rows", "sb3,sb3"], ["--steps", "1000"],
                                  ["--seeds", "0"], ["--threads", "-1"], ["--out", "/nonexistent/dir/p.md"]])
def test_peer_rejects_bad_arguments(peer, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        peer.main(argv)
    assert exc.value.code == 2 and "error:" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("stable_baselines3") is None, reason="stable-baselines3 not installed")
def test_peer_script_smoke(tmp_path: Path, peer) -> None:
    out = tmp_path / "peer.md"
    # Just past learning_starts: every row's acting, env, replay and a few dozen updates.
    assert peer.main(["--steps", "1200", "--num-envs", "4", "--seeds", "2", "--eval-episodes", "2",
                      "--rows", "sb3,ours1,matched,fast", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Stable-Baselines3" in text and "FleetVectorEnv 4 envs" in text and "Per-seed returns" in text
