"""Fit the component model (:mod:`bridgefleet.sim.components`) to an agency's yearly component-rating panel and,
where it has them, its work records: what ``bridgefleet calibrate --panel`` runs, and what
``benchmarks/component_model.py`` runs on Massachusetts' data to write the bundled ``massachusetts-2026.yaml``.

* **Deterioration**, per component (deck, superstructure, substructure, culvert): a continuous-time generator with
  drops of one and two levels and a rise of one, fitted by maximum likelihood through the matrix exponential on
  inspection pairs with no recorded work overlapping them (``calibration.panel.inspection_pairs``, rises of two or
  more kept with ``rises="all"``; Kalbfleisch & Lawless, JASA 80:863, 1985; ``calibration.markov.fit_generator``).
  "Do nothing" therefore means *no recorded project*: the rises without one (routine maintenance, other owners'
  work) stay at their recorded rate. Without work records every pair counts but those rising two levels or more,
  which are read as unrecorded work and left out.
* **Coupling**: the share w of years in which a bridge's three components move together, by maximum likelihood on
  their joint yearly moves (``calibration.markov.fit_coupling``).
* **Treatments**: each recorded project's kind inferred from which components rise (``calibration.treatment_fit``);
  the rating after given the rating before, per action and component. Deck preservation slows the deck's drops by
  the ratio fitted to the deck drops after projects that raised no rating, for a cited mean service life
  (:data:`OVERLAY_YEARS`). Unit costs are the fleet config's, not the model's.

Fallbacks, each stated in the fit's ``notes``, the model YAML's ``sources`` and the printed report, never a
silent zero: a rating with fewer than ``markov.MIN_PAIRS`` (30) pairs from it takes the nearest identified
rating's rates (the prior of ``fit_generator``; ties to the higher rating); a culvert with no identified rating,
a treatment kind with fewer than ``treatment_fit.MIN_ROW_COUNT`` treated pairs, a coupling with fewer than
:data:`MIN_COUPLING_PAIRS` bridge-years, a deck-protection ratio on fewer than :data:`MIN_EXPECTED_DROPS` expected
drops, and every treatment without work records keep the bundled model's (:data:`BASE_MODEL`). A deck,
superstructure or substructure with no identified rating is refused (too few pairs to fit).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from scipy.linalg import expm

from bridgefleet.calibration import treatment_fit as tf
from bridgefleet.calibration.markov import MIN_PAIRS, CouplingFit, GeneratorFit, fit_coupling, fit_generator
from bridgefleet.calibration.panel import (
    COMPONENTS,
    Pairs,
    Panel,
    Works,
    inspection_pairs,
    joint_pairs,
    read_panel,
    read_works,
)

MASSACHUSETTS_SOURCE = (
    "Massachusetts NBI component ratings 2000-2016 and MassDOT bridge projects (S. Vasserman and V. Bolotnyy, "
    "StanCon 2018, github.com/shoshievass/bridgeConditions commit 24208ee0, MIT licence); NBI items 58-60, 62 "
    "(FHWA via MassDOT)")
"""The data of the bundled model ``massachusetts-2026`` (``../shared/data/massachusetts``)."""
OVERLAY_YEARS = 20.9
"""Preventive epoxy concrete overlays serve 20.9 years on average (18–22 at 95 %): Virginia Transportation
Research Council report 20-R6, "Performance of Bridge Deck Overlays in Virginia: Phase II: Service Life
Performance" (2019), survival analysis of 133 overlaid decks, https://vtrc.virginia.gov/reports/all-reports/20-r6/."""
PRESERVATION_SOURCES = [
    "Iowa DOT TR-717 (2017): sealers applied 3-6 months after construction, reapplied after 4-5 years; polymer "
    "overlays on decks in good to moderate condition (https://publications.iowa.gov/26124/)",
    "VTRC 20-R6 (2019): preventive epoxy concrete overlays serve 20.9 years (18-22, 95 %) "
    "(https://vtrc.virginia.gov/reports/all-reports/20-r6/)",
    "Bektas, 'Establishing data-driven life-cycle benefits of bridge maintenance' (IABMAS 2024, Minnesota): decks "
    "with recorded repair and maintenance had significantly longer Markov transition times at ratings 7, 6, 5 "
    "(https://www.taylorfrancis.com/chapters/oa-edit/10.1201/9781003483755-217)",
    "FHWA Bridge Preservation Guide (FHWA-HIF-11042, 2011; 2018 edition): preservation 'prevents, delays or "
    "reduces deterioration' rather than raising condition",
]
"""Evidence that preservation slows deterioration rather than raising the rating, with the sources."""
ACTIONS = (("do_nothing", None, {}), ("deck_preservation", None, {"deck": "DK4"}),
           ("component_rehabilitation", "component_rehab", {"deck": "DK2", "superstructure": "SP2",
                                                            "substructure": "SB2"}),
           ("major_rehabilitation", "major_rehab", {"deck": "DK1", "superstructure": "SP2", "substructure": "SB2"}),
           ("replacement", "replacement", {"deck": "BR01", "superstructure": "BR01", "substructure": "BR01"}))
