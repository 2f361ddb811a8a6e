"""The fleet simulator: condition ratings, deterioration, actions and their costs, agencies and budgets, and the
heuristic policies an agency uses today (:mod:`bridgefleet.sim.heuristics`)."""
