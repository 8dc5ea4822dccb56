"""Marvin's race commands (docs/design/gait.md §4), torch-free.

The sprint tasks and the sim-to-sim robot side share them.
"""

from __future__ import annotations

#: Forward speed command a velocity policy races with (m/s).
RACE_COMMAND_MPS = 0.5
#: Forward speed command of the residual race (m/s), with the gait prior stepping at
#: :data:`RESIDUAL_RACE_GAIT_FREQUENCY_HZ`. The prior's steps keep their length, so at that cadence 0.8 m/s asks
#: for the stride scale 0.75, inside the 0-0.8 the policy trained on at the gait's own 0.88 Hz (0.8 m/s at
#: 0.88 Hz would ask for more than the top stride and fell in 2 of 8 Isaac Lab episodes). The policy's speed
#: command is above its training range (0-0.6 m/s); it was measured, not assumed, to follow it
#: (docs/results/policy_histories.md, "Marvin").
RESIDUAL_RACE_COMMAND_MPS = 0.8
#: The residual race's gait cadence (Hz; ``ResidualGaitActionCfg.frequency_hz``), against the gait's 0.88 Hz.
RESIDUAL_RACE_GAIT_FREQUENCY_HZ = 1.2
#: Yaw-rate command per radian of heading error in the residual race (1/s): 0.2 rad/s, the top of the
#: residual task's yaw-rate range, at 0.4 rad (23°) off the heading target.
HEADING_HOLD_GAIN_PER_S = 0.5
#: Lane keeping of the residual race (m): the heading target points at the lane's centre line this far
#: ahead, ``-atan(y / L)`` for a torso ``y`` left of the centre. A heading hold on the lane's direction
#: alone lets a policy that follows yaw commands loosely drift out of the 1 m lane without ever turning
#: back (it left at 4.4 m). 0.5 m turns a 0.1 m offset into an 11° heading target, 0.1 rad/s of command;
#: the shipped policy's race: 1 m kept it within 0.34 m of the centre, 0.5 m within 0.20 m.
LANE_LOOKAHEAD_M = 0.5
