"""MJCF text from a serial :class:`~linkage_lab.description.model.RobotModel`, with hooks for the linkages.

:func:`robot_document` turns the serial tree the URDF/USD is made of into an MJCF document: one body per
link (its frame = its joint's frame, as in the URDF), one hinge per revolute joint, the links' mass
properties and shapes, a floating (or fixed) base, a ground plane and an IMU site on the base. A robot's
closed-chain builder then adds its linkage parts through :class:`MjcfDocument` (bodies, joints, sites,
``connect`` equalities, motors) and sets the motor joints' armature and damping, so the closed-chain
model and the serial one are generated from the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from xml.etree import ElementTree as ET

import numpy as np

from linkage_lab.description.model import RobotModel, Solid, combine_solids

#: Name of the free joint of a floating base.
FREE_JOINT = "floating_base"
#: Collision bits: robot shapes touch the ground, never each other (the serial model has no self-collision).
_GROUND_BITS = {"contype": "1", "conaffinity": "1"}
_ROBOT_BITS = {"contype": "2", "conaffinity": "1"}
_VISUAL_BITS = {"contype": "0", "conaffinity": "0", "group": "1"}


@dataclass(frozen=True)
class GroundBox:
    """A fixed box on the ground (a step, a block), axis-aligned in the world.

    Attributes:
        center_m: Its centre in the world (m).
        half_size_m: Its half extents along x, y, z (m).
    """

    center_m: tuple[float, float, float]
    half_size_m: tuple[float, float, float]

    def __post_init__(self):
        if not all(math.isfinite(v) for v in (*self.center_m, *self.half_size_m)) or min(self.half_size_m) <= 0.0:
            raise ValueError(f"a ground box needs finite numbers and positive half sizes, got {self}")


@dataclass(frozen=True)
class Ground:
    """The terrain of a closed-chain run: the plane z = 0 plus fixed boxes on it. The robot starts standing on the
    plane at the origin, so the boxes go where it walks to (see :func:`stairs`).

    Attributes:
        boxes: The boxes; none is flat ground.
    """

    boxes: tuple[GroundBox, ...] = ()


def stairs(
    step_height_m: float, step_depth_m: float, steps: int, start_x_m: float = 0.5, width_m: float = 2.0
) -> Ground:
    """Steps up along +x: the first riser at ``start_x_m``, each step ``step_depth_m`` deep and ``step_height_m``
    higher than the one before, ``width_m`` wide, centred on y = 0."""
    if steps < 1 or step_height_m <= 0.0 or step_depth_m <= 0.0 or width_m <= 0.0:
        raise ValueError("stairs need at least one step and positive height, depth and width")
    boxes = []
    for i in range(steps):
        height = step_height_m * (i + 1)
        centre_x = start_x_m + step_depth_m * (i + 0.5)
        boxes.append(GroundBox((centre_x, 0.0, height / 2.0), (step_depth_m / 2.0, width_m / 2.0, height / 2.0)))
    return Ground(tuple(boxes))


@dataclass(frozen=True)
class SolverSettings:
    """MuJoCo settings of a closed-chain model.

    Attributes:
        timestep_s: Physics step (s).
        integrator: ``implicitfast`` integrates joint damping (the motors' ``B̄``) implicitly.
        solver: Constraint solver; Newton converges the loop closures in a few iterations.
        iterations: Solver iteration cap.
        tolerance: Solver tolerance (relative cost decrease).
        loop_time_constant_s: ``solref`` time constant of the loop closures (s); ``None``: twice the
            step, the stiffest the step resolves (MuJoCo's own floor).
        loop_damping_ratio: ``solref`` damping ratio of the loop closures.
        loop_solimp: ``solimp`` of the loop closures: an impedance near 1 makes them nearly rigid.
        friction: Ground contact friction (sliding, torsional, rolling).
        gravity_mps2: Gravity along −z (m/s²).
        ground: The terrain (:class:`Ground`): flat unless it has boxes.
    """

    timestep_s: float = 0.002
    integrator: str = "implicitfast"
    solver: str = "Newton"
    iterations: int = 100
    tolerance: float = 1e-10
    loop_time_constant_s: float | None = None
    loop_damping_ratio: float = 1.0
    loop_solimp: tuple[float, float, float] = (0.9999, 0.9999, 0.001)
    friction: tuple[float, float, float] = (1.0, 0.005, 0.0001)
    gravity_mps2: float = 9.81
    ground: Ground = Ground()

    @property
    def loop_solref(self) -> tuple[float, float]:
        """``(time constant s, damping ratio)`` of the loop closures."""
        tau = self.loop_time_constant_s if self.loop_time_constant_s is not None else 2.0 * self.timestep_s
        return tau, self.loop_damping_ratio


def fmt(values: float | Iterable[float]) -> str:
    """Numbers as MJCF attribute text (9 significant digits, deterministic; round-off such as sin π is 0)."""
    if isinstance(values, (int, float, np.floating)):
        values = [values]
    return " ".join(f"{float(v) if abs(float(v)) > 1e-15 else 0.0:.9g}" for v in values)


def inertial_element(mass_kg: float, com_m: Sequence[float], inertia_kgm2: np.ndarray) -> ET.Element:
    """An ``<inertial>``: mass (kg), centre of mass (m) and the full inertia about it (kg·m², 3×3)."""
    i = np.asarray(inertia_kgm2, dtype=float)
    full = (i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2])
    return ET.Element("inertial", pos=fmt(com_m), mass=fmt(mass_kg), fullinertia=fmt(full))


def bar_inertial(mass_kg: float, start_m: Sequence[float], end_m: Sequence[float]) -> ET.Element:
    """A thin bar's ``<inertial>``, centred between its ends, with ``m L² / 12`` about every axis.

    The isotropic inertia overstates the spin about the bar's own axis; that keeps the spin of a rod on a
    ball joint (a motion the loop closure does not see) as well conditioned as its swing.
    """
    start, end = np.asarray(start_m, dtype=float), np.asarray(end_m, dtype=float)
    inertia = max(mass_kg * float(np.sum((end - start) ** 2)) / 12.0, 1e-9)
    return ET.Element("inertial", pos=fmt((start + end) / 2.0), mass=fmt(mass_kg), diaginertia=fmt([inertia] * 3))


class MjcfDocument:
    """An MJCF document under construction: the robot's tree plus the hooks a closed-chain builder uses.

    Args:
        root: The ``<mujoco>`` element, with ``worldbody``, ``equality``, ``actuator`` and ``sensor``.
        settings: The solver settings it was made with.
        base_body: The robot's base (the one link that is no joint's child).
        floating_base: Whether the base has a free joint.
        imu_site: The IMU site on the base.
    """

    def __init__(
        self,
        root: ET.Element,
        settings: SolverSettings,
        base_body: str,
        floating_base: bool = True,
        imu_site: str = "imu",
    ):
        self.root = root
        self.settings = settings
        self.base_body = base_body
        self.floating_base = floating_base
        self.imu_site = imu_site

    @property
    def name(self) -> str:
        """The robot's name (the model's)."""
        return self.root.get("model", "")

    def _section(self, tag: str) -> ET.Element:
        found = self.root.find(tag)
        return ET.SubElement(self.root, tag) if found is None else found

    def body(self, name: str) -> ET.Element:
        """The ``<body>`` named ``name``; raises ``KeyError`` if there is none."""
        found = self.root.find(f".//body[@name='{name}']")
        if found is None:
            raise KeyError(f"MJCF has no body {name!r}")
        return found

    def joint(self, name: str) -> ET.Element:
        """The ``<joint>`` named ``name``; raises ``KeyError`` if there is none."""
        found = self.root.find(f".//joint[@name='{name}']")
        if found is None:
            raise KeyError(f"MJCF has no joint {name!r}")
        return found

    def set_joint(self, name: str, **attributes: float | str) -> None:
        """Set attributes of joint ``name`` (e.g. ``armature``, ``damping``; numbers are formatted)."""
        node = self.joint(name)
        for key, value in attributes.items():
            node.set(key, value if isinstance(value, str) else fmt(value))

    def add_body(self, parent: str, name: str, pos_m: Sequence[float], inertial: ET.Element) -> ET.Element:
        """A new body in ``parent`` at ``pos_m`` (parent frame, m), axes aligned with its parent."""
        node = ET.SubElement(self.body(parent), "body", name=name, pos=fmt(pos_m))
        node.append(inertial)
        return node

    def add_joint(self, body: str, name: str, kind: str = "hinge", axis: Sequence[float] | None = None, **attrs):
        """A joint ``kind`` (``hinge`` or ``ball``) at the origin of ``body``; ``attrs`` as :meth:`set_joint`."""
        node = ET.Element("joint", name=name, type=kind)
        if axis is not None:
            node.set("axis", fmt(axis))
        self.body(body).append(node)
        self.set_joint(name, **attrs)
        return node

    def add_site(self, body: str, name: str, pos_m: Sequence[float]) -> ET.Element:
        """A site in ``body`` at ``pos_m`` (body frame, m)."""
        return ET.SubElement(self.body(body), "site", name=name, pos=fmt(pos_m), size="0.004")

    def add_visual_capsule(self, body: str, start_m: Sequence[float], end_m: Sequence[float], radius_m: float):
        """A massless, non-colliding capsule from ``start_m`` to ``end_m`` in ``body`` (for pictures)."""
        if float(np.linalg.norm(np.subtract(end_m, start_m))) < 1e-9:
            return None
        fromto = fmt([*start_m, *end_m])
        return ET.SubElement(
            self.body(body), "geom", type="capsule", fromto=fromto, size=fmt(radius_m), mass="0", **_VISUAL_BITS
        )

    def add_connect(self, site1: str, site2: str) -> ET.Element:
        """A loop closure: an equality ``connect`` holding ``site1`` on ``site2`` (a ball joint), with the
        settings' ``solref``/``solimp``."""
        return ET.SubElement(
            self._section("equality"),
            "connect",
            site1=site1,
            site2=site2,
            solref=fmt(self.settings.loop_solref),
            solimp=fmt(self.settings.loop_solimp),
        )

    def add_relative_stop(self, name: str, joint: str, minus: str, range_rad: Sequence[float]) -> ET.Element:
        """A stop on the angle of ``joint`` relative to ``minus`` (hinges): ``joint - minus`` kept in ``range_rad``,
        a limited fixed tendon, as stiff as the loop closures (the settings' ``solref``/``solimp``). A loop's motor
        can then meet the stop its output meets, instead of pushing the loop through a fold against it."""
        tendon = ET.SubElement(
            self._section("tendon"),
            "fixed",
            name=name,
            limited="true",
            range=fmt(range_rad),
            solreflimit=fmt(self.settings.loop_solref),
            solimplimit=fmt(self.settings.loop_solimp),
        )
        ET.SubElement(tendon, "joint", joint=joint, coef="1")
        ET.SubElement(tendon, "joint", joint=minus, coef="-1")
        return tendon

    def add_motor(self, joint: str, peak_torque_nm: float) -> ET.Element:
        """A torque actuator on ``joint`` (gear 1) whose ``ctrl`` is clamped to ``±peak_torque_nm``."""
        return ET.SubElement(
            self._section("actuator"),
            "motor",
            name=joint,
            joint=joint,
            gear="1",
            ctrllimited="true",
            ctrlrange=fmt([-peak_torque_nm, peak_torque_nm]),
        )

    def to_xml(self) -> str:
        """The MJCF text (deterministic)."""
        root = ET.fromstring(ET.tostring(self.root))
        # Empty sections are legal but noisy.
        for tag in ("equality", "tendon", "actuator", "sensor"):
            node = root.find(tag)
            if node is not None and len(node) == 0:
                root.remove(node)
        ET.indent(root, space="  ")
        return ET.tostring(root, encoding="unicode") + "\n"


