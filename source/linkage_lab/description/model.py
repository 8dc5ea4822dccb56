"""A minimal robot-description model (links, joints, solids) and its URDF writer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from xml.etree import ElementTree as ET

import numpy as np


@dataclass(frozen=True)
class Solid:
    """A rigid solid used for mass properties and, optionally, collision and visual shapes.

    Args:
        kind: ``"box"``, ``"cylinder"`` (axis along the link's z) or ``"point"``.
        mass_kg: Mass (kg).
        center_m: Centre in the link frame (m).
        size_m: Box edge lengths (x, y, z) for a box; (radius, length) for a cylinder (m).
        collide: Whether the solid is also a collision shape.
    """

    kind: str
    mass_kg: float
    center_m: tuple[float, float, float]
    size_m: tuple[float, ...] = ()
    collide: bool = False

    def inertia_about_center(self) -> np.ndarray:
        """Inertia tensor about the solid's own centre (kg·m²)."""
        m = self.mass_kg
        if self.kind == "box":
            x, y, z = self.size_m
            return np.diag([m * (y * y + z * z) / 12, m * (x * x + z * z) / 12, m * (x * x + y * y) / 12])
        if self.kind == "cylinder":
            r, h = self.size_m
            side = m * (3 * r * r + h * h) / 12
            return np.diag([side, side, m * r * r / 2])
        if self.kind == "point":
            return np.zeros((3, 3))
        raise ValueError(f"unknown solid kind {self.kind!r}")


def combine_solids(solids: list[Solid]) -> tuple[float, np.ndarray, np.ndarray]:
    """Total mass, centre of mass and inertia about that centre of a set of solids.

    Uses the parallel-axis theorem: ``I = Σ (I_i + m_i (|d|² 1 − d dᵀ))`` with ``d`` the offset
    of each solid's centre from the composite centre of mass.
    """
    mass = sum(s.mass_kg for s in solids)
    if mass <= 0:
        raise ValueError("a link needs a positive mass")
    com = sum(s.mass_kg * np.asarray(s.center_m) for s in solids) / mass
    inertia = np.zeros((3, 3))
    for s in solids:
        d = np.asarray(s.center_m) - com
        inertia += s.inertia_about_center() + s.mass_kg * (d @ d * np.eye(3) - np.outer(d, d))
    return mass, com, inertia


@dataclass
class Link:
    """A rigid link: its solids give its mass properties and shapes."""

    name: str
    solids: list[Solid] = field(default_factory=list)


@dataclass
class Joint:
    """A joint between two links (URDF semantics).

    Args:
        name: Joint name.
        kind: ``"revolute"`` or ``"fixed"``.
        parent: Parent link name.
        child: Child link name.
        origin_m: Child frame origin in the parent frame (m).
        axis: Rotation axis in the child (= joint) frame, unit vector.
        limit_rad: (lower, upper) position limits (rad); ``None`` for fixed joints.
        effort_nm: Effort limit (N·m).
        velocity_rads: Velocity limit (rad/s).
    """

    name: str
    kind: str
    parent: str
    child: str
    origin_m: tuple[float, float, float]
    axis: tuple[float, float, float] = (0.0, 1.0, 0.0)
    limit_rad: tuple[float, float] | None = None
    effort_nm: float = 0.0
    velocity_rads: float = 0.0


@dataclass
class RobotModel:
    """A serial-tree robot description."""

    name: str
    links: list[Link]
    joints: list[Joint]

    def total_mass(self) -> float:
        """Sum of all link masses (kg)."""
        return sum(combine_solids(link.solids)[0] for link in self.links)

    def actuated_joint_names(self) -> list[str]:
        """Names of the revolute joints in description order."""
        return [j.name for j in self.joints if j.kind == "revolute"]


def _fmt(values) -> str:
    return " ".join(f"{float(v):.9g}" for v in values)


def to_urdf(model: RobotModel, header_comment: str = "") -> str:
    """Serialise ``model`` as URDF text (deterministic, so artifacts can be diffed)."""
    robot = ET.Element("robot", name=model.name)
    if header_comment:
        robot.append(ET.Comment(f" {header_comment} "))
    for link in model.links:
        node = ET.SubElement(robot, "link", name=link.name)
        mass, com, inertia = combine_solids(link.solids)
        inertial = ET.SubElement(node, "inertial")
        ET.SubElement(inertial, "origin", xyz=_fmt(com), rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=f"{mass:.9g}")
        ET.SubElement(
            inertial,
            "inertia",
            ixx=f"{inertia[0, 0]:.9g}",
            ixy=f"{inertia[0, 1]:.9g}",
            ixz=f"{inertia[0, 2]:.9g}",
            iyy=f"{inertia[1, 1]:.9g}",
            iyz=f"{inertia[1, 2]:.9g}",
            izz=f"{inertia[2, 2]:.9g}",
        )
        for solid in link.solids:
            if solid.kind == "point":
                continue
            for tag in ("visual", "collision") if solid.collide else ("visual",):
                shape = ET.SubElement(node, tag)
                ET.SubElement(shape, "origin", xyz=_fmt(solid.center_m), rpy="0 0 0")
                geometry = ET.SubElement(shape, "geometry")
                if solid.kind == "box":
                    ET.SubElement(geometry, "box", size=_fmt(solid.size_m))
                else:
                    ET.SubElement(
                        geometry, "cylinder", radius=f"{solid.size_m[0]:.9g}", length=f"{solid.size_m[1]:.9g}"
                    )
    for joint in model.joints:
        node = ET.SubElement(robot, "joint", name=joint.name, type=joint.kind)
        ET.SubElement(node, "parent", link=joint.parent)
        ET.SubElement(node, "child", link=joint.child)
        ET.SubElement(node, "origin", xyz=_fmt(joint.origin_m), rpy="0 0 0")
        if joint.kind == "revolute":
            ET.SubElement(node, "axis", xyz=_fmt(joint.axis))
            lower, upper = joint.limit_rad
            ET.SubElement(
                node,
                "limit",  # the URDF tag, not a robot
                lower=f"{lower:.9g}",
                upper=f"{upper:.9g}",
                effort=f"{joint.effort_nm:.9g}",
                velocity=f"{joint.velocity_rads:.9g}",
            )
    ET.indent(robot, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def cylinder_between(
    mass_kg: float, radius_m: float, top_z_m: float, bottom_z_m: float, collide: bool = False
) -> Solid:
    """A cylinder along z spanning ``bottom_z_m`` … ``top_z_m`` in its link frame."""
    length = abs(top_z_m - bottom_z_m)
    return Solid("cylinder", mass_kg, (0.0, 0.0, (top_z_m + bottom_z_m) / 2), (radius_m, max(length, 1e-3)), collide)


DEG = math.pi / 180.0
