"""The deploy runtime's decisions, free of any transport: safety states, the soft start, the checks and the clamps.

States, in order: ``wait`` (no target sent yet) → ``soft_start`` (from the measured pose to the bundle's default
pose along a smooth ramp over :attr:`SafetyCfg.soft_start_s`, the gains rising from
:attr:`SafetyCfg.soft_start_gain` of the bundle's to all of them) → ``policy`` → ``damping`` (kp 0, each motor's
own kd, target at its measured angle: the robot sinks slowly instead of falling limp or fighting). ``damping`` is
final. What sends the runtime there (each with its reason): a sample
:attr:`SafetyCfg.stale_periods` control periods old or one that cannot be decoded (a non-finite value, an unknown or
missing id), a non-finite IMU reading, observation or action, a joint past its range by
:attr:`SafetyCfg.joint_margin_rad`, an e-stop, Ctrl-C, repeated deadline misses (the loop reports those).

Whatever the state, no record leaves with a target outside its motor's range, a clamp above its motor's peak
torque, a negative gain or a non-finite number (:meth:`Controller.finish`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from linkage_lab.deploy.interface import RobotInterface
from linkage_lab.deploy.wire import records_from_command
from linkage_lab.sim2sim.sensors import Sensors

WAIT, SOFT_START, POLICY, DAMPING = "wait", "soft_start", "policy", "damping"
STATES = (WAIT, SOFT_START, POLICY, DAMPING)


@dataclass(frozen=True)
class SafetyCfg:
    """The runtime's safety settings.

    Attributes:
        stale_periods: A sample older than this many control periods is stale.
        soft_start_s: Duration of the ramp to the default pose (s; at least 2).
        soft_start_gain: Share of the bundle's gains at the start of the ramp.
        gain_rise_s: Time the gains take to rise from ``soft_start_gain`` to the bundle's (s): short enough that
            a humanoid does not sink under its weight on the reduced gains (Marvin at 30 % sinks and falls
            within 1.5 s), long enough that a far start pose does not jump.
        joint_margin_rad: How far past its range a joint may read before the runtime stops (rad).
        max_deadline_misses: Consecutive late ticks that stop the runtime.
    """

    stale_periods: float = 3.0
    soft_start_s: float = 2.0
    soft_start_gain: float = 0.3
    gain_rise_s: float = 0.5
    joint_margin_rad: float = 0.1
    max_deadline_misses: int = 5

    def __post_init__(self):
        if self.soft_start_s < 2.0:
            raise ValueError(f"soft_start_s must be at least 2 s, got {self.soft_start_s}")
        if not 0.0 < self.soft_start_gain <= 1.0:
            raise ValueError(f"soft_start_gain must lie in (0, 1], got {self.soft_start_gain}")
        if not 0.0 < self.gain_rise_s <= self.soft_start_s:
            raise ValueError(f"gain_rise_s must lie in (0, soft_start_s], got {self.gain_rise_s}")
        if self.stale_periods <= 0 or self.max_deadline_misses < 1 or self.joint_margin_rad < 0:
            raise ValueError("stale_periods must be positive, max_deadline_misses at least 1, joint_margin_rad >= 0")


@dataclass
class Tick:
    """What one control tick decided.

    Attributes:
        state: The state after the tick.
        records: Per-motor target records ``(n, 5)`` (pos, vel, kp, kd, max_tq), actuator order; ``None``: send
            nothing (``wait``).
        reason: Why the state changed this tick (``None``: it did not).
        observation: The policy's observation (``policy`` ticks).
        action: The policy's raw action (``policy`` ticks).
        policy_s: Time the robot-side code took (observation, ONNX, conversion), s.
        joint_pos: The joint angles decoded from the sample (rad, policy order).
        clamped: Entries the final guard changed (targets out of range, clamps above the peak).
    """

    state: str
    records: np.ndarray | None
    reason: str | None = None
    observation: np.ndarray | None = None
    action: np.ndarray | None = None
    policy_s: float = 0.0
    joint_pos: np.ndarray | None = None
    clamped: int = 0
    notes: dict[str, Any] = field(default_factory=dict)


def smoothstep(x: float) -> float:
    """``3x² − 2x³`` on ``[0, 1]``: a ramp that starts and ends at rest."""
    x = min(max(x, 0.0), 1.0)
    return x * x * (3.0 - 2.0 * x)


class Controller:
    """The state machine of one deploy run.

    Args:
        io: The bundle's robot-side code (a :class:`~linkage_lab.sim2sim.drive.RobotSide` with ``policy_trace``).
        interface: The robot.
        cfg: The safety settings.
    """

    def __init__(self, io: Any, interface: RobotInterface, cfg: SafetyCfg = SafetyCfg()):
        self.io = io
        self.interface = interface
        self.cfg = cfg
        self.state = WAIT
        self.reason: str | None = None
        self._ramp_start_s = 0.0
        self._ramp_from: np.ndarray | None = None
        self._last_motor_pos: np.ndarray | None = None

    @property
    def stale_after_s(self) -> float:
        """Age past which a sample is stale (s)."""
        return self.cfg.stale_periods * self.interface.control_period_s

    def fault(self, reason: str) -> Tick:
        """Enter ``damping`` for ``reason`` (the first reason stays) and return its tick."""
        if self.state != DAMPING:
            self.state, self.reason = DAMPING, reason
            return Tick(DAMPING, self._damping(), reason)
        return Tick(DAMPING, self._damping())

    def tick(self, now_s: float, sensors: Sensors | None, sample_age_s: float, command: np.ndarray) -> Tick:
        """One control tick at ``now_s`` (monotonic s) on the newest sample (``sensors``, ``sample_age_s`` old)
        for the velocity ``command`` ``(v_x, v_y, ω_z)``."""
        if self.state == DAMPING:
            return self.fault(self.reason or "damping")
        if sensors is None:
            return self.fault("no sample from the robot") if self.state != WAIT else Tick(WAIT, None)
        if sample_age_s >= self.stale_after_s:
            return self.fault(f"stale sample: the newest is {1e3 * sample_age_s:.0f} ms old")
        self._last_motor_pos = np.asarray(sensors.motor_pos_rad, dtype=np.float64)
        for name in ("gyro_b", "accelerometer_b", "quat_wxyz"):
            if not np.isfinite(getattr(sensors, name)).all():
                return self.fault(f"non-finite IMU reading ({name})")
        joint_pos, _ = self.io.joint_estimate(sensors)
        beyond = self._beyond_range(joint_pos)
        if beyond is not None:
            return self.fault(beyond)
        if self.state == WAIT:
            self.state, self._ramp_start_s, self._ramp_from = SOFT_START, now_s, joint_pos.copy()
        if self.state == SOFT_START:
            tick = self._soft_start(now_s, sensors)
        else:
            tick = self._policy(sensors, command)
        tick.joint_pos = joint_pos
        return tick

    def _soft_start(self, now_s: float, sensors: Sensors) -> Tick:
        progress = (now_s - self._ramp_start_s) / self.cfg.soft_start_s
        blend = smoothstep(progress)
        target = self._ramp_from + blend * (self.interface.default_joint_pos - self._ramp_from)
        command = self.io.target_command(sensors, target)
        rise = smoothstep((now_s - self._ramp_start_s) / self.cfg.gain_rise_s)
        gain = self.cfg.soft_start_gain + (1.0 - self.cfg.soft_start_gain) * rise
        records = records_from_command(
            command.position_rad,
            command.velocity_rads,
            gain * np.asarray(command.kp),
            gain * np.asarray(command.kd),
            command.max_torque_nm,
            sensors.motor_pos_rad,
            sensors.motor_vel_rads,
        )
        tick = self.finish(Tick(SOFT_START, records))
        if progress >= 1.0 and tick.state == SOFT_START:
            self.state = POLICY
            self.io.reset()  # the policy starts its episode here: no last action, the estimator at rest
            tick.reason = "soft start done"
        return tick

    def _policy(self, sensors: Sensors, command: np.ndarray) -> Tick:
        import time

        start = time.perf_counter()
        motor_command = self.io.policy_command(sensors, np.asarray(command, dtype=np.float64))
        elapsed = time.perf_counter() - start
        if motor_command.host is not None:
            return self.fault("the robot side asked for a host loop at the physics rate, which a wire cannot carry")
        observation, action = self.io.policy_trace()
        for name, value in (("observation", observation), ("action", action)):
            if value is not None and not np.isfinite(value).all():
                return self.fault(f"non-finite {name}")
        records = records_from_command(
            motor_command.position_rad,
            motor_command.velocity_rads,
            motor_command.kp,
            motor_command.kd,
            motor_command.max_torque_nm,
            sensors.motor_pos_rad,
            sensors.motor_vel_rads,
        )
        tick = self.finish(Tick(POLICY, records, observation=observation, action=action, policy_s=elapsed))
        tick.notes = dict(motor_command.notes)
        return tick

    def finish(self, tick: Tick) -> Tick:
        """The final guard on ``tick``'s records: a non-finite entry sends the runtime to damping; targets are
        clamped into their motor's range, clamps to its peak torque, gains to non-negative."""
        if tick.records is None:
            return tick
        if not np.isfinite(tick.records).all():
            return self.fault("non-finite target")
        records = tick.records.copy()
        interface = self.interface
        records[:, 0] = np.clip(records[:, 0], interface.motor_lower_rad, interface.motor_upper_rad)
        records[:, 4] = np.clip(records[:, 4], 0.0, interface.max_torque_nm)
        records[:, 2:4] = np.maximum(records[:, 2:4], 0.0)
        tick.clamped = int(np.count_nonzero(records != tick.records))
        tick.records = records
        return tick

    def _damping(self) -> np.ndarray:
        interface = self.interface
        n = len(interface.motor_names)
        position = self._last_motor_pos if self._last_motor_pos is not None else np.zeros(n)
        position = np.clip(position, interface.motor_lower_rad, interface.motor_upper_rad)
        return np.column_stack([position, np.zeros(n), np.zeros(n), interface.damping_kd, interface.max_torque_nm])

    def _beyond_range(self, joint_pos: np.ndarray) -> str | None:
        interface, margin = self.interface, self.cfg.joint_margin_rad
        if not np.isfinite(joint_pos).all():
            return "non-finite joint estimate"
        low = joint_pos < interface.joint_lower_rad - margin
        high = joint_pos > interface.joint_upper_rad + margin
        if low.any() or high.any():
            k = int(np.flatnonzero(low | high)[0])
            lo, hi = interface.joint_lower_rad[k], interface.joint_upper_rad[k]
            return (
                f"joint {interface.joint_names[k]} at {joint_pos[k]:+.3f} rad, beyond its range "
                f"[{lo:+.3f}, {hi:+.3f}] by more than {margin} rad"
            )
        return None
