"""Treatment effects and unit costs fitted to recorded work: MassDOT projects (component level) and Ontario's
recorded rehabilitations (bridge level).

MassDOT does not record the kind of work, so each project's kind is inferred from its ratings
(:func:`infer_kind`): the last valid record before the project window (``pre``) is compared with the first after
it (``post``), each at most ``MAX_GAP_YEARS`` away. For each action and component the rating after the treatment
is a distribution given the rating before (:func:`fit_matrix`, a 10×10 row-stochastic matrix, rows = rating
before 0–9): maximum likelihood (row counts) where a row has ``MIN_ROW_COUNT`` pairs or more, topped up with
pseudo-counts from the action's pooled rows of the same condition band where it has fewer (flagged).

Costs are USD per m² of deck (``spending_usd_per_bridge`` over the deck area of the first record after the
work), nominal USD of the project years (2000–2016); :data:`USD_2016_TO_2024` converts to 2024 USD
approximately (National Highway Construction Cost Index, see there).

Data: ``read_panel`` / ``read_works`` of :mod:`bridgefleet.calibration.panel` (Massachusetts layout, built by
S. Vasserman and V. Bolotnyy, StanCon 2018, MIT licence) and the Ontario MTO "Bridge conditions" open data
(:func:`read_ontario_rehabs`).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from bridgefleet.calibration.panel import COMPONENTS, OPEN_END, Panel, Works
from bridgefleet.textfile import read_text

N_RATINGS = 10
"""Ratings 0–9 (NBI items 58–62, FHWA Coding Guide)."""
KINDS = ("preservation", "component_rehab", "major_rehab", "replacement")
"""Inferred kinds of work; they map onto the model's actions 1–4 (``ACTION_OF_KIND``)."""
ACTION_OF_KIND = {"preservation": 1, "component_rehab": 2, "major_rehab": 3, "replacement": 4}
BANDS = (("good", 7, 9), ("fair", 5, 6), ("poor", 0, 4))
"""FHWA condition bands on one rating (FHWA Coding Guide; 23 CFR 490: ≥ 7 good, 5–6 fair, ≤ 4 poor)."""
MIN_RISE = 1
"""A component "rises" when post − pre ≥ this (rating points). Without recorded work a +1 over 3 years happens
to 1.7 % of component pairs in Massachusetts (+2 or more: 0.8 %), so a one-point rise across a project is
mostly the work; ``benchmarks/fit_treatments.py`` also reports ``min_rise=2``."""
MAX_GAP_YEARS = 3
"""The record before (after) a project window must be at most this many years before its start (after its end)."""
REBUILT_SLACK = 1
"""Replacement: year built (NBI item 27) changes to a year within [start − 1, end + 1] of the window."""
MIN_ROW_COUNT = 5
"""Matrix rows with fewer pairs than this are topped up with pooled pseudo-counts and flagged."""
NHCCI_2016 = 1.68
"""FHWA National Highway Construction Cost Index 2.0, 2016 (2003 Q1 = 1.00): "+68 % over 2003–2016" (FHWA
release of NHCCI 2.0, reported by Transportation Today News, 2017). NHCCI 2.0 was about flat 2008–2017 ("took
until 2018 Q3 to get back to the 2008 Q3 level", Eno Center for Transportation, 2024)."""
NHCCI_2024Q1 = 3.1908
"""NHCCI, January–March 2024 (FHWA; quoted by Eno Center for Transportation, "Highway Construction Costs Continue
to Rise at 9.6 % Annual Rate", 2024)."""
USD_2016_TO_2024 = NHCCI_2024Q1 / NHCCI_2016
"""≈ 1.90: 2016 (roughly 2008–2016) highway-construction USD to 2024 Q1 USD; approximate for 2000–2007 projects,
when the index was lower (original NHCCI 2003–2008: 1.00 to 1.25, FHWA Highway Statistics 2008, chart PT-3C)."""


