"""Assembling a closed-chain pose: rods turned onto their targets, the base set on the ground."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def rotation_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The unit quaternion ``(w, x, y, z)`` of the shortest rotation taking direction ``a`` to ``b``.

    Raises:
        ValueError: ``a`` and ``b`` point in opposite directions (the shortest rotation is not unique).
    """
    a, b = np.asarray(a, float) / np.linalg.norm(a), np.asarray(b, float) / np.linalg.norm(b)
    cosine = float(a @ b)
    if cosine < -1.0 + 1e-12:
        raise ValueError("directions are opposite: the shortest rotation is not unique")
    quat = np.array([1.0 + cosine, *np.cross(a, b)])
    return quat / np.linalg.norm(quat)


def assemble_rods(model: Any, data: Any, rods: Sequence[Any]) -> None:
    """Turn each rod on its joint so that its end ``site`` points at its ``target`` (a :class:`~.model.Rod`).

    A ball joint gets the shortest rotation from its rest direction; a hinge the angle about its axis
    between the two directions projected onto the hinge's plane. The rods' lengths are the loop's:
    once the motors sit at the linkage's inverse kinematics, pointing closes the loop exactly.
    """
    import mujoco

    for rod in rods:
        joint = model.joint(rod.joint)
        qpos = int(model.jnt_qposadr[joint.id])
        kind = int(model.jnt_type[joint.id])
        if kind == mujoco.mjtJoint.mjJNT_BALL:
            data.qpos[qpos : qpos + 4] = (1.0, 0.0, 0.0, 0.0)
        elif kind == mujoco.mjtJoint.mjJNT_HINGE:
            data.qpos[qpos] = 0.0
        else:
            raise ValueError(f"rod joint {rod.joint!r} must be a ball or a hinge")
        mujoco.mj_kinematics(model, data)
        anchor = data.xanchor[joint.id]
        current = data.site_xpos[model.site(rod.site).id] - anchor
        wanted = data.site_xpos[model.site(rod.target).id] - anchor
        if kind == mujoco.mjtJoint.mjJNT_BALL:
            # Ball quaternions rotate the body's rest frame: express both directions in it.
            frame = data.xmat[model.jnt_bodyid[joint.id]].reshape(3, 3)
            data.qpos[qpos : qpos + 4] = rotation_between(frame.T @ current, frame.T @ wanted)
        else:
            axis = data.xaxis[joint.id]
            current, wanted = current - (current @ axis) * axis, wanted - (wanted @ axis) * axis
            data.qpos[qpos] = float(np.arctan2(np.cross(current, wanted) @ axis, current @ wanted))
    mujoco.mj_kinematics(model, data)


def lowest_point_z(model: Any, data: Any) -> float:
    """Height of the lowest point of the robot's colliding geoms (not the world's ground) (m), after kinematics.

    Boxes are exact (their corners); other shapes use their bounding sphere.
    """
    import mujoco

    lowest = np.inf
    for geom in range(model.ngeom):
        if model.geom_contype[geom] == 0 and model.geom_conaffinity[geom] == 0 or model.geom_bodyid[geom] == 0:
            continue
        kind = int(model.geom_type[geom])
        if kind == mujoco.mjtGeom.mjGEOM_PLANE:
            continue
        centre = data.geom_xpos[geom]
        if kind == mujoco.mjtGeom.mjGEOM_BOX:
            frame = data.geom_xmat[geom].reshape(3, 3)
            depth = float(np.abs(frame[2]) @ model.geom_size[geom])
        else:
            depth = float(model.geom_rbound[geom])
        lowest = min(lowest, float(centre[2]) - depth)
    return lowest


def lift_onto_ground(model: Any, data: Any, free_qpos: int, clearance_m: float = 0.0) -> None:
    """Shift the floating base (free joint at ``free_qpos``) vertically so the lowest colliding point is
    ``clearance_m`` above z = 0."""
    import mujoco

    mujoco.mj_kinematics(model, data)
    data.qpos[free_qpos + 2] += clearance_m - lowest_point_z(model, data)
    mujoco.mj_kinematics(model, data)
