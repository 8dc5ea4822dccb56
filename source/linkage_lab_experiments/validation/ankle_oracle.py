"""Closed-chain MuJoCo oracle of Marvin's 2-RSU + U ankle (docs/design/s3n.md §5), and the serial ankle it judges.

The oracle is the real loop, built from the geometry alone (never from the library's IK or ``J``):
the shin is the world; the foot hangs on the universal joint (``pitch`` about −y, then ``roll``
about +x, as the serial tree); each motor is a hinge about −y at its centre ``M`` carrying the rotor's
reflected inertia ``J̄`` as armature and a crank of radius ``r``; a rod on a ball joint at the crank
tip reaches for its rod end on the foot, where an equality ``connect`` closes the loop. So the motors'
inertia reaches the foot through the true, pose-dependent linkage, velocity terms included. The serial
ankle is the tree the task simulates: the same foot on two hinges, with whatever armature and explicit
torque the ankle drive's model gives it.

Motor hinge angles are the library's motor coordinates ``φ = θ − π``: the crank tip at ``φ`` is
``M + r (cos θ, 0, sin θ)``, a rotation about −y (:mod:`linkage_lab.kinematics.rsu_ankle`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from linkage_lab.dynamics.serial_leg import full_mass_matrix
from linkage_lab.kinematics.rsu_geometry import RSUAnkleGeometry
from linkage_lab.robots.registry import get_robot
from linkage_lab.sim2sim.assembly import rotation_between
from linkage_lab_experiments.analysis import pick_robot

_ROD_SITES = ("rod_end_a", "rod_end_b")
_FOOT_SITES = ("foot_pin_a", "foot_pin_b")


@dataclass(frozen=True)
class RigidPart:
    """Mass (kg), centre of mass (m) and inertia about it (kg·m², 3×3) of a body, in its joint frame."""

    mass_kg: float
    com_m: tuple[float, float, float]
    inertia_kgm2: tuple[tuple[float, float, float], ...]

    def inertial_xml(self) -> str:
        """The MJCF ``<inertial>`` element."""
        i = np.asarray(self.inertia_kgm2, dtype=float)
        full = " ".join(repr(float(v)) for v in (i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]))
        com = " ".join(repr(float(v)) for v in self.com_m)
        return f'<inertial pos="{com}" mass="{float(self.mass_kg)!r}" fullinertia="{full}"/>'


def ankle_parts(robot: str | None = None, side: str = "left") -> tuple[RigidPart, RigidPart]:
    """A robot's ankle cross and foot from its generated description (its ``ankle_parts`` extra).

    Args:
        robot: ``None``: the only robot with the extra.
        side: ``left`` or ``right``.
    """

    cross, foot = get_robot(pick_robot("ankle_parts", robot)).extra("ankle_parts")(side)
    return RigidPart(*cross), RigidPart(*foot)


@dataclass(frozen=True)
class AnkleOracleCfg:
    """The closed-chain ankle.

    Attributes:
        geometry: The linkage (crank radius, motor centres, rod ends, neutral crank angle).
        cross: The universal joint's spider (pitch body).
        foot: The foot (roll body).
        reflected_inertia_kgm2: ``J̄`` of each motor (kg·m²), as its hinge's armature.
        crank_mass_kg: A crank, a uniform bar from the motor axis (kg).
        rod_mass_kg: A rod, a uniform bar (kg). Light but not negligible: a massless rod leaves the
            loop closure's solve ill-conditioned.
        timestep_s: Physics step (s).
        constraint_time_constant_s: ``solref`` time constant of the loop closures (s); ``None``: twice
            the step, the stiffest the step resolves.
    """

    geometry: RSUAnkleGeometry
    cross: RigidPart
    foot: RigidPart
    reflected_inertia_kgm2: float = 0.02
    crank_mass_kg: float = 0.02
    rod_mass_kg: float = 0.02
    timestep_s: float = 0.005
    constraint_time_constant_s: float | None = None


def _header(name: str, dt: float) -> str:
    # Euler with implicit joint damping, as the task's MuJoCo-Warp solver; no contacts.
    return (
        f'<mujoco model="{name}">\n'
        f'  <option timestep="{dt!r}" integrator="Euler" gravity="0 0 -9.81">\n'
        '    <flag contact="disable"/>\n'
        "  </option>\n"
    )


def _foot_chain_xml(cross: RigidPart, foot: RigidPart, pitch_joint: str, roll_joint: str, foot_extra: str) -> str:
    return (
        '    <body name="cross" pos="0 0 0">\n'
        f"      {pitch_joint}\n"
        f"      {cross.inertial_xml()}\n"
        '      <body name="foot" pos="0 0 0">\n'
        f"        {roll_joint}\n"
        f"        {foot.inertial_xml()}\n"
        f"{foot_extra}"
        "      </body>\n"
        "    </body>\n"
    )


def _hinge(name: str, axis: str, armature: float, damping: float = 0.0) -> str:
    return f'<joint name="{name}" type="hinge" axis="{axis}" armature="{float(armature)!r}" damping="{damping!r}"/>'


def serial_ankle_mjcf(cross: RigidPart, foot: RigidPart, armature: Sequence[float], dt: float) -> str:
    """The serial ankle: pitch (−y) then roll (+x) hinges with per-joint ``armature`` (kg·m²)."""
    chain = _foot_chain_xml(
        cross, foot, _hinge("pitch", "0 -1 0", armature[0]), _hinge("roll", "1 0 0", armature[1]), ""
    )
    return _header("serial_ankle", dt) + "  <worldbody>\n" + chain + "  </worldbody>\n</mujoco>\n"


def ankle_oracle_mjcf(cfg: AnkleOracleCfg) -> str:
    """The closed-chain ankle's MJCF: the foot chain, two motor–crank–rod branches, two loop closures."""
    geometry, r = cfg.geometry, cfg.geometry.crank_radius_m
    neutral = float(geometry.neutral_crank_angle_rad)
    foot_sites = "".join(
        f'        <site name="{site}" pos="{" ".join(repr(float(v)) for v in point)}"/>\n'
        for site, point in zip(_FOOT_SITES, geometry.rod_end_foot_m, strict=True)
    )
    chain = _foot_chain_xml(
        cfg.cross, cfg.foot, _hinge("pitch", "0 -1 0", 0.0), _hinge("roll", "1 0 0", 0.0), foot_sites
    )

    def bar(mass: float, start: np.ndarray, end: np.ndarray) -> str:
        length = float(np.linalg.norm(end - start))
        inertia = max(mass * length**2 / 12.0, 1e-9)
        centre = " ".join(repr(float(v)) for v in (start + end) / 2.0)
        return f'<inertial pos="{centre}" mass="{mass!r}" diaginertia="{inertia!r} {inertia!r} {inertia!r}"/>'

    branches = ""
    for index, motor in enumerate(("a", "b")):
        centre = np.asarray(geometry.motor_centre_m[index], dtype=float)
        tip = r * np.array([np.cos(neutral), 0.0, np.sin(neutral)])
        rod = np.asarray(geometry.rod_end_foot_m[index], dtype=float) - (centre + tip)
        branches += (
            f'    <body name="crank_{motor}" pos="{" ".join(repr(float(v)) for v in centre)}">\n'
            f"      {_hinge(f'motor_{motor}', '0 -1 0', cfg.reflected_inertia_kgm2)}\n"
            f"      {bar(cfg.crank_mass_kg, np.zeros(3), tip)}\n"
            f'      <body name="rod_{motor}" pos="{" ".join(repr(float(v)) for v in tip)}">\n'
            f'        <joint name="ball_{motor}" type="ball"/>\n'
            f"        {bar(cfg.rod_mass_kg, np.zeros(3), rod)}\n"
            f'        <site name="{_ROD_SITES[index]}" pos="{" ".join(repr(float(v)) for v in rod)}"/>\n'
            "      </body>\n"
            "    </body>\n"
        )
    tau = cfg.constraint_time_constant_s or 2.0 * cfg.timestep_s
    closures = "".join(
        f'    <connect site1="{rod}" site2="{foot}" solref="{tau!r} 1.0" solimp="0.9999 0.9999 0.001"/>\n'
        for rod, foot in zip(_ROD_SITES, _FOOT_SITES, strict=True)
    )
    return (
        _header("rsu_ankle_oracle", cfg.timestep_s)
        + "  <worldbody>\n"
        + chain
        + branches
        + "  </worldbody>\n"
        + f"  <equality>\n{closures}  </equality>\n"
        + "</mujoco>\n"
    )


