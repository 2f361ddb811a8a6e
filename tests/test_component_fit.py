"""``bridgefleet calibrate --panel``: the component model fitted to an agency's own yearly component-rating panel
(issue 77 item 7), its refusals, and the fleet YAML it writes for --config."""

import csv

import numpy as np
import pytest
import yaml
from scipy.linalg import expm

from bridgefleet.cli import main
from bridgefleet.config import FleetConfig
from bridgefleet.sim import components
from bridgefleet.sim.components import BUNDLED, ComponentModel

HEADER = ["bdept_bridge_id", "year", "num_obs_in_year", "year_built", "deck", "superstructure", "substructure",
          "culvert", "area_sf_col", "nhs"]
WORK_HEADER = ["bdept_bridge_id", "project_init_year", "project_end_year", "spending_usd_per_bridge"]
SLOTS = ("deck", "superstructure", "substructure", "culvert")
DOWN1 = {"deck": [0, .30, .25, .20, .15, .08, .07, .06, .12, .35],
         "superstructure": [0, .25, .20, .15, .12, .07, .06, .08, .10, .30],
         "substructure": [0, .35, .30, .20, .12, .06, .05, .05, .11, .28],
         "culvert": [0, .20, .20, .15, .10, .06, .05, .05, .10, .25]}
"""The hand-made model's drop-one rates from ratings 0–9, 1/year; drops of two 0.01, rises of one 0.015 a year."""
COUPLING = 0.3
N_BRIDGES, N_CULVERTS, YEARS = 270, 30, range(2010, 2018)
STAY_TOLERANCE_SE = 3.5
"""A true stay probability may miss its 95 % interval by chance (about 1 in 20 cells); none should lie more than
3.5 standard errors (the interval's half-width / 1.96) from the fit: P ≈ 5e-4 a cell, < 1 % over the ~20 cells."""


def _one_year(comp: str) -> np.ndarray:
    """expm(Q) of the hand-made generator: the structure ``markov.fit_generator`` fits (drop 1, drop 2, rise 1)."""
    q = np.zeros((10, 10))
    for i in range(1, 10):
        q[i, i - 1] += DOWN1[comp][i]
        if i >= 2:
            q[i, i - 2] += 0.01
        if i <= 8:
            q[i, i + 1] += 0.015
    q[np.diag_indices(10)] = -q.sum(axis=1)
    return expm(q)


TRUE = {c: _one_year(c) for c in SLOTS}


def _true_model() -> components.ComponentModel:
    eye = np.eye(10).tolist()
    det = {c: TRUE[c].tolist() for c in SLOTS}
    return components.from_mapping({"name": "true", "deterioration": {**det, "deck_protected": det["deck"]},
                                    "protection_years": 10, "coupling": COUPLING,
                                    "actions": [{"name": f"a{a}", "treats": {"deck": eye}} for a in range(5)]},
                                   "true")


