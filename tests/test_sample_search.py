"""A large fleet's price search started from a random sample of its bridges (issue 25's time at scale)."""

import numpy as np
from test_planning import _exact_optimum

from bridgefleet.config import FleetConfig
from bridgefleet.planning.bound import fleet_mdps, lagrangian_bound
from bridgefleet.planning.dp import solve
from bridgefleet.planning.rows import sample_bridges, sampled_rows
from bridgefleet.sim.simulator import FleetSimulator


def _mdps(cfg: FleetConfig, fleets: int = 1, step: float = 0.2, max_poor: float | None = None):
    sim = FleetSimulator(cfg, fleets)
    sim.reset(None, list(range(fleets)))
    return fleet_mdps(cfg, sim.profile, sim.state, sim.weight, sim.fleet_annual_budget, step=step,
                      max_poor=max_poor)


class _Recorder:
    """:func:`solve`, recording the bridges and the prices per USD of each call."""

    def __init__(self):
        self.seen, self.priced = [], []

    def __call__(self, grid, price_cost, *args, **kw):
        self.seen.append(grid.n)
        self.priced.append(price_cost)
        return solve(grid, price_cost, *args, **kw)


def test_the_sample_keeps_each_agencys_share_at_the_same_positions_in_every_fleet():
    mdps, _ = _mdps(FleetConfig(n_urban=3, n_rural=7, horizon_years=4), fleets=2)
    part = sample_bridges(mdps, 4)
    first, second = part[:4], part[4:]
    np.testing.assert_array_equal(second, first + 10)  # fleet 1's bridges are 10 … 19
    assert (np.diff(first) > 0).all()
    assert (first < 3).sum() == 1 and (first >= 3).sum() == 3  # round(4 × 3 / 10) urban, round(4 × 7 / 10) rural
    np.testing.assert_array_equal(part, sample_bridges(mdps, 4))  # seeded
    assert len(sample_bridges(mdps, 1)) == 4  # at least one bridge of each agency, in each fleet


def test_sampled_rows_scale_each_agencys_budget_by_the_samples_share_of_its_replacement_cost():
    for carry_over in (False, True):
        cfg = FleetConfig(n_urban=2, n_rural=2, horizon_years=3, fixed_fleet=True, fleet_seed=3,
                          carry_over_budget=carry_over)
        mdps, rows = _mdps(cfg, max_poor=0.1)
        whole = sampled_rows(rows, mdps, mdps.select(np.arange(4)))  # the whole fleet: its own rows
        np.testing.assert_allclose(whole.spend_b, rows.spend_b)
        np.testing.assert_allclose(whole.poor_b, rows.poor_b)
        if not carry_over:
            np.testing.assert_array_equal(whole.count_b, rows.count_b)
        half = sampled_rows(rows, mdps, mdps.select(np.array([0, 3])))  # urban bridge 0 and rural bridge 3
        r, d = mdps.cost[:, 4], mdps.deck
        np.testing.assert_allclose(half.spend_b[0, 0], rows.spend_b[0, 0] * r[0] / (r[0] + r[1]))
        np.testing.assert_allclose(half.spend_b[0, 1], rows.spend_b[0, 1] * r[3] / (r[2] + r[3]))
        np.testing.assert_allclose(half.poor_b[0], rows.poor_b[0] * (d[0] + d[3]) / d.sum())
        if carry_over:
            assert half.count_b is None
            np.testing.assert_array_equal(half.spend_c, np.tril(np.ones((3, 3))))
        else:  # one bridge an agency: one treatment a year if its cheapest fits the sample's budget
            cheapest = np.where(mdps.feasible[:, 1:], mdps.cost[:, 1:], np.inf).min(1)
            fits = [cheapest[0] <= half.spend_b[0, 0, 0] + 0.01, cheapest[3] <= half.spend_b[0, 1, 0] + 0.01]
            np.testing.assert_array_equal(half.count_b[0, :, 0], np.array(fits, dtype=float))


