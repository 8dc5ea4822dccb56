"""Marvin's wire for the deploy runtime: ``marvin_msgs`` MotorTarget / MotorSample records, one per motor.

Marvin's ankles have no motor at the joint: each is two RS03 crank motors on the shin, so the wire addresses
motors, not joints. The runtime drives the ankles in the bridge's ``motor_pd`` mode (crank targets from the IK
graph and the coupled 2 x 2 motor gains, folded into per-motor records at each sample): ``host_torque`` needs a
joint-space PD at the physics rate, which a 50 Hz wire cannot carry.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from linkage_lab.deploy.wire import WireSpec

MSG_DIR = Path(__file__).resolve().parent / "msg"

#: Marvin's motor ids: legs left then right (hip yaw, roll, pitch, knee, ankle crank a, b), then the arms.
MOTOR_IDS = {
    name: number
    for number, name in enumerate(
        [
            f"{side}_{motor}"
            for side in ("left", "right")
            for motor in ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_motor_a", "ankle_motor_b")
        ]
        + [f"{side}_{motor}" for side in ("left", "right") for motor in ("shoulder_pitch", "elbow")],
        start=1,
    )
}


def marvin_wire(chain: Any) -> WireSpec:
    """Marvin's :class:`WireSpec` (the model's motors must all have an id in :data:`MOTOR_IDS`)."""
    return WireSpec(
        robot="marvin",
        msg_dir=MSG_DIR,
        target_array="marvin_msgs/MotorTargetArray",
        sample_array="marvin_msgs/MotorSampleArray",
        target_record="marvin_msgs/MotorTarget",
        sample_record="marvin_msgs/MotorSample",
        sample_id_field="motor_id",
        motor_ids=MOTOR_IDS,
        target_topic="rt/motor_targets",
        sample_topic="rt/motor_samples",
        io_options={"ankle_mode": "motor_pd"},
        # On the soft start's PD alone (no balance) the humanoid tips over within a second: it starts on its gantry.
        starts_on_stand=True,
    )