@dataclass(frozen=True)
class TreatmentEvent:
    """One project (overlapping windows of a bridge merged) with its records before and after.

    Attributes:
        bridge: the agency's bridge number.
        start_year, end_year: the project window, calendar years.
        pre_year, post_year: years of the records compared.
        pre, post: (4,) int8 ratings deck, superstructure, substructure, culvert; −1 missing.
        rebuilt: year built changed to a year inside the window (± ``REBUILT_SLACK``).
        usd: spending on the bridge, USD nominal (NaN unknown).
        area_m2: deck area of the record after (before where missing), m² (NaN unknown).
        kind: one of ``KINDS``.
        treated: (4,) bool, the components the kind's action treats (see :func:`infer_kind`).
    """

    bridge: str
    start_year: int
    end_year: int
    pre_year: int
    post_year: int
    pre: np.ndarray
    post: np.ndarray
    rebuilt: bool
    usd: float
    area_m2: float
    kind: str
    treated: np.ndarray

    @property
    def usd_per_m2(self) -> float:
        """Spending per m² of deck, USD nominal (NaN where either is unknown)."""
        return self.usd / self.area_m2 if self.area_m2 > 0 else float("nan")


def infer_kind(pre: np.ndarray, post: np.ndarray, rebuilt: bool, min_rise: int = MIN_RISE) -> tuple[str, np.ndarray]:
    """The kind of a project from its ratings before and after, and the components its action treats.

    Rule: year built changed into the window → ``replacement`` (every rated component treated); else the
    components rated before and after whose rating rose by ``min_rise`` or more: two or more →
    ``major_rehab`` (every rated component treated, risen or not, as action 3 treats all); one →
    ``component_rehab`` (that component treated); none → ``preservation`` (no component's rating changed:
    preservation or minor work; nothing treated).

    Args:
        pre, post: (4,) int ratings, −1 missing.
        rebuilt: year built (NBI item 27) changed into the window.
        min_rise: rating points that make a rise (≥ 1).

    Returns:
        (kind, treated (4,) bool).

    Raises:
        ValueError: shapes other than (4,), ratings outside −1..9, ``min_rise`` < 1.
    """
    pre = np.asarray(pre, dtype=np.int16)
    post = np.asarray(post, dtype=np.int16)
    if pre.shape != (len(COMPONENTS),) or post.shape != pre.shape:
        raise ValueError(f"pre/post: expected shape ({len(COMPONENTS)},), got {pre.shape} and {post.shape}")
    if ((pre < -1) | (pre > 9) | (post < -1) | (post > 9)).any():
        raise ValueError(f"pre/post: ratings must be 0–9 or −1 (missing), got {pre.tolist()} and {post.tolist()}")
    if min_rise < 1:
        raise ValueError(f"min_rise {min_rise}: must be ≥ 1 rating point")
    rated = (pre >= 0) & (post >= 0)
    if rebuilt:
        return "replacement", rated
    rose = rated & (post - pre >= min_rise)
    if rose.sum() >= 2:
        return "major_rehab", rated
    if rose.sum() == 1:
        return "component_rehab", rose
    return "preservation", np.zeros(len(COMPONENTS), dtype=bool)


def _bridge_rows(panel: Panel) -> dict[str, slice]:
    idx = panel.bridge_index
    starts = np.searchsorted(idx, np.arange(len(panel.bridges)), side="left")
    stops = np.searchsorted(idx, np.arange(len(panel.bridges)), side="right")
    return {b: slice(int(s), int(e)) for b, s, e in zip(panel.bridges.tolist(), starts, stops, strict=True)}


def merge_windows(works: Works) -> list[tuple[str, int, int, float]]:
    """Each bridge's project windows, overlapping or touching ones merged (their USD summed; NaN if any is NaN).

    Returns:
        [(bridge, start_year, end_year, usd)], open windows (``OPEN_END``) kept as such, sorted by bridge, start.
    """
    rows = sorted(zip(works.bridge_id.tolist(), works.start_year.tolist(), works.end_year.tolist(),
                      works.usd.tolist(), strict=True))
    out: list[tuple[str, int, int, float]] = []
    for b, s, e, u in rows:
        if out and out[-1][0] == b and s <= out[-1][2] + 1:
            _, ps, pe, pu = out[-1]
            out[-1] = (b, ps, max(pe, e), pu + u)
        else:
            out.append((b, int(s), int(e), float(u)))
    return out


