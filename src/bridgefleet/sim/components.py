"""The component fleet model: deck, superstructure and substructure ratings as inspectors record them.

Each bridge's state is its three NBI component condition ratings (items 58, 59, 60; integers 0–9; a culvert's
rating, item 62, sits in the deck slot and the two other slots are "not applicable", held at 9) and a
deck-protection flag. Its condition for FHWA's measures is the lowest rating (23 CFR 490.409). One year:

    action (treatment of the components it acts on) → deterioration of each component by its one-year Markov
    transition matrix (the deck's slower one while protected) → the protection lapses with probability 1/L.

The components of a bridge do not deteriorate independently: in a share w of years (``coupling``) they move
together (one uniform draws every component's transition: comonotone), in the others independently. Each
component's one-year matrix is the same either way; only their joint move differs. Fitted on Massachusetts' joint
yearly transitions (w = 0.30 by maximum likelihood): with independent components the lowest rating of a bridge at
7 stays good 0.84–0.87 a year where 0.92 is observed.

Deterioration is a Markov chain per component (Jiang, Saito & Sinha 1988, Transportation Research Record 1180;
AASHTOWare BrM does the same on element condition states), fitted to inspection pairs; a treatment maps each
treated component's rating to a distribution over ratings (fitted to recorded work). The numbers, with their
sources and the checks on data the fit never saw, are in the model's YAML and docs/fleet-model.md.

Arrays are indexed (kind, ...) with kind 0 a bridge, 1 a culvert. Functions work on arrays of every bridge of E
fleets at once: components int8 (E, B, 3), protected bool (E, B).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bridgefleet.config import ConfigError, read_yaml
from bridgefleet.config.fleet import BUNDLED_COMPONENT_MODELS
from bridgefleet.config.quantities import shown, shown_value, yaml_number

R = 10
"""Rating levels 0–9 (NBI Coding Guide items 58–62)."""
SLOTS = ("deck", "superstructure", "substructure")
"""Component slots of the state, in order; a culvert's rating (item 62) takes the deck slot."""
NOT_APPLICABLE = 9
"""The level of a slot a culvert does not have: never deteriorates, never treated, never the lowest below 9."""
PROTECT = {"clear": 0, "set": 1, "keep": 2}
"""What an action does to the deck-protection flag."""
BUNDLED = BUNDLED_COMPONENT_MODELS
"""Bundled component models by name."""
INITIAL_TABLE = Path(__file__).resolve().parents[1] / "data" / "initial-components.csv"
"""Indiana's 2019 NBI bridges counted by age decade and (deck, superstructure, substructure) rating
(``benchmarks/initial_components.py``; data/README.md gives source and licence)."""


@dataclass(frozen=True)
class ComponentModel:
    """A fitted component model (see the module docstring).

    Attributes:
        name: its name, e.g. ``massachusetts-2026``.
        deterioration: float64 (2, 3, R, R): one-year transition matrix by kind (bridge, culvert) and slot; rows
            (rating before) sum to 1. A culvert's slots 1–2 are the identity.
        deck_protected: float64 (2, R, R): the deck slot's matrix while protected.
        protection_years: mean years a protection lasts (L; it lapses with probability 1/L each year).
        coupling: share w of years in which the components move together (module docstring), 0–1.
        treatment: float64 (2, A, 3, R, R): rating after the action given the rating before, by kind, action and
            slot; the identity where the action does not treat the slot.
        protect: int8 (A,): 0 clears the deck's protection, 1 sets it, 2 keeps it (:data:`PROTECT`).
        lowest_only: bool (A,): the action treats only the lowest-rated slot (ties: the first slot).
        action_names: (A,) names; codes: (A,) tuples of SNBI work codes per slot (``codes[a][slot]``, '' if none).
        sources: where each number comes from, in words.
    """

    name: str
    deterioration: np.ndarray
    deck_protected: np.ndarray
    protection_years: float
    coupling: float
    treatment: np.ndarray
    protect: np.ndarray
    lowest_only: np.ndarray
    action_names: tuple[str, ...]
    codes: tuple[tuple[str, str, str], ...]
    sources: dict[str, str]

    @property
    def n_actions(self) -> int:
        return len(self.action_names)

    @property
    def lapse(self) -> float:
        """Probability per year that a deck protection lapses (1 / :attr:`protection_years`)."""
        return 1.0 / self.protection_years

    @classmethod
    def load(cls, name_or_path: str | Path) -> ComponentModel:
        """A bundled model by name (:data:`BUNDLED`) or a model YAML.

        Raises:
            ConfigError: one line naming the file and the key: a matrix whose rows do not sum to 1 or that has a
                negative or non-finite entry, an unknown key, a missing action. (Unit costs are the fleet config's
                ``unit_costs_usd_per_m2``, checked there.)
        """
        path = BUNDLED.get(str(name_or_path), Path(name_or_path))
        if not path.is_file():
            raise ConfigError(f"component model {name_or_path}: no such file; bundled: {', '.join(BUNDLED)}")
        return from_mapping(read_yaml(path), str(path))


