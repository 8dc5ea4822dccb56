"""What evaluation and export read off a built env: policy joint order, actions, gains, torque limits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from linkage_lab.actuators.transmissions import make_transmission
from linkage_lab.robots.registry import get_robot, robot_for_joints

#: Marvin-style linkage ankles: ``<side>_ankle_pitch`` and ``<side>_ankle_roll`` in one linkage group.


@dataclass(frozen=True)
class JointLimit:
    """A joint's torque limit for reports (N·m) and where it comes from."""

    effort_nm: float
    source: str


def robot_of(env: Any) -> Any:
    """The env's ``robot`` articulation (``env`` may be wrapped)."""
    return env.unwrapped.scene["robot"]


def joint_action_term(env: Any) -> Any:
    """The env's single joint action term (the policy's action order is its joint order).

    Raises:
        ValueError: The env has no joint action term, or several.
    """
    from isaaclab.envs.mdp.actions import JointAction

    manager = env.unwrapped.action_manager
    terms = [manager.get_term(name) for name in manager.active_terms]
    joint_terms = [term for term in terms if isinstance(term, JointAction)]
    if len(joint_terms) != 1:
        raise ValueError(f"expected one joint action term, found {manager.active_terms}")
    return joint_terms[0]


def policy_joint_names(env: Any) -> list[str]:
    """Joint names in the policy's action order."""
    return list(joint_action_term(env).IO_descriptor.joint_names)


def action_mapping(env: Any) -> dict[str, Any]:
    """How an action becomes a joint target: ``target = offset + scale * action`` (rad), per joint, then smoothed
    per control step with ``filter_alpha`` (1: not smoothed; ``GuardedJointPositionActionCfg.target_filter_alpha``)."""
    term = joint_action_term(env)
    descriptor = term.IO_descriptor
    n = term.action_dim
    return {
        "type": type(term).__name__,
        "scale": _per_joint(descriptor.scale, n),
        "offset": _per_joint(descriptor.offset, n),
        "clip": None if descriptor.clip is None else _to_list(descriptor.clip),
        "filter_alpha": float(getattr(term.cfg, "target_filter_alpha", 1.0)),
    }


def joint_index(robot: Any, names: list[str]) -> list[int]:
    """Articulation (public order) indices of ``names``."""
    order = list(robot.joint_names)
    return [order.index(name) for name in names]


def default_joint_pos(env: Any, names: list[str]) -> list[float]:
    """Default joint positions (rad) of env 0, in ``names`` order."""
    robot = robot_of(env)
    return robot.data.default_joint_pos.torch[0, joint_index(robot, names)].tolist()


def joint_gains(env: Any, names: list[str]) -> dict[str, list[float]]:
    """Joint-space PD gains ``kp`` (N·m/rad) and ``kd`` (N·m·s/rad), in ``names`` order: the actuators' configured
    (nominal) gains, not env 0's. A task that randomises the gains per env (``randomize_actuator_gains``) writes
    them into the actuators' tensors; a bundle must carry the robot's gains, not one env's draw. Gains the config
    leaves to the asset are read from env 0."""
    from isaaclab.actuators.actuator_base import resolve_joint_parameter

    kp: dict[str, float] = {}
    kd: dict[str, float] = {}
    for actuator in robot_of(env).actuators.values():
        joints = list(actuator.joint_names)
        gains = {}
        for field, tensor in (("stiffness", actuator.stiffness), ("damping", actuator.damping)):
            nominal = getattr(actuator.cfg, field, None)
            row = tensor[0] if nominal is None else resolve_joint_parameter(nominal, None, joints, 1, "cpu")[0]
            gains[field] = [float(v) for v in row]
        for k, name in enumerate(joints):
            kp[name], kd[name] = gains["stiffness"][k], gains["damping"][k]
    return {"kp": [kp[n] for n in names], "kd": [kd[n] for n in names]}


def linkage_groups(env: Any) -> list[dict[str, Any]]:
    """The robot's linkage actuator groups: joints, transmission, control space and motor peaks."""
    from linkage_lab.actuators.linkage_actuator import LinkageActuator

    groups = []
    for actuator in robot_of(env).actuators.values():
        if not isinstance(actuator, LinkageActuator):
            continue
        cfg = actuator.cfg
        for joints, transmission in zip(cfg.coupled_joints, cfg.transmissions, strict=True):
            groups.append(
                {
                    "joints": list(joints),
                    "transmission": transmission,
                    "control_space": cfg.control_space,
                    "motor_peak_torque_nm": [float(v) for v in cfg.motor_peak_torque_nm],
                }
            )
    return groups


