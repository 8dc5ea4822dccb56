"""A robot's scripted gait as the source of joint targets in sim-to-sim, reading only the robot's sensors.

The same gait objects as :class:`~linkage_lab.gait.policy.ScriptedPolicy` in Isaac Lab, fed the same
readings: the IMU's orientation and pitch rate, odometry (base position and heading-frame velocity) and
its own clock. Its joint targets then go through the bundle's robot-side conversion
(:meth:`~linkage_lab.sim2sim.drive.RobotSide.target_command`), like a policy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from linkage_lab.gait.biped import BipedGait, TorsoState
from linkage_lab.gait.policy import describe, gait_targets
from linkage_lab.robots.registry import get_robot
from linkage_lab.sim2sim.sensors import Sensors

#: Time the robot holds its crouch before stepping (s), as ScriptedPolicy's default.
START_DELAY_S = 0.5


def scripted_gait(robot: str, sprint: bool, joint_names: tuple[str, ...]) -> Any:
    """The robot's registered gait: ``sprint_gait`` for the sprint, else ``scripted_gait``.

    Raises:
        MissingCapability: The robot has no such gait.
    """

    spec = get_robot(robot)
    return spec.require("sprint_gait")() if sprint else spec.require("scripted_gait")(joint_names)


class ScriptedTargets:
    """Joint targets (rad, policy order) of a scripted gait from the sensors, one control tick at a time.

    Args:
        gait: A :class:`~linkage_lab.gait.biped.BipedGait` (reads the torso) or a trot (reads the
            forward command).
        joint_names: The policy's joint order.
        control_period_s: The control period (s): the gait's clock advances by it per tick.
        start_delay_s: Time the robot holds its crouch before stepping (s).
    """

    def __init__(
        self, gait: Any, joint_names: tuple[str, ...], control_period_s: float, start_delay_s: float = START_DELAY_S
    ):
        missing = sorted(set(joint_names) - set(gait.joint_names))
        if missing:
            raise ValueError(f"the scripted gait has no targets for joints {missing}")
        self.gait = gait
        self.joint_names = tuple(joint_names)
        self.control_period_s = control_period_s
        self.start_delay_s = start_delay_s
        self.reset()

    def reset(self) -> None:
        """Clock back to 0; the lane is taken at the next tick."""
        self.time_s = 0.0
        self.lane_y_m: float | None = None

    def describe(self) -> dict[str, Any]:
        """The gait's parameters (as the sprint and eval report them)."""
        return {"type": "scripted", **describe(self.gait), "start_delay_s": self.start_delay_s}

    def _torso(self, sensors: Sensors) -> TorsoState:
        roll, pitch, yaw = sensors.roll_pitch_yaw_rad
        forward, lateral = sensors.heading_velocity_mps
        if self.lane_y_m is None:
            self.lane_y_m = float(sensors.base_pos_w[1])
        values = (roll, pitch, yaw, sensors.gyro_b[1], *sensors.base_pos_w[:2], forward, lateral)
        return TorsoState(*(torch.tensor([float(v)], dtype=torch.float64) for v in values))

    def __call__(self, sensors: Sensors, command: np.ndarray) -> np.ndarray:
        """This tick's targets for the velocity ``command`` ``(v_x, v_y, ω_z)``; advances the clock."""
        torso = self._torso(sensors) if isinstance(self.gait, BipedGait) else None
        by_name = gait_targets(self.gait, self.time_s, self.start_delay_s, torso, self.lane_y_m, float(command[0]))
        targets = {name: float(torch.as_tensor(value).reshape(-1)[0]) for name, value in by_name.items()}
        self.time_s += self.control_period_s
        return np.array([targets[name] for name in self.joint_names])
