"""The certified bound (planning/certify.py) holds for the simulator's continuous model on every input: it equals
do-nothing when nothing is affordable, and it is above the exact optimum of small deterministic fleets."""

import itertools

import numpy as np
import pytest

from bridgefleet.config import FleetConfig
from bridgefleet.evaluation.evaluate import evaluate_policy
from bridgefleet.planning.planner import LagrangianPlanner
from bridgefleet.sim.simulator import FleetSimulator


def _nothing(sim, rng=None):
    return np.zeros((sim.num_envs, sim.n_bridges), dtype=np.int64)


def _certified(cfg: FleetConfig, step: float, max_iter: int = 30) -> tuple[float, float]:
    """(certified bound, grid bound) of the one fixed fleet of ``cfg``."""
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    b = LagrangianPlanner(step=0.05, certify_step=step, max_iter=max_iter).prepare(sim)
    return float(b.certified[0]), float(b.values[0])


def test_with_no_budget_the_certified_bound_is_do_nothing_where_the_grid_bound_was_below_it():
    # The instance: 3 urban + 3 rural bridges, 5 years, no budget, deterministic drops (no sudden damage),
    # so do-nothing is the only policy and its return is exact. The grid DP (step 0.05) put its "bound" below it.
    cfg = FleetConfig(n_urban=3, n_rural=3, horizon_years=5, annual_budget_usd=0.0, deterioration_cv=0.0,
                      shock_probability=0.0, fixed_fleet=True)
    exact = evaluate_policy(_nothing, cfg, episodes=1, seed=0, name="nothing").mean_return
    certified, grid = _certified(cfg, 0.01, max_iter=2)
    assert grid < exact - 1.0  # −139.30 against −136.03: the grid model's error has no sign
    assert exact - 1e-6 * abs(exact) <= certified <= exact + 1e-3 * abs(exact), (certified, exact)
    coarse, _ = _certified(cfg, 0.05, max_iter=2)
    assert coarse >= certified - 1e-9  # still a bound on a coarse grid, only looser


def test_with_no_budget_and_random_drops_the_certified_bound_is_the_simulated_do_nothing():
    cfg = FleetConfig(n_urban=3, n_rural=3, horizon_years=5, annual_budget_usd=0.0, deterioration_cv=0.3,
                      shock_probability=0.0, fixed_fleet=True)
    sim = FleetSimulator(cfg, 20_000)
    returns = []
    for episode in range(20):  # 400,000 episodes of do-nothing
        sim.reset(None, None if episode else list(range(sim.num_envs)))
        ret = np.zeros(sim.num_envs)
        for t in range(cfg.horizon_years):
            ret += cfg.discount**t * sim.step_requests(_nothing(sim)).reward
        returns.append(ret)
    ret = np.concatenate(returns)
    mean, half = ret.mean(), 2.576 * ret.std(ddof=1) / np.sqrt(len(ret))  # 99 % CI: ±0.22 of −162.8
    certified, _ = _certified(cfg, 0.0005, max_iter=2)  # the drops' spread is ~0.01 rating points a year
    assert certified >= mean - half, (certified, mean, half)
    assert certified <= mean + 1e-3 * abs(mean) + half, (certified, mean, half)


def _exact_optimum(cfg: FleetConfig) -> float:
    """Best return over every joint action sequence the budgets allow (deterministic: open loop is optimal).

    Each bridge's return and spend per year under every sequence of its own actions come from the simulator with
    no budget limit (rewards are per bridge); the agencies' budgets couple only their own bridges.
    """
    free = FleetConfig(**{**cfg.__dict__, "annual_budget_usd": 1e12})
    sim = FleetSimulator(cfg, 1)
    sim.reset(None, [0])
    budget = sim.annual_budget.astype(np.float64).reshape(-1)[:2]
    t_n, b_n = cfg.horizon_years, sim.n_bridges
    seqs = np.array(list(itertools.product(range(5), repeat=t_n)))  # (S, T)
    run = FleetSimulator(free, len(seqs))
    run.reset(None, [0] * len(seqs))
    np.testing.assert_array_equal(run.state.condition[0], sim.state.condition[0])
    ret = np.zeros((len(seqs), b_n))
    spend = np.zeros((len(seqs), b_n, t_n))
    for t in range(t_n):
        res = run.step_requests(np.repeat(seqs[:, t : t + 1], b_n, axis=1))
        ret += cfg.discount**t * res.bridge_reward
        spend[:, :, t] = _spend(run, seqs[:, t], b_n)
    cum = np.cumsum(spend, axis=2) if cfg.carry_over_budget else spend
    allow = budget[:, None] * (np.arange(1, t_n + 1) if cfg.carry_over_budget else np.ones(t_n)) + 0.01
    total = 0.0
    for g in (0, 1):
        cols = [i for i in range(b_n) if (i >= cfg.n_urban) == bool(g)]
        ok_each = [np.all(cum[:, i] <= allow[g], axis=1) for i in cols]
        idx = [np.flatnonzero(ok) for ok in ok_each]
        best = -np.inf
        if len(cols) == 1:
            best = ret[idx[0], cols[0]].max()
        else:
            a, b = cols
            ia, ib = idx
            ok = np.ones((len(ia), len(ib)), dtype=bool)
            for t in range(t_n):
                ok &= cum[ia, a, t][:, None] + cum[ib, b, t][None, :] <= allow[g, t]
            value = ret[ia, a][:, None] + ret[ib, b][None, :]
            best = value[ok].max()
        total += best
    return float(total)


