"""Sim-to-sim: the robots with their linkages closed, as MuJoCo models (the second simulator)."""
