"""The continuous-time Markov fit of component ratings and the panel reader it is fed by."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import expm

from bridgefleet.calibration import markov
from bridgefleet.calibration.markov import age_band_test, fit_generator
from bridgefleet.calibration.panel import (
    COMPONENTS,
    OPEN_END,
    PANEL_COLUMNS,
    inspection_pairs,
    read_panel,
    read_works,
)

MA = Path(__file__).resolve().parents[2] / "shared" / "data" / "massachusetts"


def true_rates(down2: bool = False) -> np.ndarray:
    """(3, 10) rates 1/year of a known generator."""
    r = np.zeros((3, 10))
    r[0, 1:] = [0.05, 0.15, 0.12, 0.10, 0.08, 0.07, 0.06, 0.05, 0.20]
    if down2:
        r[1, 2:] = 0.01
    r[2, 1:9] = [0.03, 0.03, 0.02, 0.02, 0.015, 0.01, 0.01, 0.01]
    return r


def simulate(rates: np.ndarray, bridges: int, years: int, step: np.ndarray, seed: int):
    """Histories of ``bridges`` bridges over ``years`` years, each inspected every ``step[b]`` years, from
    ratings uniform on 1–9 → (from, to, dt) of consecutive inspections."""
    rng = np.random.default_rng(seed)
    q = markov._generator(rates)
    cum = {s: np.cumsum(expm(q * s), axis=1) for s in np.unique(step)}
    state = rng.integers(1, 10, bridges)
    f, t, d = [], [], []
    for b in range(bridges):
        s = int(step[b])
        x = state[b]
        for _ in range(years // s):
            y = int(np.searchsorted(cum[s][x], rng.random() * cum[s][x, -1], side="right"))
            f.append(x)
            t.append(y)
            d.append(s)
            x = y
    return np.array(f), np.array(t), np.array(d, dtype=float)


def check_recovery(fit, rates: np.ndarray) -> None:
    """True rates inside the fitted 95 % intervals (≥ 85 % of them; none beyond 3.5 standard errors)."""
    inside, z = [], []
    for kind in range(3):
        for i in range(1, 10):
            if not (fit.in_structure[kind, i] and fit.identified[i]):
                continue
            lo, hi = fit.rate_ci[kind, i]
            inside.append(lo <= rates[kind, i] <= hi)
            j = fit.index[kind, i]
            z.append(abs(fit.theta[j] - np.log(rates[kind, i])) / np.sqrt(fit.cov[j, j]))
    assert np.mean(inside) >= 0.85, (np.mean(inside), z)
    assert max(z) < 3.5, z
    assert np.abs(fit.one_year() - expm(markov._generator(rates))).max() < 0.02


def test_fit_recovers_a_known_generator_from_yearly_histories():
    rates = true_rates()
    f, t, d = simulate(rates, 2500, 8, np.ones(2500, int), seed=7)
    assert len(f) == 20_000
    fit = fit_generator(f, t, d, up=True)
    assert fit.converged and fit.identified[1:].all() and not fit.identified[0]
    check_recovery(fit, rates)
    assert np.allclose(fit.one_year().sum(axis=1), 1.0) and np.allclose(fit.Q.sum(axis=1), 0.0)
    assert not fit.in_structure[1].any() and (fit.rates[1] == 0).all()  # no down2 asked for


def test_fit_recovers_it_from_mixed_one_and_two_year_intervals():
    rates = true_rates(down2=True)
    step = np.where(np.arange(3000) % 2 == 0, 1, 2)
    f, t, d = simulate(rates, 3000, 8, step, seed=11)
    assert set(np.unique(d)) == {1.0, 2.0} and len(f) > 15_000
    fit = fit_generator(f, t, d, up=True, down2=True)
    check_recovery(fit, rates)
    lo, hi = fit.transition_ci(1.0, n=300, seed=0)
    p = fit.one_year()
    assert (lo <= p + 1e-12).all() and (p <= hi + 1e-12).all()


def test_gradient_matches_finite_differences():
    f, t, d = simulate(true_rates(True), 300, 4, np.where(np.arange(300) % 3 == 0, 2, 1), seed=3)
    counts = markov._counts(f, t, d)
    index, k = markov._tie(markov._structure(True, True), np.r_[False, [True] * 9])
    prob = markov._Problem(counts, index, k, np.zeros((3, 10)))
    theta = np.random.default_rng(0).normal(-3, 0.5, k)
    h = 1e-6
    num = np.array([(prob.loglik(theta + h * e) - prob.loglik(theta - h * e)) / (2 * h) for e in np.eye(k)])
    assert np.allclose(prob.grad(theta), num, rtol=1e-5, atol=1e-4)
    prob_frac = markov._Problem({0.5: counts[1.0], 1.5: counts[2.0]}, index, k, np.zeros((3, 10)))
    num = np.array([(prob_frac.loglik(theta + h * e) - prob_frac.loglik(theta - h * e)) / (2 * h) for e in np.eye(k)])
    assert np.allclose(prob_frac.grad(theta), num, rtol=1e-5, atol=1e-4)


def test_an_unidentified_rating_takes_the_stated_prior_and_is_flagged():
    rates = true_rates()
    f, t, d = simulate(rates, 1500, 2, np.ones(1500, int), seed=5)
    keep = f >= 3
    keep[np.flatnonzero(f == 2)[:10]] = True  # ten pairs from rating 2, none from 1
    fit = fit_generator(f[keep], t[keep], d[keep], up=True)
    assert fit.n_from[2] == 10 and fit.n_from[1] == 0
    assert not fit.identified[1] and not fit.identified[2] and fit.identified[3:].all()
    for kind in (0, 2):  # tied to the nearest identified rating, 3
        assert fit.rates[kind, 2] == fit.rates[kind, 3] == fit.rates[kind, 1] > 0
        assert np.isnan(fit.rate_ci[kind, 1:3]).all()
    assert fit.Q[2, 1] > 0 and fit.Q[1, 0] > 0  # never a silent zero
    prior = np.full((3, 10), 0.04)
    fixed = fit_generator(f[keep], t[keep], d[keep], up=True, prior=prior)
    assert fixed.rates[0, 2] == fixed.rates[2, 1] == 0.04 and not fixed.identified[2]
    with pytest.raises(ValueError, match="no rating has 30 pairs"):
        fit_generator(f[:20], t[:20], d[:20])


def test_age_band_test_finds_a_real_age_effect_and_none_where_there_is_none():
    young, old = true_rates(), true_rates()
    old[0] *= 2.5
    young[2], old[2] = 0.0, 0.0
    fy, ty, dy = simulate(young, 800, 5, np.ones(800, int), seed=1)
    fo, to, do = simulate(old, 800, 5, np.ones(800, int), seed=2)
    f, t, d = np.r_[fy, fo], np.r_[ty, to], np.r_[dy, do]
    age = np.r_[np.full(len(fy), 10), np.full(len(fo), 70)]
    res = age_band_test(f, t, d, age, bands=(30,), up=False)
    assert res.p_value < 1e-6 and res.lr > 0 and res.df == 9
    none = age_band_test(fy, ty, dy, np.arange(len(fy)) % 80, bands=(30,), up=False)
    assert none.p_value > 0.001 and none.lr >= -1e-6


# ---- the panel reader -------------------------------------------------------------------------------------------

HEADER = ",".join((*PANEL_COLUMNS, "town"))


def write_panel(tmp_path: Path, rows: list[str], header: str = HEADER) -> Path:
    path = tmp_path / "panel.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def row(bid: str, year: int, deck: str = "7.0", sup: str = "7", sub: str = "6", culv: str = "6.0",
        obs: str = "1", built: str = "1950") -> str:
    return f"{bid},{year},{obs},{built},{deck},{sup},{sub},{culv},120.5,1.0,Town"


def test_reader_accepts_the_massachusetts_spellings(tmp_path):
    p = read_panel(write_panel(tmp_path, [row("A", 2000), row("A", 2001, deck="0.0"), row("B", 2000, obs=""),
                                          row("B", 2001, deck="", sup="9.0", sub="N", built="")]))
    assert p.ratings.dtype == np.int8 and p.ratings.shape == (4, 4)
    assert p.ratings.tolist() == [[7, 7, 6, 6], [-1, 7, 6, 6], [-1, -1, -1, -1], [-1, 9, -1, 6]]
    assert p.bridges.tolist() == ["A", "B"] and p.bridge_index.tolist() == [0, 0, 1, 1]
    assert p.year.dtype == np.int16 and p.year_built.tolist() == [1950, 1950, 1950, -1]
    assert p.nhs.all() and p.deck_area_m2[0] == 120.5


@pytest.mark.parametrize(("cell", "col"), [("6.5", "deck"), ("1e0", "deck"), ("+6", "deck"), ("10", "deck"),
                                           ("7.00x", "deck"), ("-1", "deck")])
def test_reader_refuses_a_rating_that_is_not_a_whole_number_0_to_9(tmp_path, cell, col):
    path = write_panel(tmp_path, [row("A", 2000), row("A", 2001, deck=cell)])
    with pytest.raises(ValueError) as e:
        read_panel(path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg and "row 3" in msg and f"'{col}'" in msg and cell in msg


@pytest.mark.parametrize(("rows", "line", "col", "what"), [
    ([row("A", 2000), row("A", 2000)], 3, "year", "given twice"),
    ([row("A", 2001), row("A", 2000)], 3, "year", "out of order"),
    ([row("A", 2000), row("B", 2000), row("A", 2001)], 4, "bdept_bridge_id", "not together"),
    ([row("A", 2000, sub=""), row("A", 2001, sub="N")], None, "substructure", "no rating"),
    ([row("A", 2000), row("A", 2001, built="19x0")], 3, "year_built", "whole number"),
])
def test_reader_refuses_bad_rows(tmp_path, rows, line, col, what):
    path = write_panel(tmp_path, rows)
    with pytest.raises(ValueError) as e:
        read_panel(path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg and f"'{col}'" in msg and what in msg
    assert (f"row {line}" if line else "rows 2–3") in msg


def test_reader_refuses_a_missing_column(tmp_path):
    path = write_panel(tmp_path, ["A,2000,1,1950,7,7,7,7,1.0,Town"], header=HEADER.replace(",area_sf_col", ""))
    with pytest.raises(ValueError, match=r"row 1, column 'area_sf_col': required column missing") as e:
        read_panel(path)
    assert str(path) in str(e.value)


def write_works(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "works.csv"
    head = "bdept_bridge_id,contract_no,project_init_year,project_end_year,spending_usd_per_bridge"
    path.write_text("\n".join([head, *rows]) + "\n")
    return path


def test_works_refuse_a_bridge_the_panel_lacks_and_read_a_blank_end_as_open(tmp_path):
    panel = read_panel(write_panel(tmp_path, [row("A", 2000), row("A", 2001)]))
    w = read_works(write_works(tmp_path, ["A,1,2001.0,,1000.5", "A,2,2000,2001,5"]), panel)
    assert w.end_year.tolist() == [OPEN_END, 2001] and w.usd.tolist() == [1000.5, 5.0]
    path = write_works(tmp_path, ["A,1,2001,2002,10", "Z9,2,2001,2002,10"])
    with pytest.raises(ValueError) as e:
        read_works(path, panel)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg and "row 3" in msg and "'bdept_bridge_id'" in msg and "Z9" in msg
    with pytest.raises(ValueError, match=r"row 2, column 'project_end_year'"):
        read_works(write_works(tmp_path, ["A,1,2003,2002,10"]))


def test_pairs_skip_intervals_with_recorded_work_and_unrecorded_big_rises(tmp_path):
    # bridge A: 7 7 6 (no record 2003) 6 5, project 2004-2005; bridge B: 8 8 6 9 8 9, an old project only
    rows = [row("A", 2000, deck="7"), row("A", 2001, deck="7"), row("A", 2002, deck="6"),
            row("A", 2003, deck="6", obs=""), row("A", 2004, deck="6"), row("A", 2005, deck="5"),
            row("B", 2000, deck="8", built="1990"), row("B", 2001, deck="8", built="1990"),
            row("B", 2002, deck="6", built="1990"), row("B", 2003, deck="9", built="1990"),
            row("B", 2004, deck="8", built="1990"), row("B", 2005, deck="9", built="1990")]
    panel = read_panel(write_panel(tmp_path, rows))
    works = read_works(write_works(tmp_path, ["A,1,2004,2005,100", "B,2,1998,2000,50"]), panel)
    p = inspection_pairs(panel, works, "deck")
    got = list(zip(p.from_rating.tolist(), p.to_rating.tolist(), p.interval_years.tolist(), p.year_from.tolist(),
                   p.bridge_index.tolist(), strict=True))
    assert got == [(7, 7, 1, 2000, 0), (7, 6, 1, 2001, 0),  # 2002→2004 and 2004→2005 overlap the project
                   (8, 8, 1, 2000, 1), (8, 6, 1, 2001, 1), (9, 8, 1, 2003, 1), (8, 9, 1, 2004, 1)]  # 6→9 dropped
    assert p.dropped_work == 2 and p.dropped_big_rise == 1
    assert p.age_years.tolist() == [50, 51, 10, 11, 13, 14]
    kept = inspection_pairs(panel, works, 0, big_rise="keep")
    assert len(kept) == 7 and (6, 9) in set(zip(kept.from_rating.tolist(), kept.to_rating.tolist(), strict=True))
    no_work = read_works(write_works(tmp_path, []))
    assert len(inspection_pairs(panel, no_work, "deck")) == 8  # 9 pairs less the big rise
    with pytest.raises(ValueError, match="not one of"):
        inspection_pairs(panel, works, "pier")


@pytest.mark.skipif(not (MA / "ma_bridge_timeseries_2000_2016.csv").is_file(), reason="Massachusetts data absent")
def test_massachusetts_panel_matches_its_readme():
    panel = read_panel(MA / "ma_bridge_timeseries_2000_2016.csv")
    works = read_works(MA / "ma_massdot_bridge_projects.csv", panel)
    assert len(panel.year) == 76_721 and len(panel.bridges) == 4_513 and len(works.bridge_id) == 885
    valid = (panel.ratings >= 0).sum(axis=0)
    assert dict(zip(COMPONENTS, valid.tolist(), strict=True)) == {
        "deck": 60_513, "superstructure": 65_627, "substructure": 65_725, "culvert": 4_800}