def _spend(run: FleetSimulator, actions: np.ndarray, b_n: int) -> np.ndarray:
    """USD spent on each bridge this year (every request funded): the action's cost."""
    from bridgefleet.sim.model import action_cost

    return action_cost(np.repeat(actions[:, None], b_n, axis=1), run.profile,
                       np.asarray(run.config.unit_costs_usd_per_m2, dtype=np.float64))


@pytest.mark.parametrize("seed", range(20))
def test_the_certified_bound_is_above_the_exact_optimum_of_small_deterministic_fleets(seed):
    rng = np.random.default_rng(seed)
    n_urban, n_rural = [(1, 1), (2, 1), (1, 2)][seed % 3]
    years = int(rng.integers(3, 6)) if n_urban + n_rural == 2 else int(rng.integers(3, 5))
    scale = [0.0, 0.3, 1.0, 3.0, 100.0][seed % 5]  # × the sized budget: nothing affordable … everything
    base = FleetConfig(n_urban=n_urban, n_rural=n_rural, horizon_years=years, deterioration_cv=0.0,
                       shock_probability=0.0, fixed_fleet=True, fleet_seed=int(rng.integers(1000)),
                       carry_over_budget=bool(seed % 2))
    sized = FleetSimulator(base, 1).annual_budget.astype(np.float64).reshape(-1)[:2].sum()
    cfg = FleetConfig(**{**base.__dict__, "annual_budget_usd": float(scale * sized)})
    exact = _exact_optimum(cfg)
    certified, _ = _certified(cfg, 0.01)
    assert certified >= exact - 1e-5 * abs(exact), (certified, exact)


def test_bound_cli_prints_and_writes_the_certified_bound(tmp_path, capsys):
    import json

    from bridgefleet.cli import main

    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("n_urban: 3\nn_rural: 3\nhorizon_years: 5\nannual_budget_usd: 0\ndeterioration_cv: 0\n"
                     "shock_probability: 0\nfixed_fleet: true\n")
    out = tmp_path / "bound.json"
    assert main(["bound", "--config", str(fleet), "--certify-step", "0.01", "--bound-iters", "2", "--quiet",
                 "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "certified: -136.02" in text and "LP gap" not in text
    certified = json.loads(out.read_text())["bound"]["certified"]
    assert certified["grid_step"] == 0.01 and certified["mean"] == pytest.approx(-136.02, abs=0.01)


def test_bound_cli_gives_the_bound_per_bridge_and_says_when_no_policy_found_meets_the_rule(tmp_path, capsys):
    import re

    from bridgefleet.cli import main

    fleet = tmp_path / "fleet.yaml"  # every bridge poor (rating 4) and no money: 0 % poor cannot be met
    fleet.write_text("n_urban: 3\nn_rural: 3\nhorizon_years: 5\nannual_budget_usd: 0\ndeterioration_cv: 0\n"
                     "shock_probability: 0\nfixed_fleet: true\ninitial_rating: [4.0, 0.0, 0.0]\n")
    for rule, unmet in (("1.0", False), ("0", True)):
        assert main(["bound", "--config", str(fleet), "--bound-iters", "4", "--quiet",
                     "--max-poor-deck-area", rule]) == 0
        text = capsys.readouterr().out
        total = float(re.search(r"^  (-?[\d.]+) ± ", text, re.M).group(1))
        per_bridge = float(re.search(r"per bridge: (-?[\d.]+) reward units", text).group(1))
        assert per_bridge == pytest.approx(total / 6, rel=1e-12, abs=1e-3)  # each printed rounded
        assert "one reward unit = USD 100,000 of cost-equivalent" in text
        assert ("on 1 of 1 fleets no mix of the policies found meets that rule" in text) is unmet
