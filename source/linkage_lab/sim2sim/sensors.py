"""What a robot senses in the closed-chain simulation: motor encoders, the IMU, and odometry.

A sim-to-sim runner gives the robot-side code only these readings, never the simulator's joint
angles: the motor encoders (angle, speed and the torque last applied, per motor in actuator order),
the IMU on the base (gyro, accelerometer, orientation) and the base's odometry. The odometry is the
simulator's true base position and velocity: the robot sides give the policy the base-velocity estimator's
output (:mod:`linkage_lab.sim2sim.velocity_source`) and read the truth only to score that estimate, or with
``base_velocity=truth`` for a comparison; the runner's tracking metrics use it.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from linkage_lab.sim2sim.mjcf import FREE_JOINT
from linkage_lab.sim2sim.model import ClosedChainModel
from linkage_lab.typed_config import SensorNoise


def quat_to_matrix(quat_wxyz: np.ndarray) -> np.ndarray:
    """The rotation matrix of a unit quaternion ``(w, x, y, z)`` (body → world)."""
    w, x, y, z = np.asarray(quat_wxyz, dtype=float) / np.linalg.norm(quat_wxyz)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def quat_to_rpy(quat_wxyz: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw (rad, ZYX convention) of a unit quaternion ``(w, x, y, z)``."""
    w, x, y, z = np.asarray(quat_wxyz, dtype=float) / np.linalg.norm(quat_wxyz)
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.array([roll, pitch, yaw])


@dataclass(frozen=True)
class Sensors:
    """One reading of everything the robot senses.

    Attributes:
        time_s: Simulated time (s).
        motor_pos_rad: Motor encoder angles (rad, actuator order; a linkage motor's from its neutral).
        motor_vel_rads: Motor speeds (rad/s, actuator order).
        motor_torque_nm: The torque each motor applied over the last physics step (N·m), what a driver
            reports from its current.
        gyro_b: IMU angular velocity in the base frame (rad/s).
        accelerometer_b: IMU specific force in the base frame (m/s²).
        quat_wxyz: IMU orientation, base → world, ``(w, x, y, z)``.
        base_pos_w: Odometry: base position in the world (m).
        base_lin_vel_b: Odometry: base linear velocity in the base frame (m/s).
    """

    time_s: float
    motor_pos_rad: np.ndarray
    motor_vel_rads: np.ndarray
    motor_torque_nm: np.ndarray
    gyro_b: np.ndarray
    accelerometer_b: np.ndarray
    quat_wxyz: np.ndarray
    base_pos_w: np.ndarray
    base_lin_vel_b: np.ndarray

    @property
    def projected_gravity_b(self) -> np.ndarray:
        """The unit gravity direction in the base frame ((0, 0, −1) when level), from the IMU's orientation."""
        return quat_to_matrix(self.quat_wxyz).T @ np.array([0.0, 0.0, -1.0])

    @property
    def roll_pitch_yaw_rad(self) -> np.ndarray:
        """Base roll, pitch, yaw (rad) from the IMU's orientation."""
        return quat_to_rpy(self.quat_wxyz)

    @property
    def heading_velocity_mps(self) -> tuple[float, float]:
        """Odometry: base velocity along its heading and to its left (m/s), the yaw-only frame."""
        velocity_w = quat_to_matrix(self.quat_wxyz) @ self.base_lin_vel_b
        yaw = self.roll_pitch_yaw_rad[2]
        forward = np.cos(yaw) * velocity_w[0] + np.sin(yaw) * velocity_w[1]
        lateral = -np.sin(yaw) * velocity_w[0] + np.cos(yaw) * velocity_w[1]
        return float(forward), float(lateral)


class SensorReader:
    """Reads :class:`Sensors` from a compiled closed-chain model's ``MjData``.

    Args:
        chain: The closed-chain model (motors, IMU site name).
        model: Its compiled ``mujoco.MjModel``.

    Raises:
        ValueError: The model has no floating base or lacks the IMU's sensors.
    """

    def __init__(self, chain: ClosedChainModel, model: Any):
        import mujoco

        self.chain = chain

        def sensor_slice(suffix: str) -> slice:
            index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, f"{chain.imu_site}_{suffix}")
            if index < 0:
                raise ValueError(f"{chain.name}: the MuJoCo model has no sensor {chain.imu_site}_{suffix}")
            start = int(model.sensor_adr[index])
            return slice(start, start + int(model.sensor_dim[index]))

        self._gyro, self._accelerometer, self._quat = (sensor_slice(s) for s in ("gyro", "accelerometer", "quat"))
        free = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, FREE_JOINT)
        if free < 0:
            raise ValueError(f"{chain.name}: sim-to-sim needs a floating base (build it with floating_base=True)")
        self._qpos = int(model.jnt_qposadr[free])
        self._qvel = int(model.jnt_dofadr[free])
        self._binding = chain.bind(model)

    def read(self, data: Any) -> Sensors:
        """The readings of ``data`` now (after ``mj_step``/``mj_forward``, which fill the sensors)."""
        motor_pos, motor_vel = self.chain.motor_state(data)
        quat = data.sensordata[self._quat].copy()
        # A free joint's linear velocity is in the world frame; odometry reports it in the base frame.
        lin_vel_w = data.qvel[self._qvel : self._qvel + 3]
        return Sensors(
            time_s=float(data.time),
            motor_pos_rad=motor_pos,
            motor_vel_rads=motor_vel,
            motor_torque_nm=data.ctrl[self._binding.actuators].copy(),
            gyro_b=data.sensordata[self._gyro].copy(),
            accelerometer_b=data.sensordata[self._accelerometer].copy(),
            quat_wxyz=quat,
            base_pos_w=data.qpos[self._qpos : self._qpos + 3].copy(),
            base_lin_vel_b=quat_to_matrix(quat).T @ lin_vel_w,
        )


