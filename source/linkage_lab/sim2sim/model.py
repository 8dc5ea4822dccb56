"""A robot with its linkages closed, as a MuJoCo model: the MJCF and what a sim-to-sim runner needs to drive it.

Joint names: every policy joint (the robot's ``joint_names``) is a MuJoCo joint of the same name, a
motor joint (driven directly) or a passive one (moved by a linkage); a linkage's motors are joints of
their own. The actuators are the motors, one torque actuator each, in :attr:`ClosedChainModel.motors`
order; :meth:`ClosedChainModel.apply_motor_torque` puts the torque–speed line on them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from linkage_lab.actuators.transmissions import make_transmission
from linkage_lab.dynamics.torque_speed import dc_torque_bounds
from linkage_lab.io import write_text_atomic
from linkage_lab.sim2sim.assembly import assemble_rods, lift_onto_ground
from linkage_lab.sim2sim.mjcf import FREE_JOINT, MjcfDocument


@dataclass(frozen=True)
class Motor:
    """One motor joint: its torque–speed line and its rotor, as the closed-chain model carries them.

    The torque–speed line is a DC motor's (the project's drive model, Isaac Lab's ``DCMotor``):
    driving, ``τ ≤ T_s (1 − ω/ω₀)``; braking (torque against the motion) the full ``T``, each bound
    clipped to ``[0, T]``; so ``|τ| ≤ min(T, T_s (1 − |ω|/ω₀))`` whenever the motor drives its load.

    Attributes:
        joint: The motor's MuJoCo joint (and actuator) name.
        peak_torque_nm: Peak torque ``T`` (N·m).
        no_load_speed_rads: No-load speed ``ω₀`` (rad/s).
        armature_kgm2: Reflected rotor inertia ``J̄`` on the motor joint (kg·m²).
        damping_nms_per_rad: Viscous damping ``B̄`` on the motor joint (N·m·s/rad), integrated implicitly.
        stall_torque_nm: Stall torque ``T_s`` where the line starts (N·m); ``None``: ``T``.
    """

    joint: str
    peak_torque_nm: float
    no_load_speed_rads: float
    armature_kgm2: float
    damping_nms_per_rad: float = 0.0
    stall_torque_nm: float | None = None


@dataclass(frozen=True)
class Linkage:
    """Policy joints driven together through a linkage: ``θ = f(q)``, ``τ_joint = Jᵀ τ_motor``.

    Attributes:
        joints: The serial (policy) joints, the columns of ``J``.
        motors: Their motor joints, the rows of ``J``.
        transmission: The robot's registered transmission name (``RobotSpec.transmissions``, or a built-in
            such as ``parallelogram``), what a policy runner converts with.
        factory: Builds the transmission of exactly this model's geometry (``None``: the registered one).
            A model built from a modified config carries its own.
    """

    joints: tuple[str, ...]
    motors: tuple[str, ...]
    transmission: str
    factory: Callable[[], Any] | None = None

    def make_transmission(self) -> Any:
        """The :class:`~linkage_lab.kinematics.transmission.Transmission` (imports torch)."""
        if self.factory is not None:
            return self.factory()

        return make_transmission(self.transmission)


@dataclass(frozen=True)
class Rod:
    """A rod closing a loop: it turns on ``joint`` (hinge or ball) and its end ``site`` is held on ``target``
    by an equality ``connect`` (a ball joint)."""

    joint: str
    site: str
    target: str


@dataclass(frozen=True)
class _Binding:
    """Addresses of a compiled model's joints and actuators (see :meth:`ClosedChainModel.bind`)."""

    model: Any
    actuators: np.ndarray
    motor_qpos: np.ndarray
    motor_dof: np.ndarray
    joint_qpos: np.ndarray
    joint_dof: np.ndarray
    free_qpos: int | None


_BINDINGS: dict[int, _Binding] = {}


