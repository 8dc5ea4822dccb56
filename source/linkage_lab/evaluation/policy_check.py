"""A policy file checked against its task before the simulation is built (seconds, not a 15–45 s build).

The task's actor observation and action sizes come from its resolved config: the robot's
degrees of freedom (read from its USD), the action terms' joint selections and the sizes of the
observation terms Isaac Lab's velocity tasks use. A config this module cannot size (an unknown
term or action term, a multi-dof joint) gives ``None``; the policy is then checked right after the
env is built, before any step (:func:`~linkage_lab.evaluation.policies.load_onnx_policy`,
:func:`~linkage_lab.evaluation.policies.load_runner`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linkage_lab.export.metadata import ACTION_TERMS

#: Observation terms of a fixed size, by function name (Isaac Lab's ``isaaclab.envs.mdp``).
_FIXED_TERMS = {
    "base_lin_vel": 3,
    "base_lin_vel_estimate": 3,
    "base_ang_vel": 3,
    "projected_gravity": 3,
    "base_pos_z": 1,
}
#: Observation terms with one value per selected joint.
_JOINT_TERMS = {
    "joint_pos",
    "joint_pos_rel",
    "joint_vel",
    "joint_vel_rel",
    "joint_pos_limit_normalized",
    "joint_effort",
}
#: A project term function of a fixed size declares it as this attribute (``func.observation_size = 4``).
OBSERVATION_SIZE_ATTR = "observation_size"
#: Command sizes by command config class name (the velocity command is (v_x, v_y, ω_z)).
_COMMAND_SIZES = {"UniformVelocityCommandCfg": 3, "NormalVelocityCommandCfg": 3}


@dataclass(frozen=True)
class TaskSizes:
    """What a task's actor reads and writes.

    Attributes:
        observations: Actor observation size (its groups concatenated).
        actions: Action size.
    """

    observations: int
    actions: int


def usd_joint_names(usd_path: str | Path) -> list[str] | None:
    """Names of the one-dof (revolute, prismatic) joints of an articulation USD, in file order.

    Returns:
        The names, or ``None`` when the file cannot be read or holds a multi-dof joint.
    """
    try:
        from pxr import Usd, UsdPhysics
    except ImportError:
        return None
    stage = Usd.Stage.Open(str(usd_path))
    if stage is None:
        return None
    names = []
    for prim in stage.Traverse():
        if not prim.IsA(UsdPhysics.Joint):
            continue
        excluded = prim.GetAttribute("physics:excludeFromArticulation")
        if excluded and excluded.Get():
            continue
        if prim.IsA(UsdPhysics.RevoluteJoint) or prim.IsA(UsdPhysics.PrismaticJoint):
            names.append(prim.GetName())
        elif not prim.IsA(UsdPhysics.FixedJoint):
            return None
    return names


def task_sizes(env_cfg: Any, agent_cfg: Any) -> TaskSizes | None:
    """The actor's observation and action sizes of a resolved task config, or ``None`` if unknown."""
    from linkage_lab.evaluation.policies import actor_groups

    joints: dict[str, list[str] | None] = {}

    def asset_joints(name: str) -> list[str] | None:
        if name not in joints:
            asset = getattr(env_cfg.scene, name, None)
            usd_path = getattr(getattr(asset, "spawn", None), "usd_path", None)
            joints[name] = usd_joint_names(usd_path) if usd_path else None
        return joints[name]

    actions = _action_size(env_cfg.actions, asset_joints)
    if actions is None:
        return None
    observations = 0
    for group_name in actor_groups(agent_cfg):
        group = getattr(env_cfg.observations, group_name, None)
        size = None if group is None else _group_size(group, env_cfg, actions, asset_joints)
        if size is None:
            return None
        observations += size
    return TaskSizes(observations, actions)


