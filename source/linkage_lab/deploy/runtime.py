"""The deploy runtime: the control process on the robot's computer, one tick per control period.

Each tick (monotonic clock, at the bundle's control period; or, ``lockstep``, on each new sample of a simulated
robot): take the newest sample and IMU reading, decode them into what the robot senses, let the
:class:`~linkage_lab.deploy.controller.Controller` decide (wait → soft start → policy → damping), publish the
per-motor targets, record. The velocity command comes from ``rt/cmd_vel`` (a Twist) and, in a terminal, from the
keyboard; ``rt/estop`` (a Bool, latched) stops the robot.

Before any target is sent the robot that answers on the domain (its ``RobotInfo``) must be the bundle's: the same
robot, motor ids and names, and control period, or the run is refused (:class:`Refused`).
"""

from __future__ import annotations

import gc
import math
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.deploy.controller import DAMPING, POLICY, WAIT, Controller, SafetyCfg, Tick
from linkage_lab.deploy.interface import RobotInterface, load_robot_side
from linkage_lab.deploy.recording import Recorder
from linkage_lab.deploy.timing import Keyboard, TimingStats, wait_until
from linkage_lab.deploy.transport import Bus, Received, imu_arrays, stamp_seconds, take_newest
from linkage_lab.deploy.wire import TARGET_FIELDS, WireError, decode_samples
from linkage_lab.exit_codes import FAULT, INTERRUPTED, OK, TERMINATED, USAGE_ERROR
from linkage_lab.sim2sim.bundle import load_bundle
from linkage_lab.sim2sim.sensors import Sensors

#: Exit statuses of a run (``linkage-lab deploy run``; :mod:`linkage_lab.exit_codes`).
EXIT_DONE, EXIT_REFUSED, EXIT_FAULT, EXIT_INTERRUPTED = OK, USAGE_ERROR, FAULT, INTERRUPTED


class Refused(RuntimeError):
    """The robot that answers is not the bundle's, or none answers: nothing was sent."""


@dataclass
class RunSettings:
    """How a run goes.

    Attributes:
        domain: DDS domain id.
        lockstep: Tick on each new sample (a simulated robot in lockstep) instead of the clock.
        duration_s: Seconds of policy after the soft start, then damping and a normal exit; ``None``: until stopped.
        command: The velocity command ``(v_x, v_y, ω_z)`` until ``rt/cmd_vel`` or the keyboard changes it.
        wait_s: How long to wait for the robot to answer (s).
        damping_hold_s: How long damping is sent before the process exits (s).
        record: The MCAP file to write; ``None``: none.
        keyboard: Read velocity keys from the terminal (when stdin is one).
        verbose: Print every state change and a status line each second.
    """

    domain: int = 0
    lockstep: bool = False
    duration_s: float | None = None
    command: tuple[float, float, float] = (0.0, 0.0, 0.0)
    wait_s: float = 10.0
    damping_hold_s: float = 1.0
    record: Path | None = None
    keyboard: bool = True
    verbose: bool = True


@dataclass
class RunResult:
    """How a run ended: exit status, the reason of the last state change, tick counts and the timing table."""

    exit_code: int
    reason: str
    ticks: int
    policy_ticks: int
    timing: dict[str, Any] = field(default_factory=dict)


