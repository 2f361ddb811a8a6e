"""Which seeds draw which fleets, so that nothing published was tuned on the fleets it is measured on.

A seed draws one fleet (a synthetic fleet model's bridges and their deterioration noise; an inventory's noise).

- **Training fleets**: a run with ``seed`` s, ``num_envs`` E meets fleets s + 7919·k + i, k = 0, E, 2E, … (the
  episodes done before each vector episode), i < E (:func:`training_seeds_hit`).
- **Validation fleets**, from :data:`VALIDATION_SEED`: a training run's evaluations (and the best model it
  keeps), every tuning of a preset or a setting.
- **Test fleets**, from :data:`TEST_SEED`: ``evaluate``, ``bound``, ``report``, ``plan`` and ``scenarios`` by
  default and the published tables; nothing is tuned on them, and no training run may meet one or evaluate on one.
- The **development fleets** from :data:`DEVELOPMENT_SEED` were the evaluation fleets until December 2026; the
  presets of then were chosen on them (docs/decisions.md), so they are not a test set.
"""

from __future__ import annotations

VALIDATION_SEED = 2_000_000
"""First seed of the validation fleets."""
TEST_SEED = 1_000_000_000
"""First seed of the test fleets (far above any training run's fleets: it takes 126,000 episodes from seed 0
to reach them)."""
TEST_FLEETS = 1_000_000
"""Seeds TEST_SEED … TEST_SEED + TEST_FLEETS − 1 are the test fleets."""
DEVELOPMENT_SEED = 1_000_000
"""First seed of the old evaluation fleets, which the presets up to December 2026 were chosen on."""
PLAN_SAMPLES = 32
"""Deterioration samples a plan's means are over by default (seeds ``--seed`` … ``--seed`` + 31 of its fleet), in
plan.csv and in the report's plan alike, so that the same bridge and year reads the same figure in both (issue 80)."""
TRAINING_STRIDE = 7919
"""Seeds between one vector episode's first fleet and the next's, per episode done (a prime)."""


def training_seeds_hit(seed: int, num_envs: int, episodes: int, lo: int, hi: int) -> int | None:
    """The first training-fleet seed of a run (``seed``, ``num_envs``, ``episodes`` in total) in [lo, hi), or None.

    The run's fleets are seed + 7919·k + i for k = 0, E, …, < episodes (rounded up to a multiple of E) and i < E.
    """
    e = num_envs
    period = TRAINING_STRIDE * e  # seeds between the first fleets of two vector episodes
    n_vec = -(-episodes // e)
    m_lo = max(0, -(-(lo - seed - e + 1) // period))  # vector episode m's fleets: seed + m·period + [0, E)
    m_hi = min(n_vec - 1, (hi - 1 - seed) // period)
    if m_lo > m_hi:
        return None
    return max(lo, seed + m_lo * period)
