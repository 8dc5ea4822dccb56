"""Marvin's race commands (gait.md §4), torch-free: the sprint tasks and the sim-to-sim robot side share them."""

from __future__ import annotations

#: Forward speed command a velocity policy races with (m/s).
RACE_COMMAND_MPS = 0.5
#: Yaw-rate command per radian of heading error in the residual race (1/s): 0.2 rad/s, the top of the
#: residual task's yaw-rate range, at 0.4 rad (23°) off the lane's direction.
HEADING_HOLD_GAIN_PER_S = 0.5