def treatment_events(panel: Panel, works: Works, min_rise: int = MIN_RISE,
                     max_gap: int = MAX_GAP_YEARS) -> tuple[list[TreatmentEvent], int]:
    """Every merged project with a valid record ≤ ``max_gap`` years before and after its window, kind inferred.

    Args:
        panel, works: from ``read_panel`` / ``read_works``.
        min_rise: see :func:`infer_kind`.
        max_gap: years, see ``MAX_GAP_YEARS``.

    Returns:
        (events, skipped): skipped counts merged projects without such records (open windows, windows at the
        panel's edges, bridges not in the panel).

    Raises:
        ValueError: ``max_gap`` < 1 (and what :func:`infer_kind` raises).
    """
    if max_gap < 1:
        raise ValueError(f"max_gap {max_gap}: must be ≥ 1 year")
    rows = _bridge_rows(panel)
    events: list[TreatmentEvent] = []
    skipped = 0
    for b, s, e, usd in merge_windows(works):
        sl = rows.get(b)
        if sl is None or e == OPEN_END:
            skipped += 1
            continue
        yr = panel.year[sl].astype(np.int32)
        valid = (panel.ratings[sl] >= 0).any(axis=1)
        before = np.flatnonzero(valid & (yr < s) & (yr >= s - max_gap))
        after = np.flatnonzero(valid & (yr > e) & (yr <= e + max_gap))
        if not len(before) or not len(after):
            skipped += 1
            continue
        i, j = sl.start + before[-1], sl.start + after[0]
        yb0, yb1 = int(panel.year_built[i]), int(panel.year_built[j])
        rebuilt = yb1 > 0 and yb1 != yb0 and s - REBUILT_SLACK <= yb1 <= e + REBUILT_SLACK
        pre, post = panel.ratings[i].copy(), panel.ratings[j].copy()
        kind, treated = infer_kind(pre, post, rebuilt, min_rise)
        area = panel.deck_area_m2[j] if np.isfinite(panel.deck_area_m2[j]) else panel.deck_area_m2[i]
        events.append(TreatmentEvent(b, s, e, int(panel.year[i]), int(panel.year[j]), pre, post, bool(rebuilt),
                                     float(usd), float(area), kind, treated))
    return events, skipped


@dataclass(frozen=True)
class TreatmentMatrix:
    """Rating after a treatment given the rating before.

    Attributes:
        probs: (10, 10) float64, row-stochastic; row = rating before 0–9, column = rating after.
        counts: (10, 10) int64, observed pairs.
        flagged: (10,) bool, rows with fewer than ``MIN_ROW_COUNT`` pairs (topped up from the pool).
    """

    probs: np.ndarray
    counts: np.ndarray
    flagged: np.ndarray

    def mean_after(self) -> np.ndarray:
        """(10,) float64 expected rating after, per rating before (rating points)."""
        return self.probs @ np.arange(N_RATINGS, dtype=np.float64)


def band_of(rating: int) -> str:
    """``good`` / ``fair`` / ``poor`` of a rating 0–9 (``BANDS``)."""
    for name, lo, hi in BANDS:
        if lo <= rating <= hi:
            return name
    raise ValueError(f"rating {rating}: not 0–9")


def _check_ratings(name: str, r: np.ndarray) -> np.ndarray:
    r = np.asarray(r)
    if r.ndim != 1 or (len(r) and (r.min() < 0 or r.max() > 9)) or not np.array_equal(r, np.round(r)):
        raise ValueError(f"{name}: expected a 1-D array of whole ratings 0–9")
    return r.astype(np.int64)


