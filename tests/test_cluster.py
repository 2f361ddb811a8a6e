"""A real two-node Ray cluster on this machine (Ray's own ``ray.cluster_utils.Cluster``: a head and a second node,
one CPU each): a sweep, a chunked bound and the planner's chunked windows run on it and work lands on both nodes;
the chunked bound and the planner's decisions equal the local run's, and so does each trial of the sweep."""

import json

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the [ray] extra is not installed (.ci/run installs it)")

import yaml  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from bridgefleet.cli import main  # noqa: E402
from bridgefleet.config import FleetConfig  # noqa: E402
from bridgefleet.evaluation.evaluate import evaluate_policy  # noqa: E402
from bridgefleet.planning.bound import fleet_mdps, lagrangian_bound  # noqa: E402
from bridgefleet.planning.chunks import RaySolver  # noqa: E402
from bridgefleet.planning.planner import LagrangianPlanner  # noqa: E402
from bridgefleet.sim.simulator import FleetSimulator  # noqa: E402


def _space(tmp_path, space):
    """A tiny sweep (as tests/test_sweep.py's): 32 episodes of a 5-year fleet per trial, one torch thread and
    fp32 (``amp: auto`` probes the machine's speed, which another load on it can change)."""
    fixed = {"amp": False, "threads": 1, "episodes": 32, "num_envs": 8, "eval_every": 8, "checkpoint_every": 8,
             "eval_episodes": 4, "learning_starts": 2000, "batch_size": 512, "fleet": {"horizon_years": 5}}
    p = tmp_path / "space.yaml"
    p.write_text(yaml.safe_dump({"preset": "sarsa", "fixed": fixed, "space": space}))
    return p


@pytest.fixture(scope="module")
def cluster():
    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    c.add_node(num_cpus=1)
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    c.wait_for_nodes()
    yield c
    ray.shutdown()
    c.shutdown()


def _fleet_bound(solver=None):
    cfg = FleetConfig(n_urban=70, n_rural=70, horizon_years=6, fixed_fleet=True, fleet_seed=5)
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    args = (cfg, sim.profile, sim.state, sim.weight, sim.annual_budget)
    mdps, rows = fleet_mdps(*args, step=0.1, max_poor=0.1)
    search, _ = fleet_mdps(*args, step=0.2, max_poor=0.1)
    kw = {} if solver is None else {"solver": solver}
    return lagrangian_bound(mdps, rows, search, max_iter=12, store=(0, 3), **kw)


def test_a_chunked_bound_runs_on_both_nodes_and_equals_the_local_run(cluster):
    nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert len(nodes) == 2
    local = _fleet_bound()
    solver = RaySolver(cluster.address, chunks=4)
    remote = _fleet_bound(solver)
    assert solver.nodes == nodes  # chunks ran on the head and on the second node
    np.testing.assert_array_equal(remote.values, local.values)
    np.testing.assert_array_equal(remote.price_cost, local.price_cost)
    np.testing.assert_array_equal(remote.price_poor, local.price_poor)
    np.testing.assert_array_equal(remote.tables, local.tables)
    assert remote.iterations == local.iterations


def test_the_planners_windows_run_in_chunks_on_both_nodes_and_decide_as_the_local_run(cluster):
    # 0.05 MB holds one year of these 40 bridges' tables: every later window is a chunked solve in its own layout
    # (three samples of a fixed fleet: up to three rows a bridge).
    cfg = FleetConfig(n_urban=20, n_rural=20, horizon_years=6, fixed_fleet=True, fleet_seed=5)
    local = evaluate_policy(LagrangianPlanner(max_iter=4, memory_mb=0.05), cfg, episodes=3, seed=5)
    solver = RaySolver(cluster.address, chunks=4)
    remote = evaluate_policy(LagrangianPlanner(max_iter=4, memory_mb=0.05, solver=solver), cfg, episodes=3, seed=5)
    assert solver.nodes == {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    np.testing.assert_array_equal(remote.returns, local.returns)
    np.testing.assert_array_equal(remote.deck_by_year, local.deck_by_year)


def test_a_sweep_runs_its_trials_on_both_nodes(cluster, tmp_path):
    space = _space(tmp_path, {"n_step": {"grid": [1, 3]}})

    on_cluster = tmp_path / "cluster"
    assert main(["sweep", str(space), "--out", str(on_cluster), "--no-asha", "--ray-address", cluster.address]) == 0
    ran_on = {p.read_text().strip() for p in (on_cluster / "trials").glob("*.node")}
    assert ran_on == {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    for trial in (on_cluster / "trials").glob("*.node"):  # each trial ran its own settings to the end
        run = trial.with_suffix("")
        summary = json.loads((run / "summary.json").read_text())
        assert summary["episodes"] == 32 and np.isfinite(summary["final_eval_return"])
        local = tmp_path / "local" / run.name  # the same trial, trained here in this process
        assert main(["train", "--config", str(run / "config.yaml"), "--out", str(local), "--quiet"]) == 0
        assert json.loads((local / "summary.json").read_text())["final_eval_return"] == summary["final_eval_return"]
