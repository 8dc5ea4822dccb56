"""Closed-chain MuJoCo oracle of one planar parallelogram leg (docs/design/s3n.md §5): the "hardware".

Two co-axial motors at the hip: the hip motor turns the thigh; the knee motor turns a crank of
length ``r`` pointing the other way, and a rod of the thigh's length, pinned to the crank tip,
closes the loop at a lever ``r`` above the knee on the lower link. The loop H–C–D–K is a
parallelogram, so the knee motor angle equals the lower link's absolute angle. Joints (dofs):
``hip_motor`` (armature ``J̄₁``, damping ``B̄₁``), passive ``knee``, ``knee_motor`` (``J̄₂``, ``B̄₂``),
passive ``rod_pin``; an equality ``connect`` between the rod's end and the lever closes the loop.
Base fixed, no contact, gravity on.

Motor coordinates ``θ = (θ₁, θ₂)`` fix all four joints:
``hip_motor = θ₁, knee = θ₂ − θ₁, knee_motor = θ₂, rod_pin = θ₁ − θ₂``.
The loop is singular where it folds flat, ``α = θ₂ − θ₁ ∈ {0, π}``: keep away from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from linkage_lab.dynamics.serial_leg import LegBody, LinkageParts, full_mass_matrix, leg_bodies_xml, mjcf_header

#: ``∂(hip_motor, knee, knee_motor, rod_pin)/∂(θ₁, θ₂)``: the loop's 2 DOF inside the 4 joints.
LOOP_BASIS = np.array([[1.0, 0.0], [-1.0, 1.0], [0.0, 1.0], [1.0, -1.0]])
_JOINTS = ("hip_motor", "knee", "knee_motor", "rod_pin")


@dataclass(frozen=True)
class OracleCfg:
    """The closed-chain leg: bodies, linkage parts, motors, solver settings."""

    body: LegBody
    """Thigh and lower link, the same bodies the serial model carries (e.g. a robot's
    ``SPEC.extra("leg_body")()``)."""
    linkage: LinkageParts = field(default_factory=LinkageParts)
    """Crank and rod."""
    reflected_inertia_kgm2: tuple[float, float] = (0.0162, 0.0162)
    """Armature ``J̄`` of the hip and knee motor joints (kg·m²)."""
    motor_damping_nms_per_rad: tuple[float, float] = (0.0972, 0.0972)
    """Viscous damping ``B̄`` of the motor joints (N·m·s/rad)."""
    timestep_s: float = 1e-3
    """Physics step (s)."""
    constraint_solref: tuple[float, float] = (0.002, 1.0)
    """MuJoCo ``solref`` of the loop closure (time constant s, damping ratio)."""
    constraint_solimp: tuple[float, float, float] = (0.9999, 0.9999, 0.001)
    """MuJoCo ``solimp`` of the loop closure: impedance near 1 makes the loop (nearly) rigid."""


def oracle_leg_xml(cfg: OracleCfg, shank_extra: str = "") -> str:
    """The oracle's bodies (thigh with the lower link; crank with the rod), hip at the parent's origin.

    Args:
        cfg: The oracle.
        shank_extra: More elements for the lower link's body (e.g. a foot ``<site>``).
    """
    body, parts = cfg.body, cfg.linkage
    r, l1 = parts.crank_length_m, body.thigh_length_m
    (j1, j2), (b1, b2) = cfg.reflected_inertia_kgm2, cfg.motor_damping_nms_per_rad

    def bar(mass: float, length: float, com_z: float) -> str:
        inertia = max(mass * length**2 / 12.0, 1e-9)
        diagonal = f"{inertia!r} {inertia!r} {inertia!r}"
        return f'<inertial pos="0 0 {com_z!r}" mass="{mass!r}" diaginertia="{diagonal}"/>'

    hinge = '<joint name="{}" type="hinge" axis="0 1 0" armature="{!r}" damping="{!r}"/>'
    return (
        leg_bodies_xml(
            body,
            hinge.format("hip_motor", float(j1), float(b1)),
            '<joint name="knee" type="hinge" axis="0 1 0"/>',
            shank_extra=f'<site name="lever_pin" pos="0 0 {r!r}"/>' + shank_extra,
        )
        + '    <body name="crank" pos="0 0 0">\n'
        + f"      {hinge.format('knee_motor', float(j2), float(b2))}\n"
        + f"      {bar(parts.crank_mass_kg, r, r / 2.0)}\n"
        + f'      <body name="rod" pos="0 0 {r!r}">\n'
        + '        <joint name="rod_pin" type="hinge" axis="0 1 0"/>\n'
        + f"        {bar(parts.rod_mass_kg, l1, -l1 / 2.0)}\n"
        + f'        <site name="rod_end" pos="0 0 {-l1!r}"/>\n'
        + "      </body>\n"
        + "    </body>\n"
    )


def loop_closure_xml(cfg: OracleCfg) -> str:
    """The equality that closes the loop: the rod's end on the lever pin."""
    solref = " ".join(repr(float(x)) for x in cfg.constraint_solref)
    solimp = " ".join(repr(float(x)) for x in cfg.constraint_solimp)
    return f'    <connect site1="rod_end" site2="lever_pin" solref="{solref}" solimp="{solimp}"/>\n'