def fit_matrix(pre: np.ndarray, post: np.ndarray, pool_pre: np.ndarray | None = None,
               pool_post: np.ndarray | None = None, min_count: int = MIN_ROW_COUNT) -> TreatmentMatrix:
    """Maximum-likelihood post-treatment distributions, thin rows topped up from a pool and flagged.

    Row r with n ≥ ``min_count`` pairs: counts / n. With n < ``min_count``: (counts + (min_count − n) · prior) /
    min_count, where prior is the distribution of ``pool_post`` over the pool pairs whose ``pool_pre`` is in r's
    band (``BANDS``), all pool pairs if that band has none, staying at r if the pool is empty; the prior's mass
    below r is moved to r (pooled evidence does not lower a rating; observed counts are kept as they are).

    Args:
        pre, post: (N,) int ratings 0–9 before and after.
        pool_pre, pool_post: (M,) int ratings 0–9, the pooled pairs (default: ``pre``, ``post``).
        min_count: pairs a row needs to be ML only (≥ 1).

    Returns:
        TreatmentMatrix.

    Raises:
        ValueError: arrays not 1-D whole ratings 0–9, lengths differing, ``min_count`` < 1.
    """
    pre, post = _check_ratings("pre", pre), _check_ratings("post", post)
    pool_pre = pre if pool_pre is None else _check_ratings("pool_pre", pool_pre)
    pool_post = post if pool_post is None else _check_ratings("pool_post", pool_post)
    if len(pre) != len(post) or len(pool_pre) != len(pool_post):
        raise ValueError(f"pre/post lengths differ: {len(pre)} and {len(post)} (pool {len(pool_pre)}, "
                         f"{len(pool_post)})")
    if min_count < 1:
        raise ValueError(f"min_count {min_count}: must be ≥ 1")
    counts = np.zeros((N_RATINGS, N_RATINGS), dtype=np.int64)
    np.add.at(counts, (pre, post), 1)
    pool_band = np.array([band_of(int(r)) for r in pool_pre], dtype=object)
    probs = np.zeros((N_RATINGS, N_RATINGS))
    flagged = np.zeros(N_RATINGS, dtype=bool)
    for r in range(N_RATINGS):
        n = counts[r].sum()
        if n >= min_count:
            probs[r] = counts[r] / n
            continue
        flagged[r] = True
        sel = pool_post[pool_band == band_of(r)] if len(pool_post) else pool_post
        if not len(sel):
            sel = pool_post
        prior = (np.bincount(sel, minlength=N_RATINGS) / len(sel) if len(sel)
                 else np.eye(N_RATINGS)[r])
        prior[r] += prior[:r].sum()  # a pooled treatment does not lower the rating: mass below r stays at r
        prior[:r] = 0.0
        probs[r] = (counts[r] + (min_count - n) * prior) / min_count
    return TreatmentMatrix(probs, counts, flagged)


def treated_pairs(events: list[TreatmentEvent], kind: str, component: int) -> tuple[np.ndarray, np.ndarray]:
    """(pre, post) int64 (N,) ratings of ``component`` (index into ``COMPONENTS``) over ``kind``'s events that
    treat it."""
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r}: not one of {', '.join(KINDS)}")
    sel = [ev for ev in events if ev.kind == kind and ev.treated[component]]
    return (np.array([ev.pre[component] for ev in sel], dtype=np.int64),
            np.array([ev.post[component] for ev in sel], dtype=np.int64))


def fit_action_matrices(events: list[TreatmentEvent], kind: str,
                        min_count: int = MIN_ROW_COUNT) -> dict[str, TreatmentMatrix]:
    """Per component, :func:`fit_matrix` of ``kind``'s treated pairs, pooled over all components of the kind.

    Returns:
        {component name: TreatmentMatrix} for every name in ``COMPONENTS``.

    Raises:
        ValueError: unknown kind.
    """
    pairs = [treated_pairs(events, kind, k) for k in range(len(COMPONENTS))]
    pool_pre = np.concatenate([p[0] for p in pairs])
    pool_post = np.concatenate([p[1] for p in pairs])
    return {c: fit_matrix(p[0], p[1], pool_pre, pool_post, min_count) for c, p in zip(COMPONENTS, pairs, strict=True)}


def mean_rise_by_band(events: list[TreatmentEvent], kind: str, treated_only: bool = True
                      ) -> dict[tuple[str, str], tuple[float, int]]:
    """Mean post − pre (rating points) and pair count per (component, band of the pre rating).

    Args:
        treated_only: only the components the kind treats (else every component rated before and after;
            use False for ``preservation``, which treats none).
    """
    out: dict[tuple[str, str], tuple[float, int]] = {}
    for k, c in enumerate(COMPONENTS):
        sel = [ev for ev in events if ev.kind == kind and ev.pre[k] >= 0 and ev.post[k] >= 0
               and (ev.treated[k] or not treated_only)]
        for band, lo, hi in BANDS:
            d = [int(ev.post[k]) - int(ev.pre[k]) for ev in sel if lo <= ev.pre[k] <= hi]
            out[(c, band)] = (float(np.mean(d)) if d else float("nan"), len(d))
    return out