def joint_effort_limits(env: Any, names: list[str]) -> dict[str, JointLimit]:
    """Each joint's torque limit (N·m) for reports, in ``names`` order.

    A joint driven through a linkage gets its per-axis capacity at the neutral pose,
    ``Σ_k |J_k,i(0)| T_peak,k`` — for Marvin's ankles the box limit ``2 T_peak ratio`` whether the
    task simulates the box or the diamond, for the Limit's parallelogram leg 2 T (hip) and T
    (knee). Any other joint gets its actuator's effort limit.
    """
    from linkage_lab.actuators.linkage_actuator import LinkageActuator

    limits: dict[str, JointLimit] = {}
    for actuator in robot_of(env).actuators.values():
        if isinstance(actuator, LinkageActuator):
            peaks = torch.tensor(actuator.cfg.motor_peak_torque_nm, dtype=torch.float64)
            for joints, name in zip(actuator.cfg.coupled_joints, actuator.cfg.transmissions, strict=True):
                jac = make_transmission(name).jacobian(torch.zeros(len(joints), dtype=torch.float64))
                capacity = (jac.abs() * peaks.unsqueeze(-1)).sum(dim=0)
                for joint, value in zip(joints, capacity.tolist(), strict=True):
                    limits[joint] = JointLimit(value, f"linkage per-axis capacity at neutral ({name})")
        else:
            effort = getattr(actuator, "actuator_effort_limit", None)
            for k, joint in enumerate(actuator.joint_names):
                value = float("inf") if effort is None else float(effort[0, k])
                limits[joint] = JointLimit(value, f"{type(actuator).__name__} effort limit")
    return {name: limits[name] for name in names}


def linkage_ankles(env: Any) -> dict[str, tuple[str, str]]:
    """The robot's RSU ankles (``RobotSpec.rsu_ankles``) its linkage actuator drives, in either model
    (the real linkage or the box): ``{side: (pitch joint, roll joint)}`` (empty for none)."""

    groups = {tuple(group["joints"]) for group in linkage_groups(env)}
    return {side: joints for side, joints in get_robot(robot_name(env)).rsu_ankles.items() if tuple(joints) in groups}


def robot_name(env: Any) -> str:
    """The registered robot the env simulates, found by its policy joints."""
    return robot_kind(list(robot_of(env).joint_names))


def robot_kind(joint_names: list[str]) -> str:
    """The registered robot whose joints are exactly ``joint_names`` (in any order).

    Raises:
        UnknownRobot: No registered robot has those joints.
    """

    return robot_for_joints(joint_names, any_order=True).name


def _per_joint(value: Any, n: int) -> list[float]:
    values = _to_list(value)
    if isinstance(values, list) and values and isinstance(values[0], list):
        values = values[0]  # per-env tensors: env 0
    if not isinstance(values, list):
        values = [float(values)] * n
    return [float(v) for v in values]


def _to_list(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().tolist()
    return value


#: The reward term whose contact-sensor bodies are the task's feet (every velocity task has it).
FEET_REWARD_TERM = "feet_air_time"


def foot_contact_reader(env: Any) -> tuple[list[str], Any] | None:
    """The task's feet and a callable giving their contact state, ``(num_envs, n_feet)`` bool.

    The feet are the contact-sensor bodies of the task's :data:`FEET_REWARD_TERM` reward; ``None``
    when the task has no such term (nothing to measure footfalls with).
    """
    unwrapped = env.unwrapped
    term = getattr(getattr(unwrapped.cfg, "rewards", None), FEET_REWARD_TERM, None)
    if term is None or "sensor_cfg" not in term.params:
        return None
    sensor_cfg = term.params["sensor_cfg"]
    sensor = unwrapped.scene.sensors[sensor_cfg.name]
    ids, names = sensor.find_bodies(sensor_cfg.body_names, preserve_order=True)
    if not ids or sensor.data.current_contact_time is None:
        return None
    return list(names), lambda: sensor.data.current_contact_time.torch[:, ids] > 0.0
