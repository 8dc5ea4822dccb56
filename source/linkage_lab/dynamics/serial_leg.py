"""The serial hip→knee tree of one planar leg: its rigid bodies, a torch integrator, a MuJoCo model.

Angles follow docs/design/robots.md §1.2: rotations about +y, zero = link hanging straight down, a positive
angle swings the link's far end backwards (−x). ``q = (hip, knee)``, ``α = q_knee``.

Two integrators of the same tree: :class:`TorchSerialLeg` (semi-implicit Euler, batched, no
MuJoCo: the stability tests of the drive step thousands of legs at once with it) and
:class:`MujocoSerialLeg` (MuJoCo's Euler, the integrator of the closed-chain oracle, so that the
fidelity benchmark compares models, not integrators).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class MassPart:
    """A rigid piece of a link.

    Attributes:
        mass_kg: Mass (kg).
        offset_m: Distance of its centre of mass from the link's joint, along the link (m).
        inertia_kgm2: Own inertia about its centre of mass, about the joint axis (kg·m²).
    """

    mass_kg: float
    offset_m: float
    inertia_kgm2: float = 0.0


@dataclass(frozen=True)
class PlanarLink:
    """One planar link, lumped: mass (kg), COM distance from its joint along the link (m) and
    inertia about the COM about the joint axis (kg·m²). The COM lies on the link's axis."""

    mass_kg: float
    com_m: float
    inertia_kgm2: float

    @staticmethod
    def lumped(parts: Sequence[MassPart]) -> PlanarLink:
        """Combine parts on one link (parallel-axis theorem)."""
        mass = sum(p.mass_kg for p in parts)
        com = sum(p.mass_kg * p.offset_m for p in parts) / mass
        inertia = sum(p.inertia_kgm2 + p.mass_kg * (p.offset_m - com) ** 2 for p in parts)
        return PlanarLink(mass, com, inertia)

    @property
    def inertia_about_joint_kgm2(self) -> float:
        """Inertia about the link's own joint (kg·m²)."""
        return self.inertia_kgm2 + self.mass_kg * self.com_m**2


@dataclass(frozen=True)
class LegBody:
    """The rigid bodies of the serial leg: thigh (hip→knee) and the lower link (knee→foot)."""

    thigh: PlanarLink
    shank: PlanarLink
    thigh_length_m: float
    shank_length_m: float
    gravity_mps2: float = 9.81

    def serial_link_kgm2(self) -> tuple[float, float, float]:
        """``(a, b, c)`` of the tree's link inertia ``[[a + 2b cos α, c + b cos α], [c + b cos α, c]]``."""
        shank_about_knee = self.shank.inertia_about_joint_kgm2
        a = self.thigh.inertia_about_joint_kgm2 + shank_about_knee + self.shank.mass_kg * self.thigh_length_m**2
        b = self.shank.mass_kg * self.thigh_length_m * self.shank.com_m
        return a, b, shank_about_knee

    def gravity_torque(self, joint_pos: torch.Tensor) -> torch.Tensor:
        """Generalised gravity ``G(q) = ∂V/∂q`` (N·m) of the tree, ``(..., 2)``."""
        g = self.gravity_mps2
        hip, knee = joint_pos[..., 0], joint_pos[..., 1]
        shank_term = g * self.shank.mass_kg * self.shank.com_m * torch.sin(hip + knee)
        thigh_moment = self.thigh.mass_kg * self.thigh.com_m + self.shank.mass_kg * self.thigh_length_m
        return torch.stack([g * thigh_moment * torch.sin(hip) + shank_term, shank_term], dim=-1)


class TorchSerialLeg:
    """Semi-implicit Euler integration of the serial leg, batched over any leading shape.

    ``(M_linkˢ(α) + diag(A)) q̈ = τ − C(q, q̇) q̇ − G(q) − diag(D) q̇``, then
    ``q̇ ← q̇ + dt q̈``, ``q ← q + dt q̇``, with ``A``/``D`` the simulator's joint armature/damping.
    """

    def __init__(self, body: LegBody, armature: torch.Tensor, damping: torch.Tensor, joint_pos: torch.Tensor):
        self.body = body
        self.a, self.b, self.c = body.serial_link_kgm2()
        self.armature = armature.to(joint_pos)
        self.damping = damping.to(joint_pos)
        self.joint_pos = joint_pos.clone()
        self.joint_vel = torch.zeros_like(joint_pos)

    def acceleration(self, joint_torque: torch.Tensor) -> torch.Tensor:
        """``q̈`` for the current state under ``joint_torque`` (N·m)."""
        alpha = self.joint_pos[..., 1]
        cos_a, sin_a = torch.cos(alpha), torch.sin(alpha)
        m11 = self.a + 2.0 * self.b * cos_a + self.armature[0]
        m12 = self.c + self.b * cos_a
        m22 = torch.full_like(alpha, self.c) + self.armature[1]
        hip_vel, knee_vel = self.joint_vel[..., 0], self.joint_vel[..., 1]
        coriolis = torch.stack(
            [-self.b * sin_a * (2.0 * hip_vel * knee_vel + knee_vel**2), self.b * sin_a * hip_vel**2], dim=-1
        )
        rhs = joint_torque - coriolis - self.body.gravity_torque(self.joint_pos) - self.damping * self.joint_vel
        det = m11 * m22 - m12 * m12
        return torch.stack(
            [(m22 * rhs[..., 0] - m12 * rhs[..., 1]) / det, (m11 * rhs[..., 1] - m12 * rhs[..., 0]) / det],
            dim=-1,
        )

    def step(self, joint_torque: torch.Tensor, dt: float) -> None:
        """Advance one step of ``dt`` (s) under ``joint_torque`` (N·m)."""
        self.joint_vel = self.joint_vel + dt * self.acceleration(joint_torque)
        self.joint_pos = self.joint_pos + dt * self.joint_vel


