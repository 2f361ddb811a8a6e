"""Replay storage and n-step experience for DQN training.

Sum-tree and proportional prioritized replay follow Schaul et al., "Prioritized Experience
Replay" (ICLR 2016); n-step first-last transitions follow PTAN's ``ExperienceSourceFirstLast``.
"""

from bridgefleet.replay.buffers import PrioritizedReplayBuffer, ReplayBuffer
from bridgefleet.replay.nstep import ExperienceFirstLast, ExperienceSourceFirstLast, NStepAccumulator
from bridgefleet.replay.sumtree import SumTree

__all__ = [
    "ExperienceFirstLast",
    "ExperienceSourceFirstLast",
    "NStepAccumulator",
    "PrioritizedReplayBuffer",
    "ReplayBuffer",
    "SumTree",
]