def _selected(names: list[str] | None, patterns: Any) -> int | None:
    """How many of ``names`` the joint selection ``patterns`` (regex, list or None = all) picks."""
    if names is None:
        return None
    if patterns is None:
        return len(names)
    from isaaclab.utils.string import resolve_matching_names

    try:
        return len(resolve_matching_names(patterns, names)[0])
    except ValueError:
        return None


def _action_size(actions_cfg: Any, asset_joints: Any) -> int | None:
    from isaaclab.envs.mdp import JointActionCfg

    total = 0
    for term in vars(actions_cfg).values():
        if term is None:
            continue
        if not isinstance(term, JointActionCfg):
            return None
        size = _selected(asset_joints(term.asset_name), term.joint_names)
        if size is None:
            return None
        total += size
    return total


def _group_size(group: Any, env_cfg: Any, actions: int, asset_joints: Any) -> int | None:
    if not getattr(group, "concatenate_terms", True):
        return None
    total = 0
    for term in vars(group).values():
        if not hasattr(term, "func") or term is None:
            continue
        # Modifiers keep the size: Isaac Lab sizes a term by its function's output, before them.
        size = _term_size(term, env_cfg, actions, asset_joints)
        if size is None:
            return None
        history = group.history_length if group.history_length is not None else term.history_length
        if history and not term.flatten_history_dim:
            return None
        total += size * max(1, history or 0)
    return total


def _term_size(term: Any, env_cfg: Any, actions: int, asset_joints: Any) -> int | None:
    func = term.func
    name = getattr(func, "__name__", None) or str(func).rpartition(":")[2]
    params = term.params or {}
    if name in _FIXED_TERMS:
        return _FIXED_TERMS[name]
    declared = getattr(func, OBSERVATION_SIZE_ATTR, None)
    if isinstance(declared, int):
        return declared
    if name in _JOINT_TERMS:
        asset_cfg = params.get("asset_cfg")
        asset = getattr(asset_cfg, "name", "robot")
        return _selected(asset_joints(asset), getattr(asset_cfg, "joint_names", None))
    if name in ACTION_TERMS:
        return actions if params.get("action_name") is None else None
    if name == "generated_commands":
        command = getattr(env_cfg.commands, params.get("command_name", ""), None)
        # A command config derived from a known one (the split velocity command) has its size.
        return next((_COMMAND_SIZES[c.__name__] for c in type(command).__mro__ if c.__name__ in _COMMAND_SIZES), None)
    return None


def checkpoint_sizes(state: dict[str, Any]) -> tuple[int | None, int | None]:
    """(observation size, action size) of an rsl-rl checkpoint's MLP actor (``(None, None)`` if not one)."""
    from linkage_lab.evaluation.policies import _io_dims

    return _io_dims(state.get("actor_state_dict") or {})


def check_checkpoint_sizes(path: Path, state: dict[str, Any], sizes: TaskSizes | None, task: str) -> None:
    """Raise :class:`~linkage_lab.evaluation.policies.PolicyLoadError` when the checkpoint's actor
    does not fit ``sizes`` (nothing is checked when either side is unknown)."""
    from linkage_lab.evaluation.policies import PolicyLoadError

    observations, actions = checkpoint_sizes(state)
    if sizes is None or observations is None:
        return
    if (observations, actions) != (sizes.observations, sizes.actions):
        raise PolicyLoadError(
            f"checkpoint {path} does not fit {task}: it was trained with {observations} observations and "
            f"{actions} actions, {task} has {sizes.observations} observations and {sizes.actions} actions "
            "(a checkpoint of another task, or of this one before it gained an observation term: "
            "env.observations.policy.<term>=null leaves a term out)"
        )


def check_onnx_file(path: Path, sizes: TaskSizes | None) -> None:
    """Load the ONNX file and check its input and output sizes against ``sizes`` (when known).

    Raises:
        PolicyLoadError: Missing, not loadable, or made for other sizes.
    """
    from linkage_lab.evaluation.policies import load_onnx_policy

    if sizes is None:
        load_onnx_policy(Path(path))
    else:
        load_onnx_policy(Path(path), sizes.observations, sizes.actions)
