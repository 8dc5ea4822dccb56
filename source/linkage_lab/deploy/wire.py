"""A robot's per-motor wire: which messages carry its targets and samples, and the numbers in them.

A robot names its wire in a :class:`WireSpec` (its ``deploy_wire`` extra): the ROS 2 message types of one
tick's targets and samples (each an array of per-motor records addressed by an id), the topics, and the id of
each motor. The records' fields are the Limit's ``JointTarget`` / ``JointSample`` (docs/design/robots.md §1.4 in
``docs/design/robots.md``): targets ``id, pos, vel, kp, kd, max_tq``; samples ``<id>, pos_rad, vel_rads, tq_nnm,
cur_a, temp_c, flags, fault_code``. Angles are motor angles in the robot's zero pose.

A per-motor driver takes one kp and one kd. Where the robot-side code asks for coupled motor gains (a linkage's
``K_m = J⁻ᵀ K_j J⁻¹``), :func:`records_from_command` keeps each motor's own gain ``K_m,ii`` and folds the
coupling into its target from the latest sample, ``θ*_i + Σ_j≠i K_m,ij (θ*_j − θ_j) / K_m,ii`` (damping likewise),
so the torque at the sample instant is the coupled PD's; only the cross terms are held between samples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: Columns of :func:`records_from_command`'s array, a target record's numeric fields in order.
TARGET_FIELDS = ("pos", "vel", "kp", "kd", "max_tq")
#: A sample record's numeric fields after its id, in order (:func:`decode_samples`'s columns).
SAMPLE_FIELDS = ("pos_rad", "vel_rads", "tq_nnm", "cur_a", "temp_c", "flags", "fault_code")

#: Topics every robot shares (ROS 2's ``rt/`` prefix for a topic ``/<name>``).
IMU_TOPIC = "rt/imu"
CMD_VEL_TOPIC = "rt/cmd_vel"
ESTOP_TOPIC = "rt/estop"
ROBOT_INFO_TOPIC = "rt/robot_info"
STATE_TOPIC = "rt/deploy_state"


class WireError(ValueError):
    """A sample that cannot be decoded: a missing, repeated or unknown id, or a value that is not finite."""


@dataclass(frozen=True)
class WireSpec:
    """One robot's wire.

    Attributes:
        robot: The robot's name (its registry name; a runtime refuses a bundle of another robot).
        msg_dir: Folder of the robot's ``<package>/msg/*.msg``.
        target_array: The message of one tick's targets, ``pkg/Type`` (fields ``stamp``, ``seq``, ``targets``).
        sample_array: The message of one tick's samples (fields ``stamp``, ``seq``, ``samples``).
        target_record: A target record's message.
        sample_record: A sample record's message.
        sample_id_field: The id field's name in a sample record (the Limit's ``joint_id``).
        motor_ids: Wire id of each motor, by the closed-chain model's motor (actuator) name.
        target_topic: Topic of the targets.
        sample_topic: Topic of the samples.
        io_options: Options the runtime passes the robot's robot-side code (e.g. a motor-level ankle mode: a
            host loop at the physics rate cannot run over a 50 Hz wire).
        starts_on_stand: The simulated robot (``linkage-lab deploy robot``) hangs on a stand until the policy starts,
            as a humanoid starts on its gantry; ``False``: it stands on its feet through the soft start.
    """

    robot: str
    msg_dir: Path
    target_array: str
    sample_array: str
    target_record: str
    sample_record: str
    sample_id_field: str
    motor_ids: Mapping[str, int]
    target_topic: str
    sample_topic: str
    io_options: Mapping[str, Any] = field(default_factory=dict)
    starts_on_stand: bool = False

    def ids(self, motor_names: Sequence[str]) -> np.ndarray:
        """The wire ids of ``motor_names`` (actuator order).

        Raises:
            KeyError: A motor without an id.
        """
        missing = [m for m in motor_names if m not in self.motor_ids]
        if missing:
            raise KeyError(f"{self.robot}'s wire has no id for motor(s) {', '.join(missing)}")
        return np.array([int(self.motor_ids[m]) for m in motor_names], dtype=np.int64)

    def messages(self) -> list[str]:
        """Every message this wire sends, its records' and the shared topics' (``pkg/Type``)."""
        return [
            self.target_array,
            self.sample_array,
            "sensor_msgs/Imu",
            "geometry_msgs/Twist",
            "std_msgs/Bool",
            "linkage_msgs/RobotInfo",
            "linkage_msgs/DeployState",
        ]


def coupling_shift(gain: np.ndarray, error: np.ndarray) -> np.ndarray:
    """``Σ_j≠i K_ij e_j / K_ii`` per motor: the target shift that makes a diagonal PD apply ``K e`` now.

    A zero diagonal has a zero row (a mapped gain is positive semi-definite): no shift.
    """
    diagonal = np.diag(gain)
    cross = (gain - np.diag(diagonal)) @ error
    safe = np.where(diagonal > 0.0, diagonal, 1.0)
    return np.where(diagonal > 0.0, cross / safe, 0.0)


def records_from_command(
    position: np.ndarray,
    velocity: np.ndarray,
    kp: np.ndarray,
    kd: np.ndarray,
    max_torque: np.ndarray,
    motor_pos: np.ndarray,
    motor_vel: np.ndarray,
) -> np.ndarray:
    """Per-motor records ``(n, 5)`` (columns :data:`TARGET_FIELDS`) for a motor command whose gains are per motor
    ``(n,)`` or coupled ``(n, n)`` (folded at the sampled motor state ``motor_pos``, ``motor_vel``)."""
    position = np.asarray(position, dtype=np.float64).copy()
    velocity = np.asarray(velocity, dtype=np.float64).copy()
    kp, kd = np.asarray(kp, dtype=np.float64), np.asarray(kd, dtype=np.float64)
    if kp.ndim == 2:
        position = position + coupling_shift(kp, position - motor_pos)
        kp = np.diag(kp).copy()
    if kd.ndim == 2:
        velocity = velocity + coupling_shift(kd, velocity - motor_vel)
        kd = np.diag(kd).copy()
    return np.column_stack([position, velocity, kp, kd, np.asarray(max_torque, dtype=np.float64)])


def decode_samples(records: Sequence[Any], id_field: str, ids: np.ndarray) -> np.ndarray:
    """Sample records (any order) as an array ``(n, 7)`` in ``ids`` order, columns :data:`SAMPLE_FIELDS`.

    Raises:
        WireError: An id missing, repeated or unknown, or a position, speed or torque that is not finite; the
            message names the id.
    """
    index = {int(i): k for k, i in enumerate(ids)}
    rows = np.full((len(ids), len(SAMPLE_FIELDS)), np.nan)
    seen: set[int] = set()
    for record in records:
        wire_id = int(getattr(record, id_field))
        if wire_id not in index:
            raise WireError(f"sample with unknown id {wire_id} (known: {min(index)}-{max(index)})")
        if wire_id in seen:
            raise WireError(f"two samples for id {wire_id}")
        seen.add(wire_id)
        values = [float(getattr(record, name)) for name in SAMPLE_FIELDS]
        if not np.isfinite(values[:3]).all():
            raise WireError(f"non-finite sample for id {wire_id}: pos {values[0]}, vel {values[1]}, tq {values[2]}")
        rows[index[wire_id]] = values
    missing = sorted(set(index) - seen)
    if missing:
        raise WireError(f"no sample for id(s) {', '.join(map(str, missing))}")
    return rows
