"""The poor deck-area rule in each year's choice of the planner.

The relaxation prices the rule (one multiplier per year, :mod:`bridgefleet.planning.bound`), but at its prices
the planner is indifferent between the policies the LP mixes, and whole treatments of a few large decks can
leave a year above the rule. So each year, in each fleet, the planner also asks of its own plan that the
expected poor deck area at the end of the year be at most the rule: if the knapsack's plan leaves more, the
benefit of every action gains λ × deck area × (the drop in the probability of ending the year poor), with the
least λ ≥ 0 that meets the rule (bisection), or the plan with the least expected poor deck area when none does.
The probabilities are the model's own (docs/fleet-model.md, "Deterioration"): the drop after the action is
Gamma with the mean of the bridge's rate, the rate factor of the rating after the action and its years since
maintenance, plus sudden damage (the convolution with an exponential drop, closed-form).
"""

from __future__ import annotations

import numpy as np

from bridgefleet.config import FleetConfig
from bridgefleet.planning.knapsack import allocate
from bridgefleet.planning.transitions import drop_exceeds
from bridgefleet.sim.model import POOR_BELOW, RATING_GAIN, factor_index


def poor_probability(config: FleetConfig, condition: np.ndarray, ysm: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Probability that each bridge ends the year poor (rating < 5) after each action, float64 (E, B, 5).

    Args:
        condition, ysm, rate: float (E, B), rating points, years since maintenance, rating points a year.
    """
    c = np.asarray(condition, dtype=np.float64)[..., None]
    nsr = config.new_structure_rating
    post = np.maximum(np.minimum(c + RATING_GAIN[:4].astype(np.float64), nsr), c)
    post = np.concatenate([post, np.full_like(c, nsr)], axis=-1)
    r = np.broadcast_to(np.asarray(rate, dtype=np.float64)[..., None], post.shape).copy()
    r[..., 4] = config.new_structure_rate
    y = np.zeros_like(post)
    y[..., 0] = np.asarray(ysm, dtype=np.float64)
    factors = np.asarray(config.rating_rate_factors, dtype=np.float64)
    mean = r * factors[factor_index(post)] * (1.0 + config.ysm_acceleration * y)
    return drop_exceeds(config, post - POOR_BELOW, mean)  # the drop that makes the bridge poor exceeds post − 5


def poor_cut(deck: np.ndarray, p_poor: np.ndarray) -> np.ndarray:
    """m² less deck area expected poor at the end of the year than doing nothing, float64 (E, B, 5), for each
    action: ``deck`` float64 (E, B) m² × the drop in :func:`poor_probability` ``p_poor`` float64 (E, B, 5)."""
    return deck[..., None] * (p_poor[..., :1] - p_poor)


def fund_poor_cuts(out: np.ndarray, cost: np.ndarray, agency: np.ndarray, spare: np.ndarray, deck: np.ndarray,
                   p_poor: np.ndarray, feasible: np.ndarray) -> None:
    """Add to the plan ``out`` int64 (E, B) (in place), for bridges it leaves alone, the treatments that cut the
    expected poor deck area at the end of the year most within ``spare`` float64 (E, 2) USD per agency (a
    multiple-choice knapsack on :func:`poor_cut`). cost float64 (E, B, 5) USD; agency int64 (B,); deck, p_poor as
    for :func:`poor_cut`; feasible bool (E, B, 5), the actions allowed."""
    cut = poor_cut(deck, p_poor)
    gain = np.where((out[..., None] == 0) & (cut > 0) & feasible, cut, -np.inf)
    gain[..., 0] = 0.0
    add = np.zeros_like(out)
    allocate(gain, cost, agency, spare, add)
    out[add > 0] = add[add > 0]


def only_choice(ben: np.ndarray) -> np.ndarray:
    """Each bridge's best action or nothing: ``ben`` float64 (E, B, 5) with every other treatment's benefit set to
    −inf (in place; returned). Ties go to the lower action."""
    own = ben.argmax(-1)[..., None]
    chosen = np.take_along_axis(ben, own, -1)
    ben[..., 1:] = -np.inf
    np.put_along_axis(ben, own, chosen, -1)
    return ben


def allocate_within_rule(ben: np.ndarray, cost: np.ndarray, agency: np.ndarray, budget: np.ndarray,
                         deck: np.ndarray, p_poor: np.ndarray, allowance: np.ndarray, out: np.ndarray,
                         steps: int = 10) -> None:
    """:func:`bridgefleet.planning.knapsack.allocate`, then, in each fleet whose plan leaves more than
    ``allowance`` m² expected poor at the end of the year, the plan with the least λ that meets it.

    Args:
        ben, cost: float64 (E, B, 5) as for ``allocate``; agency int64 (B,); budget float64 (E, 2).
        deck: float64 (E, B), the deck area the rule counts, m². p_poor: float64 (E, B, 5),
            :func:`poor_probability`. allowance: float64 (E,), m². out: int64 (E, B), written.
        steps: bisection steps on λ.
    """
    allocate(ben, cost, agency, budget, out)
    drop = poor_cut(deck, p_poor)

    def poor(actions: np.ndarray, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        return (deck[rows] * np.take_along_axis(p_poor[rows], actions[..., None], -1)[..., 0]).sum(-1)

    over = np.flatnonzero(poor(out) > allowance + 1e-9)
    if not len(over):
        return
    finite = np.isfinite(ben[over]) & (ben[over] > 0)
    top = np.where(finite, ben[over], 0.0).max(initial=1.0)
    least = max(np.where(drop[over] > 0, drop[over], np.inf).min(initial=np.inf), 1e-3)  # m²
    hi = np.full(len(over), 2.0 * top / least if np.isfinite(least) else 1.0)

    def plan(lam: np.ndarray, rows: np.ndarray) -> np.ndarray:
        act = np.zeros((len(rows), out.shape[1]), dtype=np.int64)
        allocate(ben[rows] + lam[:, None, None] * drop[rows], cost[rows], agency, budget[rows], act)
        return act

    best = plan(hi, over)
    ok = np.flatnonzero(poor(best, over) <= allowance[over] + 1e-9)  # the fleets some λ lets meet it
    lo = np.zeros(len(ok))
    hi = hi[ok]
    for _ in range(steps if len(ok) else 0):  # only those fleets are bisected
        mid = 0.5 * (lo + hi)
        act = plan(mid, over[ok])
        met = poor(act, over[ok]) <= allowance[over[ok]] + 1e-9
        best[ok[met]] = act[met]
        hi = np.where(met, mid, hi)
        lo = np.where(met, lo, mid)
    out[over] = best
