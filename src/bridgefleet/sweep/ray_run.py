"""Trials on Ray Tune: each trial is one ``train`` run in its own run folder, reporting its evaluations to
Tune; a trial restarted by Tune (its worker died, or the sweep was resumed) resumes from its checkpoint.
The same engine runs ``bench --ray``'s preset × seed matrix."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bridgefleet.cluster import connect, import_ray

__all__ = ["ASHA_SHARE", "bench_on_ray", "connect", "import_ray", "run_trials", "trial"]

ASHA_SHARE = 0.5
"""The share of its episodes a trial is expected to train under ASHA (:func:`run_trials`' rungs at a quarter and a
half of them, reduction factor 2: half the trials stop at a quarter, a quarter at a half, a quarter finish), the
sweep's progress bar's work a trial (:func:`trials_counted`). A small sweep of 4 trials of 320 episodes stopped 2 at
80, 0.625 a trial."""


def trial(config: dict[str, Any]) -> None:
    """One sweep trial (runs in a Ray worker): train, or resume its run folder, reporting each evaluation."""
    import ray
    from ray import tune

    from bridgefleet.config.presets import resolve_config
    from bridgefleet.outputs import write_text
    from bridgefleet.runs.folder import has_progress
    from bridgefleet.training.runner import resume, train

    settings = {k: v for k, v in config.items() if not k.startswith("_")}
    run_dir = Path(config["_out"]) / "trials" / tune.get_context().get_trial_id()
    cfg = resolve_config(config["_preset"], None, {**settings, "threads": 1})  # one torch thread per trial

    def report(episodes: int, seconds: float, ret: float) -> None:
        if episodes < cfg.episodes:  # the last evaluation is reported with the summary, once it is written
            tune.report({"eval_return": ret, "episodes": episodes, "seconds": seconds})

    (run_dir.parent).mkdir(parents=True, exist_ok=True)
    write_text(run_dir.parent / f"{run_dir.name}.pid", str(os.getpid()))
    write_text(run_dir.parent / f"{run_dir.name}.node", ray.get_runtime_context().get_node_id())  # which machine
    with (run_dir.parent / f"{run_dir.name}.attempts").open("a", encoding="utf-8") as f:
        f.write(f"{_episodes_done(run_dir) if (run_dir / 'config.yaml').exists() else 0}\n")
    if (run_dir / "config.yaml").exists() and has_progress(run_dir):
        _, summary = resume(run_dir, progress=False, on_eval=report)
    else:
        _, summary = train(cfg, run_dir, progress=False, on_eval=report)
    tune.report({"eval_return": summary["final_eval_return"], "episodes": summary["episodes"],
                 "seconds": summary["wall_seconds"], "done_training": True})


def _episodes_done(run_dir: Path) -> int:
    from bridgefleet.runs.checkpoints import checkpoints

    ckpts = checkpoints(run_dir)
    return int(ckpts[-1].stem.split("_")[1]) if ckpts else 0


def run_trials(space, out: Path, samples: int, seeds: int, asha: bool, max_episodes: int,
               resume_dir: bool = False) -> None:
    """Run (or resume) the sweep's trials under Tune into ``out/tune``; trials' run folders in ``out/trials``;
    the trials counted on the command's progress bar where one is open (:func:`trials_counted`; a resumed sweep
    keeps the counter it was started with)."""
    _, tune = import_ray()
    trainable = tune.with_resources(trial, {"cpu": 1})
    store = (out / "tune").resolve()
    if resume_dir:
        tuner = tune.Tuner.restore(str(store / "sweep"), trainable=trainable, resume_errored=True,
                                   restart_errored=False, resume_unfinished=True)
    else:
        param_space = {**space.fixed, **space.to_tune(seeds), "_preset": space.preset, "_out": str(out.resolve())}
        scheduler = tune.schedulers.ASHAScheduler(metric="eval_return", mode="max", time_attr="episodes",
                                                  max_t=max_episodes, grace_period=max(1, max_episodes // 4),
                                                  reduction_factor=2) if asha else None
        tuner = tune.Tuner(trainable, param_space=param_space,
                           tune_config=tune.TuneConfig(num_samples=samples, scheduler=scheduler),
                           run_config=tune.RunConfig(storage_path=str(store), name="sweep", verbose=0,
                                                     failure_config=tune.FailureConfig(max_failures=2),
                                                     callbacks=[trials_counted(tune, max_episodes,
                                                                               ASHA_SHARE if asha else 1.0)]))
    tuner.fit()


def trials_counted(tune, max_episodes: int, expected: float = 1.0):
    """A Tune callback (it runs in the driver) that moves the command's bar (:func:`bridgefleet.progress.current`,
    nothing without one), whose units are trials, by each trial's episodes as they are reported, in shares of
    ``max_episodes``. Each trial holds ``expected`` of a trial on the bar's total (:data:`ASHA_SHARE` under ASHA):
    one that trains past it adds the excess as it goes, one that ends short of it (ASHA stopped it) takes the rest
    off, as a price search does (:class:`bridgefleet.progress.Share`): not done, so the rate stays true. It holds no
    bar itself: Tune saves it with the sweep's state."""
    from bridgefleet.progress import current

    class Trials(tune.Callback):
        def __init__(self) -> None:
            self.counted: dict[str, int] = {}  # episodes counted on the bar, a trial
            self.ended = 0

        def on_trial_result(self, iteration, trials, trial, result, **info) -> None:
            episodes = min(int(result.get("episodes", 0)), max_episodes)
            before = self.counted.get(trial.trial_id, 0)
            if episodes > before and (bar := current()) is not None:
                self.counted[trial.trial_id] = episodes
                grown = max(episodes / max_episodes, expected) - max(before / max_episodes, expected)
                if grown > 0:  # past what the trial held on the total
                    bar.total += grown
                bar.advance((episodes - before) / max_episodes)

        def on_trial_complete(self, iteration, trials, trial, **info) -> None:
            if (bar := current()) is None:
                return
            done = self.counted.get(trial.trial_id, 0) / max_episodes
            bar.total -= max(done, expected) - done  # what it held and did not train comes off
            self.counted[trial.trial_id] = max_episodes
            self.ended += 1
            bar.note(f"{self.ended} trial(s) ended")

    return Trials()


def bench_on_ray(cfgs: Sequence[Any], run_dirs: Sequence[Path],
                 run: Callable[[Any, Path], dict[str, Any]]) -> list[dict[str, Any]]:
    """``bench --ray``: ``run(config, run folder)`` (the bench's in-process runner, which returns its row) for
    every pair as a Ray task with one core and one torch thread; the rows in the given order. The runner is
    passed in, so this module does not import :mod:`bridgefleet.bench.measure` (which imports it)."""
    import dataclasses

    ray, _ = import_ray()
    task = ray.remote(num_cpus=1)(lambda cfg, path: run(cfg, path))
    refs = [task.remote(dataclasses.replace(c, threads=1), p) for c, p in zip(cfgs, run_dirs, strict=True)]
    return ray.get(refs)
