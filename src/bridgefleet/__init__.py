"""bridgefleet."""
