"""What a policy does to a fleet: evaluation on seeded fleets (returns, FHWA measures, money), a bridge × year
work plan, and budget scenarios with the certified least budget."""