def _write(path, header, rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def _simulate(folder, seed: int = 7) -> tuple:
    """(panel, works): 270 bridges and 30 culverts rated 2010–2017 under the hand-made model, 40 bridges replaced
    (all three ratings to 9, year built changed) in a recorded project 2012–2015."""
    model = _true_model()
    rng = np.random.default_rng(seed)
    b = N_BRIDGES + N_CULVERTS
    kind = np.r_[np.zeros(N_BRIDGES, np.int64), np.ones(N_CULVERTS, np.int64)]
    c = rng.integers(3, 10, (1, b, 3)).astype(np.int8)
    c[0, N_BRIDGES:, 1:] = 9
    built = rng.integers(1950, 2000, b)
    replaced = {int(i): int(rng.integers(2012, 2016)) for i in rng.choice(N_BRIDGES, 40, replace=False)}
    rows = {i: [] for i in range(b)}
    for year in YEARS:
        for i in range(b):
            r = [str(v) for v in c[0, i]]
            cells = [r[0], r[1], r[2], "N"] if kind[i] == 0 else ["N", "N", "N", r[0]]
            rows[i].append([f"B{i:04d}", year, 1, built[i], *cells, 300.0, 0])
        for i, wy in replaced.items():
            if wy == year + 1:
                c[0, i] = 9
                built[i] = wy
        components.deteriorate(model, c, np.zeros((1, b), bool), kind, rng.random((1, b, 5)), rng.random((1, b)))
    panel, works = folder / "panel.csv", folder / "works.csv"
    _write(panel, HEADER, [row for i in range(b) for row in rows[i]])
    _write(works, WORK_HEADER, [[f"B{i:04d}", wy, wy, 1_000_000] for i, wy in sorted(replaced.items())])
    return panel, works


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return _simulate(tmp_path_factory.mktemp("panel"))


def test_calibrate_panel_recovers_a_known_model_and_writes_a_fleet_that_loads(synthetic, tmp_path, capsys,
                                                                              monkeypatch):
    panel, works = synthetic
    out = tmp_path / "fleet.yaml"
    assert main(["calibrate", "--panel", str(panel), "--works", str(works), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "stay" in text and "coupling (components moving together): w = " in text
    assert "replacement 40" in text.replace(",", "")  # the treatment kinds counted
    assert "not identified" in text and "nearest identified rating" in text  # ratings 1-2: the stated prior
    comp = tmp_path / "fleet.components.yaml"
    fit = yaml.safe_load(comp.read_text(encoding="utf-8"))["fit"]
    checked, inside, worst = 0, 0, 0.0
    for c in ("deck", "superstructure", "substructure"):
        for rating, n, _observed, fitted, lo, hi in fit["stay"][c]:
            if n < 100:
                continue
            true = TRUE[c][rating, rating]
            se = (hi - lo) / (2 * 1.96)
            checked += 1
            inside += lo <= true <= hi
            worst = max(worst, abs(fitted - true) / se)
            print(f"{c} {rating}: n {n}, true {true:.3f}, fitted {fitted:.3f} [{lo:.3f}-{hi:.3f}]")
    assert checked >= 15
    assert inside >= checked - 2 and worst <= STAY_TOLERANCE_SE, (inside, checked, worst)
    lo, hi = fit["coupling"]["ci95"]
    assert lo - 0.05 <= COUPLING <= hi + 0.05
    # the treatments it could not fit (no rehabilitations recorded) keep the bundled model's, said so
    assert any("component_rehabilitation" in n and "kept" in n for n in fit["notes"])
    monkeypatch.chdir(tmp_path.parent)  # another working directory: component_model is read beside fleet.yaml
    cfg = FleetConfig.from_yaml(out)
    assert cfg.component_model == str(comp.resolve())
    m = ComponentModel.load(cfg.component_model)
    assert m.deterioration.shape == (2, 3, 10, 10) and abs(m.coupling - fit["coupling"]["w"]) < 1e-4


def test_without_work_records_every_pair_counts_and_the_bundled_treatments_are_kept(synthetic, tmp_path, capsys):
    panel, _ = synthetic
    out = tmp_path / "fleet.yaml"
    assert main(["calibrate", "--panel", str(panel), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "without work records" in text and "treatments and deck protection of the bundled model" in text
    assert "rising two levels or more, read as unrecorded work" in text  # the replacements' jumps
    fitted, bundled = ComponentModel.load(tmp_path / "fleet.components.yaml"), ComponentModel.load(BUNDLED[
        "massachusetts-2026"])
    np.testing.assert_allclose(fitted.treatment, bundled.treatment, atol=1e-9)
    without = yaml.safe_load((tmp_path / "fleet.components.yaml").read_text(encoding="utf-8"))["fit"]["pairs"]
    assert without["deck"] > 270 * 7 - 100  # the replaced bridges' pairs count too


def _small(rows: list[list]) -> list[list]:
    return [[b, y, 1, 1970, *r, 300, 0] for b, y, r in rows]


GOOD = [("A", 2010, ["7", "6", "5", "N"]), ("A", 2011, ["7", "6", "5", "N"]), ("C", 2010, ["N", "N", "N", "6"])]


@pytest.mark.parametrize("rows, works, message", [
    ([("A", 2010, ["10", "6", "5", "N"]), *GOOD[1:]], None, "row 2, column 'deck': rating '10' is not"),
    ([("A", 2010, ["7", "6.5", "5", "N"]), *GOOD[1:]], None, "row 2, column 'superstructure': rating '6.5'"),
    ([("A", 2010, ["7", "6", "X", "N"]), *GOOD[1:]], None, "row 2, column 'substructure': rating 'X'"),
    ([*GOOD[:1], ("A", 2010, ["7", "6", "5", "N"]), *GOOD[2:]], None, "row 3, column 'year': bridge A year 2010 "
                                                                       "given twice"),
    ([("A", 2011, ["7", "6", "5", "N"]), ("A", 2010, ["7", "6", "5", "N"]), *GOOD[2:]], None,
     "row 3, column 'year': bridge A year 2010 after 2011 (out of order)"),
    ([("A", 2010, ["N", "6", "5", "N"]), ("A", 2011, ["N", "6", "5", "N"]), GOOD[2]], None,
     "column 'deck': no rating 1–9 on any row"),
    (GOOD, [["Z9", 2010, 2011, 5]], "works.csv: row 2, column 'bdept_bridge_id': bridge Z9 is not in the panel"),
    (GOOD, None, "column 'deck': too few pairs to fit"),
])
def test_bad_panels_and_works_are_refused_in_one_line_and_nothing_is_written(tmp_path, capsys, rows, works,
                                                                              message):
    panel = tmp_path / "panel.csv"
    _write(panel, HEADER, _small(rows))
    argv = ["calibrate", "--panel", str(panel), "--out", str(tmp_path / "fleet.yaml")]
    if works is not None:
        _write(tmp_path / "works.csv", WORK_HEADER, works)
        argv += ["--works", str(tmp_path / "works.csv")]
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and message in err and "panel.csv" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_out_may_not_be_the_panel_or_the_works_file_and_the_modes_do_not_mix(synthetic, tmp_path, capsys):
    panel, works = synthetic
    text = panel.read_text(encoding="utf-8")
    for argv, message in (
            (["--panel", str(panel), "--out", str(panel)], "is the panel, which this command reads"),
            (["--panel", str(panel), "--works", str(works), "--out", str(works)], "is the works file"),
            (["--panel", str(panel), str(panel)], "HISTORY.csv fits the continuous model"),
            (["--panel", str(panel), "--gap", "1"], "--gap fits the continuous model"),
            ([str(panel), "--works", str(works)], "--works: give it with --panel"),
            ([], "give a HISTORY.csv (the continuous model) or --panel PANEL.csv"),
            (["--panel", str(panel), "--out", str(tmp_path / "fleet.components.yaml")],
             "give the fleet YAML's name (fleet.yaml)")):
        assert main(["calibrate", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and message in err, err
    assert panel.read_text(encoding="utf-8") == text
    assert not list(tmp_path.iterdir())


def test_an_empty_panel_is_called_empty_and_a_panel_without_culverts_is_read(tmp_path):
    from bridgefleet.calibration.panel import read_panel

    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty.csv: empty file; expected a header row with bdept_bridge_id"):
        read_panel(empty)
    panel = tmp_path / "panel.csv"
    _write(panel, HEADER, _small(GOOD[:2]))  # bridge A only: no culvert rating anywhere
    read = read_panel(panel)
    assert (read.ratings[:, 3] == -1).all() and read.ratings[:, :3].tolist() == [[7, 6, 5], [7, 6, 5]]