def _shape(solid: Solid, collide: bool) -> ET.Element | None:
    bits = _ROBOT_BITS if collide else _VISUAL_BITS
    if solid.kind == "box":
        size = fmt(np.asarray(solid.size_m) / 2.0)
        return ET.Element("geom", type="box", pos=fmt(solid.center_m), size=size, mass="0", **bits)
    if solid.kind == "cylinder":
        radius, length = solid.size_m
        size = fmt([radius, length / 2.0])
        return ET.Element("geom", type="cylinder", pos=fmt(solid.center_m), size=size, mass="0", **bits)
    return None


def robot_document(
    model: RobotModel,
    settings: SolverSettings | None = None,
    floating_base: bool = True,
    base_pos_m: Sequence[float] = (0.0, 0.0, 1.0),
    imu_site: str = "imu",
) -> MjcfDocument:
    """The serial tree of ``model`` as an MJCF document.

    Each link is a body whose frame is its joint's frame (joint origins carry no rotation in the
    description); each revolute joint a hinge with its range, no armature and no damping (the
    closed-chain builder sets those on the motor joints); a fixed joint a rigid child body. The base is
    the one link that is no joint's child; it gets a free joint (``floating_base``) and an IMU site
    (``imu_site``) at its origin with a gyro, an accelerometer and an orientation sensor.

    Args:
        model: The serial description.
        settings: Solver settings; ``None``: :class:`SolverSettings` defaults.
        floating_base: A free joint on the base; ``False`` fixes it to the world at ``base_pos_m``.
        base_pos_m: Initial (or fixed) base position in the world (m).
        imu_site: Name of the IMU site on the base.

    Raises:
        ValueError: The joints do not form one tree.
    """
    settings = settings or SolverSettings()
    links = {link.name: link for link in model.links}
    children: dict[str, list] = {}
    for joint in model.joints:
        children.setdefault(joint.parent, []).append(joint)
    roots = sorted(set(links) - {j.child for j in model.joints})
    if len(roots) != 1:
        raise ValueError(f"robot {model.name!r} needs exactly one base link, found {roots}")

    root = ET.Element("mujoco", model=model.name)
    ET.SubElement(root, "compiler", angle="radian", inertiafromgeom="false", autolimits="true")
    ET.SubElement(
        root,
        "option",
        timestep=fmt(settings.timestep_s),
        integrator=settings.integrator,
        solver=settings.solver,
        iterations=str(settings.iterations),
        tolerance=fmt(settings.tolerance),
        gravity=fmt([0.0, 0.0, -settings.gravity_mps2]),
    )
    ET.SubElement(ET.SubElement(root, "default"), "geom", friction=fmt(settings.friction))
    world = ET.SubElement(root, "worldbody")
    ET.SubElement(world, "light", pos="0 0 3", dir="0 0 -1", directional="true")
    ET.SubElement(world, "geom", name="ground", type="plane", size="0 0 1", **_GROUND_BITS)
    for index, box in enumerate(settings.ground.boxes):
        ET.SubElement(
            world,
            "geom",
            name=f"ground_box_{index}",
            type="box",
            pos=fmt(box.center_m),
            size=fmt(box.half_size_m),
            **_GROUND_BITS,
        )

    def add_link(parent: ET.Element, name: str, pos: Sequence[float], joint) -> None:
        body = ET.SubElement(parent, "body", name=name, pos=fmt(pos))
        if joint is None and floating_base:
            ET.SubElement(body, "freejoint", name=FREE_JOINT)
        elif joint is not None and joint.kind == "revolute":
            lower, upper = joint.limit_rad
            ET.SubElement(body, "joint", name=joint.name, type="hinge", axis=fmt(joint.axis), range=fmt([lower, upper]))
        elif joint is not None and joint.kind != "fixed":
            raise ValueError(f"joint {joint.name!r}: unsupported kind {joint.kind!r}")
        solids = links[name].solids
        body.append(inertial_element(*combine_solids(solids)))
        for solid in solids:
            shape = _shape(solid, solid.collide)
            if shape is not None:
                body.append(shape)
        if joint is None:
            ET.SubElement(body, "site", name=imu_site, pos="0 0 0", size="0.01")
        for child in children.get(name, []):
            add_link(body, child.child, child.origin_m, child)

    add_link(world, roots[0], base_pos_m, None)
    sensor = ET.SubElement(root, "sensor")
    ET.SubElement(sensor, "gyro", name=f"{imu_site}_gyro", site=imu_site)
    ET.SubElement(sensor, "accelerometer", name=f"{imu_site}_accelerometer", site=imu_site)
    ET.SubElement(sensor, "framequat", name=f"{imu_site}_quat", objtype="site", objname=imu_site)
    ET.SubElement(root, "equality")
    ET.SubElement(root, "actuator")
    return MjcfDocument(root, settings, roots[0], floating_base, imu_site)
