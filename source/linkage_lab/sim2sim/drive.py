"""The motor side of sim-to-sim: what the robot-side code sends each control tick, and the drivers' PD.

Each control tick the robot-side code (a robot's ``sim2sim_io`` extra) turns what the robot senses into a
:class:`MotorCommand`, one entry per motor in actuator order. The runner holds it until the next tick and,
at every physics step, runs the drivers' PD on it as a motor driver would (:func:`motor_pd_torque`), then
the torque–speed line of :meth:`~linkage_lab.sim2sim.model.ClosedChainModel.apply_motor_torque`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from linkage_lab.sim2sim.sensors import Sensors


@dataclass(frozen=True)
class MotorCommand:
    """Per-motor targets and gains for one control period, actuator order.

    The drivers' torque, at every physics step:

        τ = clip(K_p (θ* − θ) + K_d (θ̇* − θ̇) + τ_ff + τ_host, ±τ_max)   (then the torque–speed line)

    with ``K_p``, ``K_d`` diagonal (a per-motor driver: one gain per motor) or full matrices (a driver
    that takes a coupled motor-space PD, e.g. the two motors of a linkage).

    Attributes:
        position_rad: Target angles ``θ*`` (rad).
        velocity_rads: Target speeds ``θ̇*`` (rad/s).
        kp: Stiffness (N·m/rad): ``(n,)`` per motor or ``(n, n)``.
        kd: Damping (N·m·s/rad): ``(n,)`` per motor or ``(n, n)``.
        max_torque_nm: Each driver's torque clamp ``τ_max`` (N·m).
        feedforward_nm: Constant torque added over the period (N·m); ``None``: 0.
        host: A host-side loop run at every physics step, ``(sensors) -> torque (n,)`` (N·m) added to the
            drivers' torque; ``None``: none. It sees only the sensors (encoders, IMU, odometry).
        notes: What the robot side did this tick (e.g. unreachable linkage poses), for the report.
    """

    position_rad: np.ndarray
    velocity_rads: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    max_torque_nm: np.ndarray
    feedforward_nm: np.ndarray | None = None
    host: Callable[[Sensors], np.ndarray] | None = None
    notes: dict[str, Any] = field(default_factory=dict)


def _gain_times(gain: np.ndarray, error: np.ndarray) -> np.ndarray:
    return gain @ error if gain.ndim == 2 else gain * error


def motor_pd_torque(command: MotorCommand, sensors: Sensors) -> np.ndarray:
    """The drivers' torque demand (N·m, actuator order) for ``command`` at the motor state of ``sensors``,
    before any limit (:func:`driver_clamp` and then the model's torque–speed line cut it)."""
    torque = _gain_times(np.asarray(command.kp, dtype=float), command.position_rad - sensors.motor_pos_rad)
    torque = torque + _gain_times(np.asarray(command.kd, dtype=float), command.velocity_rads - sensors.motor_vel_rads)
    if command.feedforward_nm is not None:
        torque = torque + command.feedforward_nm
    if command.host is not None:
        torque = torque + np.asarray(command.host(sensors), dtype=float)
    return torque


def driver_clamp(command: MotorCommand, torque_nm: np.ndarray) -> np.ndarray:
    """``torque_nm`` clipped to each driver's ``±max_torque_nm`` (N·m)."""
    return np.clip(torque_nm, -command.max_torque_nm, command.max_torque_nm)


class RobotSide(Protocol):
    """A bundle's robot-side code in the closed-chain simulation (what a robot's ``sim2sim_io`` extra builds).

    It sees only :class:`~linkage_lab.sim2sim.sensors.Sensors` and answers with :class:`MotorCommand`s,
    as the code on the robot would.

    Attributes:
        control_period_s: The bundle's control period (s).
        joint_names: The policy's joint order.
    """

    control_period_s: float
    joint_names: tuple[str, ...]

    def reset(self) -> None:
        """Start of an episode: forget the last action and any warm starts."""

    def joint_estimate(self, sensors: Sensors) -> tuple[np.ndarray, np.ndarray]:
        """Joint angles (rad) and rates (rad/s), policy order, from the motor encoders (the bundle's FK)."""

    def policy_command(self, sensors: Sensors, command: np.ndarray) -> MotorCommand:
        """One control tick of the bundle's policy for the velocity ``command`` ``(v_x, v_y, ω_z)``."""

    def target_command(self, sensors: Sensors, joint_targets: np.ndarray) -> MotorCommand:
        """Joint targets (rad, policy order) from another source (a scripted gait) through the same
        robot-side conversion as the policy's."""

    def describe(self) -> dict[str, Any]:
        """What the robot side does, in words and settings (for the report)."""