"""The model's five actions: (name, the ``treatment_fit`` kind fitted to it or None, SNBI work codes per slot)."""
TINY = 1e-4
"""Transition probabilities below this a year are set to 0 (mostly drops of three or more levels in a year, which
the generator's matrix exponential spreads thinly over every level): each row keeps its few real entries, which is
what makes the exact DP fast; the largest entry takes the remainder."""
BASE_MODEL = "massachusetts-2026"
"""The bundled model whose numbers stand in where a panel cannot identify them (module docstring)."""
MIN_COUPLING_PAIRS = 30
"""Joint yearly moves (bridge-years) needed to fit the coupling; fewer keep the bundled model's."""
MIN_EXPECTED_DROPS = 3.0
"""Deck drops expected after preservation projects needed to fit the slowdown ratio; fewer keep the bundled
model's."""
PRIOR = "the rates of the nearest identified rating (ties: the higher), calibration.markov.fit_generator"
"""The stated prior of a rating with fewer than ``MIN_PAIRS`` pairs from it."""
RISES = ("all", "up", "drop")


class _Row(list):  # type: ignore[type-arg]
    """A matrix row written on one line."""


class _Dumper(yaml.SafeDumper):
    """``yaml.safe_dump`` with :class:`_Row` in flow style."""


_Dumper.add_representer(_Row, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))


def dump_yaml(model: dict[str, Any]) -> str:
    """The model mapping as YAML text (matrix rows one a line), as the bundled model file holds it."""
    return yaml.dump(model, Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)


