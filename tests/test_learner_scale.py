"""benchmarks/learner_scale.py: the ratio of the agent's distance to the bound to the planner's, and its interval."""

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from bridgefleet.evaluation.evaluate import BoundEstimate

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("learner_scale", ROOT / "benchmarks" / "learner_scale.py")
learner_scale = importlib.util.module_from_spec(spec)
spec.loader.exec_module(learner_scale)


def _bound(values):
    values = np.asarray(values, dtype=np.float64)
    return BoundEstimate(float(values.mean()), 0.0, values)


def test_an_agent_twice_as_far_on_every_fleet_is_twice_as_far_with_no_doubt():
    bound = _bound([10.0, 20.0, 30.0, 40.0])
    per_bridge = np.array([1.0, 2.0, 1.0, 2.0])  # the planner's distance, 2 bridges a fleet
    planner = SimpleNamespace(returns=bound.values - 2 * per_bridge)
    agent = SimpleNamespace(returns=bound.values - 4 * per_bridge)
    half, ratio, (lo, hi) = learner_scale.gap_ratio(bound, planner, agent, 2, resamples=999)
    assert half == pytest.approx(3.1824463 * np.std(per_bridge, ddof=1) / 2)  # Student t(3), 4 fleets
    assert ratio == pytest.approx(2.0) and lo == pytest.approx(2.0) and hi == pytest.approx(2.0)


def test_the_interval_widens_with_the_planners_own_error_and_holds_the_ratio():
    rng = np.random.default_rng(3)
    bound = _bound(rng.normal(100.0, 5.0, 40))
    d_planner = rng.normal(0.1, 0.3, 40)  # near the bound, noisy: the ratio is barely determined
    d_agent = d_planner + 0.1
    planner = SimpleNamespace(returns=bound.values - d_planner)
    agent = SimpleNamespace(returns=bound.values - d_agent)
    _, ratio, (lo, hi) = learner_scale.gap_ratio(bound, planner, agent, 1, resamples=999)
    assert ratio == pytest.approx(d_agent.mean() / d_planner.mean())
    assert lo < ratio < hi and hi - lo > 1.0


def test_no_ratio_where_the_planner_is_not_below_the_bound():
    bound = _bound([10.0, 20.0, 30.0])
    planner = SimpleNamespace(returns=bound.values + np.array([0.5, -0.2, 0.1]))  # above the grid bound on average
    agent = SimpleNamespace(returns=bound.values - 1.0)
    half, ratio, (lo, hi) = learner_scale.gap_ratio(bound, planner, agent, 1, resamples=999)
    assert half > 0 and np.isnan(ratio) and np.isnan(lo) and np.isnan(hi)
