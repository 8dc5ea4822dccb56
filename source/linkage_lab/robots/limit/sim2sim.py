"""The Limit's robot side in sim-to-sim: its deploy module between the closed-chain model's motors and the policy.

Each control tick the motor encoders become 12 ``JointSample`` records by canonical id (wire angles: a knee
id carries its knee MOTOR's angle, speed and torque), the IMU and odometry an ``ImuSample``;
:class:`~linkage_lab.robots.limit.deploy.LimitDeployment` decodes them (``q_knee = θ_knee_motor − θ_hip``),
builds the observation, runs ``policy.onnx`` and encodes the 12 ``JointTarget`` records (``θ* = J q*``,
each motor's own gain ``K_m,ii``; with the bundle's ``leg_gains="coupled"`` the coupling folded into the targets from
the sample). Each record
becomes its motor's driver PD (pos, vel, kp, kd, max_tq), run by the sim at every physics step.

``drivers="coupled"`` replaces the drivers, for comparison, by ones the robot does not have: each leg's two motors
under one motor-space PD with the full ``K_m = J⁻ᵀ K_j J⁻¹`` (and ``D_m``) on every physics step's errors, the
targets unfolded. It measures what holding the cross terms over a tick costs
(docs/results/2026-12-06_held_coupling.md).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from linkage_lab.robots.limit.config import limit_config
from linkage_lab.robots.limit.deploy import DEPLOY_FILENAME, ImuSample, JointSample, JointTarget, LimitDeployment
from linkage_lab.robots.limit.estimator import limit_base_velocity_estimator
from linkage_lab.robots.limit.joints import JOINT_IDS, JOINT_NAMES
from linkage_lab.sim2sim.bundle import Bundle, BundleError
from linkage_lab.sim2sim.drive import MotorCommand
from linkage_lab.sim2sim.sensors import Sensors
from linkage_lab.sim2sim.velocity_source import VelocitySource, bundle_estimator


def wire_motor_names(chain: Any) -> tuple[str, ...]:
    """The motor each canonical id's wire record belongs to (id order): a linkage joint's paired motor
    (the knee id → the knee motor), a direct joint's own."""
    paired = {j: m for group in chain.linkages for j, m in zip(group.joints, group.motors, strict=True)}
    return tuple(paired.get(name, name) for name in JOINT_NAMES)


