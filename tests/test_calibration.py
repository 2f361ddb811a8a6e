"""benchmarks/calibrate_deterioration.py: the BCI → rating map and the pairs it reads from Ontario's histories."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("calibrate", ROOT / "benchmarks" / "calibrate_deterioration.py")
calibrate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(calibrate)


def test_bci_bands_coincide_with_fhwa_bands():
    rating = calibrate.bci_to_rating(np.array([100.0, 85.0, 70.0, 65.0, 60.0, 30.0, 0.0]))
    np.testing.assert_allclose(rating, [9.0, 8.0, 7.0, 6.0, 5.0, 2.5, 0.0])
    assert calibrate.band(rating).tolist() == [0, 0, 0, 1, 1, 2, 2]


def test_pairs_skip_work_and_gaps(tmp_path):
    head = ",,LOCATION,,,,,,,,,,," + "," * 14 + "\n"
    cols = ["ID", "STRUCTURE", "HWY", "LAT", "LON", "YEAR BUILT", "MAJOR", "MINOR", "SPANS", "DETAILS", "LEN",
            "INSP", "BCI"] + [str(y) for y in range(2013, 1999, -1)]
    # 2000: 80, 2002: 78, 2004: 90 (work: a rise), 2006: 88, 2009: 85 (three years: not a pair)
    bci = {2000: "80", 2002: "78", 2004: "90", 2006: "88", 2009: "85"}
    row = ["1", "s", "h", "", "", "1990", "", "", "", "", "", "", ""] + [bci.get(y, "") for y in range(2013, 1999, -1)]
    p = tmp_path / "b.csv"
    p.write_text(head + ",".join(cols) + "\n" + ",".join(row) + "\n")
    pairs = calibrate.read_pairs(p)
    assert pairs["bci0"].tolist() == [80.0, 90.0] and pairs["bci1"].tolist() == [78.0, 88.0]
    assert pairs["ysm"].tolist() == [10.0, 14.0]  # years since construction (1990), no rehabilitation recorded


@pytest.mark.skipif(not calibrate.DATA.is_file(), reason="shared Ontario histories not available")
def test_the_ontario_histories_give_thousands_of_do_nothing_pairs():
    pairs = calibrate.read_pairs(calibrate.DATA)
    assert len(pairs["bci0"]) == 9055 and (pairs["bci1"] <= pairs["bci0"] + 1.0).all()