class ImuAverage:
    """The IMU's specific force as its mean over the last control period, what the robot side is given.

    A robot's estimator runs once per control tick, and a single accelerometer sample taken then would stand for the
    whole period: a foot's landing impact caught in it (or missed) puts a velocity step into the integral. IMUs
    sample at hundreds of hertz and give a period's velocity increment (a delta-velocity output, or the mean of the
    samples in their FIFO), so the reading here is the mean of the last ``steps`` physics steps' specific force,
    summed in the world frame and turned into the base frame of now.

    Args:
        steps: Physics steps per control period (1: the sample itself).

    Raises:
        ValueError: ``steps`` below 1.
    """

    def __init__(self, steps: int):
        if int(steps) != steps or steps < 1:
            raise ValueError(f"an IMU average needs a whole number of steps >= 1, got {steps!r}")
        self._forces: deque[np.ndarray] = deque(maxlen=int(steps))

    def reset(self) -> None:
        """Forget the samples (a new run)."""
        self._forces.clear()

    def add(self, sensors: Sensors) -> Sensors:
        """Take one physics step's reading; returns it with ``accelerometer_b`` the mean over the window."""
        rotation = quat_to_matrix(sensors.quat_wxyz)
        self._forces.append(rotation @ np.asarray(sensors.accelerometer_b, dtype=float))
        return self.averaged(sensors)

    def averaged(self, sensors: Sensors) -> Sensors:
        """``sensors`` with ``accelerometer_b`` the window's mean in its base frame (unchanged while the window is
        empty), the reading itself not taken."""
        if not self._forces:
            return sensors
        rotation = quat_to_matrix(sensors.quat_wxyz)
        return dataclasses.replace(sensors, accelerometer_b=rotation.T @ np.mean(self._forces, axis=0))


class SensorNoiseModel:
    """What a robot's sensors add to the truth in one run, drawn from its :class:`SensorNoise` (uniform half-widths,
    Isaac Lab's observation-noise convention, as training draws them).

    * gyro: white noise per axis every reading, plus a bias per axis drawn once (held for the run, as training holds
      it for an episode);
    * attitude: the orientation tilted about the base's x and y axes by white noise of ``gravity_noise`` rad, which
      moves the gravity direction the controller derives from it by up to that much per component (training adds
      the noise to the gravity direction itself; the robot side computes it from the orientation);
    * motor encoders: white noise on every motor's angle (``joint_pos_noise_rad``) and speed
      (``encoder_rate_noise_radps``, the driver's reading, not training's wider joint-rate margin); the robot side
      turns them into joint readings through its linkages.

    The accelerometer, the applied torques and the odometry pass through unchanged (the odometry only scores the
    run). Only what the controller reads is corrupted: the drives' own PD runs on their exact encoders.

    Args:
        noise: The robot's sensor model.
        seed: Seed of the draws (an int or a sequence of ints, e.g. ``(sweep seed, case, run)``).
    """

    #: The terms of :class:`SensorNoise` a closed-chain run applies (``joint_vel_noise_radps`` is training's margin).
    TERMS = ("gyro_noise_radps", "gyro_bias_radps", "gravity_noise", "joint_pos_noise_rad", "encoder_rate_noise_radps")

    def __init__(self, noise: SensorNoise, seed: int | Sequence[int] = 0):
        self.noise = noise
        self.seed = [int(v) for v in seed] if isinstance(seed, Sequence) else int(seed)
        self._rng = np.random.default_rng(self.seed)
        self.gyro_bias_radps = self._uniform(noise.gyro_bias_radps, 3)

    def _uniform(self, half_width: float, size: int) -> np.ndarray:
        return self._rng.uniform(-half_width, half_width, size) if half_width > 0 else np.zeros(size)

    def __call__(self, sensors: Sensors) -> Sensors:
        """``sensors`` as the robot would read them: a new reading, the input untouched."""
        noise, motors = self.noise, len(sensors.motor_pos_rad)
        tilt = self._uniform(noise.gravity_noise, 2)
        # Body-frame rotation by (tilt_x, tilt_y): the gravity direction R^T g moves by about (tilt_y, -tilt_x, 0).
        half = np.array([1.0, 0.5 * tilt[0], 0.5 * tilt[1], 0.0])
        quat = quat_multiply(sensors.quat_wxyz, half / np.linalg.norm(half))
        return dataclasses.replace(
            sensors,
            gyro_b=sensors.gyro_b + self.gyro_bias_radps + self._uniform(noise.gyro_noise_radps, 3),
            quat_wxyz=quat,
            motor_pos_rad=sensors.motor_pos_rad + self._uniform(noise.joint_pos_noise_rad, motors),
            motor_vel_rads=sensors.motor_vel_rads + self._uniform(noise.encoder_rate_noise_radps, motors),
        )

    def describe(self) -> dict[str, Any]:
        """The model, its seed and the run's gyro bias, as ``sim2sim.json`` records them."""
        return {
            **dataclasses.asdict(self.noise),
            "seed": self.seed,
            "drawn_gyro_bias_radps": [float(v) for v in self.gyro_bias_radps],
            "applied_to": "what the controller reads (gyro, attitude, motor encoders); the drives' PD reads its own",
        }


def quat_multiply(a_wxyz: np.ndarray, b_wxyz: np.ndarray) -> np.ndarray:
    """The Hamilton product ``a ⊗ b`` of two quaternions ``(w, x, y, z)`` (``b`` applied in ``a``'s frame)."""
    aw, ax, ay, az = a_wxyz
    bw, bx, by, bz = b_wxyz
    return np.array(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ]
    )