class AnkleOracle:
    """The closed-chain ankle, stepped with motor torques; reads the foot's pitch and roll.

    Args:
        cfg: The oracle.
    """

    def __init__(self, cfg: AnkleOracleCfg):
        import mujoco

        self._mujoco = mujoco
        self.cfg = cfg
        self.model = mujoco.MjModel.from_xml_string(ankle_oracle_mjcf(cfg))
        self.data = mujoco.MjData(self.model)
        joint = self.model.joint
        self._foot_qpos = [int(self.model.jnt_qposadr[joint(n).id]) for n in ("pitch", "roll")]
        self._foot_dof = [int(self.model.jnt_dofadr[joint(n).id]) for n in ("pitch", "roll")]
        self._motor_qpos = [int(self.model.jnt_qposadr[joint(f"motor_{m}").id]) for m in "ab"]
        self._motor_dof = [int(self.model.jnt_dofadr[joint(f"motor_{m}").id]) for m in "ab"]
        self._ball_qpos = [int(self.model.jnt_qposadr[joint(f"ball_{m}").id]) for m in "ab"]
        self._sites = [(self.model.site(a).id, self.model.site(b).id) for a, b in zip(_ROD_SITES, _FOOT_SITES)]

    def reset(self, joint_pos: Sequence[float], motor_pos: Sequence[float]) -> None:
        """Assemble the loop at foot pose ``joint_pos`` (rad) with crank angles ``motor_pos`` (rad, from
        neutral, e.g. the IK of that pose), at rest: each rod is turned onto its rod end."""
        mujoco = self._mujoco
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self._foot_qpos] = joint_pos
        self.data.qpos[self._motor_qpos] = motor_pos
        for index in range(2):
            self.data.qpos[self._ball_qpos[index] : self._ball_qpos[index] + 4] = (1.0, 0.0, 0.0, 0.0)
        mujoco.mj_kinematics(self.model, self.data)
        for index, (rod_site, foot_site) in enumerate(self._sites):
            body = self.model.site_bodyid[rod_site]
            start = self.data.xpos[body]
            frame = self.data.xmat[self.model.body_parentid[body]].reshape(3, 3)
            current = frame.T @ (self.data.site_xpos[rod_site] - start)
            wanted = frame.T @ (self.data.site_xpos[foot_site] - start)
            self.data.qpos[self._ball_qpos[index] : self._ball_qpos[index] + 4] = rotation_between(current, wanted)
        mujoco.mj_forward(self.model, self.data)

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """Foot ``(pitch, roll)`` (rad) and rates (rad/s), as a perfect forward kinematics would read them."""
        return self.data.qpos[self._foot_qpos].copy(), self.data.qvel[self._foot_dof].copy()

    @property
    def motor_pos(self) -> np.ndarray:
        """Crank angles from neutral ``(φ_a, φ_b)`` (rad)."""
        return self.data.qpos[self._motor_qpos].copy()

    def step(self, motor_torque: Sequence[float]) -> None:
        """One physics step with ``motor_torque`` (N·m) on the two motor hinges."""
        self.data.qfrc_applied[:] = 0.0
        self.data.qfrc_applied[self._motor_dof] = motor_torque
        self._mujoco.mj_step(self.model, self.data)

    def closure_error_m(self) -> float:
        """The larger distance between a rod's end and its rod end on the foot (m), now."""
        self._mujoco.mj_kinematics(self.model, self.data)
        return float(max(np.linalg.norm(self.data.site_xpos[a] - self.data.site_xpos[b]) for a, b in self._sites))