def _matrix(value: Any, where: str) -> np.ndarray:
    """A R×R transition matrix from nested lists, checked."""
    try:
        m = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: expected a {R}×{R} matrix of numbers") from None
    if m.shape != (R, R):
        raise ConfigError(f"{where}: expected a {R}×{R} matrix (rows: rating before 0–9), got shape {m.shape}")
    if not np.isfinite(m).all() or (m < 0).any():
        i, j = np.argwhere(~np.isfinite(m) | (m < 0))[0]
        raise ConfigError(f"{where}: row {i} (rating {i}), column {j}: {float(m[i, j])!r} is not a probability "
                          "(≥ 0, finite)")
    sums = m.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
    if bad.size:
        raise ConfigError(f"{where}: row {bad[0]} (rating {bad[0]}) sums to {shown(float(f'{sums[bad[0]]:.6g}'))}, "
                          "not 1")
    return m / sums[:, None]


def from_mapping(data: Any, source: str) -> ComponentModel:
    """Build and check a :class:`ComponentModel` from a parsed YAML mapping (see ``massachusetts-2026.yaml``).

    Raises:
        ConfigError: as :meth:`ComponentModel.load`.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping with name, deterioration, protection_years, actions")
    known = {"name", "deterioration", "protection_years", "coupling", "actions", "sources", "fit"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {unknown}; known: {', '.join(sorted(known))}")
    det = data.get("deterioration")
    if not isinstance(det, dict):
        raise ConfigError(f"{source}: deterioration: expected deck, superstructure, substructure, culvert, "
                          "deck_protected matrices")
    need = (*SLOTS, "culvert", "deck_protected")
    missing = [k for k in need if k not in det]
    if missing:
        raise ConfigError(f"{source}: deterioration: missing {', '.join(missing)}")
    mats = {k: _matrix(det[k], f"{source}: deterioration.{k}") for k in need}
    eye = np.eye(R)
    deterioration = np.stack([np.stack([mats[s] for s in SLOTS]), np.stack([mats["culvert"], eye, eye])])
    protected = np.stack([mats["deck_protected"], mats["culvert"]])
    years = yaml_number(data.get("protection_years"))  # 2e1 is a number here as in every config (YAML 1.2)
    if isinstance(years, bool) or not isinstance(years, int | float) or not math.isfinite(years) or years < 1:
        raise ConfigError(f"{source}: protection_years = {shown_value(years)}: must be a number of years ≥ 1")
    coupling = yaml_number(data.get("coupling", 0.0))
    if isinstance(coupling, bool) or not isinstance(coupling, int | float) or not 0 <= coupling <= 1:
        raise ConfigError(f"{source}: coupling = {shown_value(coupling)}: must be a share of years in [0, 1]")
    actions = data.get("actions")
    if not isinstance(actions, list) or len(actions) != 5:
        raise ConfigError(f"{source}: actions: expected a list of the 5 actions (do nothing, deck preservation, "
                          "rehabilitation of the lowest component, major rehabilitation, replacement)")
    a_n = len(actions)
    treatment = np.broadcast_to(eye, (2, a_n, 3, R, R)).copy()
    protect = np.empty(a_n, np.int8)
    lowest = np.zeros(a_n, bool)
    names, codes = [], []
    for a, act in enumerate(actions):
        where = f"{source}: actions[{a}]"
        if not isinstance(act, dict):
            raise ConfigError(f"{where}: expected a mapping (name, treats, codes, protect, lowest_only, source)")
        extra = sorted(set(act) - {"name", "treats", "codes", "protect", "lowest_only", "source"})
        if extra:
            raise ConfigError(f"{where}: unknown key(s) {extra}")
        names.append(str(act.get("name", f"action_{a}")))
        p = act.get("protect", "keep" if a == 0 else "clear")
        if p not in PROTECT:
            raise ConfigError(f"{where} ({names[-1]}): protect = {p!r}: one of {', '.join(PROTECT)}")
        protect[a] = PROTECT[p]
        lowest[a] = bool(act.get("lowest_only", False))
        treats = act.get("treats") or {}
        if not isinstance(treats, dict) or set(treats) - {*SLOTS, "culvert"}:
            raise ConfigError(f"{where} ({names[-1]}): treats: a mapping of deck, superstructure, substructure, "
                              "culvert to matrices")
        for s, slot in enumerate(SLOTS):
            if slot in treats:
                treatment[0, a, s] = _matrix(treats[slot], f"{where}.treats.{slot}")
        if "culvert" in treats:
            treatment[1, a, 0] = _matrix(treats["culvert"], f"{where}.treats.culvert")
        c = act.get("codes") or {}
        codes.append(tuple(str(c.get(slot, "")) for slot in SLOTS) if isinstance(c, dict) else (str(c),) * 3)
    sources = data.get("sources") or {}
    return ComponentModel(str(data.get("name", Path(source).stem)), deterioration, protected, float(years),
                          float(coupling), treatment,
                          protect, lowest, tuple(names), tuple(codes),
                          {str(k): str(v) for k, v in sources.items()} if isinstance(sources, dict) else {})


def lowest(components: np.ndarray) -> np.ndarray:
    """The lowest of the three slots, int8 (...,) from int8 (..., 3): the bridge's condition for FHWA's measures
    (23 CFR 490.409; a culvert's two other slots are 9)."""
    return components.min(axis=-1)


def lowest_slot(components: np.ndarray) -> np.ndarray:
    """The slot holding the lowest rating (ties: the first), int64 (...,)."""
    return components.argmin(axis=-1)


def _draw(rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Ratings drawn from the distributions ``rows`` float64 (..., R) with uniforms ``u`` (...,): the first level
    whose cumulative probability exceeds u (inverse CDF), int8."""
    cum = np.cumsum(rows, axis=-1)
    return np.minimum((u[..., None] >= cum).sum(axis=-1), R - 1).astype(np.int8)


def treat(model: ComponentModel, components: np.ndarray, protected: np.ndarray, kind: np.ndarray,
          actions: np.ndarray, u: np.ndarray) -> None:
    """Carry out funded actions in place.

    Args:
        components: int8 (E, B, 3) ratings; protected: bool (E, B); kind: int (B,) 0 bridge, 1 culvert.
        actions: int (E, B) in 0–A−1 (0 leaves the bridge alone).
        u: float (E, B, 3) uniforms, one per slot.
    """
    rows = model.treatment[kind[None, :, None], actions[..., None], np.arange(3), components]  # (E, B, 3, R)
    after = _draw(rows, u)
    if model.lowest_only.any():
        only = model.lowest_only[actions]
        keep = only[..., None] & (np.arange(3) != lowest_slot(components)[..., None])
        after = np.where(keep, components, after)
    components[...] = after
    p = model.protect[actions]
    protected[...] = np.where(p == 2, protected, p == 1)


def deteriorate(model: ComponentModel, components: np.ndarray, protected: np.ndarray, kind: np.ndarray,
                u: np.ndarray, u_lapse: np.ndarray) -> None:
    """One year of deterioration and protection lapse, in place.

    Args:
        components, protected, kind: as :func:`treat`.
        u: float (E, B, 5) uniforms: one per slot, whether the components move together this year, their common
            one; u_lapse: float (E, B) uniforms for the lapse.
    """
    together = u[..., 3] < model.coupling
    u = np.where(together[..., None], u[..., 4:5], u[..., :3])
    rows = model.deterioration[kind[None, :, None], np.arange(3), components]  # (E, B, 3, R)
    deck = model.deck_protected[kind[None, :], components[..., 0]]  # (E, B, R)
    rows[..., 0, :] = np.where(protected[..., None], deck, rows[..., 0, :])
    components[...] = _draw(rows, u)
    protected &= u_lapse >= model.lapse


def protected_at_start(model: ComponentModel, preserved_years: np.ndarray) -> np.ndarray:
    """Whether each deck starts protected, bool (B,), from ``preserved_years`` float (B,): years since its last
    preservation (SNBI ``DK4`` / ``DK5``) where that is its last work, NaN elsewhere (never protected).

    Deterministic: protected while fewer than :attr:`ComponentModel.protection_years` (L = 1 / lapse) years have
    passed. Under the model a deck preserved k years before is protected with probability (1 − lapse)^k: with one
    deck preserved every year the model expects Σ_k (1 − lapse)^k = L of them protected, the rule protects the
    ⌈L⌉ preserved fewer than L years before. Every episode of a fixed fleet starts alike, as the exact DP's one
    start state of a fixed fleet assumes (docs/fleet-model.md, "Where a deck starts protected").
    """
    k = np.asarray(preserved_years, np.float64)
    return np.isfinite(k) & (k < model.protection_years)


def expected_drop(model: ComponentModel, components: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Expected one-year drop of the lowest slot's rating under do nothing, float32 (E, B) rating points (what the
    plan's agents observe as the deterioration rate)."""
    slot = lowest_slot(components)
    r = np.take_along_axis(components, slot[..., None], axis=-1)[..., 0]
    rows = model.deterioration[kind[None, :], slot, r]  # (E, B, R)
    return (r - rows @ np.arange(R)).astype(np.float32)


def work_codes(model: ComponentModel, actions: np.ndarray, components: np.ndarray) -> np.ndarray:
    """The SNBI work code (``Works`` item BW03) of each action on each bridge, str (E, B): the code of the slot it
    treats for a lowest-only action (the lowest slot), else every treated slot's code joined by "+" once each
    (``DK1+SP2+SB2``, ``BR01``); '' for do nothing."""
    joined = np.array(["+".join(dict.fromkeys(c for c in codes if c)) for codes in model.codes], dtype=object)
    table = np.array(model.codes, dtype=object)  # (A, 3)
    one = table[actions, lowest_slot(components)]
    return np.where(model.lowest_only[actions], one, joined[actions]).astype(str)


@functools.lru_cache(maxsize=1)
def _initial_table() -> tuple[np.ndarray, np.ndarray]:
    """(cumulative share by decade float64 (D, N), ratings int8 (N, 3)) of :data:`INITIAL_TABLE`."""
    t = np.loadtxt(INITIAL_TABLE, delimiter=",", skiprows=1, dtype=np.int64)
    decades = int(t[:, 0].max()) + 1
    cum = np.zeros((decades, len(t)))
    for d in range(decades):
        w = np.where(t[:, 0] == d, t[:, 4], 0).astype(np.float64)
        cum[d] = np.cumsum(w) / w.sum()
    return cum, t[:, 1:4].astype(np.int8)


def initial_components(age: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Initial ratings of synthetic bridges, int8 (B, 3): each bridge drawn (uniform ``u`` (B,)) from Indiana's
    2019 bridges of its age decade (:data:`INITIAL_TABLE`; 70 years and more pooled). ``age`` in years (B,)."""
    cum, ratings = _initial_table()
    decade = np.clip((np.asarray(age) // 10).astype(np.int64), 0, len(cum) - 1)
    row = (u[:, None] >= cum[decade]).sum(axis=1)
    return ratings[np.minimum(row, len(ratings) - 1)]
