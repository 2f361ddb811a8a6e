"""The agents: Q-networks, the one DQN learner that trains them all, the per-bridge agent (one network for every
bridge, budgets split by a knapsack) and the plan's urban (branching) and rural (strategy) agents."""

from bridgefleet.agents.networks import (
    BranchingQNetwork,
    NoisyLinear,
    RuralQNetwork,
    UrbanQNetwork,
    greedy_actions,
)

__all__ = ["BranchingQNetwork", "NoisyLinear", "RuralQNetwork", "UrbanQNetwork", "greedy_actions"]
