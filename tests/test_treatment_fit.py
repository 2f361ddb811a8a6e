"""bridgefleet.calibration.treatment_fit on hand-built panels: kinds, fitted distributions, costs, Ontario reader."""

import numpy as np
import pytest

from bridgefleet.calibration import treatment_fit as tf
from bridgefleet.calibration.panel import read_panel, read_works

HEAD = "bdept_bridge_id,year,num_obs_in_year,year_built,deck,superstructure,substructure,culvert,area_sf_col,nhs\n"


def _row(b, y, built, d, sp, sb, cu="", area=200):
    return f"{b},{y},1,{built},{d},{sp},{sb},{cu},{area},0\n"


def _panel(tmp_path):
    """A: deck rehab in 2002 (two project rows, merged); B: replaced 2002; C: work that raised nothing; D: culvert
    with an open window; E: no work, its deck 7, 7, 6, 6, 6."""
    rows = [_row("A", y, 1960, d, 5, 5) for y, d in ((2000, 5), (2001, 5), (2002, 5), (2003, 8), (2004, 8))]
    rows += [_row("B", y, 1950 if y < 2003 else 2002, r, r, r, area=250)
             for y, r in ((2000, 4), (2001, 4), (2002, 4), (2003, 9), (2004, 9))]
    rows += [_row("C", y, 1970, 7, 6, 6, area=100) for y in range(2000, 2005)]
    rows += [_row("D", y, 1980, "", "", "", cu=6, area=50) for y in range(2000, 2005)]
    rows += [_row("E", y, 1990, d, 7, 7) for y, d in ((2000, 7), (2001, 7), (2002, 6), (2003, 6), (2004, 6))]
    p = tmp_path / "panel.csv"
    p.write_text(HEAD + "".join(rows), encoding="utf-8")
    w = tmp_path / "works.csv"
    w.write_text("bdept_bridge_id,project_init_year,project_end_year,spending_usd_per_bridge\n"
                 "A,2002,2002,60000\nA,2002,2002,40000\nB,2002,2002,1000000\nC,2002,2002,7000\n"
                 "D,2016,,5\n", encoding="utf-8")
    panel = read_panel(p)
    return panel, read_works(w, panel)


@pytest.mark.parametrize(("pre", "post", "rebuilt", "kind", "treated"), [
    ((4, 4, 4, -1), (9, 9, 9, -1), True, "replacement", (1, 1, 1, 0)),
    ((5, 5, 6, -1), (7, 6, 6, -1), False, "major_rehab", (1, 1, 1, 0)),  # two rose: every rated one treated
    ((5, 5, 5, -1), (8, 5, 4, -1), False, "component_rehab", (1, 0, 0, 0)),  # only the deck rose
    ((7, 6, 6, -1), (7, 5, 6, -1), False, "preservation", (0, 0, 0, 0)),
    ((-1, -1, -1, 3), (-1, -1, -1, 7), False, "component_rehab", (0, 0, 0, 1)),
    ((5, -1, 5, -1), (-1, 8, 6, -1), False, "component_rehab", (0, 0, 1, 0)),  # deck/sup not rated both times
])
def test_infer_kind(pre, post, rebuilt, kind, treated):
    k, t = tf.infer_kind(np.array(pre), np.array(post), rebuilt)
    assert k == kind and t.tolist() == [bool(x) for x in treated]


def test_infer_kind_min_rise_and_refusals():
    assert tf.infer_kind(np.array([5, 5, 5, -1]), np.array([6, 6, 5, -1]), False, min_rise=2)[0] == "preservation"
    with pytest.raises(ValueError, match=r"pre/post: expected shape \(4,\)"):
        tf.infer_kind(np.array([5, 5, 5]), np.array([5, 5, 5]), False)
    with pytest.raises(ValueError, match="ratings must be 0–9"):
        tf.infer_kind(np.array([5, 5, 5, 10]), np.array([5, 5, 5, 5]), False)


def test_fit_matrix_ml_rows_and_pooled_thin_rows():
    pre = np.array([5, 5, 5, 5, 5, 6])
    post = np.array([7, 7, 8, 7, 8, 6])
    m = tf.fit_matrix(pre, post, min_count=5)
    np.testing.assert_allclose(m.probs[5, [7, 8]], [3 / 5, 2 / 5])  # 5 pairs: maximum likelihood
    assert not m.flagged[5] and m.flagged[6] and m.flagged[9]
    # row 6: 1 pair (→ 6) + 4 pseudo-pairs of the fair-band pool (→ 6: 1/6, 7: 3/6, 8: 2/6), over 5
    np.testing.assert_allclose(m.probs[6, [6, 7, 8]], [(1 + 4 / 6) / 5, 4 * 0.5 / 5, 4 * (1 / 3) / 5])
    # row 9: good band empty → whole pool, whose mass below 9 stays at 9; row 0: pool as is
    np.testing.assert_allclose(m.probs[9], np.eye(10)[9])
    np.testing.assert_allclose(m.probs[0, [6, 7, 8]], [1 / 6, 1 / 2, 1 / 3])
    np.testing.assert_allclose(m.probs.sum(axis=1), 1.0)
    assert m.counts[5, 7] == 3 and m.counts.sum() == 6
    with pytest.raises(ValueError, match="pre/post lengths differ"):
        tf.fit_matrix(np.array([5]), np.array([6, 7]))
    with pytest.raises(ValueError, match="whole ratings 0–9"):
        tf.fit_matrix(np.array([5.5]), np.array([6]))


