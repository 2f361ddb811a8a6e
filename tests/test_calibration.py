"""bridgefleet.calibration: histories → pairs (and their errors), the fit on a hand-made history, Ontario's targets."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from bridgefleet.calibration.fit import fit_pairs, rating_groups
from bridgefleet.calibration.histories import HistoryMapping, read_history
from bridgefleet.config import ConfigError, FleetConfig

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("calibrate", ROOT / "benchmarks" / "calibrate_deterioration.py")
calibrate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(calibrate)


def _write(tmp_path, text, name="h.csv"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_bci_mapping_puts_mto_bands_on_fhwa_bands():
    m = HistoryMapping.load("ontario-bci")
    np.testing.assert_allclose(m.to_rating(np.array([100.0, 85.0, 70.0, 65.0, 60.0, 30.0, 0.0])),
                               [9.0, 8.0, 7.0, 6.0, 5.0, 2.5, 0.0])
    np.testing.assert_allclose(m.slope(np.array([80.0, 65.0, 30.0])), [2 / 30, 0.2, 5 / 60])


@pytest.mark.parametrize(("text", "message"), [
    ("range: [0, 100]\n", "range [0, 100] without a scale: values are read as NBI ratings 0–9"),
    ("columns: [ID, YEAR]\n", "columns: expected field: column pairs"),
])
def test_bad_history_mappings_are_refused_in_one_line(tmp_path, text, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        HistoryMapping.load(str(_write(tmp_path, text, "m.yaml")))
    with pytest.raises(ConfigError, match="--mapping nosuch: no such file; bundled mappings: ontario-bci"):
        HistoryMapping.load("nosuch")


def test_pairs_skip_work_and_rises_and_count_years_since_work(tmp_path):
    text = ("bridge,year,rating,built,work\n"
            "A,2000,8.0,1990,0\nA,2002,7.6,,0\nA,2004,8.5,,0\nA,2006,8.2,,0\nA,2009,7.9,,1\nA,2011,7.5,,0\n")
    pairs = read_history(_write(tmp_path, text), HistoryMapping(columns={"bridge": "bridge", "year": "year",
                                                                          "rating": "rating", "built": "built",
                                                                          "work": "work"}))
    # 2000→2002 (ysm 10 since built), 2004→2006 after the rise (ysm 0), 2009→2011 after recorded work (ysm 0)
    assert pairs.rating0.tolist() == [8.0, 8.5, 7.9] and pairs.rating1.tolist() == [7.6, 8.2, 7.5]
    assert pairs.ysm.tolist() == [10.0, 0.0, 0.0] and pairs.years.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize(("text", "message"), [
    ("bridge,year,rating\nA,2000,7\nB,2001,6\n", "every bridge has one inspection"),
    ("bridge,year,rating\n", "no inspection rows after the header"),
    ("bridge,year,rating\nA,2000,7\nA,2002,11\n", "row 3, column 'rating': 11 is out of range [0, 9]"),
    ("bridge,year,rating\nA,2002,7\nA,2000,6\n", "row 3: bridge 'A' year 2000 is out of order (row 2 has 2002)"),
    ("bridge,year,rating\nA,2000,7\nA,2000,6\n", "row 3: bridge 'A' has year 2000 twice (row 2)"),
    ("bridge,year,rating\nA,2000,x\n", "row 2, column 'rating': 'x' is not a number"),
    ("bridge,yr,rating\nA,2000,7\n", "no column 'year'"),
    ("bridge,year,rating\nA,5,7\nA,7,6\n", "row 2, column 'year': 5 is not an inspection year (a whole calendar"),
    ("bridge,year,rating\nA,2000,7,9\nA,2002,6\n", "row 2: 4 fields where the header has 3"),
    ("bridge,rating,rating\nA,7,6\n", "row 1, column 'rating': the header names it twice"),
])
def test_bad_histories_get_one_line_errors_naming_the_row(tmp_path, text, message):
    with pytest.raises(ConfigError) as err:
        read_history(_write(tmp_path, text), HistoryMapping())
    assert message in str(err.value) and "\n" not in str(err.value)


def test_fit_recovers_the_rates_of_a_hand_made_five_bridge_history(tmp_path):
    # Five bridges inspected every two years for 30 years, losing exactly 0.04 × f per year with f = 4 above
    # rating 7 and f = 2 below (no noise, no shocks, never maintained: ysm 15 capped, a = 0 fits best).
    rows = ["bridge,year,rating"]
    for b, start in enumerate((9.0, 8.8, 8.5, 8.2, 7.9)):
        c = start
        for year in range(2000, 2031, 2):
            rows.append(f"B{b},{year},{c:.4f}")
            for _ in range(2):
                c -= 0.04 * (4.0 if c >= 7 else 2.0)
    pairs = read_history(_write(tmp_path, "\n".join(rows) + "\n"), HistoryMapping())
    assert pairs.n_bridges == 5 and len(pairs.rating0) == 75
    fit = fit_pairs(pairs, min_pairs=5)
    f = np.array(fit.rating_rate_factors)
    assert fit.shock_probability == 0.0 and fit.ysm_acceleration == 0.0
    np.testing.assert_allclose(f[[7, 8]], 4.0, rtol=0.03)  # mostly pairs that stay in their point
    np.testing.assert_allclose(f[[5, 6]], 2.0, rtol=0.03)


def test_rating_groups_pool_thin_rating_points_downwards():
    r = np.array([8.5] * 40 + [7.5] * 40 + [6.5] * 10 + [5.5] * 25 + [2.0] * 3)
    assert rating_groups(r, 30) == [[8], [7], [6, 5, 4, 3, 2, 1, 0]]


@pytest.mark.skipif(not calibrate.DATA.is_file(), reason="shared Ontario histories not available")
def test_ontarios_placeholder_zeros_are_missing_and_the_continuous_model_drops_fair_and_poor_bridges_too_fast():
    # BCI 0.0 is MTO's placeholder for a missing value (91 -> 0.0 -> 85): read as missing, 77 two-year pairs
    # that began or ended on one go (9,055 -> 8,978), and no pair ends at rating 0.
    pairs = calibrate.ontario_pairs(calibrate.DATA)
    assert len(pairs.rating0) == 8978 and pairs.rating1.min() > 0
    from bridgefleet.calibration.fit import check_table

    table = check_table(pairs, {"default": FleetConfig()}, draws=16)
    observed = table["observed"]["band_drop"]
    np.testing.assert_allclose(observed, [0.172, 0.252, 0.189], atol=0.001)
    # The continuous model was fitted with the zeros kept (its sudden damage is their excess drop): its fair
    # and poor bridges drop 1.6 x and 1.8 x what Ontario's do (issue 77).
    assert (table["default"]["band_drop"][1:] > 1.5 * observed[1:]).all()


def test_calibrate_command_writes_a_fleet_model_that_loads_and_writes_nothing_on_a_bad_history(tmp_path, capsys):
    from bridgefleet.cli import main

    rows = ["bridge,year,rating"] + [f"B{b},{2000 + 2 * k},{8.9 - 0.1 * b - 0.3 * k:.2f}"
                                     for b in range(10) for k in range(6)]
    hist = _write(tmp_path, "\n".join(rows) + "\n")
    out = tmp_path / "model.yaml"
    assert main(["calibrate", str(hist), "--out", str(out)]) == 0
    cfg = FleetConfig.from_yaml(out)
    assert cfg.rating_rate_factors[8] == pytest.approx(0.15 / 0.04, rel=0.05)  # 0.3 points in 2 years
    bad = _write(tmp_path, "bridge,year,rating\nA,2000,7\nA,1999,6\n", "bad.csv")
    assert main(["calibrate", str(bad), "--out", str(tmp_path / "x.yaml")]) == 2
    assert not (tmp_path / "x.yaml").exists()
    assert "row 3: bridge 'A' year 1999 is out of order" in capsys.readouterr().err
    mapping = _write(tmp_path, "columns: {bridge: bridge, year: year, rating: rating}\n", "mapping.yaml")
    before = mapping.read_text()
    assert main(["calibrate", str(hist), "--mapping", str(mapping), "--out", str(mapping)]) == 2
    assert mapping.read_text() == before  # the mapping it reads is not replaced
    assert f"--out {mapping} is the mapping, which this command reads: give another file" in capsys.readouterr().err


def test_a_mapping_reads_its_missing_values_and_blank_ratings_as_no_inspection(tmp_path):
    mapping = _write(tmp_path, "scale: [[0, 0], [60, 5], [70, 7], [100, 9]]\nrange: [0, 100]\nmissing: [0]\n",
                     "bci.yaml")
    hist = _write(tmp_path, "bridge,year,rating\nA,2000,91\nA,2002,0.0\nA,2004,85\nB,2000,80\nB,2002,\nB,2004,76\n")
    pairs = read_history(hist, HistoryMapping.load(str(mapping)))
    # A: 91 -> (missing) -> 85 is one 4-year pair; B: 80 -> (blank) -> 76 likewise; no pair ends at rating 0.
    np.testing.assert_allclose(pairs.value0, [91, 80])
    np.testing.assert_allclose(pairs.years, [4, 4])
    np.testing.assert_allclose(pairs.rating1, [7 + 2 * 15 / 30, 7 + 2 * 6 / 30])