class DeployRuntime:
    """One deploy run of a bundle.

    Args:
        bundle: The exported bundle's folder.
        settings: How the run goes.
        safety: The safety settings.

    Raises:
        BundleError: The bundle cannot be loaded or its robot has no wire.
    """

    def __init__(self, bundle: str | Path, settings: RunSettings = RunSettings(), safety: SafetyCfg = SafetyCfg()):
        self.bundle = load_bundle(bundle)
        self.settings = settings
        self.io, self.interface = load_robot_side(self.bundle)
        self.controller = Controller(self.io, self.interface, safety)
        self.bus = Bus(self.interface.wire, settings.domain)
        self._samples = self.bus.samples_reader()
        self._imu = self.bus.imu_reader()
        self._info = self.bus.info_reader()
        self._estop = self.bus.estop_reader()
        self._cmd_vel = self.bus.cmd_vel_reader()
        self._targets = self.bus.targets_writer()
        self._state = self.bus.state_writer()
        self.command = np.asarray(settings.command, dtype=np.float64)
        self._stop_signal: int | None = None
        self._estopped = False

    def log(self, text: str) -> None:
        if self.settings.verbose:
            print(f"[deploy] {text}", flush=True)

    # The robot.
    def wait_for_robot(self) -> None:
        """Wait for the robot's ``RobotInfo`` and check it against the bundle.

        Raises:
            Refused: No robot answered within ``wait_s``, or it is not the bundle's robot.
        """
        deadline = time.monotonic() + self.settings.wait_s
        info = None
        while info is None and time.monotonic() < deadline and self._stop_signal is None:
            received = take_newest(self._info)
            info = None if received is None else received.message
            time.sleep(0.01)
        if info is None:
            raise Refused(f"no robot answered on DDS domain {self.settings.domain} within {self.settings.wait_s:g} s")
        problem = check_robot(self.interface, info)
        if problem is not None:
            raise Refused(f"bundle {self.bundle.path} does not match the robot: {problem}")
        self.log(f"robot {info.robot!r}: {len(info.motor_ids)} motors, {1e3 * info.control_period_s:g} ms period")

    # One tick's inputs.
    def _poll_inputs(self) -> None:
        estop = take_newest(self._estop)
        if estop is not None and estop.message.data:
            self._estopped = True
        twist = take_newest(self._cmd_vel)
        if twist is not None:
            t = twist.message
            self.command = np.array([t.linear.x, t.linear.y, t.angular.z], dtype=np.float64)

    def _sensors(self, sample: Received, imu: Received | None) -> Sensors:
        values = decode_samples(sample.message.samples, self.interface.wire.sample_id_field, self.interface.motor_ids)
        if imu is None:
            raise WireError("no IMU reading")
        gyro, accelerometer, quat = imu_arrays(imu.message)
        return Sensors(
            time_s=stamp_seconds(sample.message.stamp),
            motor_pos_rad=values[:, 0],
            motor_vel_rads=values[:, 1],
            motor_torque_nm=values[:, 2],
            gyro_b=gyro,
            accelerometer_b=accelerometer,
            quat_wxyz=quat,
            base_pos_w=np.full(3, np.nan),  # a robot has no odometry: nothing downstream may read it
            base_lin_vel_b=np.full(3, np.nan),
        )

    def run(self) -> RunResult:
        """The run: wait for the robot, then tick until the duration, a fault, an e-stop or a signal."""
        previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        keyboard = Keyboard.open() if self.settings.keyboard else None
        recorder = None
        try:
            self.wait_for_robot()
            if self.settings.record is not None:
                recorder = Recorder(self.settings.record, self._metadata())
            # No cycle collector in the loop (a full collection stalls for milliseconds): the loop makes little
            # cyclic garbage, collected when the run ends.
            gc.collect()
            gc.freeze()
            gc.disable()
            return self._loop(recorder, keyboard)
        finally:
            gc.enable()
            gc.unfreeze()
            if keyboard is not None:
                keyboard.close()
            if recorder is not None:
                path = recorder.close()
                self.log(f"recording: {path}")
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _on_signal(self, number: int, frame: Any) -> None:
        self._stop_signal = number

    def _metadata(self) -> dict[str, str]:
        interface = self.interface
        return {
            "bundle": str(self.bundle.path),
            "robot": interface.robot,
            "task": str(self.bundle.metadata.get("task")),
            "control_period_s": repr(interface.control_period_s),
            "motor_names": ",".join(interface.motor_names),
            "lockstep": str(self.settings.lockstep),
        }

    def _next_sample(self, last_seq: int, deadline: float) -> Received | None:
        """Lockstep: wait until a sample newer than ``last_seq`` arrives or ``deadline`` passes."""
        while True:
            received = take_newest(self._samples)
            if received is not None and received.message.seq > last_seq:
                return received
            if time.monotonic() > deadline or self._stop_signal is not None:
                return None
            time.sleep(2e-4)

    def _loop(self, recorder: Recorder | None, keyboard: Keyboard | None) -> RunResult:
        period = self.interface.control_period_s
        controller = self.controller
        stats = TimingStats(period)
        sample: Received | None = None
        imu: Received | None = None
        last_seq, tick_index, policy_ticks = -1, 0, 0
        schedule = loop_start = time.monotonic()
        previous_start = None
        misses, damping_since, policy_since = 0, None, None
        reason = "running"
        while True:
            if self.settings.lockstep:
                since = sample.taken_s if sample is not None else time.monotonic()
                newer = self._next_sample(last_seq, since + controller.stale_after_s)
                sample = newer or sample
                start = time.monotonic()
            else:
                start = time.monotonic()  # the tick's start: the loop period is measured here, before any work
                newer = take_newest(self._samples)
                if newer is not None and (sample is None or newer.message.seq != sample.message.seq):
                    sample = newer
            latest_imu = take_newest(self._imu)
            imu = latest_imu or imu
            self._poll_inputs()
            if keyboard is not None:
                self.command, quit_key = keyboard.update(self.command)
                if quit_key:
                    self._stop_signal = signal.SIGINT
            missed = not self.settings.lockstep and start - schedule > 0.5 * period
            misses = misses + 1 if missed else 0
            clock = tick_index * period if self.settings.lockstep else start
            age = (start - sample.taken_s) if sample is not None else 0.0
            tick = self._decide(clock, sample, imu, age, misses)
            if tick.reason is not None:  # before the targets: a lockstep robot reads it with them
                self._state.write(self.bus.state_message(self.controller.state, tick.reason))
            published_ns = self._publish(tick, sample)
            if tick.state == POLICY:
                policy_ticks += 1
                policy_since = clock if policy_since is None else policy_since
            stamp = stamp_seconds(sample.message.stamp) if sample is not None else None
            latency = None if stamp is None else 1e-9 * published_ns - stamp
            # The sample's age when the tick started, from its stamp (the robot's wall clock; the stale check above
            # uses the receipt time instead, which needs no synchronised clocks).
            stamp_age = None if stamp is None else latency - (time.monotonic() - start)
            period_s = None if previous_start is None else start - previous_start
            stats.add(period_s, stamp_age, latency, tick.policy_s, missed)
            if recorder is not None:
                self._record(recorder, tick_index, tick, sample, imu, period_s, stamp_age, latency, missed)
            if tick.reason is not None:
                reason = tick.reason
                self.log(f"{self.controller.state}: {tick.reason}")
            if sample is not None:
                last_seq = sample.message.seq
            previous_start = start
            tick_index += 1
            if tick.state == DAMPING:
                damping_since = start if damping_since is None else damping_since
                if start - damping_since >= self.settings.damping_hold_s:
                    break
            timed = self.settings.duration_s is not None and policy_since is not None
            if (
                timed
                and clock + period - policy_since >= self.settings.duration_s - 1e-9
                and controller.state == POLICY
            ):
                controller.fault("duration reached")  # the next tick sends damping
                self._announce(recorder, "duration reached")
            if controller.state == WAIT and start - loop_start > self.settings.wait_s:
                controller.fault(f"no sample within {self.settings.wait_s:g} s")
                self._announce(recorder, controller.reason)
            if not self.settings.lockstep:
                schedule += period
                if schedule < time.monotonic():  # late: the next tick starts now, the schedule re-anchors there
                    schedule = time.monotonic()
                wait_until(schedule)
        code = self._exit_code(controller.reason or reason)
        self.log(f"stopped ({controller.reason}); exit status {code}")
        return RunResult(code, controller.reason or reason, tick_index, policy_ticks, stats.summary())

    def _announce(self, recorder: Recorder | None, reason: str) -> None:
        """A state change decided between ticks: printed, published and recorded."""
        self.log(f"{self.controller.state}: {reason}")
        self._state.write(self.bus.state_message(self.controller.state, reason))
        if recorder is not None:
            recorder.write("/state", {"state": self.controller.state, "reason": reason})

    def _decide(self, clock: float, sample: Received | None, imu: Received | None, age: float, misses: int) -> Tick:
        controller = self.controller
        if self._stop_signal is not None:
            name = "Ctrl-C" if self._stop_signal == signal.SIGINT else "SIGTERM"
            return controller.fault(f"stopped by {name}")
        if self._estopped:
            return controller.fault("e-stop")
        if misses >= controller.cfg.max_deadline_misses:
            return controller.fault(f"{misses} deadline misses in a row")
        if sample is None or (imu is None and controller.state == WAIT):
            return controller.tick(clock, None, 0.0, self.command)  # waits (no target) until both have arrived
        try:
            sensors = self._sensors(sample, imu)
        except WireError as exc:
            return controller.fault(f"bad sample: {exc}")
        return controller.tick(clock, sensors, age, self.command)

    def _publish(self, tick: Tick, sample: Received | None) -> int:
        if tick.records is not None:
            seq = sample.message.seq if sample is not None else 0
            self._targets.write(self.bus.target_message(seq, self.interface.motor_ids, tick.records))
        return time.time_ns()

    def _record(self, recorder: Recorder, index: int, tick: Tick, sample, imu, period_s, age, latency, missed) -> None:
        if sample is not None:
            rows = {int(getattr(r, self.interface.wire.sample_id_field)): r for r in sample.message.samples}
            ordered = [rows.get(int(i)) for i in self.interface.motor_ids]
            column = lambda name: np.array([np.nan if r is None else float(getattr(r, name)) for r in ordered])  # noqa: E731
            gyro, accelerometer, _ = imu_arrays(imu.message) if imu is not None else (None, None, None)
            recorder.write(
                "/sample",
                {
                    "seq": sample.message.seq,
                    "stamp_s": stamp_seconds(sample.message.stamp),
                    "motor_pos_rad": column("pos_rad"),
                    "motor_vel_rads": column("vel_rads"),
                    "motor_torque_nm": column("tq_nnm"),
                    "gyro": gyro,
                    "accelerometer": accelerometer,
                },
            )
        seq = sample.message.seq if sample is not None else -1
        if tick.records is not None:
            target = {name: tick.records[:, k] for k, name in enumerate(TARGET_FIELDS)}
            recorder.write(
                "/target", {"seq": seq, "state": tick.state, "motor_ids": self.interface.motor_ids, **target}
            )
        if tick.observation is not None:
            recorder.write("/observation", {"seq": seq, "values": np.asarray(tick.observation)})
            recorder.write("/action", {"seq": seq, "values": np.asarray(tick.action), "joint_pos_rad": tick.joint_pos})
        if tick.reason is not None:
            recorder.write("/state", {"state": self.controller.state, "reason": tick.reason})
        timing = {"tick": index, "period_s": period_s, "sample_age_s": age, "latency_s": latency}
        recorder.write("/timing", {**timing, "policy_s": tick.policy_s, "deadline_missed": bool(missed)})

    def _exit_code(self, reason: str) -> int:
        if reason == "duration reached":
            return EXIT_DONE
        if reason == "stopped by SIGTERM":
            return TERMINATED
        if reason.startswith("stopped by"):
            return EXIT_INTERRUPTED
        return EXIT_FAULT


def check_robot(interface: RobotInterface, info: Any) -> str | None:
    """Why the robot of ``info`` (a ``RobotInfo``) cannot run ``interface``'s bundle, or ``None``."""
    if info.robot != interface.robot:
        return f"the bundle is for robot {interface.robot!r}, the robot is {info.robot!r}"
    if not math.isclose(info.control_period_s, interface.control_period_s, rel_tol=0.0, abs_tol=1e-9):
        return (
            f"control period: the bundle's is {1e3 * interface.control_period_s:g} ms, "
            f"the robot's {1e3 * info.control_period_s:g} ms"
        )
    ours = dict(zip(map(int, interface.motor_ids), interface.motor_names, strict=True))
    theirs = dict(zip(map(int, info.motor_ids), info.motor_names, strict=False))
    if ours != theirs:
        missing = sorted(set(ours) - set(theirs))
        extra = sorted(set(theirs) - set(ours))
        renamed = sorted(i for i in set(ours) & set(theirs) if ours[i] != theirs[i])
        return f"motor set differs (ids the robot lacks: {missing}, ids it adds: {extra}, renamed: {renamed})"
    return None
