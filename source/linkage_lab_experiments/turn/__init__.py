"""Turning studies: how each robot turns under its scripted gait.

Run one with ``python -m linkage_lab_experiments.turn.<robot>``.
"""
