"""The Limit's wire for the deploy runtime: ``limit_msgs`` JointTarget / JointSample records by canonical joint id.

A knee id's record carries the knee MOTOR (its encoder reads the shank's absolute angle, hip + knee), as the
bundle's ``deploy.json`` says (``wire_angles = "motor"``); the ``.msg`` files are in ``msg/limit_msgs/msg``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from linkage_lab.deploy.wire import WireSpec
from linkage_lab.robots.limit.joints import JOINT_IDS
from linkage_lab.robots.limit.sim2sim import wire_motor_names

MSG_DIR = Path(__file__).resolve().parent / "msg"


def limit_wire(chain: Any) -> WireSpec:
    """The Limit's :class:`WireSpec` on its closed-chain model's motors."""
    return WireSpec(
        robot="limit",
        msg_dir=MSG_DIR,
        target_array="limit_msgs/JointTargetArray",
        sample_array="limit_msgs/JointSampleArray",
        target_record="limit_msgs/JointTarget",
        sample_record="limit_msgs/JointSample",
        sample_id_field="joint_id",
        motor_ids=dict(zip(wire_motor_names(chain), JOINT_IDS, strict=True)),
        target_topic="rt/joint_targets",
        sample_topic="rt/joint_samples",
    )