def arrays(p: Pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(from, to, dt) of pairs: int64 (M,) ratings, int64 (M,) ratings, float64 (M,) years."""
    return p.from_rating.astype(int), p.to_rating.astype(int), p.interval_years.astype(float)


def down_only(rates: np.ndarray) -> np.ndarray:
    """The one-year matrix float64 (10, 10) of a generator's downward part: ``rates`` (3, 10) per year (drop one,
    drop two, rise one) as ``GeneratorFit.rates``; the rise is left out. Rows sum to 1."""
    q = np.zeros((10, 10))
    for i in range(1, 10):
        q[i, i - 1] = rates[0, i]
        if i >= 2:
            q[i, i - 2] = rates[1, i]
    q[np.diag_indices(10)] = -q.sum(axis=1)
    p = np.clip(expm(q), 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


def _rows(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


def _matrix(p: np.ndarray) -> list[_Row]:
    """A (10, 10) matrix as YAML rows: entries below :data:`TINY` 0, 6 decimals, the largest taking the rest."""
    p = np.where(p < TINY, 0.0, p)
    rows = [_Row(round(float(v), 6) for v in row) for row in p]
    for row in rows:  # rounding: the largest entry takes the rest, so each row sums to 1 exactly enough
        k = int(np.argmax(row))
        row[k] = round(row[k] + 1.0 - sum(row), 6)
    return rows


@dataclass(frozen=True)
class Shares:
    """One-year moves from one rating of one component: observed on the fit's yearly pairs against fitted.

    Attributes:
        component: its name; rating: the rating before, 1–9; n: yearly pairs from it.
        observed, fitted: (stay, down, up) shares, 0–1 (down: any drop; up: any rise).
        stay_ci: the 95 % interval of the fitted stay share (:func:`stay_intervals`), or None (not computed, or
            the component kept the bundled model's matrix).
    """

    component: str
    rating: int
    n: int
    observed: tuple[float, float, float]
    fitted: tuple[float, float, float]
    stay_ci: tuple[float, float] | None


@dataclass
class ComponentFit:
    """What :func:`fit_component_model` fitted.

    Attributes:
        model: the model as a YAML mapping for :func:`bridgefleet.sim.components.from_mapping`.
        pairs: {component: inspection pairs fitted}.
        not_identified: {component: ratings 1–9 with fewer than ``MIN_PAIRS`` pairs from them (given the prior
            ``PRIOR``)}.
        donors: {component: {rating not identified: the rating whose rates it takes}}.
        shares: the observed-against-fitted rows (:class:`Shares`).
        coupling: the coupling fit, or None where the bundled model's was kept.
        kinds: {treatment kind: projects of that kind} (None without work records); skipped: merged projects
            without a record before and after.
        slowdown: the deck-protection ratio used (drop probabilities × it while protected).
        notes: every fallback, in words.
    """

    model: dict[str, Any]
    pairs: dict[str, int]
    not_identified: dict[str, list[int]]
    donors: dict[str, dict[int, int]]
    shares: list[Shares]
    coupling: CouplingFit | None
    kinds: dict[str, int] | None
    skipped: int
    slowdown: float
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The benchmark's one-line summary per item: pairs and ratings not identified per component (0 included:
        absorbing), the coupling, the projects of each fitted kind, the slowdown."""
        out: dict[str, Any] = {c: {"pairs": n, "not identified": [0, *self.not_identified[c]]}
                               for c, n in self.pairs.items()}
        out["coupling"] = _coupling_text(self.coupling) if self.coupling else self.model["coupling"]
        for kind, n in (self.kinds or {}).items():
            if kind != "preservation":
                out[kind] = n
        out["slowdown"] = round(self.slowdown, 3)
        return out


def _coupling_text(c: CouplingFit) -> str:
    return (f"w = {c.w:.3f} (95 % {c.ci95[0]:.3f}-{c.ci95[1]:.3f}) on {c.n_pairs:,} bridge-years; -log-likelihood "
            f"{c.nll:.1f} against {c.nll_independent:.1f} independent")


def _rows_text(panel: Panel) -> str:
    return f"{panel.source}: rows 2–{len(panel.year) + 1}"


def _base() -> dict[str, Any]:
    from bridgefleet.config import read_yaml
    from bridgefleet.sim.components import BUNDLED

    return read_yaml(BUNDLED[BASE_MODEL])


def _base_slowdown(base: dict[str, Any]) -> float:
    """The bundled model's deck-protection ratio, read back from its deck and protected-deck matrices."""
    deck = np.array(base["deterioration"]["deck"])
    prot = np.array(base["deterioration"]["deck_protected"])
    moving = np.diag(deck) < 0.99
    return round(float(np.median((1 - np.diag(prot)[moving]) / (1 - np.diag(deck)[moving]))), 3)


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run OpenBLAS on one thread inside the block (restored after). The fit multiplies 10×10 matrices thousands
    of times: BLAS threads gain nothing there and, on a busy machine, make each ``expm`` about 100× slower (0.6 s
    against 58 s for a 300-bridge panel on 2 loaded cores). Linux: the OpenBLAS libraries this process has loaded
    (NumPy's and SciPy's); elsewhere, or without them, it does nothing."""
    restore = []
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            libs = {line.split()[-1] for line in f if "openblas" in os.path.basename(line.split()[-1]).lower()}
    except OSError:
        libs = set()
    for path in sorted(libs):
        for prefix, suffix in (("openblas", ""), ("openblas", "64_"), ("scipy_openblas", ""),
                               ("scipy_openblas", "64_")):
            try:
                lib = ctypes.CDLL(path)
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}")
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}")
            except (OSError, AttributeError):
                continue
            restore.append((put, int(get())))
            put(1)
            break
    try:
        yield
    finally:
        for put, n in restore:
            put(n)


def _generator(rates: np.ndarray) -> np.ndarray:
    """(10, 10) generator, 1/year, from (3, 10) rates (drop 1, drop 2, rise 1 from each rating)."""
    q = np.zeros((10, 10))
    for kind, step in enumerate((-1, -2, 1)):
        for i in range(10):
            if rates[kind, i] > 0:
                q[i, i + step] += rates[kind, i]
    q[np.diag_indices(10)] = -q.sum(axis=1)
    return q


def stay_intervals(g: GeneratorFit) -> np.ndarray:
    """float64 (10, 2): the 95 % interval of each one-year stay probability expm(Q)[i, i] of a fit, by the delta
    method on its log-rates (their covariance ``g.cov``, the inverse observed information; central differences,
    step 1e-5), clipped to [0, 1]. A log-rate the data barely identify (a rate fitted near zero) has a large
    variance but moves the stay probability by its rate times little, so it does not blow the interval up as a
    parametric bootstrap of the log-rates does."""
    def diag(theta: np.ndarray) -> np.ndarray:
        rates = np.where(g.index >= 0, np.exp(theta[np.maximum(g.index, 0)]), g.fixed)
        return np.diag(expm(_generator(rates)))

    k, h = len(g.theta), 1e-5
    jac = np.zeros((k, 10))
    for j in range(k):
        e = np.zeros(k)
        e[j] = h
        jac[j] = (diag(g.theta + e) - diag(g.theta - e)) / (2 * h)
    se = np.sqrt(np.maximum(np.einsum("ji,jk,ki->i", jac, g.cov, jac), 0.0))
    mid = np.diag(g.one_year())
    return np.clip(np.stack([mid - 1.959964 * se, mid + 1.959964 * se], axis=1), 0.0, 1.0)


def _shares(comp: str, pairs: Pairs, p: np.ndarray, ci: np.ndarray | None) -> list[Shares]:
    one = pairs.interval_years == 1
    f, t = pairs.from_rating[one].astype(int), pairs.to_rating[one].astype(int)
    out = []
    for i in range(9, 0, -1):
        m = f == i
        if not m.any():
            continue
        d = t[m] - i
        obs = (float(np.mean(d == 0)), float(np.mean(d < 0)), float(np.mean(d > 0)))
        fit = (float(p[i, i]), float(p[i, :i].sum()), float(p[i, i + 1:].sum()))
        stay = None if ci is None else (float(ci[i, 0]), float(ci[i, 1]))
        out.append(Shares(comp, i, int(m.sum()), obs, fit, stay))
    return out


def fit_component_model(panel: Panel, works: Works | None = None, *, last_year: int | None = None,
                        rises: str = "all", name: str | None = None, data_source: str | None = None,
                        works_name: str | None = None, fitted_by: str = "bridgefleet calibrate",
                        intervals: bool = True) -> ComponentFit:
    """Fit the component model to a panel (and its work records) as the module docstring says.

    Args:
        panel: from ``calibration.panel.read_panel``.
        works: from ``read_works(path, panel)``, or None: no work records, so every pair counts but those rising
            two levels or more (``panel.BIG_RISE``), which are the work (kept, the one-level-up rate stands in for
            them as two or more steps: on Massachusetts' deck the fitted stay at rating 8 falls to 0.814 against
            0.866 observed, the rise to 0.055 against 0.002; left out, 0.866 and 0.002 both), and the bundled
            model's treatments and deck protection are kept.
        last_year: fit on inspection pairs and projects that end by then only (a held-out check).
        rises: "all" (the shipped model: the generator's one-year matrix, rises of two or more levels outside any
            project window kept; without work records as "up"), "up" (those dropped as unrecorded work), "drop"
            (the downward part only).
        name: the model's name (default the panel file's stem).
        data_source: the data in words for the YAML's sources (default the panel file, and the works file).
        works_name: the work records in words ("MassDOT"; default the works file's name).
        fitted_by: what fitted it, for the sources.
        intervals: compute the stay shares' 95 % intervals (:func:`stay_intervals`; not with ``rises="drop"``).

    Returns:
        ComponentFit.

    Raises:
        ValueError (one line naming the file, rows and column): a deck, superstructure or substructure with no
            rating that has ``MIN_PAIRS`` pairs from it (too few pairs to fit); joint moves the fitted matrices
            cannot produce; an unknown ``rises``.
    """
    if rises not in RISES:
        raise ValueError(f"rises {rises!r}: not one of {', '.join(RISES)}")
    with one_blas_thread():
        return _fit(panel, works, last_year, rises, name, data_source, works_name, fitted_by, intervals)


def _fit(panel: Panel, works: Works | None, last_year: int | None, rises: str, name: str | None,
         data_source: str | None, works_name: str | None, fitted_by: str, intervals: bool) -> ComponentFit:
    recorded = works is not None
    if works is None:
        empty = np.array([], dtype=np.int16)
        works = Works(np.array([], dtype=str), empty, empty, np.array([], dtype=np.float64))
    works_name = works_name or (Path(works.source).name if recorded else "")
    data_source = data_source or (f"yearly component ratings {panel.source}"
                                  + (f" and work records {works.source}" if recorded else ""))
    base = _base()
    first = int(panel.year.min())
    years = f"{first}-{last_year or int(panel.year.max())}"
    det: dict[str, np.ndarray] = {}
    notes: list[str] = []
    fit = ComponentFit({}, {}, {}, {}, [], None, None, 0, float("nan"), notes)
    kept_sources: dict[str, str] = {}
    big: dict[str, int] = {}
    for comp in COMPONENTS:
        pairs = inspection_pairs(panel, works, comp, big_rise="keep" if rises == "all" and recorded else "drop")
        big[comp] = pairs.dropped_big_rise
        if last_year is not None:
            pairs = pairs.select(pairs.year_from + pairs.interval_years <= last_year)
        f, t, d = arrays(pairs)
        n_from = np.bincount(f, minlength=10)
        fit.pairs[comp] = len(pairs)
        if not (n_from[1:] >= MIN_PAIRS).any():
            if comp != "culvert":
                raise ValueError(f"{_rows_text(panel)}, column {comp!r}: too few pairs to fit: no rating 1–9 has "
                                 f"{MIN_PAIRS} {comp} pairs with no work between (pairs from ratings 1–9: "
                                 f"{n_from[1:].tolist()}); give more bridges or years")
            det[comp] = np.array(base["deterioration"][comp], dtype=np.float64)
            fit.not_identified[comp] = list(range(1, 10))
            fit.shares += _shares(comp, pairs, det[comp], None)
            why = (f"{comp}: no rating has {MIN_PAIRS} pairs ({len(pairs)} in all): the bundled model "
                   f"{BASE_MODEL}'s {comp} matrix kept")
            notes.append(why)
            kept_sources[f"{comp}_kept"] = why
            continue
        g = fit_generator(f, t, d, up=True, down2=True)
        det[comp] = down_only(g.rates) if rises == "drop" else _rows(g.one_year())
        ident = [i for i in range(1, 10) if g.identified[i]]
        fit.not_identified[comp] = [i for i in range(1, 10) if not g.identified[i]]
        fit.donors[comp] = {i: min(ident, key=lambda j, i=i: (abs(j - i), -j)) for i in fit.not_identified[comp]}
        fit.shares += _shares(comp, pairs, det[comp], stay_intervals(g) if intervals and rises != "drop" else None)
    x0, x1 = joint_pairs(panel, works, last_year=last_year)
    if len(x0) >= MIN_COUPLING_PAIRS:
        try:
            fit.coupling = fit_coupling(np.stack([det[c] for c in COMPONENTS[:3]]), x0, x1)
        except ValueError as exc:
            raise ValueError(f"{_rows_text(panel)}, columns 'deck', 'superstructure', 'substructure': {exc}") from None
        coupling, coupling_text = round(fit.coupling.w, 4), _coupling_text(fit.coupling)
    else:
        coupling = base["coupling"]
        coupling_text = (f"w = {coupling} kept from the bundled model {BASE_MODEL} ({len(x0)} joint yearly moves, "
                         f"fewer than {MIN_COUPLING_PAIRS})")
        notes.append(f"coupling: {coupling_text}")
    events: list[tf.TreatmentEvent] = []
    if recorded:
        events, fit.skipped = tf.treatment_events(panel, works)
        if last_year is not None:
            events = [e for e in events if e.post_year <= last_year]
        fit.kinds = {k: sum(e.kind == k for e in events) for k in tf.KINDS}
        ev = tf.deck_drop_evidence(panel, works, events)
        if ev.expected >= MIN_EXPECTED_DROPS and np.isfinite(ev.ratio):
            fit.slowdown = min(ev.ratio, 1.0)
            if ev.ratio > 1.0:
                notes.append(f"deck protection: fitted ratio {ev.ratio:.3f} > 1 capped at 1 (preservation does not "
                             "speed deterioration)")
            protection = (f"deck drop probabilities x {fit.slowdown:.3f} while protected ({works_name}, deck drops "
                          "after projects that raised no rating; weak)")
        else:
            fit.slowdown = _base_slowdown(base)
            why = (f"{ev.expected:.1f} deck drops expected after {fit.kinds['preservation']} projects that raised no "
                   f"rating, fewer than {MIN_EXPECTED_DROPS:g}")
            notes.append(f"deck protection: {why}: the bundled model's ratio {fit.slowdown:.3f} kept")
            protection = f"deck drop probabilities x {fit.slowdown:.3f} while protected, kept from {BASE_MODEL} ({why})"
    else:
        fit.slowdown = _base_slowdown(base)
        protection = (f"deck drop probabilities x {fit.slowdown:.3f} while protected, kept from {BASE_MODEL} (no work "
                      "records given)")
        notes.append("no work records: every pair counts but those rising two levels or more, read as unrecorded "
                     f"work and left out ({', '.join(f'{c} {n:,}' for c, n in big.items())}); the treatments and "
                     f"deck protection of the bundled model {BASE_MODEL} are kept")
    det["deck_protected"] = np.eye(10) + fit.slowdown * (det["deck"] - np.eye(10))
    base_actions = {a["name"]: a for a in base["actions"]}
    actions = []
    for act_name, kind, codes in ACTIONS:
        act: dict[str, Any] = {"name": act_name, "codes": codes}
        if kind is not None:
            mats = tf.fit_action_matrices(events, kind)
            pool = sum(int(m.counts.sum()) for m in mats.values())
            if pool >= tf.MIN_ROW_COUNT:
                act["treats"] = {s: _matrix(mats[s].probs) for s in COMPONENTS}
            else:
                act["treats"] = {s: [_Row(r) for r in m] for s, m in base_actions[act_name]["treats"].items()}
                if recorded:
                    notes.append(f"{act_name}: {pool} treated component pairs ({kind}), fewer than "
                                 f"{tf.MIN_ROW_COUNT}: the bundled model {BASE_MODEL}'s matrices kept")
        if act_name == "deck_preservation":
            act["protect"] = "set"
        if act_name == "do_nothing":
            act["protect"] = "keep"
        if act_name == "component_rehabilitation":
            act["lowest_only"] = True
        actions.append(act)
    project = (f"no {works_name} project overlapping" if recorded else
               "no work records given: every pair counts but those rising two levels or more (unrecorded work)")
    if recorded:
        treatments = (f"{works_name} projects {years}, kind inferred from the component ratings before and after "
                      "(bridgefleet.calibration.treatment_fit); rating after given rating before, pooled where thin")
    else:
        treatments = f"kept from the bundled model {BASE_MODEL}: {base['sources']['treatments']}"
    fit.model = {
        "name": name or Path(panel.source).stem,
        "sources": {
            "deterioration": f"{data_source}; pairs {years} with {project}; continuous-time generator (drop 1, drop "
                             "2, rise 1) by maximum likelihood (Kalbfleisch & Lawless 1985); do nothing = no "
                             "capital project, rises without one (routine and other owners' work) kept at their "
                             f"recorded rate ({fitted_by})",
            "coupling": f"share of years the components move together, by maximum likelihood on the joint yearly "
                        f"moves {years} (bridgefleet.calibration.markov.fit_coupling): {coupling_text}",
            "treatments": treatments,
            "deck_protection": f"{protection}; mean {OVERLAY_YEARS} years: " + "; ".join(PRESERVATION_SOURCES[1:2]),
            **kept_sources,
        },
        "deterioration": {k: _matrix(v) for k, v in det.items()},
        "protection_years": OVERLAY_YEARS,
        "coupling": coupling,
        "actions": actions,
    }
    return fit


def fit_files(panel_path: str | Path, works_path: str | Path | None = None, **options: Any) -> ComponentFit:
    """Read a panel (and work records) in the Massachusetts layout and fit them (:func:`fit_component_model`,
    ``options`` passed on).

    Raises:
        ValueError: one line naming the file, row and column (``read_panel``, ``read_works`` — a bridge the
            panel does not have included — and :func:`fit_component_model`).
    """
    panel = read_panel(panel_path)
    works = read_works(works_path, panel) if works_path is not None else None
    return fit_component_model(panel, works, **options)


def fit_record(fit: ComponentFit) -> dict[str, Any]:
    """The fit's evidence for the model YAML's ``fit:`` key (read by nobody; for the engineer): pairs, ratings not
    identified and their prior, stay shares [rating, yearly pairs, observed, fitted, 95 % low, high], coupling,
    treatment kinds, fallbacks."""
    stay: dict[str, list[_Row]] = {}
    for s in fit.shares:
        lo, hi = s.stay_ci if s.stay_ci else (None, None)
        stay.setdefault(s.component, []).append(_Row([s.rating, s.n, round(s.observed[0], 4), round(s.fitted[0], 4),
                                                      None if lo is None else round(lo, 4),
                                                      None if hi is None else round(hi, 4)]))
    return {
        "pairs": dict(fit.pairs),
        "not_identified": {c: _Row(v) for c, v in fit.not_identified.items()},
        "prior": f"ratings not identified (fewer than {MIN_PAIRS} pairs from them) take {PRIOR}",
        "stay_columns": "rating before, yearly pairs, observed stay share, fitted, its 95 % interval low, high",
        "stay": stay,
        "coupling": None if fit.coupling is None else {"w": round(fit.coupling.w, 4),
                                                       "ci95": _Row(round(x, 4) for x in fit.coupling.ci95),
                                                       "bridge_years": fit.coupling.n_pairs},
        "treatment_kinds": fit.kinds,
        "notes": list(fit.notes),
    }


def report(fit: ComponentFit) -> str:
    """The observed-against-fitted tables as printed text: per component its pairs, then per rating the yearly
    pairs and the one-year stay / down / up shares observed against fitted (stay with its 95 % interval); the
    ratings not identified and their prior; the coupling w with its interval; the treatment kinds counted; the
    fallbacks."""
    out = []
    for comp in COMPONENTS:
        rows = [s for s in fit.shares if s.component == comp]
        out.append(f"{comp}: {fit.pairs[comp]:,} pairs with no work between "
                   f"({sum(s.n for s in rows):,} a year apart, shown; observed / fitted)")
        out.append("  from      n   stay                         down           up")
        for s in rows:
            ci = f" [{s.stay_ci[0]:.3f}-{s.stay_ci[1]:.3f}]" if s.stay_ci else " " * 14
            out.append(f"  {s.rating:>4} {s.n:>6,}   {s.observed[0]:.3f} / {s.fitted[0]:.3f}{ci}   "
                       f"{s.observed[1]:.3f} / {s.fitted[1]:.3f}   {s.observed[2]:.3f} / {s.fitted[2]:.3f}")
        missing = fit.not_identified[comp]
        donors = fit.donors.get(comp, {})
        if missing and donors:
            tied = ", ".join(f"{i} from {j}" for i, j in donors.items())
            out.append(f"  not identified (fewer than {MIN_PAIRS} pairs): rating{'s' if len(missing) > 1 else ''} "
                       f"{', '.join(map(str, missing))}; "
                       f"prior: {PRIOR} ({tied})")
    if fit.coupling is not None:
        c = fit.coupling
        out.append(f"coupling (components moving together): {_coupling_text(c)}")
    else:
        out.append(f"coupling: w = {fit.model['coupling']} (bundled model's)")
    if fit.kinds is not None:
        out.append("treatment kinds (projects, inferred from which components rise): "
                   + ", ".join(f"{k} {n}" for k, n in fit.kinds.items())
                   + f"; {fit.skipped} without a record before and after")
    out.append(f"deck protection: drop probabilities x {fit.slowdown:.3f} while protected, mean {OVERLAY_YEARS} years")
    out += [f"note: {n}" for n in fit.notes]
    return "\n".join(out)