def test_events_kinds_and_merged_projects(tmp_path):
    panel, works = _panel(tmp_path)
    events, skipped = tf.treatment_events(panel, works)
    by = {e.bridge: e for e in events}
    assert skipped == 1  # D's open window
    assert by["A"].kind == "component_rehab" and by["A"].usd == 100000.0  # two rows merged
    assert (by["A"].pre_year, by["A"].post_year) == (2001, 2003)
    assert by["B"].kind == "replacement" and by["B"].rebuilt
    assert by["C"].kind == "preservation"


def test_a_treatment_moves_only_its_components(tmp_path):
    panel, works = _panel(tmp_path)
    events, _ = tf.treatment_events(panel, works)
    mats = tf.fit_action_matrices(events, "component_rehab", min_count=1)
    assert mats["deck"].counts[5, 8] == 1 and mats["deck"].probs[5, 8] == 1.0
    for c in ("superstructure", "substructure", "culvert"):
        assert mats[c].counts.sum() == 0 and mats[c].flagged.all()
    rises = tf.mean_rise_by_band(events, "component_rehab")
    assert rises[("deck", "fair")] == (3.0, 1) and rises[("superstructure", "fair")][1] == 0
    rep = tf.fit_action_matrices(events, "replacement", min_count=1)
    assert all(rep[c].probs[4, 9] == 1.0 for c in ("deck", "superstructure", "substructure"))


def test_cost_per_m2(tmp_path):
    panel, works = _panel(tmp_path)
    events, _ = tf.treatment_events(panel, works)
    assert tf.cost_per_m2(events, "component_rehab").median == 100000 / 200  # 500 USD/m²
    rep = tf.cost_per_m2(events, "replacement")
    assert (rep.n, rep.median, rep.aggregate) == (1, 4000.0, 4000.0)  # 1,000,000 / 250 m²
    assert tf.cost_per_m2(events, "preservation").median == 70.0  # 7,000 / 100 m²
    every = tf.cost_per_m2(events)
    assert every.n == 3 and every.aggregate == pytest.approx(1107000 / 550)
    assert every.median == 500.0 and tf.cost_per_m2([], "major_rehab").n == 0
    assert tf.cost_per_m2(events, "replacement").scaled(2.0).median == 8000.0
    with pytest.raises(ValueError, match="kind 'overlay'"):
        tf.cost_per_m2(events, "overlay")


def test_deck_drop_evidence_counts_the_years_after(tmp_path):
    panel, works = _panel(tmp_path)
    events, _ = tf.treatment_events(panel, works)
    ev = tf.deck_drop_evidence(panel, works, events, years_after=5)
    # baseline: only E is a year from every window; deck 7: 2000→01 stays, 2001→02 drops → 1/2; deck 6: 0/2
    assert ev.baseline[7] == 0.5 and ev.baseline[6] == 0.0 and np.isnan(ev.baseline[8])
    # C (deck 7 throughout) after its 2003 record: the pair 2003→2004 only, no drop, 0.5 expected
    assert (ev.bridge_years, ev.observed, ev.expected, ev.ratio, ev.ci_low) == (1, 0, 0.5, 0.0, 0.0)
    assert ev.ci_high == pytest.approx(7.3778 / 2 / 0.5, rel=1e-4)  # exact Poisson: χ²(0.975, 2) / 2 / expected


def test_ontario_rehabs_and_bci_mapping(tmp_path):
    np.testing.assert_array_equal(tf.bci_to_rating(np.array([100, 85, 70, 69.9, 60, 59])), [9, 8, 7, 6, 5, 4])
    head = ",,LOCATION\nID,NAME,LAST MAJOR REHAB ,LAST MINOR REHAB,2004,2003,2002,2001,2000\n"
    p = tmp_path / "on.csv"
    # X: major 2002, before 2001 (BCI 0.0 placeholder in 2001 → 2000's 62), after 2003 (85); Y: minor 2003
    p.write_text(head + "X,a,2002,,90,85,,0.0,62\nY,b,,2003,71,,66,,\n", encoding="latin-1")
    out = tf.read_ontario_rehabs(p)
    assert out["major"][0].tolist() == [5] and out["major"][1].tolist() == [8]
    assert out["minor"][0].tolist() == [6] and out["minor"][1].tolist() == [7]
    p.write_text(head + "X,a,2002,,90,abc,,,\n", encoding="latin-1")
    with pytest.raises(ValueError, match=r"row 3, column '2003': 'abc' is not a BCI 0–100"):
        tf.read_ontario_rehabs(p)
