"""FleetEnv: the whole municipality (urban and rural agents) as one Gymnasium environment."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.envs import spaces as sp
from bridgefleet.inventory.fleet import resolve_fleet
from bridgefleet.sim.model import ACTION_NAMES, band_counts
from bridgefleet.sim.simulator import FleetSimulator, StepResult, check_actions


def step_info(result: StepResult, sim: FleetSimulator, i: int | slice) -> dict[str, Any]:
    """The ``info`` of a step for fleet(s) ``i``: reward parts, costs (USD), deferrals, per-bridge rewards."""
    nu = sim.n_urban
    return {
        "urban_reward": result.urban_reward[i],
        "rural_reward": result.rural_reward[i],
        "cost_usd": result.cost[i].sum(-1),
        "urban_cost_usd": result.cost[i][..., 0],
        "rural_cost_usd": result.cost[i][..., 1],
        "deferred": result.deferred[i].sum(-1),
        "deferred_urban": result.deferred[i][..., :nu].sum(-1),
        "deferred_rural": result.deferred[i][..., nu:].sum(-1),
        "bridge_reward": result.bridge_reward[i],
        "year": sim.t[i],
    }


class FleetEnv(gym.Env):
    """A municipality's bridge fleet; one step is one year.

    Observation: ``Dict(urban=Box(n_urban*4+1), rural=Box(10))`` float32, scaled (docs/fleet-model.md).
    Action: ``Dict(urban=MultiDiscrete([5]*n_urban), rural=Discrete(8))``.
    Reward: municipality total (urban + rural parts, in ``info``). The episode ends by time limit after
    ``horizon_years``: ``truncated=True``, never ``terminated`` (the fleet goes on existing). Its budgets are
    always the urban and the rural agency's (``config.agencies`` is set to ``urban_rural``), which the two agents
    observe.

    Args:
        config: FleetConfig (default fleet if None).
        render_mode: None, "ansi" (text table) or "rgb_array" (condition heat map, uint8 (H, W, 3)).

    Raises:
        ValueError: from ``step`` for mis-shaped or out-of-range actions, naming the field and value.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, config: FleetConfig | None = None, render_mode: str | None = None):
        # the plan's urban and rural agents: their observations hold the urban and the rural agency's budgets
        config, fleet = resolve_fleet((config or FleetConfig.default_model()).replace(agencies="urban_rural"))
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r} not in {self.metadata['render_modes']}")
        self.config = config
        self.render_mode = render_mode
        self.sim = FleetSimulator(config, 1, fleet)
        self.observation_space = sp.observation_space(config)
        self.action_space = sp.action_space(config)
        self._last: StepResult | None = None
        self._started = False

    def _obs(self) -> dict[str, np.ndarray]:
        urban, rural = self.sim.observe()
        return {"urban": urban[0], "rural": rural[0]}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.sim.reset([0], [seed])
        self._last = None
        self._started = True
        return self._obs(), {"year": 0}

    def step(self, action: dict[str, Any]):
        if not isinstance(action, dict) or set(action) != {"urban", "rural"}:
            raise ValueError(f"action must be a dict with keys 'urban' and 'rural', got {action!r}")
        urban, rural = check_actions(action["urban"], action["rural"], None, self.sim.n_urban)
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self.sim.t[0] >= self.config.horizon_years:
            raise RuntimeError("episode is over (horizon reached): call reset()")
        result = self.sim.step(urban, rural)
        self._last = result
        obs = self._obs()
        return obs, float(result.reward[0]), False, bool(result.truncated[0]), step_info(result, self.sim, 0)

    def render(self):
        if self.render_mode == "ansi":
            return render_ansi(self.sim, 0, self._last)
        if self.render_mode == "rgb_array":
            return render_heatmap(self.sim.state.condition[0])
        return None


def render_ansi(sim: FleetSimulator, i: int, last: StepResult | None) -> str:
    """Text summary of fleet ``i``: year, FHWA bands, spend, and the worst urban bridges."""
    c = sim.state.condition[i]
    good, fair, poor = band_counts(c)
    lines = [f"year {int(sim.t[i])}/{sim.config.horizon_years}  good {good}  fair {fair}  poor {poor}  "
             f"mean rating {c.mean():.2f}"]
    if last is not None:
        lines.append(f"spent USD {last.cost[i].sum():,.0f}  deferred {int(last.deferred[i].sum())}  "
                     f"reward {last.reward[i]:.2f}")
    nu = sim.n_urban
    for j in np.argsort(c[:nu])[:5]:
        act = ACTION_NAMES[int(last.actions[i, j])] if last is not None else "-"
        lines.append(f"  {sim.profile.bridge_id[j]:>16} rating {c[j]:.2f} age {sim.state.age[i, j]:.0f} "
                     f"last action {act}")
    return "\n".join(lines) + "\n"


def render_heatmap(condition: np.ndarray, cell: int = 12) -> np.ndarray:
    """Condition heat map: one cell per bridge, red (0) → yellow → green (9); uint8 (H, W, 3)."""
    n = condition.shape[0]
    cols = int(np.ceil(np.sqrt(n)))
    rows = int(np.ceil(n / cols))
    x = np.full(rows * cols, np.nan, dtype=np.float32)
    x[:n] = np.clip(condition / 9.0, 0.0, 1.0)
    red = np.where(x < 0.5, 1.0, 2.0 * (1.0 - x))
    green = np.where(x < 0.5, 2.0 * x, 1.0)
    rgb = np.stack([red, green, np.zeros_like(x)], axis=-1)
    rgb[np.isnan(x)] = 0.2
    img = (rgb.reshape(rows, cols, 3) * 255).astype(np.uint8)
    return np.repeat(np.repeat(img, cell, axis=0), cell, axis=1)
