"""Forward kinematics, centre of mass and gravity joint torques of a serial-tree ``RobotModel`` (numpy)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np

from linkage_lab.description.model import Joint, RobotModel, combine_solids
from linkage_lab.kinematics.rotation import axis_rotation

#: Standard gravity (m/s²).
STANDARD_GRAVITY = 9.81


class Frame(NamedTuple):
    """A link frame in the world: ``p_world = rotation @ p_link + position``.

    Attributes:
        rotation: ``(3, 3)`` rotation matrix (link → world).
        position: ``(3,)`` origin of the link frame in the world (m).
    """

    rotation: np.ndarray
    position: np.ndarray


class KinematicTree:
    """The kinematic and mass model of a ``RobotModel``, ready for forward kinematics.

    Joints follow URDF semantics with ``rpy = 0``: the child frame is the parent frame moved by
    ``origin_m`` and then turned by the joint angle about ``axis`` (given in the child frame).
    Fixed joints take no angle. Link masses and centres of mass come from ``combine_solids``.

    Raises:
        ValueError: The joints do not form a tree with one root link.
    """

    def __init__(self, model: RobotModel) -> None:
        self.model = model
        children = {j.child for j in model.joints}
        roots = [link.name for link in model.links if link.name not in children]
        if len(roots) != 1:
            raise ValueError(f"expected one root link, found {roots}")
        self.base_link = roots[0]
        self.joints = _topological(model.joints, self.base_link)
        self.joint_by_name = {j.name: j for j in self.joints}
        self.mass_kg: dict[str, float] = {}
        self.com_local_m: dict[str, np.ndarray] = {}
        for link in model.links:
            mass, com, _ = combine_solids(link.solids)
            self.mass_kg[link.name] = mass
            self.com_local_m[link.name] = com

    @property
    def total_mass_kg(self) -> float:
        """Sum of all link masses (kg)."""
        return sum(self.mass_kg.values())

    def forward_kinematics(
        self,
        joint_pos: Mapping[str, float],
        base_rotation: np.ndarray | None = None,
        base_position: Iterable[float] | None = None,
    ) -> dict[str, Frame]:
        """World frame of every link.

        Args:
            joint_pos: Joint angle per revolute joint name (rad); joints left out are at 0.
            base_rotation: Orientation of the base link, ``(3, 3)``; ``None`` is the identity.
            base_position: Origin of the base link (m); ``None`` is the world origin.

        Raises:
            KeyError: ``joint_pos`` names a joint the model does not have.
        """
        unknown = set(joint_pos) - set(self.joint_by_name)
        if unknown:
            raise KeyError(f"unknown joints {sorted(unknown)}")
        rotation = np.eye(3) if base_rotation is None else np.asarray(base_rotation, dtype=float)
        position = np.zeros(3) if base_position is None else np.asarray(base_position, dtype=float)
        frames = {self.base_link: Frame(rotation, position)}
        for joint in self.joints:
            parent = frames[joint.parent]
            child_position = parent.position + parent.rotation @ np.asarray(joint.origin_m, dtype=float)
            child_rotation = parent.rotation
            if joint.kind == "revolute":
                child_rotation = parent.rotation @ axis_rotation(joint.axis, joint_pos.get(joint.name, 0.0))
            frames[joint.child] = Frame(child_rotation, child_position)
        return frames

    def link_com_world(self, frames: Mapping[str, Frame], link: str) -> np.ndarray:
        """Centre of mass of one link in the world (m)."""
        frame = frames[link]
        return frame.position + frame.rotation @ self.com_local_m[link]

    def center_of_mass(
        self, frames: Mapping[str, Frame], links: Iterable[str] | None = None
    ) -> tuple[float, np.ndarray]:
        """Mass (kg) and world centre of mass (m) of ``links`` (``None``: the whole robot).

        ``c = Σ m_i c_i / Σ m_i`` over the links' own centres of mass ``c_i``.
        """
        names = list(self.mass_kg) if links is None else list(links)
        mass = sum(self.mass_kg[name] for name in names)
        moment = sum(self.mass_kg[name] * self.link_com_world(frames, name) for name in names)
        return mass, moment / mass

    def subtree_links(self, joint_name: str) -> set[str]:
        """The links on the child side of a joint (its child and everything below it)."""
        below = {self.joint_by_name[joint_name].child}
        for joint in self.joints:  # parents come before children
            if joint.parent in below:
                below.add(joint.child)
        return below

    def joint_axis_world(self, frames: Mapping[str, Frame], joint_name: str) -> tuple[np.ndarray, np.ndarray]:
        """A joint's axis (unit vector) and a point on it (m), in the world."""
        joint = self.joint_by_name[joint_name]
        frame = frames[joint.child]
        axis = frame.rotation @ np.asarray(joint.axis, dtype=float)
        return axis / np.linalg.norm(axis), frame.position

    def grounded_joint_torque(
        self, frames: Mapping[str, Frame], joint_name: str, gravity_mps2: float = STANDARD_GRAVITY
    ) -> float:
        """Static torque of a joint whose child side stands on the ground and carries the rest (N·m).

        The links on the parent side hang on the joint; only gravity acts on them, so the torque
        the joint exerts on its child, about its axis ``u`` through the point ``o``, equals the
        moment of their weight:

            τ = u · Σ_{i ∉ subtree} (c_i − o) × m_i (0, 0, −g).

        Sign as the joint's own: ``τ > 0`` pushes the child towards positive angle.
        """
        axis, origin = self.joint_axis_world(frames, joint_name)
        below = self.subtree_links(joint_name)
        above = [name for name in self.mass_kg if name not in below]
        mass, com = self.center_of_mass(frames, above)
        return weight_torque(axis, origin, mass, com, gravity_mps2)


def weight_torque(
    axis: Iterable[float],
    point: Iterable[float],
    mass_kg: float,
    com_m: Iterable[float],
    gravity_mps2: float = STANDARD_GRAVITY,
) -> float:
    """Moment about an axis of a weight hanging at ``com_m`` (N·m): ``u · ((c − o) × (0, 0, −m g))``.

    This is the static torque a joint with axis ``u`` through ``o`` must exert on its grounded
    child to hold the mass ``m`` above it. For a pitch axis ``−y`` (+ = toes up), a centre of mass
    ``d`` ahead of the ankle gives ``−m g d``: a toes-down torque.
    """
    offset = np.asarray(com_m, dtype=float) - np.asarray(point, dtype=float)
    moment = np.cross(offset, np.array([0.0, 0.0, -mass_kg * gravity_mps2]))
    return float(np.asarray(axis, dtype=float) @ moment)


def _topological(joints: list[Joint], base_link: str) -> list[Joint]:
    """Joints ordered so that every joint comes after the joint of its parent link."""
    ordered: list[Joint] = []
    placed = {base_link}
    pending = list(joints)
    while pending:
        ready = [j for j in pending if j.parent in placed]
        if not ready:
            raise ValueError(f"joints not connected to {base_link!r}: {[j.name for j in pending]}")
        for joint in ready:
            ordered.append(joint)
            placed.add(joint.child)
            pending.remove(joint)
    return ordered
