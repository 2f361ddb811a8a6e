"""Maximum-likelihood fit of the fleet model's deterioration to do-nothing pairs, and its checks.

The model (docs/fleet-model.md): in a year a bridge at rating c loses rate × f(c) × (1 + a × ysm) × G rating
points, f a factor per whole rating point, G ~ Gamma(mean 1, cv), plus with probability p a sudden drop
~ Exponential(mean J). The fit, in three maximum-likelihood steps on the continuous mapped scale:

1. Sudden damage: a pair whose drop over Δ years exceeds τ = 1 rating point (beyond what gradual deterioration
   gives in a few years) had a sudden drop; p = 1 − (1 − share)^(1/Δ̄) a year, and J = the mean excess over τ
   (the maximum-likelihood mean of an exponential, whose excess over τ is exponential with the same mean).
2. Gradual rates: each pair's drop less its expected sudden part is Gamma with mean
   m_k × Σ_{i<Δ} (1 + a (ysm + i)) (k the start's whole rating point, pooled to ≥ 30 pairs): for a given a the
   Gamma maximum-likelihood m_k is the group's mean of drop / Σ(…) whatever the shape, and a maximises the
   Gamma log-likelihood kernel −Σ (y / μ + log μ) over a grid.
3. Noise: cv maximises the likelihood of the observed end bands of the pairs simulated by the simulator's own
   kernel (a grid), as the recorded drops mix the noise with recording error.

Factors are m_k over the synthetic fleet's mean rate (0.04). Sources: gamma-process deterioration with shocks
(van Noortwijk, Reliability Engineering & System Safety 94, 2009); rates by condition state as in bridge
management systems (AASHTOWare BrM).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bridgefleet.calibration.histories import Pairs
from bridgefleet.config import FleetConfig
from bridgefleet.sim import model

MIN_PAIRS = 30
"""Rating points with fewer pairs share the factor of their neighbour (pooled downwards)."""


@dataclass
class Fit:
    """Fitted deterioration.

    Attributes:
        rating_rate_factors: 9 factors (ratings 0–1 … 8–9) of the mean rate; groups: the rating points pooled.
        ysm_acceleration, deterioration_cv, shock_probability, shock_mean_drop: as in :class:`FleetConfig`.
        threshold: drop over a pair (rating points) above which it counts as sudden damage.
        log_likelihood: of the end bands at the fitted cv; n_pairs: pairs fitted.
    """

    rating_rate_factors: tuple[float, ...]
    groups: list[list[int]]
    ysm_acceleration: float
    deterioration_cv: float
    shock_probability: float
    shock_mean_drop: float
    threshold: float
    log_likelihood: float
    n_pairs: int

    def fields(self) -> dict[str, object]:
        """The FleetConfig fields of the fit (rounded to what the data can tell)."""
        return {"rating_rate_factors": [round(f, 3) for f in self.rating_rate_factors],
                "ysm_acceleration": round(self.ysm_acceleration, 4),
                "deterioration_cv": round(self.deterioration_cv, 3),
                "shock_probability": round(self.shock_probability, 4),
                "shock_mean_drop": round(self.shock_mean_drop, 3)}


def rating_groups(rating0: np.ndarray, min_pairs: int = MIN_PAIRS) -> list[list[int]]:
    """Whole rating points 0–8 grouped from the top so that each group holds ≥ ``min_pairs`` pair starts (a
    short remainder at the bottom joins the last group); empty points above the data join the group below."""
    counts = np.bincount(model.factor_index(rating0), minlength=9)
    groups: list[list[int]] = []
    cur: list[int] = []
    for k in range(8, -1, -1):
        cur.append(k)
        if counts[cur].sum() >= min_pairs:
            groups.append(cur)
            cur = []
    if cur:
        if groups:
            groups[-1].extend(cur)
        else:
            groups.append(cur)
    return groups


def fit_pairs(pairs: Pairs, min_pairs: int = MIN_PAIRS, threshold: float = 1.0,
              cv_grid: tuple[float, ...] = (0.2, 0.3, 0.4, 0.5), draws: int = 16) -> Fit:
    """Maximum-likelihood deterioration of ``pairs`` (see the module's docstring).

    Raises:
        ValueError: fewer than ``min_pairs`` pairs.
    """
    n = len(pairs.rating0)
    if n < min_pairs:
        raise ValueError(f"{n} do-nothing pair(s): the fit needs at least {min_pairs}")
    groups = rating_groups(pairs.rating0, min_pairs)
    of_point = np.empty(9, dtype=np.int64)
    for g, ks in enumerate(groups):
        of_point[ks] = g
    k0 = of_point[model.factor_index(pairs.rating0)]
    y = pairs.rating0 - pairs.rating1
    dt = pairs.years
    big = y > threshold
    p = float(1.0 - (1.0 - big.mean()) ** (1.0 / dt.mean()))
    jump = float((y[big] - threshold).mean()) if big.sum() >= 5 else 0.0
    if jump == 0.0:
        p = 0.0
    gradual = y - (1.0 - (1.0 - p) ** dt) * jump
    lin = dt * pairs.ysm + dt * (dt - 1) / 2  # Σ_{i<Δ} (1 + a (ysm + i)) = Δ + a × lin
    best = (-np.inf, 0.0, np.zeros(len(groups)))
    count = np.bincount(k0, minlength=len(groups))
    for a in np.round(np.arange(0.0, 0.2001, 0.005), 3):
        g = dt + a * lin
        m = np.maximum(np.bincount(k0, weights=gradual / g, minlength=len(groups)) / count, 1e-4)
        mu = m[k0] * g
        ll = float(-(gradual / mu + np.log(mu)).sum())
        if ll > best[0] + 1e-9 * abs(ll):  # a tie (a not identified by the data) keeps the smaller a
            best = (ll, float(a), m)
    ll, a, m = best
    factors = m[of_point] / model.MEAN_RATE
    end_band = model.band_index(pairs.rating1)
    fits = []
    for cv in cv_grid:
        cfg = FleetConfig(rating_rate_factors=tuple(factors), ysm_acceleration=a, deterioration_cv=cv,
                          shock_probability=p, shock_mean_drop=jump)
        lik = (model.band_index(simulate_pairs(pairs, cfg, draws)) == end_band).mean(0)
        fits.append((float(np.log(np.maximum(lik, 1e-6)).sum()), cv))
    band_ll, cv = max(fits)
    return Fit(tuple(float(f) for f in factors), groups, a, cv, p, jump, threshold, band_ll, n)


def simulate_pairs(pairs: Pairs, config: FleetConfig, draws: int = 32, seed: int = 0) -> np.ndarray:
    """End ratings of every pair under ``config``'s deterioration with the simulator's own kernel (rates drawn
    as for a synthetic fleet), float32 (draws, N); pairs of Δ years run Δ years."""
    rng = np.random.default_rng(seed)
    n = len(pairs.rating0)
    state = model.FleetState(np.broadcast_to(pairs.rating0.astype(np.float32), (draws, n)).copy(),
                             np.zeros((draws, n), np.float32),
                             np.broadcast_to(pairs.ysm.astype(np.float32), (draws, n)).copy(),
                             draw_rates(rng, (draws, n)))
    end = state.condition.copy()
    nothing = np.zeros((draws, n), dtype=np.int64)
    for year in range(1, int(pairs.years.max()) + 1):
        noise = model.standard_gamma_noise(rng, config.deterioration_cv, (draws, n))
        model.maintain_and_deteriorate(state, nothing, noise, config, model.draw_shocks(rng, config, (draws, n)))
        done = pairs.years == year
        end[:, done] = state.condition[:, done]
    return end


def draw_rates(rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
    """Deterioration rates float32 ``size`` drawn as for a synthetic fleet, U(``model.RATE_RANGE``)."""
    lo, hi = model.RATE_RANGE
    return (lo + (hi - lo) * rng.random(size)).astype(np.float32)


def transition_shares(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """3 × 3 shares P[from band, to band] (good, fair, poor; rows sum to 1) of ratings (N,) → (D, N) or (N,)."""
    b0 = model.band_index(start)
    b1 = model.band_index(end)
    if b1.ndim == 1:
        b1 = b1[None]
    m = np.zeros((3, 3))
    for k in range(3):
        sel = b0 == k
        if sel.any():
            m[k] = np.bincount(b1[:, sel].ravel(), minlength=3)[:3] / b1[:, sel].size
    return m


def check_table(pairs: Pairs, configs: dict[str, FleetConfig], draws: int = 32) -> dict[str, dict]:
    """Observed vs modelled: band transitions (3 × 3), mean drop per band and per rating point, for each config.

    Returns {"observed": {...}, name: {...}} with keys ``transitions``, ``band_drop`` (3,), ``point_drop`` (9,)
    (NaN where no pair starts), ``mae`` (mean absolute error of the nine shares, percentage points).
    """
    b0 = model.band_index(pairs.rating0)
    k0 = model.factor_index(pairs.rating0)

    def summary(end: np.ndarray) -> dict:
        drop = pairs.rating0[None] - np.atleast_2d(end)
        return {"transitions": transition_shares(pairs.rating0, end),
                "band_drop": np.array([drop[:, b0 == k].mean() if (b0 == k).any() else np.nan for k in range(3)]),
                "point_drop": np.array([drop[:, k0 == k].mean() if (k0 == k).any() else np.nan for k in range(9)])}

    out = {"observed": summary(pairs.rating1)}
    out["observed"]["count"] = np.bincount(k0, minlength=9)
    for name, cfg in configs.items():
        out[name] = summary(simulate_pairs(pairs, cfg, draws))
        out[name]["mae"] = 100 * float(np.abs(out[name]["transitions"] - out["observed"]["transitions"]).mean())
    return out


def format_table(table: dict[str, dict]) -> str:
    """The check table as plain text (shares in %, drops in rating points over each pair's years)."""
    names = [k for k in table if k != "observed"]
    bands = ("good", "fair", "poor")
    lines = [f"{'from → to':<16}{'observed':>10}" + "".join(f"{n:>14}" for n in names)]
    for i in range(3):
        for j in range(3):
            lines.append(f"{bands[i] + ' → ' + bands[j]:<16}{100 * table['observed']['transitions'][i, j]:>9.1f}%"
                         + "".join(f"{100 * table[n]['transitions'][i, j]:>13.1f}%" for n in names))
    lines.append(f"{'MAE, nine shares':<26}" + "".join(f"{table[n]['mae']:>14.2f}" for n in names))
    for k, b in enumerate(bands):
        lines.append(f"{'mean drop, ' + b:<16}{table['observed']['band_drop'][k]:>10.3f}"
                     + "".join(f"{table[n]['band_drop'][k]:>14.3f}" for n in names))
    lines.append(f"\n{'rating':<8}{'pairs':>7}{'observed drop':>15}" + "".join(f"{n:>14}" for n in names))
    for k in range(8, -1, -1):
        count = int(table["observed"]["count"][k])
        if count:
            lines.append(f"{f'{k}–{k + 1}':<8}{count:>7,}{table['observed']['point_drop'][k]:>15.3f}"
                         + "".join(f"{table[n]['point_drop'][k]:>14.3f}" for n in names))
    return "\n".join(lines)
