"""Marvin's joints and their policy order (docs/design/robots.md §2): torch-free, for the robot-side code too."""

from __future__ import annotations

SIDES = ("left", "right")
LEG_JOINTS = ("hip_yaw", "hip_roll", "hip_pitch", "knee", "ankle_pitch", "ankle_roll")
ARM_JOINTS = ("shoulder_pitch", "elbow")
#: Marvin's joint order for policy I/O: legs (left, right) body to foot, then arms. Pinned on the
#: articulation so that it never depends on the physics backend.
JOINT_NAMES: tuple[str, ...] = tuple(f"{s}_{j}" for s in SIDES for j in LEG_JOINTS) + tuple(
    f"{s}_{j}" for s in SIDES for j in ARM_JOINTS
)
