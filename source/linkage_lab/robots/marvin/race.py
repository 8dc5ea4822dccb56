"""Marvin's race commands (gait.md §4), torch-free: the sprint tasks and the sim-to-sim robot side share them."""

from __future__ import annotations

#: Forward speed command a velocity policy races with (m/s).
RACE_COMMAND_MPS = 0.5
#: Forward speed command of the residual race (m/s): the speed of the residual task's acceptance at which the
#: shipped policy steers its lane. At 0.5 m/s it turns at +0.114 / -0.080 rad/s for +-0.2 (0.4 m/s: +0.192 /
#: -0.159) and finished 4 of 8 races (22.8-23.4 s; the other four left the lane at 3.4-7.5 m); at 0.4 m/s it
#: finished 4 of 4 (27.7-28.4 s, at most 0.11 m off the centre). The policy shipped before finished 5 of 5 at
#: 0.5 m/s and 3 of 4 at 0.6 (README, "Marvin").
RESIDUAL_RACE_COMMAND_MPS = 0.4
#: Yaw-rate command per radian of heading error in the residual race (1/s): 0.2 rad/s, the top of the
#: residual task's yaw-rate range, at 0.4 rad (23°) off the heading target.
HEADING_HOLD_GAIN_PER_S = 0.5
#: Lane keeping of the residual race (m): the heading target points at the lane's centre line this far
#: ahead, ``-atan(y / L)`` for a torso ``y`` left of the centre. A heading hold on the lane's direction
#: alone lets a policy that follows yaw commands loosely drift out of the 1 m lane without ever turning
#: back (it left at 4.4 m). 0.5 m turns a 0.1 m offset into an 11° heading target, 0.1 rad/s of command;
#: the shipped policy's race: 1 m kept it within 0.34 m of the centre, 0.5 m within 0.20 m.
LANE_LOOKAHEAD_M = 0.5
