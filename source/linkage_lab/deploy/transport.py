"""The DDS side of deploy: one Cyclone DDS participant, a robot's topics, and the conversions to and from messages.

Quality of service: targets and samples are reliable, keep-last 4 (the newest is what counts; reliability only
repairs a lost packet on a quiet link); the robot's description and the e-stop are reliable and transient-local, so
a process that joins late still receives the last one published (a runtime started after an e-stop stays stopped);
so is the runtime's safety state.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader, InvalidSample
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from linkage_lab.deploy.idl import MessageTypes
from linkage_lab.deploy.wire import (
    CMD_VEL_TOPIC,
    ESTOP_TOPIC,
    IMU_TOPIC,
    ROBOT_INFO_TOPIC,
    SAMPLE_FIELDS,
    STATE_TOPIC,
    TARGET_FIELDS,
    WireSpec,
)

_STREAM = Qos(Policy.Reliability.Reliable(duration(milliseconds=100)), Policy.History.KeepLast(4))
_LATCHED = Qos(
    Policy.Reliability.Reliable(duration(milliseconds=100)),
    Policy.Durability.TransientLocal,
    Policy.History.KeepLast(1),
)


def stamp_now(types: MessageTypes) -> Any:
    """A ``builtin_interfaces/Time`` of the wall clock now (ROS 2's stamps are wall time)."""
    now = time.time_ns()
    return types.get("builtin_interfaces/Time")(sec=now // 1_000_000_000, nanosec=now % 1_000_000_000)


def stamp_seconds(stamp: Any) -> float:
    """A ``builtin_interfaces/Time`` in seconds."""
    return stamp.sec + 1e-9 * stamp.nanosec


@dataclass
class Received:
    """The newest message of a topic and the monotonic time it was taken (s)."""

    message: Any
    taken_s: float


class Bus:
    """A participant on ``domain`` with ``wire``'s topics (each created on first use).

    Args:
        wire: The robot's wire.
        domain: The DDS domain id.
    """

    def __init__(self, wire: WireSpec, domain: int = 0):
        self.wire = wire
        self.types = MessageTypes([wire.msg_dir])
        self.participant = DomainParticipant(int(domain))
        self._topics: dict[str, Topic] = {}

    def _topic(self, name: str, message: str) -> Topic:
        if name not in self._topics:
            self._topics[name] = Topic(self.participant, name, self.types.get(message))
        return self._topics[name]

    def writer(self, name: str, message: str, latched: bool = False) -> DataWriter:
        """A writer of ``message`` (``pkg/Type``) on topic ``name``."""
        return DataWriter(self.participant, self._topic(name, message), qos=_LATCHED if latched else _STREAM)

    def reader(self, name: str, message: str, latched: bool = False) -> DataReader:
        """A reader of ``message`` on topic ``name``."""
        return DataReader(self.participant, self._topic(name, message), qos=_LATCHED if latched else _STREAM)

    # The topics of the runtime and of the robot, by role.
    def targets_writer(self) -> DataWriter:
        return self.writer(self.wire.target_topic, self.wire.target_array)

    def targets_reader(self) -> DataReader:
        return self.reader(self.wire.target_topic, self.wire.target_array)

    def samples_writer(self) -> DataWriter:
        return self.writer(self.wire.sample_topic, self.wire.sample_array)

    def samples_reader(self) -> DataReader:
        return self.reader(self.wire.sample_topic, self.wire.sample_array)

    def imu_writer(self) -> DataWriter:
        return self.writer(IMU_TOPIC, "sensor_msgs/Imu")

    def imu_reader(self) -> DataReader:
        return self.reader(IMU_TOPIC, "sensor_msgs/Imu")

    def info_writer(self) -> DataWriter:
        return self.writer(ROBOT_INFO_TOPIC, "linkage_msgs/RobotInfo", latched=True)

    def info_reader(self) -> DataReader:
        return self.reader(ROBOT_INFO_TOPIC, "linkage_msgs/RobotInfo", latched=True)

    def estop_writer(self) -> DataWriter:
        return self.writer(ESTOP_TOPIC, "std_msgs/Bool", latched=True)

    def estop_reader(self) -> DataReader:
        return self.reader(ESTOP_TOPIC, "std_msgs/Bool", latched=True)

    def cmd_vel_writer(self) -> DataWriter:
        return self.writer(CMD_VEL_TOPIC, "geometry_msgs/Twist")

    def cmd_vel_reader(self) -> DataReader:
        return self.reader(CMD_VEL_TOPIC, "geometry_msgs/Twist")

    def state_writer(self) -> DataWriter:
        return self.writer(STATE_TOPIC, "linkage_msgs/DeployState", latched=True)

    def state_reader(self) -> DataReader:
        return self.reader(STATE_TOPIC, "linkage_msgs/DeployState", latched=True)

    # Messages.
    def target_message(self, seq: int, ids: np.ndarray, records: np.ndarray) -> Any:
        """One tick's target array: ``records`` ``(n, 5)`` (columns ``TARGET_FIELDS``) for motors ``ids``."""
        record = self.types.get(self.wire.target_record)
        rows = [
            record(id=int(i), **{name: float(v) for name, v in zip(TARGET_FIELDS, row, strict=True)})
            for i, row in zip(ids, records, strict=True)
        ]
        return self.types.get(self.wire.target_array)(stamp=stamp_now(self.types), seq=int(seq), targets=rows)

    def sample_message(self, seq: int, ids: np.ndarray, values: np.ndarray) -> Any:
        """One tick's sample array: ``values`` ``(n, 7)`` (columns ``SAMPLE_FIELDS``) for motors ``ids``."""
        record = self.types.get(self.wire.sample_record)
        integer = {"flags", "fault_code"}
        rows = []
        for i, row in zip(ids, values, strict=True):
            fields = {n: (int(v) if n in integer else float(v)) for n, v in zip(SAMPLE_FIELDS, row, strict=True)}
            rows.append(record(**{self.wire.sample_id_field: int(i)}, **fields))
        return self.types.get(self.wire.sample_array)(stamp=stamp_now(self.types), seq=int(seq), samples=rows)

    def imu_message(self, gyro: np.ndarray, accelerometer: np.ndarray, quat_wxyz: np.ndarray) -> Any:
        """An ``sensor_msgs/Imu`` of the base IMU (frame ``imu``)."""
        t = self.types
        vector, quaternion = t.get("geometry_msgs/Vector3"), t.get("geometry_msgs/Quaternion")
        w, x, y, z = (float(v) for v in quat_wxyz)
        return t.get("sensor_msgs/Imu")(
            header=t.get("std_msgs/Header")(stamp=stamp_now(t), frame_id="imu"),
            orientation=quaternion(x=x, y=y, z=z, w=w),
            angular_velocity=vector(*map(float, gyro)),
            linear_acceleration=vector(*map(float, accelerometer)),
        )

    def info_message(self, robot: str, control_period_s: float, ids: np.ndarray, names: tuple[str, ...]) -> Any:
        return self.types.get("linkage_msgs/RobotInfo")(
            robot=robot,
            control_period_s=float(control_period_s),
            motor_ids=[int(i) for i in ids],
            motor_names=list(names),
        )

    def state_message(self, state: str, reason: str | None) -> Any:
        t = self.types
        header = t.get("std_msgs/Header")(stamp=stamp_now(t), frame_id="")
        return t.get("linkage_msgs/DeployState")(header=header, state=state, reason=reason or "")


def take_newest(reader: DataReader) -> Received | None:
    """The newest message waiting on ``reader`` (the rest are dropped), or ``None``."""
    messages = [m for m in reader.take(N=64) if not isinstance(m, InvalidSample)]  # a writer gone: no data
    if not messages:
        return None
    return Received(messages[-1], time.monotonic())


def imu_arrays(message: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gyro (rad/s), specific force (m/s²) and orientation ``(w, x, y, z)`` of an ``sensor_msgs/Imu``."""
    g, a, q = message.angular_velocity, message.linear_acceleration, message.orientation
    return np.array([g.x, g.y, g.z]), np.array([a.x, a.y, a.z]), np.array([q.w, q.x, q.y, q.z])
