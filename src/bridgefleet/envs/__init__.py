"""Gymnasium, vector and PettingZoo environments over the fleet simulator."""