class SerialAnkle:
    """The serial ankle in MuJoCo: joints ``pitch`` and ``roll`` with native armature.

    Args:
        cross: The spider (pitch body).
        foot: The foot (roll body).
        armature_kgm2: Per-joint armature ``(pitch, roll)`` (kg·m²).
        dt: Physics step (s).
    """

    def __init__(self, cross: RigidPart, foot: RigidPart, armature_kgm2: Sequence[float], dt: float):
        import mujoco

        self._mujoco = mujoco
        self.model = mujoco.MjModel.from_xml_string(serial_ankle_mjcf(cross, foot, armature_kgm2, dt))
        self.data = mujoco.MjData(self.model)

    def reset(self, joint_pos: Sequence[float]) -> None:
        """Set the pose (rad), at rest."""
        self._mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:] = joint_pos
        self._mujoco.mj_forward(self.model, self.data)

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """``(pitch, roll)`` (rad) and rates (rad/s)."""
        return self.data.qpos.copy(), self.data.qvel.copy()

    def step(self, joint_torque: Sequence[float]) -> None:
        """One physics step with ``joint_torque`` (N·m) on ``(pitch, roll)``."""
        self.data.qfrc_applied[:] = joint_torque
        self._mujoco.mj_step(self.model, self.data)

    def link_inertia(self, joint_pos: Sequence[float]) -> np.ndarray:
        """The foot's own joint-space inertia at ``joint_pos`` (kg·m², armature excluded), ``(2, 2)``."""
        data = self._mujoco.MjData(self.model)
        data.qpos[:] = joint_pos
        self._mujoco.mj_forward(self.model, data)
        return full_mass_matrix(self.model, data) - np.diag(self.model.dof_armature)
