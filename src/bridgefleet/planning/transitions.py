"""The single-bridge MDP on a rating grid: grid, deterioration kernels, per-bridge inputs.

Ratings live on a uniform grid c_j = j·h, j = 0 … G−1 (h ≤ 0.05 rating points, 0 to 9). A value function
between grid points is the linear interpolant, so one year of deterioration from a grid point,
max(x − D, 0) with D = mean drop × Gamma noise, moves probability to grid points with the weights of the
interpolating hat functions:

    w_k = E[max(0, 1 − |k − D/h|)],   k = 0, 1, …     (mass that falls below 0 goes to grid point 0)

The weights are integrated exactly (regularized incomplete gamma functions, SciPy), not sampled, so the grid
chain is a proper Markov chain. Sudden damage (probability p a year, an exponential drop of mean J) adds a
second hat-weighted move whose weights are exact and geometric beyond the first (:func:`shock_weights`), applied
by a recursive filter in the DP, so it costs O(G) a grid row whatever J. Its values converge to the
continuous model's as h → 0 (measured in
``benchmarks/decision_quality.py``). Sources: the model is docs/fleet-model.md; the decomposition follows
Hawkins (2003) and Adelman & Mersereau (Operations Research 56(3), 2008).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy.special import gammainc, gammaincinv

from bridgefleet.config import FleetConfig
from bridgefleet.sim.model import MAX_RATING, POOR_BELOW, RATING_GAIN, factor_index


def grid_points(step: float, what: str = "grid step") -> tuple[int, float]:
    """Number of grid points G and the exact step h (≤ ``step``) so that 9 rating points are whole steps
    and every action's rating gain (1, 2, 4 points) is a whole number of steps.

    Raises:
        ValueError: ``step`` not in (0, 1] (the message names it ``what``).
    """
    if not 0.0 < step <= 1.0:
        raise ValueError(f"{what} {step!r}: must be in (0, 1] rating points")
    n = int(np.ceil(1.0 / step - 1e-9))  # steps per rating point
    return round(MAX_RATING) * n + 1, 1.0 / n


def check_certify_step(config: FleetConfig, step: float, what: str = "--certify-step") -> None:
    """Refuse, before any work, a certified grid step the fleet's new-structure rating does not lie on (the
    certified bound's kernels need it on the grid: :func:`bridge_mdps` with ``certify``).

    Raises:
        ValueError: ``step`` outside (0, 1] rating points, or ``config.new_structure_rating`` × n not whole for the
            grid's 1 / n step; the message names ``what`` and steps that work.
    """
    rating = float(config.new_structure_rating)

    def on_grid(s: float) -> bool:
        h = grid_points(s, what)[1]
        return abs(rating / h - round(rating / h)) <= 1e-6

    if not on_grid(step):
        h = grid_points(step)[1]
        works = [f"{s:g}" for s in (0.1, 0.05, 0.02, 0.01, 0.005, 0.0025, 0.002, 0.001) if on_grid(s)]
        raise ValueError(f"{what} {step:g}: the certified bound needs the new-structure rating {rating:g} on its "
                         f"grid, which a step of {h:.4g} (1/{round(1 / h)} point) misses: try "
                         f"{', '.join(works[:4]) or 'a step of 1/n with n × the rating whole'}")


def deterioration_weights(drop_mean: np.ndarray, cv: float, h: float, floor: bool = False) -> np.ndarray:
    """Hat-function weights w_k of one year's drop on the grid, float64 (..., K).

    Args:
        drop_mean: float (...,), mean drop rate × (1 + a × ysm) of each case, rating points (≥ 0).
        cv: coefficient of variation of the Gamma noise (0 = deterministic drop).
        h: grid step, rating points.
        floor: the probabilities w_k = P(k ≤ D/h < k + 1) of the drop D in whole steps instead (the
            certified bound's kink corrections, :mod:`bridgefleet.planning.certify`).

    Returns:
        w (..., K) with w[..., k] the weight of moving k steps down; rows sum to 1. K covers the drop up to
        its 1 − 1e−12 quantile. Many cases (thousands of bridges × years since maintenance) are computed on
        a geometric table of mean drops 0.05 % apart and interpolated (weights are smooth in the mean drop).
    """
    exact = _floor_exact if floor else _weights_exact
    a = np.asarray(drop_mean, dtype=np.float64) / h  # mean drop in grid steps
    if cv == 0 or a.size <= 4096:
        return exact(a, cv)
    lo, hi = max(a.min(), 1e-6), max(a.max(), 1e-6)
    n = int(np.ceil(np.log(hi / lo) / np.log(1.0005))) + 2
    table_a = lo * 1.0005 ** np.arange(n)
    table = exact(table_a, cv)
    pos = np.clip(np.log(np.maximum(a, lo) / lo) / np.log(1.0005), 0, n - 1.000001).reshape(-1)
    out = np.empty((pos.size, table.shape[-1]))
    for start in range(0, pos.size, 65_536):  # in chunks: whole-array temporaries took GBs for thousands of bridges
        p = pos[start : start + 65_536]
        i = p.astype(np.int64)
        f = (p - i)[:, None]
        w = (1.0 - f) * table[i] + f * table[i + 1]
        out[start : start + len(p)] = w / w.sum(-1, keepdims=True)
    return out.reshape(*a.shape, table.shape[-1])


_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(24)


def drop_exceeds(config: FleetConfig, x: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """P(a year's drop > x): the probability that a bridge ends the year poor when its rating after the action
    is 5 + x, float64 of the shape ``x`` and ``mean`` broadcast to (1 where x < 0: already poor).

    The drop is the model's (docs/fleet-model.md, "Deterioration"): Gamma with mean ``mean`` (rating points,
    CV ``config.deterioration_cv``), plus, with probability ``config.shock_probability``, sudden damage (an
    exponential drop of mean ``config.shock_mean_drop``; the convolution is closed-form, :func:`_with_shock_cdf`).

    Args:
        x: float64, rating points above 5 after the action. mean: float64, the mean drop, rating points.
    """
    x, mean = (np.array(a, dtype=np.float64) for a in np.broadcast_arrays(x, mean))
    cdf = _drop_cdf(config.deterioration_cv)
    p = 1.0 - cdf(x, mean)
    if config.has_sudden_damage:  # P(D + J > x), J exponential of mean jm, independent of D
        p = (1.0 - config.shock_probability) * p + config.shock_probability * (1.0 - _with_shock_cdf(
            x, mean, config.deterioration_cv, config.shock_mean_drop, cdf))
    return np.where(x < 0.0, 1.0, np.clip(p, 0.0, 1.0))


def _with_shock_cdf(x: np.ndarray, mean: np.ndarray, cv: float, jm: float, cdf) -> np.ndarray:
    """P(D + J ≤ x), float64 like ``x``: D the gradual drop (``cdf``), J exponential of mean ``jm``.

    With Gamma drops of scale θ = mean × cv² < jm it is closed-form (the convolution of a Gamma and an
    exponential): F_D(x) − e^{−x/jm} (1 − θ/jm)^{−k} P(k, x/θ'), k = 1/cv², 1/θ' = 1/θ − 1/jm, P the regularised
    lower incomplete gamma; where θ ≥ jm / 2 (or cv = 0) by 24-point Gauss–Legendre quadrature of
    ∫_0^x f_J(j) F_D(x − j) dj.
    """
    xs = np.maximum(x, 0.0)
    out = np.empty_like(xs)
    theta = mean * cv**2
    closed = (theta < 0.5 * jm) if cv > 0 else np.zeros(xs.shape, dtype=bool)
    if closed.any():
        k, th, xc = 1.0 / cv**2, np.maximum(theta[closed], 1e-300), xs[closed]
        th2 = 1.0 / (1.0 / th - 1.0 / jm)
        out[closed] = cdf(xc, mean[closed]) - np.exp(-xc / jm - k * np.log1p(-th / jm)) * gammainc(k, xc / th2)
    quad = ~closed
    if quad.any():
        xq, mq = xs[quad][..., None], mean[quad][..., None]
        j = 0.5 * xq * (_NODES + 1.0)
        out[quad] = 0.5 * xq[..., 0] * (_WEIGHTS * np.exp(-j / jm) / jm * cdf(xq - j, mq)).sum(-1)
    return np.clip(out, 0.0, 1.0)


def _drop_cdf(cv: float):
    """F_D(x) of the drop D = mean × Gamma noise (mean 1, CV ``cv``; ``cv`` 0: D = mean)."""
    if cv == 0:
        return lambda x, mean: (mean <= x).astype(np.float64)
    shape = 1.0 / cv**2
    return lambda x, mean: gammainc(shape, np.maximum(x, 0.0) / np.maximum(mean * cv**2, 1e-300))


def _floor_exact(a: np.ndarray, cv: float) -> np.ndarray:
    """P(k ≤ D/h < k + 1) for mean drops ``a`` (grid steps); the mass beyond the 1 − 1e−12 quantile on the
    last k."""
    if cv == 0:
        k = np.arange(int(np.floor(a.max(initial=0.0) + 1e-9)) + 1, dtype=np.float64)
        return (np.floor(a[..., None] + 1e-9) == k).astype(np.float64)
    shape, scale = 1.0 / cv**2, cv**2
    hi = a.max(initial=0.0) * gammaincinv(shape, 1.0 - 1e-12) * scale
    edges = np.arange(1, int(np.ceil(hi)) + 2, dtype=np.float64)  # P(D/h < k) at k = 1 … K
    x = a[..., None]
    cdf = np.where(x > 0, gammainc(shape, edges / np.where(x > 0, x, 1.0) / scale), 1.0)
    w = np.diff(cdf, axis=-1, prepend=0.0)
    w[..., -1] += 1.0 - cdf[..., -1]
    return np.maximum(w, 0.0)


def _weights_exact(a: np.ndarray, cv: float) -> np.ndarray:
    """The weights for mean drops ``a`` (grid steps), by regularized incomplete gamma functions."""
    a = a[..., None]
    if cv == 0:
        kmax = int(np.floor(a.max(initial=0.0))) + 2
        k = np.arange(kmax + 1, dtype=np.float64)
        return np.maximum(0.0, 1.0 - np.abs(k - a))
    shape = 1.0 / cv**2
    scale = cv**2
    hi = a.max(initial=0.0) * gammaincinv(shape, 1.0 - 1e-12) * scale  # the drop's 1 − 1e−12 quantile
    kmax = int(np.ceil(hi)) + 2
    k = np.arange(-1, kmax + 2, dtype=np.float64)
    x = np.maximum(k, 0.0) / np.where(a > 0, a, 1.0) / scale
    cdf = np.where(a > 0, gammainc(shape, x), 1.0)  # P(D ≤ k); a zero drop is 0 with certainty
    cdf[..., 0] = 0.0  # P(D ≤ −1)
    part = np.where(a > 0, a * shape * scale * gammainc(shape + 1.0, x), 0.0)  # E[D; D ≤ k]
    # w_k = E[(D − k + 1); k−1 ≤ D < k] + E[(k + 1 − D); k ≤ D < k+1]; index i ↔ k = i − 1.
    km = k[1:-1]
    f_lo, f_mid, f_hi = cdf[..., :-2], cdf[..., 1:-1], cdf[..., 2:]
    m_lo, m_mid, m_hi = part[..., :-2], part[..., 1:-1], part[..., 2:]
    w = (m_mid - m_lo) - (km - 1.0) * (f_mid - f_lo) + (km + 1.0) * (f_hi - f_mid) - (m_hi - m_mid)
    w = np.maximum(w, 0.0)
    return w / w.sum(-1, keepdims=True)


@dataclass
class BridgeMDPs:
    """N single-bridge MDPs (flattened over fleets) in the arrays the DP kernel takes.

    Attributes:
        utility: float64 (N, G), reward w × [(c − c_target) − p × max(0, c_crit − c)²] − λ × user cost
            (USD, poor ratings only) at each grid rating.
        cost: float64 (N, 5), USD cost of each action.
        deck: float64 (N,), deck area, m², that FHWA's measures count (``counted_deck``: NHS bridges' deck area
            where the inventory codes them, 0 for the others).
        feasible: bool (N, 5), action allowed (its cost fits the agency's yearly budget; action 0 always).
        weights: float64 (W, R, 2T, NB, K) deterioration weights of the W distinct deterioration cases of the
            fleet (bridges with the same rate and initial years since maintenance share one; ``kind``), by rate
            kind (0 own rate, 1 new structure after a replacement; R = 1 when no bridge can be replaced), ysm
            after the action (index y < T is ysm y, index T + t is the never-maintained ysm0 + t) and weight
            group of the rating after the action (one group per distinct factor of ``rating_rate_factors``).
        n_taps: int64 (W, R, 2T, NB), number of non-negligible weights of each case.
        kind: int64 (N,), the row of ``weights`` (and ``n_taps``, ``floor_weights``, ``floor_taps``) of each
            bridge. Sharing them keeps the weights' memory to the distinct cases (14 on Indiana's 4,794
            bridges, whose rate is one per class) instead of growing with the fleet.
        band: int64 (G,), weight group of each grid rating: the distinct rate factors of the rating points.
        shock: float64 (4,): (p, w0, c1, ρ) of sudden damage (:func:`shock_weights`), p = 0 for none.
        top: int64, grid index of the new-structure rating (replacement's rating, the treatments' cap).
        poor_top: int64, grid points 0 … poor_top − 1 are poor (rating < 5, FHWA's ≤ 4).
        c0: float64 (N,), initial rating; ysm0: float64 (N,), initial years since maintenance.
        agency: int64 (N,), 0 urban, 1 rural; fleet: int64 (N,), fleet index.
        shift: int64 (5,), grid steps gained by actions 1–3 (action 4 goes to the top of the grid).
        h: grid step (rating points); horizon: T (years); gamma: discount; cost_lambda: reward per USD.
        poor_step: float64 (N,), the step of ``utility`` at rating 5: the user cost's reward a poor year, λ × USD.
        poor_q: float64 (W, R, 2T, G − poor_top), P(the bridge ends the year poor) after the action leaves it at
            grid rating poor_top + i ≥ 5, by case as ``weights`` (:func:`drop_exceeds`). The DP charges a year's
            poor price and the user cost's step by it, exactly, not by the hat weights' mass below grid point 5,
            which is too little: from rating 5.0 any drop makes the bridge poor, but the hats leave most of a
            small drop on 5.0 (on dc-2019 with no treatment the step-0.2 grid gave 40.1 % of NHS deck area poor
            in year 3 against 46.8 % simulated, 512 samples).
        floor_weights, floor_taps, shock_floor, utility_gap: what the certified bound needs
            (:mod:`bridgefleet.planning.certify`; None unless built with ``certify``): the probabilities of
            whole-step drops P(k ≤ D/h < k + 1), float64 like ``weights``, with their taps, int64 like
            ``n_taps``; of sudden damage (p, 1 − ρ, (1 − ρ)ρ, ρ); and float64 (N, G), how far the reward may
            rise above its linear interpolation in the cell [c_j, c_j+1] (w × p × h² / 4 below the critical
            rating, where the penalty is a concave parabola; 0 elsewhere).
    """

    utility: np.ndarray
    cost: np.ndarray
    deck: np.ndarray
    feasible: np.ndarray
    weights: np.ndarray
    n_taps: np.ndarray
    kind: np.ndarray
    c0: np.ndarray
    ysm0: np.ndarray
    agency: np.ndarray
    fleet: np.ndarray
    shift: np.ndarray
    band: np.ndarray
    shock: np.ndarray
    top: int
    poor_top: int
    h: float
    horizon: int
    gamma: float
    cost_lambda: float
    poor_step: np.ndarray
    poor_q: np.ndarray
    floor_weights: np.ndarray | None = None
    floor_taps: np.ndarray | None = None
    shock_floor: np.ndarray | None = None
    utility_gap: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.c0)

    @property
    def nbytes(self) -> int:
        """Bytes of all its arrays (the per-bridge ones and the shared deterioration weights)."""
        return sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray))

    def select(self, part: slice | np.ndarray) -> BridgeMDPs:
        """The bridges ``part`` (a slice or int64 indices): their rows of every per-bridge field, the per-case
        weights and the grid whole."""
        return dataclasses.replace(self, **{f: np.ascontiguousarray(getattr(self, f)[part]) for f in PER_BRIDGE
                                            if getattr(self, f) is not None})


PER_BRIDGE = ("utility", "cost", "deck", "feasible", "kind", "c0", "ysm0", "agency", "fleet", "utility_gap",
              "poor_step")
"""The fields of :class:`BridgeMDPs` with one row per bridge (the deterioration weights are per case, shared)."""


def shock_weights(probability: float, mean_drop: float, h: float, floor: bool = False) -> np.ndarray:
    """Weights of sudden damage on a grid of step h: float64 (4,) (p, w0, c1, ρ), w_k = c1 ρ^{k−1} for k ≥ 1.

    An exponential drop X of mean J = ``mean_drop`` (μ = J / h grid steps) has exact hat weights
    w_0 = 1 − μ(1 − e^{−1/μ}), c1 = μ(1 − e^{−1/μ})², ρ = e^{−1/μ} (they sum to 1); with ``floor`` the
    probabilities of floor(X/h) = k instead: w_0 = 1 − ρ, c1 = (1 − ρ)ρ. The DP applies them with probability
    p by a recursion, O(G) per grid row.
    """
    if probability == 0 or mean_drop == 0:
        return np.zeros(4)
    mu = mean_drop / h
    rho = float(np.exp(-1.0 / mu))
    if floor:
        return np.array([probability, 1.0 - rho, (1.0 - rho) * rho, rho])
    return np.array([probability, 1.0 - mu * (1.0 - rho), mu * (1.0 - rho) ** 2, rho])


def bridge_mdps(config: FleetConfig, condition: np.ndarray, ysm: np.ndarray, rate: np.ndarray,
                deck_area: np.ndarray, cost_factor: np.ndarray, weight: np.ndarray, target: np.ndarray,
                cap_usd: np.ndarray, step: float = 0.05, user_cost: np.ndarray | None = None,
                counted_deck: np.ndarray | None = None, certify: bool = False) -> BridgeMDPs:
    """Build the MDPs of E fleets of B bridges (urban columns first) from their state and profile.

    Args:
        condition, ysm, rate, deck_area, cost_factor, weight, target: float (E, B) as in the simulator
            (rating points, years, rating points/year, m², –, AADT weight, rating points).
        user_cost: float (E, B), USD a year while the bridge is poor (:func:`bridgefleet.sim.model.poor_user_cost`;
            None: no user cost).
        cap_usd: float (E, B), the most one action of this bridge may cost (its agency's yearly budget, or
            what the horizon's budgets add up to when budgets carry over), USD.
        step: grid step, rating points.
        counted_deck: float (E, B), the deck area FHWA's measures count, m² (NHS bridges where the inventory
            codes them, :func:`bridgefleet.sim.model.fhwa_weight`); None: every bridge's deck area.
        certify: also build what the certified bound needs (``BridgeMDPs.floor_weights`` …).

    Raises:
        ValueError: with ``certify``, a new-structure rating that is not on the grid.
    """
    e_n, b_n = condition.shape
    g_n, h = grid_points(step)
    t_n = config.horizon_years
    c = np.arange(g_n) * h
    w = np.asarray(weight, dtype=np.float64).reshape(-1, 1)
    tgt = np.asarray(target, dtype=np.float64).reshape(-1, 1)
    short = np.maximum(config.critical_rating - c, 0.0)
    utility = w * ((c - tgt) - config.critical_penalty * short**2)
    poor_top = round(POOR_BELOW / h)
    poor_step = np.zeros(len(utility))
    if user_cost is not None:
        user = np.asarray(user_cost, dtype=np.float64).reshape(-1, 1)
        poor_step = np.ascontiguousarray(config.cost_lambda * user[:, 0], dtype=np.float64)
        utility = utility - poor_step[:, None] * (np.arange(g_n) < poor_top)
    unit = np.asarray(config.unit_costs_usd_per_m2, dtype=np.float64)
    size = (np.asarray(deck_area, dtype=np.float64) * np.asarray(cost_factor, dtype=np.float64)).reshape(-1, 1)
    cost = unit * size
    feasible = allowed_actions(cost, cap_usd)
    rates = np.asarray(rate, dtype=np.float64).reshape(-1)
    ysm0 = np.asarray(ysm, dtype=np.float64).reshape(-1)
    # The distinct deterioration cases (rate, ysm0): their weights are built and kept once per case.
    cases, kind = np.unique(np.stack([rates, ysm0], axis=1), axis=0, return_inverse=True)
    years = np.arange(t_n, dtype=np.float64)
    ysm_after = np.concatenate([np.broadcast_to(years, (len(cases), t_n)), cases[:, 1:] + years], axis=1)
    kinds = [cases[:, 0], np.full(len(cases), config.new_structure_rate)][: rate_kinds(feasible)]
    drop = np.stack([r[:, None] * (1.0 + config.ysm_acceleration * ysm_after) for r in kinds], axis=1)
    factors, group = np.unique(np.asarray(config.rating_rate_factors, dtype=np.float64), return_inverse=True)
    drop = drop[..., None] * factors
    band = group.reshape(-1)[factor_index(c)].astype(np.int64)
    wts, n_taps = _trimmed(deterioration_weights(drop, config.deterioration_cv, h))
    # The exact probability of ending the year poor from each grid rating ≥ 5 after the action (the hat weights
    # would count only the part of the drop's mass that lands below the grid point 5: too little).
    above = np.arange(poor_top, g_n)
    poor_q = np.ascontiguousarray(drop_exceeds(config, c[above] - POOR_BELOW, drop[..., band[above]]))
    shift = np.zeros(5, dtype=np.int64)
    shift[1:4] = np.rint(RATING_GAIN[1:4] / h).astype(np.int64)
    agency = np.tile(np.arange(b_n) >= config.n_urban, e_n).astype(np.int64)
    fleet = np.repeat(np.arange(e_n), b_n)
    top = min(round(config.new_structure_rating / h), g_n - 1)
    deck = np.broadcast_to(np.asarray(deck_area if counted_deck is None else counted_deck, dtype=np.float64),
                           (e_n, b_n)).reshape(-1)
    shock = shock_weights(config.shock_probability, config.shock_mean_drop, h)
    out = BridgeMDPs(utility, cost, deck, feasible, wts, n_taps, kind.reshape(-1).astype(np.int64),
                     np.asarray(condition, dtype=np.float64).reshape(-1),
                     ysm0, agency, fleet, shift, band, shock, top, poor_top, h, t_n,
                     float(config.discount), float(config.cost_lambda), poor_step, poor_q)
    if certify:
        if abs(config.new_structure_rating / h - top) > 1e-6:
            raise ValueError(f"new_structure_rating {config.new_structure_rating}: the certified bound needs it on "
                             f"the rating grid (a multiple of the step {h:g})")
        out.floor_weights, out.floor_taps = _trimmed(deterioration_weights(drop, config.deterioration_cv, h, True))
        out.shock_floor = shock_weights(config.shock_probability, config.shock_mean_drop, h, floor=True)
        out.utility_gap = w * config.critical_penalty * h**2 / 4 * (c < config.critical_rating - 1e-9)
    return out


def allowed_actions(cost: np.ndarray, cap_usd: np.ndarray) -> np.ndarray:
    """bool (N, 5): the actions whose cost float64 (N, 5) USD fits the bridge's cap float (N,) or (E, B) USD (within
    the funding rule's cent); doing nothing always."""
    feasible = cost <= np.asarray(cap_usd, dtype=np.float64).reshape(-1, 1) + 0.01
    feasible[:, 0] = True
    return feasible


def rate_kinds(feasible: np.ndarray) -> int:
    """Deterioration-rate kinds the MDPs of bridges with allowed actions ``feasible`` bool (N, 5) need: the bridges'
    own rates, and the new structure's where some bridge may be replaced (``BridgeMDPs.weights``' R)."""
    return 2 if feasible[:, 4].any() else 1


def at_budget(mdps: BridgeMDPs, cap_usd: np.ndarray) -> BridgeMDPs | None:
    """The same bridges with each action capped at ``cap_usd`` float (N,) or (E, B) USD (another budget): only the
    allowed actions change, the deterioration weights are shared, not built again (the fleet model's fleets at
    four budget levels in ``teacher: lagrangian``). None where the rate kinds would differ (a replacement allowed
    at one budget and at no bridge at the other): build those with :func:`bridge_mdps`."""
    feasible = allowed_actions(mdps.cost, cap_usd)
    if rate_kinds(feasible) != mdps.weights.shape[1]:
        return None
    return dataclasses.replace(mdps, feasible=feasible)


def prices_only(mdps: BridgeMDPs) -> BridgeMDPs:
    """The bridges with no reward (only the prices count) and every action allowed: the least budget's
    pricing problem (:mod:`bridgefleet.planning.least_budget`)."""
    gap = None if mdps.utility_gap is None else np.zeros_like(mdps.utility_gap)
    return dataclasses.replace(mdps, utility=np.zeros_like(mdps.utility), poor_step=np.zeros_like(mdps.poor_step),
                               cost_lambda=0.0,
                               feasible=np.ones_like(mdps.feasible), utility_gap=gap)


def _trimmed(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weights without their all-negligible tail, C-contiguous, and the taps int64 (...,) of each case."""
    nz = w > 1e-13
    taps = np.where(nz.any(-1), w.shape[-1] - np.argmax(nz[..., ::-1], axis=-1), 1)
    return np.ascontiguousarray(w[..., : int(taps.max())]), taps.astype(np.int64)
