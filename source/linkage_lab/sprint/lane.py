"""The race's lane-keeping law, the one implementation the sprint task and sim-to-sim share.

The heading target points back at the lane's centre line: ``ψ* = −atan(y / L)``, ``y`` the torso's offset left of
the line, ``L`` the look-ahead (a pure-pursuit steering law, as an operator steering the robot would). A heading
controller then turns ``ψ* − ψ`` into a yaw-rate command.
"""

from __future__ import annotations

import math
from typing import Any


def lane_heading_target(offset_m: Any, lookahead_m: float) -> Any:
    """``ψ* = −atan(y / L)`` (rad) for an offset ``y`` (m): a float, or a torch tensor of them."""
    ratio = -offset_m / lookahead_m
    return ratio.atan() if hasattr(ratio, "atan") else math.atan(ratio)