def test_a_fleet_searched_from_a_sample_gets_the_bound_of_its_own_search():
    cfg = FleetConfig(n_urban=12, n_rural=12, horizon_years=10, fixed_fleet=True, fleet_seed=3)
    for rule in (None, 0.1):
        mdps, rows = _mdps(cfg, max_poor=rule)
        alone = lagrangian_bound(mdps, rows, max_iter=60)  # 24 bridges: below twice the default sample
        solver = _Recorder()
        sampled = lagrangian_bound(mdps, rows, max_iter=60, sample=6, solver=solver)
        seen, priced = solver.seen, solver.priced
        k = seen.index(24)
        assert k >= 2 and set(seen[:k]) == {6} and set(seen[k:]) == {24}  # the sample's search first
        assert sampled.sample == (6, k) and alone.sample is None
        part = sample_bridges(mdps, 6)
        own = lagrangian_bound(mdps.select(part), sampled_rows(rows, mdps, mdps.select(part)), max_iter=60)
        disc = mdps.gamma ** np.arange(10)
        # The fleet's second solve (its first prices every action out) prices the sample's best prices.
        np.testing.assert_allclose(priced[k + 1], own.price_cost[0][mdps.agency] / disc)
        # Every L(κ) is at least the value of any restricted master LP (at most min L), both ways round.
        assert sampled.values[0] >= alone.lp_values[0] - 1e-6
        assert alone.values[0] >= sampled.lp_values[0] - 1e-6
        assert sampled.values[0] - sampled.lp_values[0] <= 2e-3 * abs(sampled.values[0])  # converged
        assert abs(sampled.values[0] - alone.values[0]) <= 2e-3 * abs(alone.values[0]), (sampled.values, alone.values)
        assert sampled.meets_rule and alone.meets_rule


def test_searched_from_a_sample_the_bound_stays_above_the_exact_optimum():
    # test_planning's 3-bridge fleet (1 urban, 2 rural; deterministic, 3 years), its search started from a
    # sample of one bridge of each agency.
    cfg = FleetConfig(n_urban=1, n_rural=2, horizon_years=3, deterioration_cv=0.0, fixed_fleet=True, fleet_seed=7,
                      annual_budget_usd=150_000.0, urban_budget_share=0.5)
    mdps, rows = _mdps(cfg, step=0.01)
    solver = _Recorder()
    bound = lagrangian_bound(mdps, rows, max_iter=20, sample=1, solver=solver).values[0]
    assert solver.seen[0] == 2 and solver.seen[-1] == 3
    exact = _exact_optimum(cfg, [0, 1, 2])
    assert bound >= exact - 1e-3 * abs(exact), (bound, exact)


def test_each_of_several_fleets_starts_from_its_own_samples_prices():
    cfg = FleetConfig(n_urban=12, n_rural=12, horizon_years=10)
    mdps, rows = _mdps(cfg, fleets=2)
    alone = lagrangian_bound(mdps, rows, max_iter=60)
    solver = _Recorder()
    sampled = lagrangian_bound(mdps, rows, max_iter=60, sample=6, solver=solver)
    k = solver.seen.index(48)
    part = sample_bridges(mdps, 6)
    own = lagrangian_bound(mdps.select(part), sampled_rows(rows, mdps, mdps.select(part)), max_iter=60)
    disc = mdps.gamma ** np.arange(10)
    np.testing.assert_allclose(solver.priced[k + 1], own.price_cost[mdps.fleet, mdps.agency] / disc)
    assert not np.allclose(own.price_cost[0], own.price_cost[1])  # two fleets, two samples, two prices
    assert (sampled.values >= alone.lp_values - 1e-6).all() and (alone.values >= sampled.lp_values - 1e-6).all()
    np.testing.assert_allclose(sampled.values, alone.values, rtol=2e-3)