def mjcf_header(model_name: str, timestep_s: float, gravity_mps2: float) -> str:
    """``<mujoco>`` opening and options shared by the serial model and the oracle.

    Euler integration with explicit joint damping (``eulerdamp`` off), so one step is exactly
    ``M a = τ − c − D v``, no contacts.
    """
    return (
        f'<mujoco model="{model_name}">\n'
        f'  <option timestep="{timestep_s!r}" integrator="Euler" gravity="0 0 {-gravity_mps2!r}">\n'
        '    <flag contact="disable" eulerdamp="disable"/>\n'
        "  </option>\n"
    )


def leg_bodies_xml(body: LegBody, hip_joint: str, knee_joint: str, shank_extra: str = "") -> str:
    """The thigh and lower-link bodies, with the two given ``<joint .../>`` elements."""

    def inertial(link: PlanarLink) -> str:
        # Planar motion uses only I_yy; the other two axes get the same value to stay valid.
        inertia = max(link.inertia_kgm2, 1e-9)
        return (
            f'<inertial pos="0 0 {-link.com_m!r}" mass="{link.mass_kg!r}" '
            f'diaginertia="{inertia!r} {inertia!r} {inertia!r}"/>'
        )

    return (
        '    <body name="thigh" pos="0 0 0">\n'
        f"      {hip_joint}\n"
        f"      {inertial(body.thigh)}\n"
        f'      <body name="shank" pos="0 0 {-body.thigh_length_m!r}">\n'
        f"        {knee_joint}\n"
        f"        {inertial(body.shank)}\n"
        f"        {shank_extra}\n"
        "      </body>\n"
        "    </body>\n"
    )


class MujocoSerialLeg:
    """The serial tree in MuJoCo, base fixed, joints ``hip`` and ``knee`` with native armature/damping.

    Args:
        body: Rigid bodies of the leg.
        armature_kgm2: Per-joint armature ``(hip, knee)`` (kg·m²), e.g. ``LinkageDrive.native_armature()``.
        damping_nms_per_rad: Per-joint viscous damping (N·m·s/rad).
        timestep_s: Physics step (s).
    """

    def __init__(
        self,
        body: LegBody,
        armature_kgm2: Sequence[float],
        damping_nms_per_rad: Sequence[float],
        timestep_s: float = 1e-3,
    ):
        import mujoco

        self._mujoco = mujoco
        (hip_arm, knee_arm), (hip_damp, knee_damp) = armature_kgm2, damping_nms_per_rad
        joint = '<joint name="{}" type="hinge" axis="0 1 0" armature="{!r}" damping="{!r}"/>'
        xml = (
            mjcf_header("serial_leg", timestep_s, body.gravity_mps2)
            + "  <worldbody>\n"
            + leg_bodies_xml(
                body,
                joint.format("hip", float(hip_arm), float(hip_damp)),
                joint.format("knee", float(knee_arm), float(knee_damp)),
            )
            + "  </worldbody>\n</mujoco>\n"
        )
        self.model = mujoco.MjModel.from_xml_string(xml)
        self.data = mujoco.MjData(self.model)

    def reset(self, joint_pos: Sequence[float], joint_vel: Sequence[float] = (0.0, 0.0)) -> None:
        """Set the state (rad, rad/s) and clear applied forces."""
        self._mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:] = joint_pos
        self.data.qvel[:] = joint_vel
        self._mujoco.mj_forward(self.model, self.data)

    @property
    def joint_pos(self) -> np.ndarray:
        """``(hip, knee)`` (rad), a copy."""
        return self.data.qpos.copy()

    @property
    def joint_vel(self) -> np.ndarray:
        """``(hip, knee)`` velocities (rad/s), a copy."""
        return self.data.qvel.copy()

    def step(self, joint_torque: Sequence[float]) -> None:
        """One physics step with ``joint_torque`` (N·m) applied to ``(hip, knee)``."""
        self.data.qfrc_applied[:] = joint_torque
        self._mujoco.mj_step(self.model, self.data)

    def mass_matrix(self, joint_pos: Sequence[float]) -> np.ndarray:
        """MuJoCo's joint-space inertia at ``joint_pos`` (armature included), ``(2, 2)`` kg·m²."""
        data = self._mujoco.MjData(self.model)
        data.qpos[:] = joint_pos
        self._mujoco.mj_forward(self.model, data)
        return full_mass_matrix(self.model, data)


def full_mass_matrix(model, data) -> np.ndarray:
    """Dense joint-space inertia ``(nv, nv)`` of a forwarded ``data`` (MuJoCo 3.2 and newer APIs)."""
    import mujoco

    full = np.zeros((model.nv, model.nv))
    if hasattr(data, "qM"):
        mujoco.mj_fullM(model, full, data.qM)
    else:
        mujoco.mj_fullM(model, data, full)
    return full


@dataclass(frozen=True)
class LinkageParts:
    """The parts the serial tree leaves out (our assumptions: docs/design/robots.md gives no linkage data).

    Attributes:
        crank_length_m: Crank radius ``r`` = lever above the knee (m).
        crank_mass_kg: Crank, a uniform bar from the hip axis (kg).
        rod_mass_kg: Coupler rod, a uniform bar of the thigh's length (kg).
    """

    crank_length_m: float = 0.025
    crank_mass_kg: float = 0.02
    rod_mass_kg: float = 0.02
