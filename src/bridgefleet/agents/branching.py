"""The plan's two agents: the urban action-branching Q-network (n_urban bridges × 5 actions) and the rural
strategy Q-network (1 × 8 fleet-level strategies), each a :class:`~bridgefleet.agents.learner.DQNLearner`, and
the pair as a greedy policy."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from bridgefleet.agents.learner import DQNLearner
from bridgefleet.agents.networks import RuralQNetwork, UrbanQNetwork
from bridgefleet.config.training import TrainConfig
from bridgefleet.sim.simulator import RURAL_OBS_DIM, FleetSimulator, urban_obs_dim


def build_learners(cfg: TrainConfig, n_urban: int, amp: bool | None = None) -> tuple[DQNLearner, DQNLearner]:
    """The urban (branching, n_urban × 5) and rural (1 × 8) learners of a run (``amp`` as resolved), seeded by
    ``cfg.seed``."""
    torch.manual_seed(cfg.seed)
    urban = DQNLearner(lambda: UrbanQNetwork(urban_obs_dim(n_urban), n_urban, hidden=cfg.urban_hidden,
                                             dueling=cfg.dueling, noisy=cfg.noisy),
                       cfg.learner_config(cfg.urban_hidden, amp))
    rural = DQNLearner(lambda: RuralQNetwork(RURAL_OBS_DIM, 8, hidden=cfg.rural_hidden, dueling=cfg.dueling,
                                             noisy=cfg.noisy),
                       cfg.learner_config(cfg.rural_hidden, amp))
    return urban, rural


def agent_policy(urban: DQNLearner, rural: DQNLearner) -> Callable:
    """The trained agents as a policy for :func:`bridgefleet.evaluation.evaluate.evaluate_policy` (greedy):
    urban actions int64 (E, n_urban), rural strategies int64 (E,)."""

    def policy(sim: FleetSimulator, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        u, r = sim.observe()
        return urban.greedy(u), rural.greedy(r)[:, 0]

    return policy
