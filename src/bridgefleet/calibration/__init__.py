"""Deterioration fitted to inspection histories: reading histories, the maximum-likelihood fit, its checks."""
