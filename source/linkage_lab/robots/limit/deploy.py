"""The Limit on hardware: wire records ↔ policy observations and joint targets; numpy + onnxruntime only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from linkage_lab.deploy.gait_clock import CLOCK_FUNCTION, GaitClock
from linkage_lab.deploy.onnx_session import cpu_session
from linkage_lab.deploy.target_filter import TargetFilter
from linkage_lab.deploy.wire import coupling_shift
from linkage_lab.robots.limit.deploy_config import (
    DEPLOY_FILENAME,
    NUM_JOINTS,
    OBSERVATION_SIZES,
    WIRE_DOC,
    LimitDeployConfig,
    ObservationTerm,
    write_deploy_config,
)
from linkage_lab.robots.limit.joints import JOINT_IDS, JOINT_TABLE, LEGS, entry_by_id, joint_id

__all__ = [
    "DEPLOY_FILENAME",
    "OBSERVATION_SIZES",
    "WIRE_DOC",
    "DecodedState",
    "ImuSample",
    "JointSample",
    "JointTarget",
    "LimitDeployConfig",
    "LimitDeployment",
    "ObservationTerm",
    "WireMap",
    "write_deploy_config",
]


@dataclass(frozen=True)
class JointSample:
    """One telemetry record (docs/design/robots.md §1.4).

    Attributes:
        joint_id: Canonical id 1–12.
        pos_rad: Measured angle (rad): the motor's, for a knee id when ``wire_angles="motor"``.
        vel_rads: Measured angular velocity (rad/s).
        tq_nm: Measured torque (N·m).
        cur_a: Motor current (A).
        temp_c: Motor temperature (°C).
        flags: Driver status bits.
        fault_code: Driver fault code, 0 = none.
    """

    joint_id: int
    pos_rad: float
    vel_rads: float = 0.0
    tq_nm: float = 0.0
    cur_a: float = 0.0
    temp_c: float = 0.0
    flags: int = 0
    fault_code: int = 0


@dataclass(frozen=True)
class JointTarget:
    """One command record (docs/design/robots.md §1.4), in wire angles.

    Attributes:
        id: Canonical id 1–12.
        pos: Target angle (rad).
        vel: Target angular velocity (rad/s).
        kp: Stiffness (N·m/rad).
        kd: Damping (N·m·s/rad).
        max_tq: Torque clamp of this motor (N·m).
    """

    id: int
    pos: float
    vel: float
    kp: float
    kd: float
    max_tq: float


@dataclass(frozen=True, kw_only=True)
class ImuSample:
    """Base state from the IMU and the state estimator, all in the base frame (keyword-only).

    Attributes:
        base_lin_vel: Base linear velocity (m/s), 3 values; ``None`` when not estimated (a layout
            that needs it then raises).
        ang_vel: Base angular velocity (rad/s), 3 values.
        projected_gravity: Unit gravity direction in the base frame, 3 values ((0, 0, −1) level).
    """

    base_lin_vel: Sequence[float] | None = None
    ang_vel: Sequence[float]
    projected_gravity: Sequence[float]


@dataclass(frozen=True)
class DecodedState:
    """The 12 joints decoded from one set of samples, canonical id order.

    Attributes:
        joint_pos: Serial joint angles ``q^s`` (rad).
        joint_vel: Serial joint velocities (rad/s).
        joint_torque: Serial joint torques ``Jᵀ τ^p`` (N·m).
        motor_pos: Motor angles in the model's sign convention (rad) (= ``joint_pos`` when
            ``wire_angles="joint"``).
        motor_vel: Motor velocities (rad/s).
    """

    joint_pos: np.ndarray
    joint_vel: np.ndarray
    joint_torque: np.ndarray
    motor_pos: np.ndarray
    motor_vel: np.ndarray


class WireMap:
    """Joint space ↔ wire records for the 12 joints, linear: ``θ = T q``, ``wire = sign · θ + offset``.

    ``T`` is block-diagonal with each leg's ``J`` on (hip, knee) and 1 on the ankle when
    ``wire_angles="motor"``, the identity when ``"joint"``. See :data:`WIRE_DOC` for the decision.

    Args:
        config: The deploy config.
    """

    def __init__(self, config: LimitDeployConfig):
        self.config = config
        transform = np.eye(NUM_JOINTS)
        if config.wire_angles == "motor":
            jacobian = np.asarray(config.hip_knee_jacobian, dtype=np.float64)
            for leg in LEGS:
                pair = [joint_id(leg, "hip") - 1, joint_id(leg, "knee") - 1]
                transform[np.ix_(pair, pair)] = jacobian
        #: ``T``: motor angles from serial joint angles, ``(12, 12)``.
        self.transform = transform
        self.inverse = np.linalg.inv(transform)
        self.sign = np.asarray(config.encoder_sign, dtype=np.float64)
        self.offset = np.asarray(config.encoder_offset_rad, dtype=np.float64)

    def decode(self, samples: Sequence[JointSample]) -> DecodedState:
        """The joint state from 12 samples in any order.

        Raises:
            ValueError: An id is missing, repeated or unknown, or a value is not finite; the
                message names the id.
        """
        rows = _by_id(samples)
        raw = np.array([[s.pos_rad, s.vel_rads, s.tq_nm] for s in rows], dtype=np.float64)
        motor_pos = self.sign * (raw[:, 0] - self.offset)
        motor_vel = self.sign * raw[:, 1]
        motor_torque = self.sign * raw[:, 2]
        return DecodedState(
            joint_pos=self.inverse @ motor_pos,
            joint_vel=self.inverse @ motor_vel,
            joint_torque=self.transform.T @ motor_torque,
            motor_pos=motor_pos,
            motor_vel=motor_vel,
        )

    def motor_gains(self, joint_gain: Sequence[float]) -> np.ndarray:
        """``K_m = T⁻ᵀ diag(K_j) T⁻¹``, ``(12, 12)``, block-diagonal per leg."""
        return self.inverse.T @ (np.asarray(joint_gain, dtype=np.float64)[:, None] * self.inverse)

    def encode(
        self, joint_pos_target: np.ndarray, joint_vel_target: np.ndarray, state: DecodedState
    ) -> list[JointTarget]:
        """Wire records, ordered by id, for serial joint targets; ``state`` is the latest decoded sample.

        ``leg_gains="coupled"`` folds the off-diagonal motor gains into the targets from ``state``
        (exact torque at the sample instant); ``"diagonal"`` drops them (see :data:`WIRE_DOC`).
        """
        motor_pos = self.transform @ np.asarray(joint_pos_target, dtype=np.float64)
        motor_vel = self.transform @ np.asarray(joint_vel_target, dtype=np.float64)
        kp_matrix, kd_matrix = self.motor_gains(self.config.kp), self.motor_gains(self.config.kd)
        kp, kd = np.diag(kp_matrix).copy(), np.diag(kd_matrix).copy()
        if self.config.leg_gains == "coupled":
            motor_pos = motor_pos + coupling_shift(kp_matrix, motor_pos - state.motor_pos)
            motor_vel = motor_vel + coupling_shift(kd_matrix, motor_vel - state.motor_vel)
        wire_pos = self.sign * motor_pos + self.offset
        wire_vel = self.sign * motor_vel
        return [
            JointTarget(
                id=target_id,
                pos=float(wire_pos[i]),
                vel=float(wire_vel[i]),
                kp=float(kp[i]),
                kd=float(kd[i]),
                max_tq=float(self.config.max_torque_nm[i]),
            )
            for i, target_id in enumerate(JOINT_IDS)
        ]


def _by_id(samples: Sequence[JointSample]) -> list[JointSample]:
    """The samples sorted by id; every id 1–12 exactly once."""
    rows: dict[int, JointSample] = {}
    for sample in samples:
        try:
            entry = entry_by_id(sample.joint_id)
        except KeyError as error:
            raise ValueError(f"JointSample with {error.args[0]}") from None
        if entry.joint_id in rows:
            raise ValueError(f"duplicate JointSample for joint id {entry.joint_id} ({entry.name})")
        values = (sample.pos_rad, sample.vel_rads, sample.tq_nm)
        if not np.isfinite(np.asarray(values, dtype=np.float64)).all():
            raise ValueError(f"non-finite JointSample for joint id {entry.joint_id} ({entry.name}): {values}")
        rows[entry.joint_id] = sample
    missing = [f"{e.joint_id} ({e.name})" for e in JOINT_TABLE if e.joint_id not in rows]
    if missing:
        raise ValueError(f"missing JointSample for joint id(s) {', '.join(missing)}")
    return [rows[joint_id] for joint_id in JOINT_IDS]


class LimitDeployment:
    """The policy on the robot: samples + IMU + command → observation → ONNX policy → 12 targets.

    Each tick: decode the samples (any order) into serial joint states, build the observation in
    the config's layout, run the policy (input ``obs`` ``[1, n]``, output ``actions`` ``[1, 12]``),
    form ``q* = action_offset + action_scale · a`` (velocity target 0, as Isaac Lab's joint
    position action), smooth it with the config's target filter (as in training), and encode it
    in wire angles with the motor gains.

    Args:
        config: The deploy config, or the path of ``deploy.json`` (or its folder).
        onnx_path: The policy file; ``None`` = ``config.policy_file`` next to ``deploy.json``
            (only when ``config`` is a path).
    """

    def __init__(self, config: LimitDeployConfig | str | Path, onnx_path: str | Path | None = None):
        if not isinstance(config, LimitDeployConfig):
            folder = Path(config) if Path(config).is_dir() else Path(config).parent
            config = LimitDeployConfig.load(config)
            onnx_path = folder / config.policy_file if onnx_path is None else onnx_path
        if onnx_path is None:
            raise ValueError("LimitDeployment needs onnx_path when given a config object")

        self.config = config
        self.wire = WireMap(config)
        self.session = cpu_session(onnx_path)
        inputs = {i.name: i.shape for i in self.session.get_inputs()}
        outputs = {o.name: o.shape for o in self.session.get_outputs()}
        if "obs" not in inputs or "actions" not in outputs:
            raise ValueError(f"policy {onnx_path} needs input 'obs' and output 'actions'; has {inputs}, {outputs}")
        widths = {
            "obs": (inputs["obs"][-1], config.observation_size),
            "actions": (outputs["actions"][-1], NUM_JOINTS),
        }
        for what, (width, expected) in widths.items():
            # A symbolic width (a string) is checked when the policy runs.
            if isinstance(width, int) and width != expected:
                raise ValueError(f"policy {onnx_path}: {what} has width {width}, the config expects {expected}")
        self._default = np.asarray(config.default_joint_pos, dtype=np.float64)
        self._scale = np.asarray(config.action_scale, dtype=np.float64)
        self._offset = np.asarray(config.action_offset, dtype=np.float64)
        clip = config.target_clip_rad
        self._target_clip = None if clip is None else np.asarray(clip, dtype=np.float64)
        self.target_filter = TargetFilter(config.target_filter_alpha)
        self.last_action = np.zeros(NUM_JOINTS, dtype=np.float32)
        #: The action before :attr:`last_action` (the ``previous_action`` term).
        self.previous_action = np.zeros(NUM_JOINTS, dtype=np.float32)
        #: The observation of the last :meth:`step` (``None`` before the first).
        self.last_observation: np.ndarray | None = None
        clocks = [t.frequency_hz for t in config.observation if t.source == CLOCK_FUNCTION]
        #: The gait clock of a clock-trained policy (advanced by :meth:`step`), else ``None``.
        self.clock = GaitClock(config.control_period_s, clocks[0]) if clocks else None

    def reset(self) -> None:
        """Forget the last two actions and the filtered target, the gait clock back to 0 (start of an episode)."""
        self.target_filter.reset()
        if self.clock is not None:
            self.clock.reset()
        self.last_action = np.zeros(NUM_JOINTS, dtype=np.float32)
        self.previous_action = np.zeros(NUM_JOINTS, dtype=np.float32)
        self.last_observation = None

    def observation(
        self,
        samples: Sequence[JointSample],
        imu: ImuSample,
        command: Sequence[float],
        last_action: Sequence[float] | None = None,
    ) -> np.ndarray:
        """The policy observation, float32 ``(n,)``, in the config's layout.

        Args:
            samples: The 12 joint samples, any order.
            imu: Base state (base frame).
            command: ``(v_x, v_y, ω_z)`` (m/s, m/s, rad/s).
            last_action: The previous raw action; ``None`` = the one :meth:`step` stored.
        """
        return self._observation(self.wire.decode(samples), imu, command, last_action)

    def _observation(
        self,
        state: DecodedState,
        imu: ImuSample,
        command: Sequence[float],
        last_action: Sequence[float] | None,
    ) -> np.ndarray:
        action = self.last_action if last_action is None else last_action
        sources = {
            "base_lin_vel": imu.base_lin_vel,
            "base_ang_vel": imu.ang_vel,
            "projected_gravity": imu.projected_gravity,
            "velocity_commands": command,
            "joint_pos": state.joint_pos - self._default,
            "joint_vel": state.joint_vel,
            "actions": action,
            "previous_action": self.previous_action,
            CLOCK_FUNCTION: None if self.clock is None else self.clock.observation(),
        }
        parts = []
        for term in self.config.observation:
            value = sources[term.source]
            if value is None:
                raise ValueError(f"observation term {term.name!r} needs ImuSample.base_lin_vel, which is None")
            value = np.asarray(value, dtype=np.float64).reshape(-1)
            if value.size != term.size:
                raise ValueError(f"observation term {term.name!r}: got {value.size} values, expected {term.size}")
            value = value * np.asarray(term.scale, dtype=np.float64)
            if term.clip is not None:
                value = np.clip(value, *term.clip)
            parts.append(value)
        return np.concatenate(parts).astype(np.float32)

    def act(self, observation: np.ndarray) -> np.ndarray:
        """The policy's raw action ``(12,)`` (float32), clipped if the config says so."""
        obs = np.asarray(observation, dtype=np.float32).reshape(1, -1)
        action = self.session.run(["actions"], {"obs": obs})[0].reshape(-1).astype(np.float32)
        if self.config.action_clip is not None:
            action = np.clip(action, -self.config.action_clip, self.config.action_clip)
        return action

    def joint_targets(self, action: Sequence[float]) -> np.ndarray:
        """Serial joint targets ``q* = action_offset + action_scale · a`` (rad), clipped to the config's target range
        where it has one."""
        target = self._offset + self._scale * np.asarray(action, dtype=np.float64)
        if self._target_clip is not None:
            target = np.clip(target, self._target_clip[:, 0], self._target_clip[:, 1])
        return target

    def step(self, samples: Sequence[JointSample], imu: ImuSample, command: Sequence[float]) -> list[JointTarget]:
        """One control tick: the 12 wire targets ordered by id; stores the action for the next observation."""
        state = self.wire.decode(samples)
        self.last_observation = self._observation(state, imu, command, None)
        if self.clock is not None:
            self.clock.advance()
        action = self.act(self.last_observation)
        self.previous_action, self.last_action = self.last_action, action
        target = self.target_filter(self.joint_targets(action))
        return self.wire.encode(target, np.zeros(NUM_JOINTS), state)
