"""``bridgefleet sweep SPACE.yaml``: a search over TrainConfig fields on Ray Tune (optional extra
``bridgefleet[ray]``), local by default or on a cluster (``--ray-address``); each trial one ``train`` run
in ``DIR/trials/<trial>``; ASHA stops poor trials early; results in ``DIR/sweep.csv`` and ``DIR/sweep.md``.
See docs/sweep.md."""

from __future__ import annotations

from pathlib import Path

from bridgefleet.outputs import write_text
from bridgefleet.progress import command_bar
from bridgefleet.sweep.results import write_results
from bridgefleet.sweep.space import SweepSpace, load_space

__all__ = ["SweepSpace", "load_space", "run_sweep"]


def run_sweep(space_file: str | Path | None, out: str | Path, ray_address: str | None = None, samples: int = 1,
              seeds: int = 1, asha: bool = True, resume: bool = False, progress: bool = False) -> list[dict]:
    """Run the sweep (or resume the one in ``out`` with ``resume``) and write sweep.csv / sweep.md. ``progress``:
    one progress bar over its trials (:mod:`bridgefleet.progress`; a trial's episodes move it, each trial held on
    its total at the share of its episodes ASHA is expected to let it train, :data:`~bridgefleet.sweep.ray_run.
    ASHA_SHARE`; a resumed sweep's counts the trials not yet finished).

    Raises:
        ConfigError: a bad space (names the field).
        ModuleNotFoundError: Ray missing (says how to install it).
        ConnectionError: an unreachable ``ray_address``.
        FileExistsError: ``out`` holds a sweep and ``resume`` is not set.
        FileNotFoundError: ``resume`` is set and ``out`` holds no sweep.
    """
    from bridgefleet.sweep import ray_run

    out = Path(out)
    if samples < 1 or seeds < 1:
        raise ValueError(f"--samples {samples} / --seeds {seeds}: each must be at least 1")
    saved = out / "space.yaml"
    if resume:
        if not saved.exists():
            raise FileNotFoundError(f"{out}: no sweep to resume (no space.yaml)")
        space = load_space(saved)
    else:
        if saved.exists():
            raise FileExistsError(f"{out} already holds a sweep: resume it with --resume {out}, or choose --out")
        if space_file is None:
            raise ValueError("give SPACE.yaml (or --resume DIR)")
        space = load_space(space_file)
    ray_run.import_ray()  # before anything is written
    ray_run.connect(ray_address)
    if not resume:
        out.mkdir(parents=True, exist_ok=True)
        write_text(saved, Path(space_file).read_text(encoding="utf-8"))
    from bridgefleet.config.presets import resolve_config

    episodes = resolve_config(space.preset, None, space.fixed).episodes
    planned = space.trials(samples, seeds)
    finished = len(list((out / "trials").glob("*/summary.json"))) if resume else 0
    share = ray_run.ASHA_SHARE if asha else 1.0  # what a trial is expected to train
    with command_bar(max(planned - finished, 0) * share, "sweep", "trial", progress):
        ray_run.run_trials(space, out, samples, seeds, asha, episodes, resume_dir=resume)
    rows = write_results(out, list(space.dims))
    if not resume and len(rows) < planned:  # Ctrl-C: Tune saved its state and returned
        raise KeyboardInterrupt(f"the sweep stopped with {len(rows)} of {planned} trials evaluated (results so far "
                                f"in {out / 'sweep.md'}); continue it with bridgefleet sweep --resume {out}")
    return rows
