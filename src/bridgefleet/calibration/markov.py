"""Maximum-likelihood continuous-time Markov generator of an NBI component rating (0–9) from inspection pairs.

A pair (i, j, Δt) is a rating i and the rating j of the same component Δt years later with no work between
(``bridgefleet.calibration.panel.inspection_pairs``). Its likelihood is P(Δt)[i, j] with P(Δt) = expm(Q·Δt), so
yearly and two-yearly inspections (and missed years) enter one fit (Kalbfleisch & Lawless, "The analysis of
panel data under a Markov assumption", JASA 80:863–871, 1985; as R's ``msm``, Jackson, J. Stat. Softw. 38(8),
2011). The generator Q (1/year) has, from each rating i:

* ``down1`` i → i−1 (i ≥ 1), always;
* ``down2`` i → i−2 (i ≥ 2), only with ``down2=True``;
* ``up`` i → i+1 (1 ≤ i ≤ 8), with ``up=True``: rises without recorded work (inspector-to-inspector
  variability, unrecorded minor work).

Rating 0 (failed) is absorbing; rates a structure lacks are structural zeros (``in_structure`` False). The
log-rates are fitted by L-BFGS-B on the exact gradient (the adjoint Fréchet derivative of expm); 95 % intervals
of each rate come from the observed information (a central-difference Hessian of the negative log-likelihood in
log-rate space), those of transition shares from a parametric bootstrap of the log-rates. A rating with fewer
than ``min_pairs`` pairs from it is not identified: its rates are tied to the nearest identified rating's (ties
to the higher rating), it is flagged (``identified`` False) and its interval is NaN.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, stats
from scipy.linalg import expm, expm_frechet

N_STATES = 10
KINDS = ("down1", "down2", "up")
"""Rows of ``GeneratorFit.rates``: i → i−1, i → i−2, i → i+1."""
_STEP = (-1, -2, 1)
MIN_PAIRS = 30
"""Pairs from a rating below which its rates are not identified (tied to the nearest identified rating's)."""
LOG_BOUNDS = (np.log(1e-6), np.log(50.0))
"""Bounds of a log-rate (rates 1e-6 – 50 a year)."""
NEAR_ZERO = 1e-4
"""A rate fitted below this (1/year) is reported as near zero: interval (0, profile upper bound), held at its
estimate in the bootstrap (the observed information is flat there)."""


def _counts(from_r: np.ndarray, to_r: np.ndarray, dt: np.ndarray) -> dict[float, np.ndarray]:
    """{Δt: (10, 10) counts of pairs i → j}."""
    f = np.asarray(from_r, dtype=np.int64)
    t = np.asarray(to_r, dtype=np.int64)
    d = np.asarray(dt, dtype=np.float64)
    if not (f.shape == t.shape == d.shape and f.ndim == 1):
        raise ValueError(f"from_r, to_r, dt: shapes {f.shape}, {t.shape}, {d.shape} are not one (M,) shape")
    if len(f) and (f.min() < 0 or f.max() > 9 or t.min() < 0 or t.max() > 9):
        raise ValueError("from_r, to_r: ratings outside 0–9")
    if len(d) and not (np.isfinite(d).all() and d.min() > 0):
        raise ValueError("dt: intervals must be finite and > 0 years")
    out = {}
    for v in np.unique(d):
        m = d == v
        c = np.zeros((N_STATES, N_STATES))
        np.add.at(c, (f[m], t[m]), 1.0)
        out[float(v)] = c
    return out


def _structure(up: bool, down2: bool) -> np.ndarray:
    """(3, 10) bool: which rates exist."""
    s = np.zeros((3, N_STATES), dtype=bool)
    s[0, 1:] = True
    if down2:
        s[1, 2:] = True
    if up:
        s[2, 1:9] = True
    return s


def _tie(in_structure: np.ndarray, identified: np.ndarray, prior: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """(3, 10) int parameter index of each rate (−1 structural zero, −2 fixed at ``prior``), and the number of
    parameters."""
    index = -np.ones((3, N_STATES), dtype=np.int64)
    k = 0
    for kind in range(3):
        for i in range(N_STATES):
            if in_structure[kind, i] and identified[i]:
                index[kind, i] = k
                k += 1
    for kind in range(3):
        donors = [i for i in range(N_STATES) if index[kind, i] >= 0]
        for i in range(N_STATES):
            if in_structure[kind, i] and not identified[i]:
                if prior is not None:
                    index[kind, i] = -2
                    continue
                if not donors:
                    raise ValueError(f"{KINDS[kind]} rate from rating {i}: no identified rating to tie it to")
                j = min(donors, key=lambda d, i=i: (abs(d - i), -d))
                index[kind, i] = index[kind, j]
    return index, k


def _generator(rates: np.ndarray) -> np.ndarray:
    """(10, 10) Q from (3, 10) rates."""
    q = np.zeros((N_STATES, N_STATES))
    for kind, step in enumerate(_STEP):
        for i in range(N_STATES):
            if rates[kind, i] > 0:
                q[i, i + step] += rates[kind, i]
    q[np.diag_indices(N_STATES)] = -q.sum(axis=1)
    return q


def _rates(theta: np.ndarray, index: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """(3, 10) rates: exp(theta) of free ones, ``fixed`` elsewhere (0 for structural zeros)."""
    if len(theta) == 0:
        return fixed.copy()
    return np.where(index >= 0, np.exp(theta[np.maximum(index, 0)]), fixed)


@dataclass
class _Problem:
    counts: dict[float, np.ndarray]
    index: np.ndarray
    k: int
    fixed: np.ndarray

    def rates(self, theta: np.ndarray) -> np.ndarray:
        return _rates(theta, self.index, self.fixed)

    def _powers(self, q: np.ndarray) -> dict[float, np.ndarray] | None:
        """{n: P(1)ⁿ} when every interval is a whole number of years (≤ 50), else None."""
        dts = sorted(self.counts)
        if not all(float(d).is_integer() and 1 <= d <= 50 for d in dts):
            return None
        p1 = expm(q)
        out, pn = {}, np.eye(N_STATES)
        for n in range(1, int(dts[-1]) + 1):
            pn = pn @ p1
            if float(n) in self.counts:
                out[float(n)] = pn
        out[0.0] = p1
        return out

    def loglik(self, theta: np.ndarray) -> float:
        q = _generator(self.rates(theta))
        powers = self._powers(q)
        total = 0.0
        for dt, c in self.counts.items():
            p = powers[dt] if powers is not None else expm(q * dt)
            m = c > 0
            total += float((c[m] * np.log(np.maximum(p[m], 1e-300))).sum())
        return total

    def grad(self, theta: np.ndarray) -> np.ndarray:
        """d loglik / d theta: with W = C / P, d<W, expm(A)> = <L(Aᵀ, W), dA> (adjoint Fréchet derivative L).

        Whole-year intervals share one P = expm(Q): d<W, Pⁿ> = <Σ_k (Pᵀ)ᵏ W (Pᵀ)ⁿ⁻¹⁻ᵏ, dP>, then one L(Qᵀ, ·)."""
        r = self.rates(theta)
        q = _generator(r)
        powers = self._powers(q)
        if powers is not None:
            pt = powers[0.0].T
            pt_pow = [np.eye(N_STATES)]
            for _ in range(int(max(self.counts))):
                pt_pow.append(pt_pow[-1] @ pt)
            g_p = np.zeros((N_STATES, N_STATES))
            for dt, c in self.counts.items():
                n = int(dt)
                w = np.where(c > 0, c / np.maximum(powers[dt], 1e-300), 0.0)
                for k in range(n):
                    g_p += pt_pow[k] @ w @ pt_pow[n - 1 - k]
            scale = max(float(np.abs(g_p).max()), 1e-300)
            _, g_q = expm_frechet(q.T, g_p / scale)
            g_q *= scale
        else:
            g_q = np.zeros((N_STATES, N_STATES))
            for dt, c in self.counts.items():
                a = q * dt
                w = np.where(c > 0, c / np.maximum(expm(a), 1e-300), 0.0)
                _, lt = expm_frechet(a.T, w)
                g_q += dt * lt
        g = np.zeros(self.k)
        for kind, step in enumerate(_STEP):
            for i in range(N_STATES):
                if self.index[kind, i] >= 0:
                    g[self.index[kind, i]] += r[kind, i] * (g_q[i, i + step] - g_q[i, i])
        return g


@dataclass
class GeneratorFit:
    """A fitted generator.

    Attributes:
        Q: (10, 10) float64 generator, 1/year; rows sum to 0.
        rates: (3, 10) float64 rates (1/year) from each rating, rows ``KINDS`` (down1, down2, up); 0 where
            ``in_structure`` is False.
        rate_ci: (3, 10, 2) float64 95 % interval of each rate (1/year); NaN where not identified or not in the
            structure; (0, profile upper bound) for a rate fitted below ``NEAR_ZERO``.
        in_structure: (3, 10) bool.
        identified: (10,) bool, ≥ ``min_pairs`` pairs from the rating; the rates of the others are tied to the
            nearest identified rating's (a stated prior, not an estimate).
        n_from: (10,) int64 pairs from each rating.
        loglik: maximised log-likelihood (natural log).
        n_pairs: pairs fitted.
        theta: (K,) fitted log-rates; cov: (K, K) their covariance (inverse observed information).
        index: (3, 10) int64 parameter of each rate (−1 structural zero, −2 fixed at the given prior).
        fixed: (3, 10) float64 rates held fixed (the prior of ratings not identified when one was given), 1/year.
        up, down2: the structure.
        converged: the optimiser's success flag; notes: rates fitted near zero.
    """

    Q: np.ndarray
    rates: np.ndarray
    rate_ci: np.ndarray
    in_structure: np.ndarray
    identified: np.ndarray
    n_from: np.ndarray
    loglik: float
    n_pairs: int
    theta: np.ndarray
    cov: np.ndarray
    index: np.ndarray
    fixed: np.ndarray
    up: bool
    down2: bool
    converged: bool = True
    notes: list[str] = field(default_factory=list)

    @property
    def n_params(self) -> int:
        """Free log-rates K."""
        return len(self.theta)

    def transition(self, dt: float = 1.0) -> np.ndarray:
        """(10, 10) float64 P(dt) = expm(Q·dt), dt in years; rows sum to 1."""
        return expm(self.Q * dt)

    def one_year(self) -> np.ndarray:
        """(10, 10) float64 one-year transition matrix expm(Q)."""
        return self.transition(1.0)

    def draw_transition(self, n: int = 2000, dt: float = 1.0, seed: int = 0) -> np.ndarray:
        """(n, 10, 10) float64 P(dt) under log-rates drawn from N(theta, cov) (parametric bootstrap)."""
        rng = np.random.default_rng(seed)
        w, v = np.linalg.eigh((self.cov + self.cov.T) / 2)
        sd = v * np.sqrt(np.clip(w, 0, None))
        th = self.theta + rng.standard_normal((n, len(self.theta))) @ sd.T
        th = np.clip(th, *LOG_BOUNDS)
        out = np.empty((n, N_STATES, N_STATES))
        for s in range(n):
            r = _rates(th[s], self.index, self.fixed)
            out[s] = expm(_generator(r) * dt)
        return out

    def transition_ci(self, dt: float = 1.0, level: float = 0.95, n: int = 2000, seed: int = 0
                      ) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi), each (10, 10) float64: the ``level`` interval of P(dt) from ``draw_transition``."""
        d = self.draw_transition(n, dt, seed)
        a = (1 - level) / 2
        return np.quantile(d, a, axis=0), np.quantile(d, 1 - a, axis=0)

    def score(self, from_r: np.ndarray, to_r: np.ndarray, dt: np.ndarray) -> float:
        """Log-likelihood (natural log) of other pairs (a held-out check) under this fit; −inf if one has
        probability 0."""
        total = 0.0
        for d, c in _counts(from_r, to_r, dt).items():
            p = self.transition(d)
            m = c > 0
            with np.errstate(divide="ignore"):
                total += float((c[m] * np.log(np.where(p[m] > 1e-300, p[m], 0.0))).sum())
        return total


def fit_generator(from_r: np.ndarray, to_r: np.ndarray, dt: np.ndarray, *, up: bool = True, down2: bool = False,
                  min_pairs: int = MIN_PAIRS, prior: np.ndarray | None = None) -> GeneratorFit:
    """Maximum-likelihood generator of a component rating from inspection pairs (module docstring: model,
    sources).

    Args:
        from_r, to_r: (M,) int ratings 0–9 (first, second inspection).
        dt: (M,) float or int years between them (> 0; 1 and 2 may mix).
        up: include the i → i+1 rate.
        down2: include the i → i−2 rate.
        min_pairs: pairs from a rating needed to identify its rates.
        prior: optional (3, 10) rates (1/year, rows ``KINDS``) that the rates of a rating not identified are
            fixed at; None (default): they are tied to the nearest identified rating's (ties to the higher).

    Returns:
        GeneratorFit.

    Raises:
        ValueError: shapes differ, a rating outside 0–9, an interval ≤ 0, no rating with ``min_pairs`` pairs, or
            a prior not of shape (3, 10) with finite rates ≥ 0.
    """
    counts = _counts(from_r, to_r, dt)
    n_from = np.zeros(N_STATES, dtype=np.int64)
    for c in counts.values():
        n_from += c.sum(axis=1).astype(np.int64)
    identified = n_from >= min_pairs
    identified[0] = False  # absorbing: no rate from it
    structure = _structure(up, down2)
    if not identified.any() and prior is None:
        raise ValueError(f"no rating has {min_pairs} pairs from it (counts {n_from.tolist()})")
    fixed = np.zeros((3, N_STATES))
    if prior is not None:
        prior = np.asarray(prior, dtype=np.float64)
        if prior.shape != (3, N_STATES) or not (np.isfinite(prior).all() and prior.min() >= 0):
            raise ValueError(f"prior: shape {prior.shape} is not (3, {N_STATES}) of finite rates >= 0 (1/year)")
    index, k = _tie(structure, identified, prior)
    if prior is not None:
        fixed = np.where(index == -2, prior, 0.0)
    prob = _Problem(counts, index, k, fixed)
    n = max(int(n_from.sum()), 1)
    theta0 = _start(counts, index, k)
    converged = True
    theta = theta0
    if k:
        res = optimize.minimize(lambda t: (-prob.loglik(t) / n, -prob.grad(t) / n), theta0, jac=True,
                                method="L-BFGS-B", bounds=[LOG_BOUNDS] * k,
                                options={"maxiter": 2000, "ftol": 1e-11, "gtol": 1e-7})
        theta, converged = res.x, bool(res.success)
    ll = prob.loglik(theta)
    at_bound = theta <= np.log(NEAR_ZERO)
    free = np.flatnonzero(~at_bound)
    cov = np.zeros((k, k))
    if len(free):
        h = 1e-4
        hess = np.zeros((len(free), len(free)))
        for a, j in enumerate(free):
            e = np.zeros(k)
            e[j] = h
            hess[:, a] = -(prob.grad(theta + e)[free] - prob.grad(theta - e)[free]) / (2 * h)
        hess = (hess + hess.T) / 2
        w, v = np.linalg.eigh(hess)
        w_inv = np.where(w > 1e-10 * max(w.max(), 1e-300), 1.0 / np.maximum(w, 1e-300), 0.0)
        cov[np.ix_(free, free)] = (v * w_inv) @ v.T
    z = stats.norm.ppf(0.975)
    ci_theta = np.full((k, 2), np.nan)
    for j in range(k):
        if at_bound[j]:
            ci_theta[j] = (-np.inf, _profile_upper(prob, theta, j, ll))
        else:
            se = np.sqrt(max(cov[j, j], 0.0))
            ci_theta[j] = theta[j] - z * se, theta[j] + z * se
    rates = prob.rates(theta)
    rate_ci = np.full((3, N_STATES, 2), np.nan)
    for kind in range(3):
        for i in range(N_STATES):
            if index[kind, i] >= 0 and identified[i]:
                rate_ci[kind, i] = np.exp(ci_theta[index[kind, i]])
    notes = [f"{KINDS[kd]} from {i}: fitted near zero (< {NEAR_ZERO:g}/yr; interval from the profile likelihood)"
             for kd in range(3) for i in range(N_STATES) if index[kd, i] >= 0 and identified[i]
             and at_bound[index[kd, i]]]
    return GeneratorFit(Q=_generator(rates), rates=rates, rate_ci=rate_ci, in_structure=structure,
                        identified=identified, n_from=n_from, loglik=ll, n_pairs=int(n_from.sum()), theta=theta,
                        cov=cov, index=index, fixed=fixed, up=up, down2=down2, converged=converged, notes=notes)


def _start(counts: dict[float, np.ndarray], index: np.ndarray, k: int) -> np.ndarray:
    """Starting log-rates: each jump's count over the years at risk from its rating (≥ 1e-4 a year)."""
    jumps = np.zeros((3, N_STATES))
    years = np.zeros(N_STATES)
    for dt, c in counts.items():
        years += dt * c.sum(axis=1)
        for kind, step in enumerate(_STEP):
            for i in range(N_STATES):
                j = i + step
                if 0 <= j < N_STATES:
                    jumps[kind, i] += c[i, j]
    theta0 = np.full(k, np.log(0.01))
    for kind in range(3):
        for i in range(N_STATES):
            if index[kind, i] >= 0 and years[i] > 0:
                theta0[index[kind, i]] = np.log(max(jumps[kind, i] / years[i], 1e-4))
    return theta0


def _profile_upper(prob: _Problem, theta: np.ndarray, j: int, ll: float) -> float:
    """Log-rate where the log-likelihood (others held) falls 1.92 below its maximum (χ²₁ 95 % / 2)."""
    drop = stats.chi2.ppf(0.95, 1) / 2

    def f(x: float) -> float:
        t = theta.copy()
        t[j] = x
        return prob.loglik(t) - (ll - drop)

    if f(LOG_BOUNDS[1]) > 0:
        return LOG_BOUNDS[1]
    return optimize.brentq(f, theta[j], LOG_BOUNDS[1], xtol=1e-6)


@dataclass(frozen=True)
class AgeBandTest:
    """Does deterioration depend on age band? Separate generators per band against one pooled generator.

    Attributes:
        bands: (lower bounds of the bands, years), e.g. (0, 30, 60) for < 30, 30–59, ≥ 60.
        n_pairs: pairs per band (fit data, age known).
        lr: likelihood-ratio statistic 2 (Σ loglik_band − loglik_pooled).
        df: degrees of freedom Σ K_band − K_pooled.
        p_value: χ²_df upper tail of lr.
        heldout_pooled, heldout_bands: held-out log-likelihood of the pooled and the banded fits (NaN without
            held-out pairs); heldout_gain = bands − pooled (nats), heldout_n its pairs.
    """

    bands: tuple[int, ...]
    n_pairs: tuple[int, ...]
    lr: float
    df: int
    p_value: float
    heldout_pooled: float = float("nan")
    heldout_bands: float = float("nan")
    heldout_n: int = 0

    @property
    def heldout_gain(self) -> float:
        """Held-out log-likelihood of the banded fits less the pooled fit's, nats."""
        return self.heldout_bands - self.heldout_pooled


def age_band_test(from_r: np.ndarray, to_r: np.ndarray, dt: np.ndarray, age: np.ndarray, *,
                  bands: tuple[int, ...] = (30, 60), held_out: tuple[np.ndarray, ...] | None = None,
                  up: bool = True, down2: bool = False, min_pairs: int = MIN_PAIRS) -> AgeBandTest:
    """Likelihood-ratio test of generators per age band against one pooled generator, and the held-out gain.

    A rating not identified in a band (< ``min_pairs`` pairs there) keeps the pooled fit's rates in that band,
    so the pooled model is nested in the banded one (lr ≥ 0, df = the extra free log-rates).

    Args:
        from_r, to_r, dt: (M,) pairs as for ``fit_generator``.
        age: (M,) int years since built at the first inspection; pairs with age < 0 (unknown) are left out of
            both fits.
        bands: inner band edges, years (default < 30, 30–59, ≥ 60).
        held_out: optional (from_r, to_r, dt, age) of other pairs to score both fits on.
        up, down2, min_pairs: as for ``fit_generator``.

    Returns:
        AgeBandTest.

    Raises:
        ValueError: as ``fit_generator``, for the pooled fit or a band's.
    """
    f, t, d, a = (np.asarray(x) for x in (from_r, to_r, dt, age))
    known = a >= 0
    f, t, d, a = f[known], t[known], d[known], a[known]
    edges = np.asarray(bands)
    band = np.searchsorted(edges, a, side="right")
    pooled = fit_generator(f, t, d, up=up, down2=down2, min_pairs=min_pairs)
    fits = [fit_generator(f[band == b], t[band == b], d[band == b], up=up, down2=down2, min_pairs=min_pairs,
                          prior=pooled.rates) for b in range(len(edges) + 1)]
    lr = 2 * (sum(x.loglik for x in fits) - pooled.loglik)
    df = sum(x.n_params for x in fits) - pooled.n_params
    hp = hb = float("nan")
    hn = 0
    if held_out is not None:
        hf, ht, hd, ha = (np.asarray(x) for x in held_out)
        k = ha >= 0
        hf, ht, hd, ha = hf[k], ht[k], hd[k], ha[k]
        hband = np.searchsorted(edges, ha, side="right")
        hp = pooled.score(hf, ht, hd)
        hb = sum(fits[b].score(hf[hband == b], ht[hband == b], hd[hband == b]) for b in range(len(edges) + 1))
        hn = len(hf)
    n_band = tuple(int((band == b).sum()) for b in range(len(edges) + 1))
    return AgeBandTest(bands=(0, *map(int, edges)), n_pairs=n_band,
                       lr=float(lr), df=int(df), p_value=float(stats.chi2.sf(max(lr, 0.0), max(df, 1))),
                       heldout_pooled=hp, heldout_bands=hb, heldout_n=hn)


@dataclass(frozen=True)
class CouplingFit:
    """How often a bridge's components move together (:func:`fit_coupling`).

    Attributes:
        w: the maximum-likelihood share of years in which they move together, 0–1.
        ci95: (low, high), the profile-likelihood 95 % interval of w.
        nll_independent, nll: negative log-likelihood of the joint moves at w = 0 and at w.
        n_pairs: bridge-years read.
    """

    w: float
    ci95: tuple[float, float]
    nll_independent: float
    nll: float
    n_pairs: int


def fit_coupling(p: np.ndarray, x0: np.ndarray, x1: np.ndarray) -> CouplingFit:
    """Fit the share of years w in which a bridge's three components move together, by maximum likelihood.

    In a year the components move together (one uniform u draws every component's next rating from its row of
    ``p``: the comonotone coupling of the three rows) with probability w, independently otherwise; each
    component's own one-year matrix is ``p[c]`` either way (``bridgefleet.sim.components``). The likelihood of a
    joint move x0 → x1 is w · |∩_c [F_c(x1_c − 1), F_c(x1_c))| + (1 − w) · Π_c ``p[c][x0_c, x1_c]``, F_c the
    cumulative row; w maximises it over the bridge-years (``scipy.optimize.minimize_scalar``, bounded).

    Args:
        p: float64 (3, R, R), the components' one-year matrices.
        x0, x1: int (M, 3), ratings a year apart (``calibration.panel.joint_pairs``).

    Raises:
        ValueError: shapes that do not match, or a move the matrices give probability 0 (a rise the model has
            no rate for, say).
    """
    x0, x1 = np.asarray(x0, np.int64), np.asarray(x1, np.int64)
    if p.ndim != 3 or p.shape[0] != 3 or x0.shape != x1.shape or x0.ndim != 2 or x0.shape[1] != 3:
        raise ValueError(f"fit_coupling: p (3, R, R), x0 and x1 (M, 3); got {p.shape}, {x0.shape}, {x1.shape}")
    cum = np.concatenate([np.zeros((3, p.shape[1], 1)), np.cumsum(p, axis=2)], axis=2)
    lo = np.stack([cum[c][x0[:, c], x1[:, c]] for c in range(3)], axis=1)
    hi = np.stack([cum[c][x0[:, c], x1[:, c] + 1] for c in range(3)], axis=1)
    independent = np.prod(hi - lo, axis=1)
    together = np.maximum(hi.min(axis=1) - lo.max(axis=1), 0.0)
    if (independent <= 0).any():
        raise ValueError(f"fit_coupling: {int((independent <= 0).sum())} moves have probability 0 under p")

    def nll(w: float) -> float:
        return float(-np.log(w * together + (1.0 - w) * independent).sum())

    best = optimize.minimize_scalar(nll, bounds=(0.0, 1.0 - 1e-9), method="bounded", options={"xatol": 1e-6})
    w, top = float(best.x), float(best.fun)
    edge = top + 1.920729  # chi-square(1) 95 % / 2

    def side(a: float, b: float) -> float:
        return a if nll(a) <= edge else optimize.brentq(lambda v: nll(v) - edge, a, b)

    return CouplingFit(w, (side(0.0, w), side(1.0 - 1e-9, w)), nll(0.0), top, len(x0))
