"""Bridges alike up to scale: one DP a class gives every bridge's prices-only solution and certified value."""

import numpy as np
import pytest

from bridgefleet.config import FleetConfig
from bridgefleet.planning.alike import Alike
from bridgefleet.planning.certify import Certifier
from bridgefleet.planning.dp import solve
from bridgefleet.planning.least_budget import least_budget
from bridgefleet.planning.transitions import bridge_mdps, prices_only

CFG = FleetConfig(n_urban=4, n_rural=3, horizon_years=6, new_structure_rating=9.0)
# Bridges 0–2: one urban class at three sizes; 3: another rating; 4: off the NHS (no counted deck area);
# 5, 6: one rural class (5 is 0's twin but rural); 6 also has a larger cost factor at twice the deck area.
RATING = np.array([[5.4, 5.4, 5.4, 6.0, 5.4, 5.4, 5.4]])
DECK = np.array([[300.0, 450.0, 1200.0, 300.0, 300.0, 300.0, 300.0]])
FACTOR = np.array([[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0]])
COUNTED = DECK * np.array([[1, 1, 1, 1, 0, 1, 2]])
ONE = np.ones((1, 7))


def _mdps(step: float, certify: bool = False, part=slice(None)):
    return bridge_mdps(CFG, RATING[:, part], 3 * ONE[:, part], 0.1 * ONE[:, part], DECK[:, part], FACTOR[:, part],
                       ONE[:, part], 7 * ONE[:, part], 1e12 * ONE[:, part], step=step,
                       user_cost=5e3 * np.arange(1, 8)[None, part], counted_deck=COUNTED[:, part], certify=certify)


def _prices(mdps, seed: int):
    rng = np.random.default_rng(seed)
    disc = mdps.gamma ** np.arange(mdps.horizon)
    cost = rng.uniform(0.0, 2e-5, (2, mdps.horizon))[mdps.agency] / disc
    poor = rng.uniform(0.0, 0.05, mdps.horizon)[None] / disc * mdps.deck[:, None]
    return cost, poor


def test_bridges_alike_up_to_scale_share_a_class_and_no_others_do():
    alike = Alike.prices_only(prices_only(_mdps(0.2)))
    np.testing.assert_array_equal(alike.rep, [0, 3, 4, 5])
    np.testing.assert_array_equal(alike.of, [0, 0, 0, 1, 2, 3, 3])
    np.testing.assert_allclose(alike.ratio, [1.0, 1.5, 4.0, 1.0, 1.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="carry a reward"):
        Alike.prices_only(_mdps(0.2))  # traffic and user cost differ: these bridges are not alike


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_solve_a_class_gives_each_bridge_its_own_solve(seed):
    m = prices_only(_mdps(0.2))
    full = _mdps(0.2)  # the rewards the columns are valued with
    cost, poor = _prices(m, seed)
    active = np.ones(m.n, dtype=bool)
    own = solve(m, cost, np.zeros_like(cost), active, price_poor=poor, eval_utility=full.utility,
                eval_step=full.poor_step)
    alike = Alike.prices_only(m)
    found = alike.solve(cost, poor, active, full.utility, full.poor_step)
    for name in ("value0", "exp_cost", "exp_count", "exp_poor", "exp_utility"):
        a, b = getattr(own, name), getattr(found, name)
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-9 * np.abs(a).max(), err_msg=name)
    np.testing.assert_array_equal(found.used, own.used)
    assert (own.exp_cost[:3].sum(1) > 0).all()  # the class treats: its spend scales with the size
    np.testing.assert_allclose(own.exp_cost[2] / own.exp_cost[0], 4.0)


def test_the_certificate_of_a_class_is_each_bridges_own():
    m = prices_only(_mdps(0.2))
    cost, poor = _prices(m, 3)
    cert = Certifier(lambda part: _mdps(0.1, certify=True, part=part), m.n)
    own = cert.values(cost, np.zeros_like(cost), poor, reward=False)
    alike = Alike.prices_only(m)
    some = cert.values(cost, np.zeros_like(cost), poor, reward=False, bridges=alike.rep)
    assert some.shape == (4,)
    np.testing.assert_allclose(alike.expand(some), own, rtol=1e-9)
    np.testing.assert_allclose(own[2], 4.0 * own[0], rtol=1e-9)  # a class's values scale with its bridges' size
    assert abs(own[3] - own[0]) > 1e-3 * abs(own[0])  # another rating, another value


def test_the_least_budget_of_a_fleet_of_copies_is_the_fleets():
    """Seven bridges, then each twice at half the size: the same least budget (the same deck area and costs)."""
    one = _mdps(0.2)
    two = bridge_mdps(CFG.replace(n_urban=8, n_rural=6), np.repeat(RATING, 2, 1), 3 * np.ones((1, 14)),
                      0.1 * np.ones((1, 14)), 0.5 * np.repeat(DECK, 2, 1), np.repeat(FACTOR, 2, 1), np.ones((1, 14)),
                      7 * np.ones((1, 14)), 1e12 * np.ones((1, 14)), step=0.2,
                      counted_deck=0.5 * np.repeat(COUNTED, 2, 1))
    share = (4e5, 3e5)
    a = least_budget(one, 0.1, share, carry_over=True)
    b = least_budget(two, 0.1, share, carry_over=True)
    assert a.lower[0] > 0.01
    assert b.upper[0] == pytest.approx(a.upper[0], rel=1e-6)  # the relaxation's least budget
    for found in (a, b):  # each search converged to its tolerance from below
        assert a.upper[0] * (1 - 5e-3) <= found.lower[0] <= a.upper[0] + 1e-9
