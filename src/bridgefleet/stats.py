"""The one confidence interval every table prints: the half-width of the 95 % CI of a mean."""

from __future__ import annotations

import math

import numpy as np


def ci95(values: np.ndarray) -> float:
    """Half-width of the 95 % confidence interval of the mean of ``values`` (shape (N,), any real dtype), in
    their units: 1.96 s/√N with s the sample standard deviation (ddof 1; the normal approximation); 0.0 for
    N ≤ 1, where no spread is seen."""
    n = len(values)
    return 1.96 * float(np.std(values, ddof=1)) / math.sqrt(n) if n > 1 else 0.0
