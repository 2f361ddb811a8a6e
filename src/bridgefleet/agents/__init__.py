"""Q-networks for the urban (per-bridge, branching) and rural (strategy-level) agents."""

from bridgefleet.agents.networks import (
    BranchingQNetwork,
    NoisyLinear,
    RuralQNetwork,
    UrbanQNetwork,
    greedy_actions,
)

__all__ = ["BranchingQNetwork", "NoisyLinear", "RuralQNetwork", "UrbanQNetwork", "greedy_actions"]
