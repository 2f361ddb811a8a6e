"""A trained run's policy, read from its folder without the trainer: final.pt (the acting networks at the best
evaluation), else its newest intact checkpoint."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bridgefleet.agents import branching, bridge
from bridgefleet.agents.learner import DQNLearner, resolve_device
from bridgefleet.config import FleetConfig
from bridgefleet.config.training import TrainConfig
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.runs import inputs
from bridgefleet.runs.checkpoints import checkpoints, newest_intact, note

__all__ = ["load_agents", "load_policy", "warn_untrained_budget"]


def _load_run(run_dir: str | Path, device: str) -> tuple[TrainConfig, dict[str, Any]]:
    """The run's config and model state: final.pt, else (missing or damaged) its newest intact checkpoint,
    with a note naming the file used. Storages are mapped to the CPU, so a run trained on a GPU opens anywhere."""
    run_dir = Path(run_dir)
    final = run_dir / "final.pt"
    paths = ([final] if final.exists() else []) + checkpoints(run_dir)[::-1]
    if not paths:
        raise FileNotFoundError(f"{run_dir}: no final.pt or checkpoint (is it a bridgefleet run directory?)")
    resolve_device(device)  # an unusable --device is named before any file is read
    found = newest_intact(paths)  # onto the CPU (a GPU run opens anywhere); the learners move it
    if found is None:
        raise FileNotFoundError(f"{run_dir}: no intact final.pt or checkpoint (each is named above)")
    path, state = found
    if path != final:
        note(f"note: {run_dir}: no {'intact ' if final.exists() else ''}final.pt; using {path.name} "
             f"(episode {state['episodes_done']})")
    if _updates(run_dir, state) == 0:
        note(f"warning: {run_dir}: its network was never updated (training stopped before the replay held a batch), "
             f"so its policy is untrained and its decisions arbitrary; train more: bridgefleet train --resume "
             f"{run_dir} --episodes N")
    inputs.warn_changed(run_dir)  # an input file edited since the run was trained: one line, and go on
    _warn_edited_config(run_dir, state, path)
    data = dict(state["config"])
    data["device"] = device
    data["compile"] = "off"
    return TrainConfig.from_dict(data, str(path)), state


def _warn_edited_config(run_dir: Path, state: dict[str, Any], path: Path) -> None:
    """One warning line when the run's config.yaml was edited since ``path`` was written (the checkpoint's own
    config is what ``evaluate``, ``plan`` and ``report`` use; issue 79's probe: a hand-edited budget share or
    horizon was silently ignored). Nothing when config.yaml is missing or unreadable."""
    from bridgefleet.config import ConfigError, read_yaml
    from bridgefleet.runs.folder import changed_fields

    try:
        data = read_yaml(run_dir / "config.yaml")
        now = TrainConfig.from_dict(dict(data), "config.yaml").to_dict(unread=False)
        trained = TrainConfig.from_dict(dict(state["config"]), str(path)).to_dict(unread=False)
    except (ConfigError, OSError, TypeError, ValueError):  # a config.yaml that does not load changes nothing here
        return
    diff = [d for d in changed_fields(trained, now) if d[0] not in ("device", "compile")]
    if diff:
        name, was, is_now = diff[0]
        more = f" (and {len(diff) - 1} more field(s))" if len(diff) > 1 else ""
        note(f"warning: {run_dir / 'config.yaml'}: {name} is {is_now!r} but {path.name} was trained with {was!r}"
             f"{more}; its trained settings are used (train the new config with --out to use it)")


def _updates(run_dir: Path, state: dict[str, Any]) -> int | None:
    """The learner updates behind ``state`` (final.pt's count, a checkpoint's learner step, else summary.json's for
    a final.pt written before the count); None where unknown."""
    if "updates" in state:
        return int(state["updates"])
    steps = [v["step"] for v in state.values() if isinstance(v, dict) and "step" in v]
    if steps:
        return int(steps[0])
    try:
        return int(json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))["updates"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _weights(state: dict[str, Any], name: str) -> dict[str, Any]:
    """Learner ``name``'s network: final.pt's (the acting network at the best evaluation), or a checkpoint's
    online network (the newest)."""
    return state[name]["online"]


def load_agents(run_dir: str | Path, device: str = "auto") -> tuple[TrainConfig, DQNLearner, DQNLearner]:
    """The trained urban and rural agents of a finished run (final.pt, else the latest checkpoint).

    Raises:
        FileNotFoundError: if the folder holds neither. ValueError: a per-bridge run (use :func:`load_policy`).
    """
    cfg, state = _load_run(run_dir, device)
    if cfg.agent != "fleet":
        raise ValueError(f"{run_dir} holds a per-bridge agent (agent: {cfg.agent}), not urban and rural agents")
    return cfg, *_fleet_agents(cfg, state)


def _fleet_agents(cfg: TrainConfig, state: dict[str, Any]) -> tuple[DQNLearner, DQNLearner]:
    """The urban and rural learners of a fleet-agent run, with the weights of its loaded ``state``."""
    fleet_cfg, _ = resolve_fleet(cfg.fleet)
    urban, rural = branching.build_learners(cfg, fleet_cfg.n_urban)
    urban.load_weights(_weights(state, "urban"))
    rural.load_weights(_weights(state, "rural"))
    return urban, rural


def load_policy(run_dir: str | Path, device: str = "auto") -> tuple[TrainConfig, Callable]:
    """The greedy policy of a trained run of either agent, for
    :func:`bridgefleet.evaluation.evaluate.evaluate_policy`.

    Raises:
        FileNotFoundError: if the folder holds no final.pt or checkpoint.
    """
    cfg, state = _load_run(run_dir, device)
    if cfg.agent == "bridge":
        learner = bridge.build_learner(cfg)
        learner.load_weights(_weights(state, "bridge"))
        learner.acting.eval()
        return cfg, bridge.BridgePolicy(learner.acting, learner.device, distilled=cfg.teacher is not None)
    return cfg, branching.agent_policy(*_fleet_agents(cfg, state))  # the state read once


def warn_untrained_budget(cfg: TrainConfig, scale: float | None, run_dir: str | Path, usd: float | None = None,
                          fleet: FleetConfig | None = None) -> None:
    """Warn where a run is asked to decide at ``scale`` × its fleet's sized budget (or ``usd`` USD a year on
    ``fleet``, a resolved fleet at its sized budget) outside the multiples it learned at
    (:attr:`TrainConfig.trained_budget_scales`): its decisions there are extrapolated, not learned. A negative or
    non-finite budget is left to the budget's own check (:func:`bridgefleet.inventory.fleet.set_budget`)."""
    if scale is None and usd is not None and fleet is not None and sum(fleet.budgets_usd) > 0:
        scale = usd / sum(fleet.budgets_usd)
    lo, hi = cfg.trained_budget_scales
    if scale is None or not (math.isfinite(scale) and scale >= 0) or lo * (1 - 1e-9) <= scale <= hi * (1 + 1e-9):
        return
    shown = f"{scale:.3g}"
    if float(shown) in (lo, hi):  # enough digits to show it lies outside
        shown = f"{scale:.10g}"
    learned = ("the sized budget alone (1 ×; the `default` preset learns at 0.25 to 2 ×)" if lo == hi == 1.0
               else f"{lo:g} to {hi:g} × the sized budget")
    warnings.warn(f"the budget is {shown} × the sized budget; {run_dir} learned at {learned}, so its decisions here "
                  "are extrapolated", stacklevel=2)
