"""The 95 % interval of a mean (issue 79's probe: with --episodes 2 the normal approximation's 1.96 s/√N printed a
policy 'above the bound' by more than its interval; Student's t at 1 degree of freedom is 12.71)."""

import math

import numpy as np
import pytest

from bridgefleet.stats import ci95, t95


def test_ci95_is_students_t_half_width():
    # two values 0 and 2: s = √2, half-width = 12.7062 · √2 / √2 (tables: t(0.975, 1) = 12.7062)
    assert ci95(np.array([0.0, 2.0])) == pytest.approx(12.706205, rel=1e-6)
    # 16 fleets: t(0.975, 15) = 2.13145
    x = np.arange(16.0)
    assert ci95(x) == pytest.approx(2.1314495 * np.std(x, ddof=1) / 4, rel=1e-6)
    assert t95(10**6) == pytest.approx(1.959966, rel=1e-5)  # the normal approximation as N grows
    assert ci95(np.array([3.0])) == 0.0 and ci95(np.array([5.0, 5.0])) == 0.0


def test_t95_refuses_fewer_than_two_values():
    with pytest.raises(ValueError, match="needs 2 values or more, got 1"):
        t95(1)
    assert not math.isnan(t95(2))
