"""The yardstick: single-bridge dynamic programmes, the Lagrangian upper bound (grid and certified), the
``lagrangian`` planner, the FHWA poor-deck-area rule and the least budget that can meet it."""
