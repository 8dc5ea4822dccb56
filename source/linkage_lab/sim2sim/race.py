"""The sprint on the closed chain: the race's command and heading hold as the sprint task sets them in Isaac Lab,
and the metrics of a race stopped before its referee ended it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from linkage_lab.sim2sim.bundle import BundleError
from linkage_lab.sim2sim.drive import RobotSide
from linkage_lab.sim2sim.sensors import Sensors
from linkage_lab.sprint.lane import lane_heading_target

#: Heading hold of the sprint (Isaac Lab's heading command): ω_z = clip(K · wrap(ψ* − ψ), ±limit), with
#: ψ* = 0 (the lane's direction) or, with a look-ahead L, ψ* = −atan(y / L) towards the lane's centre line
#: (the sprint task's ``LaneKeepingVelocityCommand``).
SPRINT_HEADING = "heading hold to the lane's direction"
SPRINT_LANE = "lane keeping: heading towards the lane's centre line lane_lookahead_m ahead"


def sprint_setup(
    io: RobotSide, command: Sequence[float] | None, scripted: bool
) -> tuple[np.ndarray, dict[str, float] | None]:
    """The race's command and heading hold: the robot side's ``sprint_command(scripted)`` if it has one
    (the command of the sprint task that policy races on in Isaac Lab), else 0.5 m/s; an explicit
    ``command`` sets the forward speed.

    Raises:
        BundleError: The race steps its gait prior at another cadence than the bundle's ``gait.onnx``
            (and no ``command`` says to race this bundle at a speed of its own).
    """
    race = dict(getattr(io, "sprint_command", lambda scripted: {})(scripted))
    cadence, own = race.get("gait_frequency_hz"), getattr(io, "gait_frequency_hz", None)
    if command is None and not scripted and cadence is not None and own is not None and abs(cadence - own) > 1e-9:
        raise BundleError(
            f"the race steps the gait prior at {cadence:g} Hz, this bundle's gait.onnx at {own:g} Hz: export the "
            f"race's bundle with the override env.actions.joint_pos.frequency_hz={cadence:g}, or race this one "
            "at a speed of its own with --command VX"
        )
    forward = float(command[0]) if command is not None else float(race.get("forward_mps", 0.5))
    hold = None
    if race.get("heading_gain_per_s"):
        hold = {"gain_per_s": float(race["heading_gain_per_s"]), "limit_rads": float(race["yaw_rate_limit_rads"])}
        if race.get("lane_lookahead_m"):
            hold["lane_lookahead_m"] = float(race["lane_lookahead_m"])
    return np.array([forward, 0.0, 0.0]), hold


def heading_hold(command: np.ndarray, sensors: Sensors, hold: dict[str, float] | None) -> np.ndarray:
    """``command`` with its yaw rate from the race's heading hold (``None``: unchanged)."""
    if hold is None:
        return command
    yaw = float(sensors.roll_pitch_yaw_rad[2])
    target = 0.0
    if "lane_lookahead_m" in hold:
        target = lane_heading_target(float(sensors.base_pos_w[1]) - hold["start_y_m"], hold["lane_lookahead_m"])
    error = math.atan2(math.sin(target - yaw), math.cos(target - yaw))
    return np.array(
        [command[0], command[1], float(np.clip(hold["gain_per_s"] * error, -hold["limit_rads"], hold["limit_rads"]))]
    )


def race_as_it_stands(tracker: Any, reason: str) -> dict[str, Any]:
    """The sprint's metrics (docs/design/gait.md §4) of a race stopped before the referee ended it, for ``reason``."""
    distance, duration = float(tracker.distance_m[0]), float(tracker.duration_s[0])
    return {
        "success": False,
        "time": None,
        "distance_m": distance,
        "average_speed_mps": distance / duration if duration > 0.0 else 0.0,
        "max_lateral_offset_m": float(tracker.max_lateral_offset_m[0]),
        "fell": reason == "fell",
        "ended_reason": reason,
        "duration_s": duration,
    }
