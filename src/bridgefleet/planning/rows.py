"""The coupling rows of the budget relaxation: what each fleet's agencies may spend and treat each year.

The bridges of a fleet are coupled only through these rows (:mod:`bridgefleet.planning.bound`): per fleet and
agency, the spend of each year ≤ the annual budget (with carry-over: the spend up to year t ≤ (t + 1) budgets), the
number of treatments of each year ≤ the most that fit one budget, and with FHWA's rule the deck area poor at the
end of each year ≤ its share of the fleet's. A random sample of a large fleet's bridges gets the same rows scaled
to its share, so a price search on the sample starts the fleet's own search near its prices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bridgefleet.planning.transitions import BridgeMDPs

SAMPLE_BRIDGES = 5_000
"""Bridges of the sample a larger fleet's price search starts from (``lagrangian_bound(sample=…)``)."""


@dataclass
class CouplingRows:
    """Coupling rows of each fleet and agency: spend_c @ spend ≤ spend_b, count_c @ treatments ≤ count_b."""

    spend_c: np.ndarray  # (M, T) rows over years (identity; lower-triangular ones with carry-over)
    spend_b: np.ndarray  # (E, 2, M) USD
    count_c: np.ndarray | None  # (M', T), None with carry-over
    count_b: np.ndarray | None  # (E, 2, M') treatments
    poor_b: np.ndarray | None = None  # (E, T) m²: the most deck area poor at the end of each year (the rule)

    @classmethod
    def of(cls, mdps: BridgeMDPs, annual: np.ndarray, t_n: int, carry_over: bool,
           poor_b: np.ndarray | None = None) -> CouplingRows:
        """The rows of the E fleets of ``mdps`` (bridges ordered by fleet) with ``annual`` float64 (E, 2) USD a
        year per fleet and agency: without carry-over one spend and one treatment row a year (the most treatments
        one year's budget can buy: each bridge's cheapest allowed treatment, cheapest first), with it the
        cumulative spend rows."""
        if carry_over:
            return cls(np.tril(np.ones((t_n, t_n))), annual[:, :, None] * np.arange(1, t_n + 1), None, None, poor_b)
        e_n = len(annual)
        cheapest = np.where(mdps.feasible[:, 1:], mdps.cost[:, 1:], np.inf).min(1).reshape(e_n, -1)
        agency = mdps.agency.reshape(e_n, -1)[0]  # the same in every fleet (n_urban first)
        counts = np.zeros((e_n, 2))
        for g in (0, 1):
            cols = cheapest[:, agency == g]
            if cols.shape[1]:
                cum = np.cumsum(np.sort(cols, axis=1), axis=1)
                counts[:, g] = (cum <= annual[:, g : g + 1] + 0.01).sum(1)
        return cls(np.eye(t_n), np.repeat(annual[:, :, None], t_n, 2), np.eye(t_n),
                   np.repeat(counts[:, :, None], t_n, 2), poor_b)

    def year_prices(self, kappa: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Row prices → discounted per-year prices (E, 2, T) per USD and per treatment."""
        ks, kn = kappa
        count = kn @ self.count_c if self.count_c is not None else np.zeros(ks.shape[:2] + self.spend_c.shape[1:])
        return ks @ self.spend_c, count

    def per_year(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The amounts each row sums, per year: budget USD (E, 2, T) and treatments (E, 2, T) or None."""
        spend = self.spend_b @ np.linalg.inv(self.spend_c).T
        return spend, (self.count_b @ np.linalg.inv(self.count_c).T if self.count_c is not None else None)

    def scaled(self, e: int, poor_b: np.ndarray | None = None) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                                                          np.ndarray, np.ndarray]:
        """Fleet e's rows scaled to right-hand side 1, so USD, treatments and m² share one scale: the kinds
        [(rows over years (M, T), scale (M,))] of urban spend, rural spend[, urban, rural count], the poor rows'
        scale (T,) (empty without a rule), and the scaled right-hand sides of them all in that order (R,).
        ``poor_b``: float64 (T,) m² allowed poor at the end of each year instead of the rows' own (a tighter aim)."""
        if poor_b is None and self.poor_b is not None:
            poor_b = self.poor_b[e]
        kinds = [(self.spend_c, self.spend_b)] + ([(self.count_c, self.count_b)] if self.count_c is not None else [])
        scaled, rhs = [], []
        for c, b in kinds:
            for a in (0, 1):
                scale = 1.0 / np.maximum(b[e, a], 1.0)
                scaled.append((c, scale))
                rhs.append(b[e, a] * scale)
        poor_scale = np.zeros(0)
        if poor_b is not None:
            poor_scale = 1.0 / np.maximum(poor_b, 1.0)
            rhs.append(poor_b * poor_scale)
        return scaled, poor_scale, np.concatenate(rhs)

    def coarsen(self, gamma: float, blocks: list[tuple[int, int]]) -> CouplingRows:
        """A valid, coarser set of rows: one discount-weighted row per block of years [start, end) (with
        carry-over: the cumulative rows at the block ends), so prices are constant within a block; without the
        rule's rows (its prices stay 0 there, so the search reaches the fine rows from the bound without it)."""
        t_n = self.spend_c.shape[1]
        if self.count_c is None:  # carry-over: a subset of the cumulative rows
            ends = np.array([end - 1 for _, end in blocks])
            return CouplingRows(self.spend_c[ends], self.spend_b[..., ends], None, None)
        disc = gamma ** np.arange(t_n)
        c = np.zeros((len(blocks), t_n))
        for i, (lo, hi) in enumerate(blocks):
            c[i, lo:hi] = disc[lo:hi]
        return CouplingRows(c, self.spend_b @ c.T, c, self.count_b @ c.T)  # identity rows: b is per year


