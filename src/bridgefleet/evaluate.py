"""Policy evaluation on seeded fleets, all episodes simulated at once."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.fleet.model import POOR_BELOW
from bridgefleet.fleet.simulator import FleetSimulator, resolve_fleet
from bridgefleet.policies import HEURISTICS, Policy


@dataclass
class EvalResult:
    """Evaluation of one policy over N seeded episodes.

    Attributes:
        mean_return: mean discounted return (γ = config.discount), reward units.
        ci95: half-width of the 95 % confidence interval of the mean (normal approximation, 1.96 σ/√N).
        mean_annual_cost_usd: mean spend per year, USD.
        share_poor_end: mean share of bridges rated poor (< 5) at the end of the horizon, 0–1.
        deferred_per_year: mean number of requested actions deferred for lack of budget, per year.
        returns: float64 (N,) per-episode discounted returns.
    """

    policy: str
    episodes: int
    mean_return: float
    ci95: float
    mean_annual_cost_usd: float
    share_poor_end: float
    deferred_per_year: float
    returns: np.ndarray

    def row(self) -> dict:
        d = asdict(self)
        d.pop("returns")
        return d


def evaluate_policy(policy: Policy, config: FleetConfig, episodes: int = 100, seed: int = 0,
                    name: str = "policy", sim: FleetSimulator | None = None) -> EvalResult:
    """Run ``policy`` on ``episodes`` fleets seeded ``seed, seed+1, …`` in one batched simulator.

    Args:
        policy: callable (simulator, rng) → (urban actions int (E, n_urban), rural strategy int (E,)), or
            a per-bridge policy's requests int (E, B).
        config: the fleet configuration (an inventory in it is loaded).
        sim: an existing simulator with ``num_envs == episodes`` to reuse (optional).
    """
    if episodes < 1:
        raise ValueError(f"episodes = {episodes}: must be at least 1")
    if sim is None:
        config, fleet = resolve_fleet(config)
        sim = FleetSimulator(config, episodes, fleet)
    sim.reset(None, [seed + i for i in range(episodes)])
    rng = np.random.default_rng(seed)
    gamma = sim.config.discount
    ret = np.zeros(episodes)
    cost = np.zeros(episodes)
    deferred = np.zeros(episodes)
    horizon = sim.config.horizon_years
    for t in range(horizon):
        decision = policy(sim, rng)
        if isinstance(decision, np.ndarray):  # a per-bridge policy: requests (E, B)
            res = sim.step_requests(decision)
        else:
            urban, rural = decision
            res = sim.step(np.broadcast_to(urban, (episodes, sim.n_urban)), np.broadcast_to(rural, (episodes,)))
        ret += gamma**t * res.reward
        cost += res.cost.sum(1)
        deferred += res.deferred.sum(1)
    poor = (sim.state.condition < POOR_BELOW).mean(1)
    sd = ret.std(ddof=1) if episodes > 1 else 0.0
    return EvalResult(name, episodes, float(ret.mean()), 1.96 * sd / math.sqrt(episodes),
                      float(cost.mean() / horizon), float(poor.mean()), float(deferred.mean() / horizon), ret)


def evaluate_heuristics(config: FleetConfig, names: list[str] | None = None, episodes: int = 100,
                        seed: int = 0) -> list[EvalResult]:
    """Evaluate several heuristics (all by default) on the same seeds.

    Raises:
        ValueError: ``episodes`` < 1.
    """
    if episodes < 1:
        raise ValueError(f"episodes = {episodes}: must be at least 1")
    config, fleet = resolve_fleet(config)
    sim = FleetSimulator(config, episodes, fleet)
    return [evaluate_policy(HEURISTICS[n], config, episodes, seed, n, sim) for n in (names or list(HEURISTICS))]


def best_heuristic(results: list[EvalResult]) -> EvalResult:
    """The result with the highest mean return, random excluded."""
    return max((r for r in results if r.policy != "random"), key=lambda r: r.mean_return)


def format_table(results: list[EvalResult]) -> str:
    """Markdown table of results, best first."""
    head = ("| policy | mean discounted return | 95 % CI | mean annual cost (USD) | share poor at end "
            "| deferred / year |\n|---|---:|---:|---:|---:|---:|")
    rows = [f"| {r.policy} | {r.mean_return:.2f} | ± {r.ci95:.2f} | {r.mean_annual_cost_usd:,.0f} | "
            f"{r.share_poor_end:.1%} | {r.deferred_per_year:.2f} |"
            for r in sorted(results, key=lambda r: -r.mean_return)]
    return "\n".join([head, *rows])
