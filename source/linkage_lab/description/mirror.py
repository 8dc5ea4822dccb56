"""A robot's left-right mirror in joint space, found from its description's geometry alone.

Reflecting a robot in its sagittal plane (the base's x-z plane, ``R = diag(1, −1, 1)``) maps joint
``m`` at position ``p`` with axis ``a`` onto the place ``R p`` with axis ``R a``. A rotation by ``q``
about ``a`` reflects into a rotation by ``−q`` about ``R a`` (a reflection reverses the sense of
rotation), so the joint ``j`` found at ``R p`` with axis ``a_j = ±R a`` reads::

    q_j' = −(a_j · R a) q_m

which keeps pitch angles (axis along y: ``R a = −a``) and negates roll and yaw angles. Joints are
paired by where they sit and how they turn at the zero pose, never by their names; a joint on the
plane (a waist yaw) is its own mirror. A description whose joints do not pair up this way is not
left-right symmetric, and :func:`joint_mirror` says which joint has no twin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from linkage_lab.description.model import RobotModel

#: The reflection in the sagittal plane (y → −y), base frame.
SAGITTAL_REFLECTION = np.diag([1.0, -1.0, 1.0])
#: Position (m) and axis-alignment tolerance for two joints to be each other's mirror.
MIRROR_TOLERANCE = 1e-6


class MirrorError(ValueError):
    """The description is not left-right symmetric: a joint has no (or more than one) mirror twin."""


@dataclass(frozen=True)
class JointMirror:
    """Joint-space mirror in one joint order: ``mirrored[j] = sign[j] · values[index[j]]``.

    Attributes:
        joint_names: The joint order the mirror acts in.
        index: For each joint, the position of its mirror twin in that order.
        sign: ``+1`` where the twin's angle keeps its sign (pitch), ``−1`` where it flips (roll, yaw).
    """

    joint_names: tuple[str, ...]
    index: tuple[int, ...]
    sign: tuple[float, ...]

    def twin(self, joint_name: str) -> str:
        """The name of ``joint_name``'s mirror twin."""
        return self.joint_names[self.index[self.joint_names.index(joint_name)]]

    def apply(self, values: np.ndarray) -> np.ndarray:
        """Mirror joint values (angles, velocities, targets, actions) along the last axis."""
        values = np.asarray(values)
        return values[..., list(self.index)] * np.asarray(self.sign)


def zero_pose_joint_frames(model: RobotModel) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every revolute joint's position and unit axis in the root link's frame at the zero pose.

    The description's joint origins are translations only (no rotation), so a joint's axis in the root
    frame is its own axis and its position is the sum of the origins down the chain.
    """
    by_child = {joint.child: joint for joint in model.joints}
    frames: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for joint in model.joints:
        position = np.zeros(3)
        link = joint.child
        while link in by_child:
            position += np.asarray(by_child[link].origin_m, dtype=float)
            link = by_child[link].parent
        if joint.kind == "revolute":
            axis = np.asarray(joint.axis, dtype=float)
            frames[joint.name] = (position, axis / np.linalg.norm(axis))
    return frames


def joint_mirror(model: RobotModel, joint_names: Sequence[str], tolerance: float = MIRROR_TOLERANCE) -> JointMirror:
    """The left-right mirror of ``model`` in the joint order ``joint_names`` (module docstring).

    Raises:
        MirrorError: A joint of ``joint_names`` is not a revolute joint of ``model``, or has no twin at
            its mirrored place with a mirrored axis, or several.
    """
    frames = zero_pose_joint_frames(model)
    names = tuple(joint_names)
    missing = [name for name in names if name not in frames]
    if missing:
        raise MirrorError(f"{model.name}: no revolute joint {', '.join(missing)} in the description")
    index, sign = [], []
    for name in names:
        position, axis = frames[name]
        place, turn = SAGITTAL_REFLECTION @ position, SAGITTAL_REFLECTION @ axis
        twins = [
            k
            for k, other in enumerate(names)
            if np.linalg.norm(frames[other][0] - place) <= tolerance
            and abs(abs(float(frames[other][1] @ turn)) - 1.0) <= tolerance
        ]
        if len(twins) != 1:
            found = ", ".join(names[k] for k in twins) or "none"
            raise MirrorError(
                f"{model.name}: joint {name} at y = {position[1]:+.4f} m has no single mirror twin "
                f"at y = {place[1]:+.4f} m with a mirrored axis (found: {found}); the robot is not left-right symmetric"
            )
        index.append(twins[0])
        # The twin m of joint j: q_j' = −(a_j · R a_m) q_m, and R is its own inverse, so a_j · R a_m = a_m · R a_j.
        sign.append(-round(float(frames[names[twins[0]]][1] @ turn)))
    return JointMirror(names, tuple(index), tuple(float(s) for s in sign))
