"""The closed-chain MuJoCo robot as a node on the robot's wire: what the deploy runtime drives before hardware.

It publishes what the robot's drivers and IMU would, each control period: the per-motor samples (angle, speed,
torque applied over the last physics step; ``cur_a`` 0 and ``temp_c`` 25 °C as the model has no motor current or
temperature), an ``sensor_msgs/Imu`` (gyro, orientation, and the specific force averaged over the period, as the
estimator takes it) and, once, its :class:`RobotInfo`. Every physics step it runs each motor driver's PD on the
newest target record, ``τ = clip(kp (pos − θ) + kd (vel − θ̇), ±max_tq)``, then the motor's torque–speed line: the
same drivers and physics as ``linkage-lab sim2sim``.

Until the first target arrives the physics does not advance (the robot is switched on in its standing pose; the
samples repeat it). A robot whose wire says ``starts_on_stand`` (Marvin: on the soft start's PD alone, with nothing
balancing it, it tips over within a second) then hangs on a stand: the legs move under the targets while the base
stays held in its standing pose, until the runtime reports its ``policy`` state (``rt/deploy_state``), when the
stand lets go. The Limit stands on its feet through the soft start.

Timing: ``realtime`` paces every physics step to the monotonic clock and applies a target at the first physics
step after it arrives; ``lockstep`` waits, after each sample, for the target that answers it (``seq``), then
simulates one control period, so a test runs deterministically at whatever speed the machine has.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.deploy.transport import Bus, imu_arrays, take_newest
from linkage_lab.deploy.wire import TARGET_FIELDS
from linkage_lab.io import write_json_atomic
from linkage_lab.sim2sim.drive import MotorCommand, driver_clamp, motor_pd_torque
from linkage_lab.sim2sim.metrics import FallRule
from linkage_lab.sim2sim.mjcf import FREE_JOINT
from linkage_lab.sim2sim.sensors import ImuAverage, SensorReader, Sensors

__all__ = ["SimulatedRobot", "imu_arrays"]

#: Motor temperature the samples report (°C): the model has none.
AMBIENT_C = 25.0


class SimulatedRobot:
    """The robot node.

    Args:
        chain: The robot's closed-chain model.
        bus: A DDS bus on the robot's wire.
        control_period_s: Period of the samples (s): the robot's control rate.
        lockstep: Step one control period per answered sample instead of in real time.
    """

    def __init__(self, chain: Any, bus: Bus, control_period_s: float = 0.02, lockstep: bool = False):
        import mujoco

        self.chain = chain
        self.bus = bus
        self.lockstep = lockstep
        self.model = chain.compile()
        self.data = mujoco.MjData(self.model)
        chain.reset(self.data)
        mujoco.mj_forward(self.model, self.data)
        self.reader = SensorReader(chain, self.model)
        self.dt = float(self.model.opt.timestep)
        self.substeps = round(control_period_s / self.dt)
        if self.substeps < 1 or abs(self.substeps * self.dt - control_period_s) > 1e-9:
            raise ValueError(f"control period {control_period_s} s is not a multiple of the physics step {self.dt} s")
        self.control_period_s = float(control_period_s)
        self.imu = ImuAverage(self.substeps)
        self.ids = bus.wire.ids(chain.motor_names)
        self._index = {int(i): k for k, i in enumerate(self.ids)}
        self.fall_rule = FallRule.from_standing_height(float(self.reader.read(self.data).base_pos_w[2]))
        self.command: MotorCommand | None = None
        #: Whether the stand holds the base (until the runtime's policy starts).
        self.held = bus.wire.starts_on_stand
        free = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, FREE_JOINT)
        self._free_qpos = int(self.model.jnt_qposadr[free])
        self._free_dof = int(self.model.jnt_dofadr[free])
        self._stand_pose = self.data.qpos[self._free_qpos : self._free_qpos + 7].copy()
        self.seq = 0
        self.answered = -1
        #: One row per published sample: time (s), base x, y, z (m), forward and lateral speed along the heading
        #: (m/s), yaw rate (rad/s), fallen (0/1): the simulator's truth, for the report only.
        self.log: list[list[float]] = []
        self._fallen = False
        self._targets = bus.targets_reader()
        self._samples = bus.samples_writer()
        self._imu = bus.imu_writer()
        self._info = bus.info_writer()
        self._state = bus.state_reader()
        self._info.write(bus.info_message(bus.wire.robot, control_period_s, self.ids, tuple(chain.motor_names)))

    def sense(self) -> Sensors:
        import mujoco

        mujoco.mj_step1(self.model, self.data)
        return self.reader.read(self.data)

    def physics_step(self) -> None:
        """One physics step under the drivers' PD on the held targets (no step before the first target)."""
        import mujoco

        sensors = self.sense()
        torque = driver_clamp(self.command, motor_pd_torque(self.command, sensors))
        self.chain.apply_motor_torque(self.data, torque)
        mujoco.mj_step2(self.model, self.data)
        # The step's specific force (mj_step2 computes it before it integrates) with the orientation the step
        # started from (the quaternion sensor is mj_step1's): the IMU's window takes one per physics step.
        self.imu.add(self.reader.read(self.data))
        if self.held:
            self.data.qpos[self._free_qpos : self._free_qpos + 7] = self._stand_pose
            self.data.qvel[self._free_dof : self._free_dof + 6] = 0.0

    def watch_state(self) -> None:
        """Let go of the base once the runtime reports its policy state."""
        received = take_newest(self._state)
        if received is not None and received.message.state == "policy":
            self.held = False

    def publish(self) -> None:
        """The samples and the IMU of now (its specific force the mean over the last control period)."""
        sensors = self.imu.averaged(self.sense())
        n = len(self.ids)
        values = np.column_stack(
            [
                sensors.motor_pos_rad,
                sensors.motor_vel_rads,
                sensors.motor_torque_nm,
                np.zeros(n),
                np.full(n, AMBIENT_C),
                np.zeros(n),
                np.zeros(n),
            ]
        )
        # The IMU first: a lockstep runtime ticks on the samples and reads the IMU it has by then.
        self._imu.write(self.bus.imu_message(sensors.gyro_b, sensors.accelerometer_b, sensors.quat_wxyz))
        self._samples.write(self.bus.sample_message(self.seq, self.ids, values))
        forward, lateral = sensors.heading_velocity_mps
        fallen = self.fall_rule.check(float(sensors.base_pos_w[2]), sensors.projected_gravity_b) is not None
        self._fallen = self._fallen or fallen
        self.log.append(
            [sensors.time_s, *sensors.base_pos_w, forward, lateral, float(sensors.gyro_b[2]), float(self._fallen)]
        )

    def receive(self) -> int | None:
        """Take the newest target array; returns its ``seq`` (``None``: nothing new)."""
        received = take_newest(self._targets)
        if received is None:
            return None
        message = received.message
        records = np.full((len(self.ids), len(TARGET_FIELDS)), np.nan)
        for record in message.targets:
            k = self._index.get(int(record.id))
            if k is not None:
                records[k] = [float(getattr(record, name)) for name in TARGET_FIELDS]
        # A motor without a (finite) record gets no torque: its driver has no command.
        records[~np.isfinite(records).all(axis=1)] = 0.0
        self.command = MotorCommand(
            position_rad=records[:, 0],
            velocity_rads=records[:, 1],
            kp=records[:, 2],
            kd=records[:, 3],
            max_torque_nm=records[:, 4],
        )
        return int(message.seq)

    def run(self, duration_s: float | None = None, idle_timeout_s: float = 10.0) -> str:
        """Serve until ``duration_s`` of robot time (``None``: until stopped) or ``idle_timeout_s`` without a
        target once started; returns why it stopped."""
        return self._run_lockstep(duration_s, idle_timeout_s) if self.lockstep else self._run_realtime(duration_s)

    def _run_realtime(self, duration_s: float | None) -> str:
        start, steps = time.monotonic(), 0
        self.publish()
        while duration_s is None or self.data.time < duration_s:
            self.receive()
            if self.held:
                self.watch_state()
            if self.command is not None:
                self.physics_step()
            steps += 1
            if steps % self.substeps == 0:
                self.seq += 1
                self.publish()
            delay = start + steps * self.dt - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        return "duration"

    def _run_lockstep(self, duration_s: float | None, idle_timeout_s: float) -> str:
        self.publish()
        waiting_since = last_publish = time.monotonic()
        while duration_s is None or self.data.time < duration_s - 1e-9:
            seq = self.receive()
            now = time.monotonic()
            if seq is None or seq != self.seq:
                if now - waiting_since > idle_timeout_s:
                    return "no target"
                if now - last_publish > 0.1:  # a runtime that joins late still gets the waiting sample
                    self.publish()
                    self.log.pop()
                    last_publish = now
                time.sleep(2e-4)
                continue
            if self.held:
                self.watch_state()
            for _ in range(self.substeps):
                self.physics_step()
            self.seq += 1
            self.publish()
            waiting_since = last_publish = time.monotonic()
        return "duration"

    def write_log(self, path: str | Path) -> Path:
        """The truth log as JSON (atomic): columns and rows."""

        columns = ["time_s", "x_m", "y_m", "z_m", "forward_mps", "lateral_mps", "yaw_rate_radps", "fallen"]
        return write_json_atomic(Path(path), {"robot": self.chain.name, "columns": columns, "rows": self.log})


def walk_summary(log: dict[str, Any], start_s: float, end_s: float = math.inf) -> dict[str, Any]:
    """Mean forward speed and yaw rate from ``start_s`` to ``end_s`` (robot time), the distance, and whether (and
    when) it fell in that window."""
    rows = np.asarray(log["rows"], dtype=np.float64)
    if len(rows) == 0:
        return {"samples": 0}
    rows = rows[rows[:, 0] <= end_s + 1e-9]
    window = rows[rows[:, 0] >= start_s]
    if len(window) < 2:
        return {"samples": int(len(window)), "fell": bool(rows[:, 7].any())}
    fell_at = rows[rows[:, 7] > 0, 0]
    return {
        "samples": int(len(window)),
        "from_s": float(window[0, 0]),
        "to_s": float(window[-1, 0]),
        "mean_forward_mps": float(window[:, 4].mean()),
        "mean_yaw_rate_radps": float(window[:, 6].mean()),
        "distance_m": float(math.hypot(window[-1, 1] - window[0, 1], window[-1, 2] - window[0, 2])),
        "fell": bool(len(fell_at)),
        "fell_at_s": float(fell_at[0]) if len(fell_at) else None,
    }