class LimitSim2SimIO:
    """The Limit's :class:`~linkage_lab.sim2sim.drive.RobotSide`: wire records through its deploy module.

    Args:
        bundle: The exported bundle (``deploy.json`` and ``policy.onnx``).
        chain: The Limit's closed-chain model.
        base_velocity: ``estimate`` (the robot's estimator: IMU + leg kinematics + contact) or ``truth`` (the
            simulator's base velocity, for comparison).
        drivers: ``per_motor`` (the robot's: each record's PD on its own motor, with the wire's leg gains) or
            ``coupled`` (a motor-space PD over each leg's two motors with the full gain matrices at every physics
            step, for comparison).
        leg_gains: The wire's leg gains (``coupled`` or ``diagonal``, see ``deploy_config.WIRE_DOC``) instead of the
            bundle's, for comparison; ``None``: the bundle's.
        estimator_rate: ``tick`` (the deploy runtime's: the estimator steps once per control tick) or ``sample``
            (it steps on every physics step's sensor sample, as an estimator beside the drivers would; the IMU then
            gives each step's specific force, not the tick's mean).

    Raises:
        BundleError: The bundle has no ``deploy.json``, or its wire carries joint angles (firmware conversion,
            not modelled here), or an unknown ``base_velocity`` or ``drivers``.
    """

    def __init__(
        self,
        bundle: Bundle,
        chain: Any,
        base_velocity: str = "estimate",
        drivers: str = "per_motor",
        leg_gains: str | None = None,
        estimator_rate: str = "tick",
    ):
        if drivers not in ("per_motor", "coupled"):
            raise BundleError(f"drivers must be 'per_motor' or 'coupled', got {drivers!r}")
        try:
            self.deployment = LimitDeployment(bundle.file(DEPLOY_FILENAME).parent)
            if drivers == "coupled":  # the targets unfolded: the gain matrices below apply the coupling
                leg_gains = "diagonal"
            if leg_gains is not None:
                config = dataclasses.replace(self.deployment.config, leg_gains=leg_gains)
                self.deployment = LimitDeployment(config, bundle.file(DEPLOY_FILENAME).parent / config.policy_file)
        except (KeyError, ValueError) as exc:
            raise BundleError(f"bundle {bundle.path}: {DEPLOY_FILENAME} cannot be used: {exc}") from exc
        self.drivers = drivers
        config = self.deployment.config
        if config.wire_angles != "motor":
            raise BundleError(
                f"bundle {bundle.path}: wire_angles={config.wire_angles!r} leaves the knee conversion to firmware, "
                "which sim2sim does not model; export with wire_angles='motor'"
            )
        self.control_period_s = config.control_period_s
        self.joint_names = JOINT_NAMES
        motors = list(chain.motor_names)
        #: The motor of each canonical id's wire record, id order, and its actuator index.
        self.wire_motors = wire_motor_names(chain)
        self.motor_index = np.array([motors.index(name) for name in self.wire_motors])
        self._sign = np.asarray(config.encoder_sign, dtype=float)
        self._offset = np.asarray(config.encoder_offset_rad, dtype=float)
        self._num_motors = len(motors)
        try:
            estimator = bundle_estimator(bundle, JOINT_NAMES, lambda: limit_base_velocity_estimator(limit_config()))
            self.velocity = VelocitySource(estimator, base_velocity, config.control_period_s, estimator_rate)
        except ValueError as exc:
            raise BundleError(str(exc)) from None

    def reset(self) -> None:
        """Forget the last action and start the velocity estimate at rest."""
        self.deployment.reset()
        self.velocity.reset()

    @property
    def estimator_rate(self) -> str:
        """How often the velocity estimator steps: ``tick`` or ``sample`` (the runner then gives the IMU per step)."""
        return self.velocity.rate

    def on_sample(self, sensors: Sensors) -> None:
        """One physics step's sensor sample: the estimator steps on it at ``estimator_rate="sample"``."""
        if self.velocity.rate == "sample":
            state = self.deployment.wire.decode(self.samples(sensors))
            self.velocity.sample(sensors, state.joint_pos, state.joint_vel, state.joint_torque)

    def samples(self, sensors: Sensors) -> list[JointSample]:
        """The 12 wire records of the motor encoders (through the encoder sign/offset table)."""
        index = self.motor_index
        pos = self._sign * sensors.motor_pos_rad[index] + self._offset
        vel = self._sign * sensors.motor_vel_rads[index]
        torque = self._sign * sensors.motor_torque_nm[index]
        return [JointSample(int(i), float(p), float(v), float(t)) for i, p, v, t in zip(JOINT_IDS, pos, vel, torque)]

    def imu(self, sensors: Sensors, samples: list[JointSample]) -> ImuSample:
        """The IMU (gyro, gravity from its orientation) and the base velocity estimated from it and the decoded
        joints, in the base frame."""
        state = self.deployment.wire.decode(samples)
        velocity = self.velocity(sensors, state.joint_pos, state.joint_vel, state.joint_torque)
        return ImuSample(base_lin_vel=velocity, ang_vel=sensors.gyro_b, projected_gravity=sensors.projected_gravity_b)

    def joint_estimate(self, sensors: Sensors) -> tuple[np.ndarray, np.ndarray]:
        """Joint angles and rates (canonical order) decoded from the wire records."""
        state = self.deployment.wire.decode(self.samples(sensors))
        return state.joint_pos, state.joint_vel

    def motor_command(self, targets: list[JointTarget]) -> MotorCommand:
        """The drivers' PD of 12 ``JointTarget`` records (wire angles → the model's motor angles)."""
        by_id = {t.id: t for t in targets}
        records = [by_id[i] for i in JOINT_IDS]
        fields = np.array([[t.pos, t.vel, t.kp, t.kd, t.max_tq] for t in records])
        command = np.zeros((5, self._num_motors))
        command[:, self.motor_index] = fields.T
        command[0, self.motor_index] = self._sign * (fields[:, 0] - self._offset)
        command[1, self.motor_index] = self._sign * fields[:, 1]
        kp, kd = command[2], command[3]
        if self.drivers == "coupled":
            kp, kd = (self._motor_matrix(gains) for gains in (self.deployment.config.kp, self.deployment.config.kd))
        return MotorCommand(position_rad=command[0], velocity_rads=command[1], kp=kp, kd=kd, max_torque_nm=command[4])

    def _motor_matrix(self, joint_gains: Any) -> np.ndarray:
        """``J⁻ᵀ diag(joint_gains) J⁻¹`` of the wire, in the model's motor order and directions."""
        matrix = np.zeros((self._num_motors, self._num_motors))
        signed = self._sign[:, None] * self.deployment.wire.motor_gains(joint_gains) * self._sign[None, :]
        matrix[np.ix_(self.motor_index, self.motor_index)] = signed
        return matrix

    def policy_command(self, sensors: Sensors, command: np.ndarray) -> MotorCommand:
        """One tick of :meth:`LimitDeployment.step` on the sensed records."""
        samples = self.samples(sensors)
        return self.motor_command(self.deployment.step(samples, self.imu(sensors, samples), command))

    def target_command(self, sensors: Sensors, joint_targets: np.ndarray) -> MotorCommand:
        """Serial joint targets (rad, canonical order) encoded as the policy's are (:meth:`WireMap.encode`)."""
        state = self.deployment.wire.decode(self.samples(sensors))
        zeros = np.zeros(len(JOINT_IDS))
        return self.motor_command(self.deployment.wire.encode(np.asarray(joint_targets, dtype=float), zeros, state))

    def policy_trace(self) -> tuple[np.ndarray | None, np.ndarray]:
        """The last policy tick's observation and raw action."""
        return self.deployment.last_observation, self.deployment.last_action

    def describe(self) -> dict[str, Any]:
        """The wire settings and what the observation reads."""
        config = self.deployment.config
        return {
            "code": "linkage_lab.robots.limit.deploy.LimitDeployment (JointSample/ImuSample -> JointTarget by id)",
            "wire_angles": config.wire_angles,
            "leg_gains": config.leg_gains,
            "wire_motors": dict(zip(map(str, JOINT_IDS), self.wire_motors, strict=True)),
            "observation": {t.name: _SOURCES.get(t.source, t.source) for t in config.observation},
            "drivers": (
                "per-motor PD on each JointTarget (pos, vel, kp, kd, max_tq) at every physics step"
                if self.drivers == "per_motor"
                else "coupled (not the robot's): each leg's motors under K_m, D_m on every physics step's errors"
            ),
            "base_velocity": self.velocity.report(),
        }


_SOURCES = {
    "base_lin_vel": "the base-velocity estimator (IMU + leg kinematics + contact); base_velocity=truth: the truth",
    "base_ang_vel": "IMU gyro",
    "projected_gravity": "IMU orientation",
    "velocity_commands": "the command",
    "joint_pos": "motor encoders decoded by the wire map (q_knee = knee motor - hip)",
    "joint_vel": "motor speeds decoded by the wire map",
    "actions": "the previous action",
    "gait_clock": "the policy's own tick count (its gait clock)",
}