@dataclass(frozen=True)
class CostSummary:
    """USD per m² of deck over a kind's events with known spending and area (nominal USD of the project years).

    Attributes:
        n: events; median, q25, q75: quantiles of the per-event USD/m²; aggregate: Σ USD / Σ m² (what a fleet pays per
            m² treated); all NaN when n = 0.
    """

    n: int
    median: float
    q25: float
    q75: float
    aggregate: float

    def scaled(self, factor: float) -> CostSummary:
        """The same figures times ``factor`` (e.g. ``USD_2016_TO_2024``)."""
        return CostSummary(self.n, self.median * factor, self.q25 * factor, self.q75 * factor,
                           self.aggregate * factor)


def cost_per_m2(events: list[TreatmentEvent], kind: str | None = None) -> CostSummary:
    """Cost per m² of deck of ``kind``'s events (all events when None).

    Raises:
        ValueError: unknown kind.
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind {kind!r}: not one of {', '.join(KINDS)}")
    sel = [ev for ev in events if (kind is None or ev.kind == kind) and np.isfinite(ev.usd_per_m2)]
    if not sel:
        nan = float("nan")
        return CostSummary(0, nan, nan, nan, nan)
    x = np.array([ev.usd_per_m2 for ev in sel])
    q25, med, q75 = np.percentile(x, [25, 50, 75])
    agg = sum(ev.usd for ev in sel) / sum(ev.area_m2 for ev in sel)
    return CostSummary(len(sel), float(med), float(q25), float(q75), float(agg))


@dataclass(frozen=True)
class DeckDropEvidence:
    """Yearly deck drops after no-rise projects against the no-work baseline at the same deck rating.

    Attributes:
        bridge_years: yearly deck pairs observed after the projects; observed: drops among them; expected: Σ baseline
            drop probability of their ratings; ratio: observed / expected (the slowdown factor); ci_low, ci_high: exact
            Poisson 95 % interval of the ratio; baseline: (10,) float64 yearly no-work drop probability per deck rating
            (NaN where no pairs).
    """

    bridge_years: int
    observed: int
    expected: float
    ratio: float
    ci_low: float
    ci_high: float
    baseline: np.ndarray


def deck_drop_evidence(panel: Panel, works: Works, events: list[TreatmentEvent],
                       years_after: int = 5) -> DeckDropEvidence:
    """How fast decks fall in the ``years_after`` years after ``preservation`` events, against the baseline.

    Baseline: consecutive-year deck pairs (no rise) with no project window within a year of either year. After
    an event: consecutive-year deck pairs (no rise) from its post-record year on, up to ``years_after`` pairs,
    stopping before any later project of the bridge.

    Raises:
        ValueError: ``years_after`` < 1.
    """
    if years_after < 1:
        raise ValueError(f"years_after {years_after}: must be ≥ 1")
    rows = _bridge_rows(panel)
    windows: dict[str, list[tuple[int, int]]] = {}
    for b, s, e, _ in merge_windows(works):
        windows.setdefault(b, []).append((s, e))
    drops = np.zeros(N_RATINGS)
    total = np.zeros(N_RATINGS)
    for b, sl in rows.items():
        yr = panel.year[sl].astype(np.int32)
        d = panel.ratings[sl, 0].astype(np.int16)
        near = np.array([any(s - 1 <= y <= e + 1 for s, e in windows.get(b, [])) for y in yr], dtype=bool)
        ok = (yr[1:] - yr[:-1] == 1) & (d[:-1] > 0) & (d[1:] > 0) & (d[1:] <= d[:-1]) & ~near[:-1] & ~near[1:]
        np.add.at(total, d[:-1][ok], 1)
        np.add.at(drops, d[:-1][ok], (d[1:] < d[:-1])[ok])
    with np.errstate(invalid="ignore", divide="ignore"):
        base = np.where(total > 0, drops / total, np.nan)
    obs, exp, n = 0, 0.0, 0
    for ev in events:
        if ev.kind != "preservation":
            continue
        sl = rows[ev.bridge]
        yr = panel.year[sl].astype(np.int32)
        d = panel.ratings[sl, 0].astype(np.int16)
        later = min([s for s, _ in windows.get(ev.bridge, []) if s > ev.end_year], default=10**4)
        for t in range(len(yr) - 1):
            y = yr[t]
            if y < ev.post_year or y >= ev.post_year + years_after or yr[t + 1] >= later:
                continue
            if yr[t + 1] - y == 1 and 0 < d[t + 1] <= d[t] and np.isfinite(base[d[t]]):
                n += 1
                obs += int(d[t + 1] < d[t])
                exp += float(base[d[t]])
    ratio = obs / exp if exp > 0 else float("nan")
    lo = stats.chi2.ppf(0.025, 2 * obs) / 2 / exp if obs > 0 and exp > 0 else 0.0
    hi = stats.chi2.ppf(0.975, 2 * obs + 2) / 2 / exp if exp > 0 else float("nan")
    return DeckDropEvidence(n, obs, exp, ratio, float(lo), float(hi), base)


ONTARIO_SCALE = ((0.0, 0.0), (60.0, 5.0), (70.0, 7.0), (100.0, 9.0))
"""BCI → rating points, the bundled ``ontario-bci`` mapping (MTO bands good ≥ 70 / fair 60–70 / poor < 60 onto
FHWA's); a mapped value c is coded floor(c) as an NBI rating."""


def bci_to_rating(bci: np.ndarray) -> np.ndarray:
    """(N,) int64 ratings 0–9 of BCI values 0–100 (``ONTARIO_SCALE``, floored)."""
    x, y = zip(*ONTARIO_SCALE, strict=True)
    return np.floor(np.interp(np.asarray(bci, dtype=np.float64), x, y) + 1e-9).astype(np.int64)


def read_ontario_rehabs(path: str | Path, max_gap: int = MAX_GAP_YEARS) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Bridge-level ratings before and after each bridge's last major and last minor rehabilitation.

    For rehabilitation year W: the last inspection before W and the first after W, each at most ``max_gap``
    years from W. A BCI of 0.0 is a missing-value placeholder (skipped); a blank rehabilitation year is none.

    Args:
        path: MTO ``bridge_data.csv`` (two header lines; the second names ``LAST MAJOR REHAB``, ``LAST MINOR
            REHAB`` and the years ``2013`` … ``2000``).

    Returns:
        {"major": (pre, post), "minor": (pre, post)}, int64 (N,) ratings 0–9 (:func:`bci_to_rating`).

    Raises:
        ValueError (file, row, column): a required column missing; a BCI that is not a number 0–100.
    """
    path = Path(path)
    rows = list(csv.reader(io.StringIO(read_text(path, "cp1252", "a spreadsheet CSV").text, newline="")))
    if len(rows) < 2:
        raise ValueError(f"{path}: row 2: expected two header lines")
    head = [h.strip().upper() for h in rows[1]]
    need = {"major": "LAST MAJOR REHAB", "minor": "LAST MINOR REHAB"}
    for name in need.values():
        if name not in head:
            raise ValueError(f"{path}: row 2, column {name!r}: required column missing from the header")
    year_cols = {int(h): k for k, h in enumerate(head) if h.isdigit() and 1900 <= int(h) <= 2100}
    if not year_cols:
        raise ValueError(f"{path}: row 2: no year columns (2000 … 2013)")
    out: dict[str, tuple[list[int], list[int]]] = {k: ([], []) for k in need}
    for line, r in enumerate(rows[2:], start=3):
        bci: dict[int, float] = {}
        for y, k in year_cols.items():
            s = r[k].strip() if k < len(r) else ""
            if not s:
                continue
            try:
                v = float(s)
            except ValueError:
                raise ValueError(f"{path}: row {line}, column '{y}': {s!r} is not a BCI 0–100") from None
            if not 0 <= v <= 100:
                raise ValueError(f"{path}: row {line}, column '{y}': {s!r} is not a BCI 0–100")
            if v > 0:
                bci[y] = v
        for kind, name in need.items():
            s = r[head.index(name)].strip() if head.index(name) < len(r) else ""
            try:
                w = int(float(s))
            except ValueError:
                continue  # blank: no rehabilitation recorded
            before = [y for y in bci if w - max_gap <= y < w]
            after = [y for y in bci if w < y <= w + max_gap]
            if before and after:
                out[kind][0].append(int(bci_to_rating(np.array([bci[max(before)]]))[0]))
                out[kind][1].append(int(bci_to_rating(np.array([bci[min(after)]]))[0]))
    return {k: (np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)) for k, (a, b) in out.items()}


def lowest(ratings: np.ndarray) -> int:
    """The lowest rated (≥ 0) of (4,) component ratings (FHWA's bridge condition), −1 where none is rated."""
    r = np.asarray(ratings)
    return int(r[r >= 0].min()) if (r >= 0).any() else -1