@dataclass(frozen=True)
class ClosedChainModel:
    """A robot with its linkages closed, generated from its config (a robot's ``RobotSpec.closed_chain``).

    Attributes:
        name: The robot.
        xml: The MJCF text.
        joint_names: The policy's joint order; each is a MuJoCo joint of that name.
        motors: The motor joints, in actuator order.
        linkages: The linkages: which policy joints their motors drive, and the transmission to convert with.
        passive_joints: Policy joints no motor drives directly (moved by a linkage).
        rods: The rods, for assembling a pose (:meth:`reset`).
        base_body: The floating base's body.
        imu_site: The IMU site on the base (sensors ``<imu_site>_gyro``, ``_accelerometer``, ``_quat``).
        floating_base: Whether the base has a free joint (else it is fixed to the world).
        default_joint_pos: The standing pose by policy joint (rad); joints not named are 0.
        notes: The modelling choices, in words (for reports).
    """

    name: str
    xml: str
    joint_names: tuple[str, ...]
    motors: tuple[Motor, ...]
    linkages: tuple[Linkage, ...]
    passive_joints: tuple[str, ...]
    rods: tuple[Rod, ...]
    base_body: str
    imu_site: str = "imu"
    floating_base: bool = True
    default_joint_pos: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        motors = {m.joint for m in self.motors}
        linked = [j for group in self.linkages for j in group.joints]
        unknown = [j for group in self.linkages for j in group.motors if j not in motors]
        undriven = [j for j in self.joint_names if j not in linked and j not in motors]
        if unknown or undriven or len(set(linked)) != len(linked):
            raise ValueError(
                f"{self.name}: linkage motors {unknown} are not motors, joints {undriven} have no motor, "
                "or a joint is in two linkages"
            )

    @classmethod
    def assemble(
        cls,
        doc: MjcfDocument,
        motors: Sequence[Motor],
        linkages: Sequence[Linkage],
        rods: Sequence[Rod],
        passive_joints: Sequence[str],
        **fields: Any,
    ) -> ClosedChainModel:
        """The model of a finished closed-chain document: each motor gets its torque-limited actuator, then the
        XML is frozen; the document gives the name, base, IMU site and whether the base floats, ``fields`` the
        remaining attributes."""
        for motor in motors:
            doc.add_motor(motor.joint, motor.peak_torque_nm)
        return cls(
            name=doc.name,
            xml=doc.to_xml(),
            base_body=doc.base_body,
            floating_base=doc.floating_base,
            imu_site=doc.imu_site,
            motors=tuple(motors),
            linkages=tuple(linkages),
            rods=tuple(rods),
            passive_joints=tuple(passive_joints),
            **fields,
        )

    @property
    def motor_names(self) -> tuple[str, ...]:
        """Motor joint names in actuator order."""
        return tuple(m.joint for m in self.motors)

    @property
    def direct_joints(self) -> tuple[str, ...]:
        """Policy joints that are their own motor (no linkage)."""
        linked = {j for group in self.linkages for j in group.joints}
        return tuple(j for j in self.joint_names if j not in linked)

    @functools.cached_property
    def transmissions(self) -> tuple[Any, ...]:
        """Each linkage's transmission (:meth:`Linkage.make_transmission`), built once (imports torch)."""
        return tuple(group.make_transmission() for group in self.linkages)

    def compile(self) -> Any:
        """The ``mujoco.MjModel``."""
        import mujoco

        return mujoco.MjModel.from_xml_string(self.xml)

    def write(self, path: str | Path) -> Path:
        """Write the MJCF to ``path`` (atomically)."""
        return write_text_atomic(path, self.xml)

    def bind(self, model: Any) -> _Binding:
        """Joint and actuator addresses in a compiled ``model`` (cached per model)."""
        cached = _BINDINGS.get(id(model))
        if cached is not None and cached.model is model:
            return cached
        import mujoco

        def joint_id(name: str) -> int:
            index = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
            if index < 0:
                raise KeyError(f"{self.name}: no joint {name!r} in the MuJoCo model")
            return index

        motors = [joint_id(n) for n in self.motor_names]
        joints = [joint_id(n) for n in self.joint_names]
        actuators = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, n) for n in self.motor_names]
        free = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, FREE_JOINT)
        binding = _Binding(
            model=model,
            actuators=np.asarray(actuators),
            motor_qpos=model.jnt_qposadr[motors].copy(),
            motor_dof=model.jnt_dofadr[motors].copy(),
            joint_qpos=model.jnt_qposadr[joints].copy(),
            joint_dof=model.jnt_dofadr[joints].copy(),
            free_qpos=int(model.jnt_qposadr[free]) if free >= 0 else None,
        )
        if len(_BINDINGS) > 64:
            _BINDINGS.clear()
        _BINDINGS[id(model)] = binding
        return binding

    def torque_limits(self, motor_vel: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` motor torque bounds (N·m) at motor speeds ``motor_vel`` (rad/s), the DC line of
        :class:`Motor`: ``upper = clip(T_s (1 − ω/ω₀), 0, T)``, ``lower = −clip(T_s (1 + ω/ω₀), 0, T)``."""
        peak = np.array([m.peak_torque_nm for m in self.motors])
        speed = np.array([m.no_load_speed_rads for m in self.motors])
        stall = np.array([m.peak_torque_nm if m.stall_torque_nm is None else m.stall_torque_nm for m in self.motors])
        positive, negative = dc_torque_bounds(peak, np.asarray(motor_vel, dtype=float), speed, stall)
        return -negative, positive

    def motor_state(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        """Motor angles (rad, from the linkage's neutral) and speeds (rad/s), actuator order."""
        b = self.bind(data.model)
        return data.qpos[b.motor_qpos].copy(), data.qvel[b.motor_dof].copy()

    def joint_state(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        """Policy joint angles (rad) and rates (rad/s), policy order (a perfect forward kinematics)."""
        b = self.bind(data.model)
        return data.qpos[b.joint_qpos].copy(), data.qvel[b.joint_dof].copy()

    def apply_motor_torque(
        self, data: Any, motor_torque: Sequence[float] | np.ndarray, strength: float = 1.0
    ) -> np.ndarray:
        """Clip ``motor_torque`` (N·m, actuator order) to each motor's torque–speed line at its present speed,
        scale it by ``strength`` (a motor whose torque constant is that far from the model's) and set it as the
        actuators' controls for the next step; returns the torque applied."""
        b = self.bind(data.model)
        lower, upper = self.torque_limits(data.qvel[b.motor_dof])
        applied = strength * np.clip(np.asarray(motor_torque, dtype=float), lower, upper)
        data.ctrl[b.actuators] = applied
        return applied

    def motor_position(self, joint_pos: Mapping[str, float]) -> np.ndarray:
        """Motor angles (rad, actuator order) for policy joint angles ``joint_pos`` (rad; missing: 0):
        the transmissions' ``θ = f(q)`` (the linkages' inverse kinematics)."""
        import torch

        q = {j: float(joint_pos.get(j, 0.0)) for j in self.joint_names}
        motors = {j: q[j] for j in self.direct_joints}
        for group, transmission in zip(self.linkages, self.transmissions, strict=True):
            pose = torch.tensor([[q[j] for j in group.joints]], dtype=torch.float64)
            motors.update(zip(group.motors, transmission.motor_position(pose).squeeze(0).tolist(), strict=True))
        return np.array([motors[m] for m in self.motor_names])

    def motor_torque(self, joint_pos: Sequence[float], joint_torque: Sequence[float]) -> np.ndarray:
        """Motor torques (N·m, actuator order) that make the joint torques ``joint_torque`` (N·m, policy order)
        at ``joint_pos`` (rad, policy order): ``τ_m = J(q)⁻ᵀ τ_joint`` per linkage, ``τ_m = τ_joint`` for a
        direct joint. (Unclipped: :meth:`apply_motor_torque` clips.)"""
        import torch

        q = dict(zip(self.joint_names, map(float, joint_pos), strict=True))
        tau = dict(zip(self.joint_names, map(float, joint_torque), strict=True))
        motors = {j: tau[j] for j in self.direct_joints}
        for group, transmission in zip(self.linkages, self.transmissions, strict=True):
            pose = torch.tensor([[q[j] for j in group.joints]], dtype=torch.float64)
            torque = torch.tensor([[tau[j] for j in group.joints]], dtype=torch.float64)
            values = transmission.motor_torque(torque, pose).squeeze(0).tolist()
            motors.update(zip(group.motors, values, strict=True))
        return np.array([motors[m] for m in self.motor_names])

    def reset(
        self,
        data: Any,
        joint_pos: Mapping[str, float] | None = None,
        base_pos_m: Sequence[float] | None = None,
        base_quat: Sequence[float] = (1.0, 0.0, 0.0, 0.0),
        ground_clearance_m: float | None = 0.0,
    ) -> None:
        """Put the robot at rest in a pose with every loop closed.

        Sets the policy joints, the motors at the linkages' ``θ = f(q)``, turns each rod onto its target,
        and (floating base) places the base.

        Args:
            data: The ``mujoco.MjData`` of a compiled model.
            joint_pos: Policy joint angles (rad); ``None``: :attr:`default_joint_pos`; missing joints 0.
            base_pos_m: Base position (m); ``None`` keeps the model's.
            base_quat: Base orientation ``(w, x, y, z)``.
            ground_clearance_m: With a floating base, lift or lower the base so that the lowest colliding
                point is this high above the ground (m); ``None``: leave the height as given.
        """
        import mujoco

        model = data.model
        b = self.bind(model)
        mujoco.mj_resetData(model, data)
        pose = dict(self.default_joint_pos if joint_pos is None else joint_pos)
        data.qpos[b.joint_qpos] = [float(pose.get(j, 0.0)) for j in self.joint_names]
        data.qpos[b.motor_qpos] = self.motor_position(pose)
        if b.free_qpos is not None:
            if base_pos_m is not None:
                data.qpos[b.free_qpos : b.free_qpos + 3] = base_pos_m
            data.qpos[b.free_qpos + 3 : b.free_qpos + 7] = base_quat
        assemble_rods(model, data, self.rods)
        if b.free_qpos is not None and ground_clearance_m is not None:
            lift_onto_ground(model, data, b.free_qpos, ground_clearance_m)
        mujoco.mj_forward(model, data)
