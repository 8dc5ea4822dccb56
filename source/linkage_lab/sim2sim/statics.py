"""Probes of a closed-chain model: motors held at targets, and the joint torque a linkage delivers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from linkage_lab.sim2sim.mjcf import SolverSettings
from linkage_lab.sim2sim.model import ClosedChainModel


def hold_motors(
    chain: ClosedChainModel,
    data: Any,
    motor_targets: Sequence[float],
    stiffness_nm_per_rad: float | np.ndarray,
    damping_nms_per_rad: float | np.ndarray,
    duration_s: float,
) -> None:
    """Step ``data`` for ``duration_s`` with every motor on a PD to ``motor_targets`` (rad, actuator order):
    ``τ = K (θ* − θ) − D θ̇`` (gains per motor or one for all), through
    :meth:`ClosedChainModel.apply_motor_torque` (its torque–speed line)."""
    import mujoco

    targets = np.asarray(motor_targets, dtype=float)
    for _ in range(int(round(duration_s / data.model.opt.timestep))):
        position, velocity = chain.motor_state(data)
        chain.apply_motor_torque(data, stiffness_nm_per_rad * (targets - position) - damping_nms_per_rad * velocity)
        mujoco.mj_step(data.model, data)


class ChainTorque(NamedTuple):
    """What :func:`chain_joint_torque` measured.

    Attributes:
        joint_torque: The torque the motors make on the held joints through the chain (N·m).
        joint_pos: The held joints' settled angles (rad): the lock's own compliance moves them a little.
        closure_error_m: The largest distance between a rod end and its target, settled (m).
        max_speed: The largest dof speed at the end (rad/s or m/s): ~0 once settled.
    """

    joint_torque: np.ndarray
    joint_pos: np.ndarray
    closure_error_m: float
    max_speed: float


def lock_name(joint: str) -> str:
    """Name of the equality that locks ``joint`` in :func:`locked_model`."""
    return f"lock_{joint}"


def locked_model(chain: ClosedChainModel, joints: Sequence[str]) -> Any:
    """The compiled model with an equality ``joint`` lock on each of ``joints`` (a bench fixture), as rigid
    as the model's loop closures (their ``solref``/``solimp``; :class:`SolverSettings` defaults if it has
    none). Each lock holds its joint at ``eq_data[0]``; :func:`chain_joint_torque` sets it."""
    import mujoco

    spec = mujoco.MjSpec.from_string(chain.xml)
    if spec.equalities:
        solref, solimp = list(spec.equalities[0].solref), list(spec.equalities[0].solimp)
    else:
        defaults = SolverSettings()
        solref, solimp = list(defaults.loop_solref), [*defaults.loop_solimp, 0.5, 2.0]
    for joint in joints:
        lock = spec.add_equality()
        lock.name, lock.type, lock.objtype, lock.name1 = (
            lock_name(joint),
            mujoco.mjtEq.mjEQ_JOINT,
            mujoco.mjtObj.mjOBJ_JOINT,
            joint,
        )
        lock.solref, lock.solimp = solref, solimp
    return spec.compile()


def chain_joint_torque(
    chain: ClosedChainModel,
    data: Any,
    joints: Sequence[str],
    motor_torque: Mapping[str, float],
    duration_s: float = 0.2,
    hold_stiffness_nm_per_rad: float = 300.0,
    hold_damping_nms_per_rad: float = 2.0,
) -> ChainTorque:
    """The joint torque that constant motor torques make through the closed chain, measured statically.

    ``data`` belongs to a :func:`locked_model` with ``joints`` locked, and is at rest in the pose to
    measure (:meth:`ClosedChainModel.reset`). The locks take the joints' present angles; the motors named
    in ``motor_torque`` (N·m) push, every other motor holds its angle on a PD; after ``duration_s`` the
    mechanism is at rest and each lock's constraint force ``h`` balances what the chain delivers, so the
    chain's joint torque is ``−h``. Run it with gravity off, so that only the motors and the locks act. The
    holding PD is explicit: its damping times the step over the lightest rotor stays below 2 (2 N·m·s/rad on the
    Limit's 0.004 kg·m² rotors at 2 ms: 1.0; 10 made them ring).
    """
    import mujoco

    model = data.model
    locks = [model.equality(lock_name(joint)).id for joint in joints]
    qpos = [int(model.jnt_qposadr[model.joint(joint).id]) for joint in joints]
    model.eq_data[locks, :] = 0.0
    model.eq_data[locks, 0] = data.qpos[qpos]
    pushing = np.array([name in motor_torque for name in chain.motor_names])
    torque = np.array([float(motor_torque.get(name, 0.0)) for name in chain.motor_names])
    hold, _ = chain.motor_state(data)
    for _ in range(int(round(duration_s / model.opt.timestep))):
        position, velocity = chain.motor_state(data)
        pd = hold_stiffness_nm_per_rad * (hold - position) - hold_damping_nms_per_rad * velocity
        chain.apply_motor_torque(data, np.where(pushing, torque, pd))
        mujoco.mj_step(model, data)
    mujoco.mj_forward(model, data)
    force = []
    for lock in locks:
        rows = np.flatnonzero((data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY) & (data.efc_id == lock))
        force.append(float(data.efc_force[rows[0]]))
    closure = max(
        (float(np.linalg.norm(data.site_xpos[model.site(r.site).id] - data.site_xpos[model.site(r.target).id])))
        for r in chain.rods
    )
    return ChainTorque(-np.array(force), data.qpos[qpos].copy(), closure, float(np.abs(data.qvel).max()))