def sample_bridges(mdps: BridgeMDPs, size: int, seed: int = 0) -> np.ndarray:
    """int64 (E × S,): the indices of a random sample of about ``size`` bridges of each of the E fleets of
    ``mdps`` (ordered by fleet; each agency sampled in its share of the fleet, at least one bridge where it has
    any, the same positions in every fleet), sorted; S ≤ the fleet's bridges."""
    e_n = int(mdps.fleet.max()) + 1
    agency = mdps.agency.reshape(e_n, -1)[0]
    b_n = len(agency)
    rng = np.random.default_rng(seed)
    picked = []
    for g in (0, 1):
        mine = np.flatnonzero(agency == g)
        if len(mine):
            k = min(len(mine), max(1, round(size * len(mine) / b_n)))
            picked.append(rng.choice(mine, k, replace=False))
    part = np.sort(np.concatenate(picked))
    return (np.arange(e_n)[:, None] * b_n + part).ravel()


def sampled_rows(rows: CouplingRows, mdps: BridgeMDPs, sample: BridgeMDPs) -> CouplingRows:
    """The rows of ``sample`` (``mdps.select(part)``, ``part`` from :func:`sample_bridges`) alone: each fleet's
    agency budgets scaled by the sample's share of the agency's replacement cost (the cost of action 4, a measure
    of what its bridges can spend), the rule's allowance by its share of the counted deck area, and the most
    treatments a year from the sample's own cheapest treatments."""
    e_n = rows.spend_b.shape[0]

    def replacement(m: BridgeMDPs) -> np.ndarray:  # (E × 2,) USD per fleet and agency
        return np.bincount(m.fleet * 2 + m.agency, m.cost[:, 4], 2 * e_n)

    share = replacement(sample) / np.maximum(replacement(mdps), 1e-300)
    annual = rows.per_year()[0][:, :, 0] * share.reshape(e_n, 2)
    poor_b = None
    if rows.poor_b is not None:
        deck = np.bincount(sample.fleet, sample.deck, e_n) / np.maximum(np.bincount(mdps.fleet, mdps.deck, e_n), 1e-300)
        poor_b = rows.poor_b * deck[:, None]
    return CouplingRows.of(sample, annual, rows.spend_c.shape[1], rows.count_c is None, poor_b)