def oracle_mjcf(cfg: OracleCfg) -> str:
    """The oracle's MJCF text (base fixed at the world origin)."""
    return (
        mjcf_header("parallelogram_leg_oracle", cfg.timestep_s, cfg.body.gravity_mps2)
        + "  <worldbody>\n"
        + oracle_leg_xml(cfg)
        + "  </worldbody>\n"
        + "  <equality>\n"
        + loop_closure_xml(cfg)
        + "  </equality>\n"
        + "</mujoco>\n"
    )


class ParallelogramOracle:
    """The closed-chain leg, stepped with motor torques; reads motor angles like encoders.

    Args:
        cfg: The oracle.
        mjcf: A model holding :func:`oracle_leg_xml` and :func:`loop_closure_xml` of ``cfg`` (e.g. on
            a moving base with the foot pinned); ``None``: :func:`oracle_mjcf`, base fixed.
    """

    def __init__(self, cfg: OracleCfg, mjcf: str | None = None):
        import mujoco

        self._mujoco = mujoco
        self.cfg = cfg
        self.model = mujoco.MjModel.from_xml_string(oracle_mjcf(self.cfg) if mjcf is None else mjcf)
        self.data = mujoco.MjData(self.model)
        self._qpos = [int(self.model.jnt_qposadr[self.model.joint(name).id]) for name in _JOINTS]
        self._dof = [int(self.model.jnt_dofadr[self.model.joint(name).id]) for name in _JOINTS]
        self._motor_dof = [self._dof[0], self._dof[2]]
        self._site_ids = [self.model.site("rod_end").id, self.model.site("lever_pin").id]

    def reset(self, motor_pos: Sequence[float], motor_vel: Sequence[float] = (0.0, 0.0)) -> None:
        """Put the loop at motor angles ``θ`` (rad) and rates ``θ̇`` (rad/s), closed."""
        self._mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self._qpos] = LOOP_BASIS @ np.asarray(motor_pos, dtype=float)
        self.data.qvel[self._dof] = LOOP_BASIS @ np.asarray(motor_vel, dtype=float)
        self._mujoco.mj_forward(self.model, self.data)

    @property
    def motor_pos(self) -> np.ndarray:
        """``(θ₁, θ₂)`` (rad): the hip motor and knee motor angles."""
        return self.data.qpos[[self._qpos[0], self._qpos[2]]].copy()

    @property
    def motor_vel(self) -> np.ndarray:
        """``(θ̇₁, θ̇₂)`` (rad/s)."""
        return self.data.qvel[self._motor_dof].copy()

    def step(self, motor_torque: Sequence[float]) -> None:
        """One physics step with ``motor_torque`` (N·m) on the two motor joints."""
        self.data.qfrc_applied[:] = 0.0
        self.data.qfrc_applied[self._motor_dof] = motor_torque
        self._mujoco.mj_step(self.model, self.data)

    def constraint_violation_m(self) -> float:
        """Distance between the rod's end and the lever pin (m), after the last step."""
        self._mujoco.mj_kinematics(self.model, self.data)
        rod_end, lever = (self.data.site_xpos[i] for i in self._site_ids)
        return float(np.linalg.norm(rod_end - lever))

    def branch_error_rad(self) -> float:
        """How far the passive joints are from the parallelogram branch (rad, wrapped to ±π).

        Zero while the loop is a parallelogram; near ``|2α|`` if it has folded through a singular
        pose into the anti-parallelogram branch (same closure, different mechanism).
        """
        motor = self.motor_pos
        expected = LOOP_BASIS @ motor
        error = self.data.qpos[self._qpos] - expected
        return float(np.abs(np.angle(np.exp(1j * error))).max())

    def motor_space_inertia(self, alpha: Sequence[float] | np.ndarray, hip_rad: float = 0.6) -> np.ndarray:
        """The true ``M_p(α)`` (kg·m²), ``(len(α), 2, 2)``: MuJoCo's mass matrix on the loop's 2 DOF.

        ``M_p = Gᵀ M(q) G`` with ``G`` = :data:`LOOP_BASIS`; armature included. For comparison only:
        S3N-Full identifies its ``M_p`` from motion data (:mod:`linkage_lab_experiments.analysis.identify`).
        """
        data = self._mujoco.MjData(self.model)
        basis = np.zeros((self.model.nv, 2))
        basis[self._dof] = LOOP_BASIS
        result = []
        for value in np.atleast_1d(np.asarray(alpha, dtype=float)):
            data.qpos[self._qpos] = LOOP_BASIS @ np.array([hip_rad, hip_rad + value])
            self._mujoco.mj_forward(self.model, data)
            result.append(basis.T @ full_mass_matrix(self.model, data) @ basis)
        return np.stack(result)

    def analytic_mp_kgm2(self) -> tuple[float, float, float]:
        """``(M₁₁, M₁₂, M₂₂)`` of the oracle in closed form, from the parts (for tests and reports)."""
        body, parts = self.cfg.body, self.cfg.linkage
        r, l1 = parts.crank_length_m, body.thigh_length_m
        rod, crank = parts.rod_mass_kg, parts.crank_mass_kg
        m11 = (
            self.cfg.reflected_inertia_kgm2[0]
            + body.thigh.inertia_about_joint_kgm2
            + body.shank.mass_kg * l1**2
            + rod * l1**2 / 3.0
        )
        m12 = body.shank.mass_kg * l1 * body.shank.com_m - rod * r * l1 / 2.0
        m22 = self.cfg.reflected_inertia_kgm2[1] + body.shank.inertia_about_joint_kgm2 + crank * r**2 / 3.0 + rod * r**2
        return m11, m12, m22
