"""What a deployer needs next to the policy network, read from the built env (never restated by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from linkage_lab.robots.registry import get_robot

#: Version of the metadata layout.
METADATA_VERSION = 1
#: Observation functions that are the policy's own outputs: over the action's joints, in its order.
ACTION_TERMS = ("last_action", "previous_action")


def observation_layout(env: Any, groups: list[str], action_joints: list[str]) -> list[dict[str, Any]]:
    """The actor's observation vector, term by term in order.

    Returns:
        Per term: ``name``, ``size``, ``scale`` (1.0 when unscaled), ``clip`` (``[low, high]`` after
        scaling, or ``None``), ``group``, ``function`` (Isaac Lab's term function), ``start`` (index
        in the vector), ``history_length``, ``params`` (plain values only) and, for terms over
        joints, ``joint_names`` (their order). Noise is a training-time corruption, not listed.
    """
    from linkage_lab.evaluation.robot_info import robot_of

    unwrapped = env.unwrapped
    manager = unwrapped.observation_manager
    robot_joints = list(robot_of(env).joint_names)
    terms = []
    start = 0
    for group in groups:
        group_cfg = getattr(unwrapped.cfg.observations, group)
        for name, shape in zip(manager.active_terms[group], manager.group_obs_term_dim[group], strict=True):
            term_cfg = getattr(group_cfg, name)
            size = 1
            for dim in shape:
                size *= int(dim)
            func = term_cfg.func
            function_name = getattr(func, "__name__", type(func).__name__)
            entry = {
                "name": name,
                "size": size,
                "scale": 1.0 if term_cfg.scale is None else _plain(term_cfg.scale),
                "clip": _plain(term_cfg.clip),
                "group": group,
                "function": f"{func.__module__}.{function_name}",
                "start": start,
                "history_length": int(getattr(term_cfg, "history_length", 0) or 0),
                "params": {k: v for k, v in term_cfg.params.items() if isinstance(v, (str, int, float, bool))},
            }
            joints = action_joints if function_name in ACTION_TERMS else _term_joint_names(term_cfg, robot_joints)
            if joints is not None:
                entry["joint_names"] = joints
            terms.append(entry)
            start += size
    return terms


def policy_metadata(env: Any, agent_cfg: Any, task: str, checkpoint: str | None = None) -> dict[str, Any]:
    """The bundle's metadata (JSON-ready), read from the built env ``env`` of ``task``.

    Per-joint lists follow ``joint_names`` (the policy's action order; for the Limit the canonical
    id order, docs/design/robots.md §1.1). Keys: ``metadata_version``, ``linkage_lab_version``, ``task``,
    ``robot``, ``checkpoint``, ``control_period_s`` (s), ``physics_dt_s`` (s), ``decimation``,
    ``joint_names``, ``joint_ids`` (the Limit's canonical ids; ``None`` for other robots),
    ``default_joint_pos`` (rad), ``action_scale`` and ``action_offset`` (rad; ``q* = offset +
    scale · a``), ``action_clip`` (the runner's clip of the raw action, ``None`` = none),
    ``action_target_clip`` (Isaac Lab's clip of ``q*``, per joint, or ``None``), ``action_target_filter_alpha``
    (the first-order smoothing of ``q*`` each control step, ``q_t = α q* + (1 − α) q_{t−1}`` from the first
    target of an episode on; 1: none), ``kp`` (N·m/rad)
    and ``kd`` (N·m·s/rad) joint-space PD gains, ``joint_effort_limit_nm`` (per-axis reference,
    see :func:`~linkage_lab.evaluation.robot_info.joint_effort_limits`), ``linkages`` (coupled
    groups: transmission, simulated control space, motor peaks), ``ankle_preset`` (Marvin: the
    ankle geometry preset of docs/design/ankle_linkage.md §7 the ankle transmissions use, which the ankle
    bridge must use too; ``None`` for other robots), ``observation_size``,
    ``observation_layout`` (:func:`observation_layout`), ``policy_io`` (ONNX input/output).
    """
    import linkage_lab
    from linkage_lab.evaluation.policies import actor_groups
    from linkage_lab.evaluation.robot_info import (
        action_mapping,
        default_joint_pos,
        joint_effort_limits,
        joint_gains,
        linkage_groups,
        policy_joint_names,
        robot_kind,
    )

    names = policy_joint_names(env)
    kind = robot_kind(names)
    unwrapped = env.unwrapped
    layout = observation_layout(env, actor_groups(agent_cfg), names)
    obs_size = sum(term["size"] for term in layout)
    action = action_mapping(env)
    gains = joint_gains(env, names)
    limits = joint_effort_limits(env, names)
    clip_actions = getattr(agent_cfg, "clip_actions", None)
    linkages = linkage_groups(env)
    return {
        "metadata_version": METADATA_VERSION,
        "linkage_lab_version": linkage_lab.__version__,
        "task": task,
        "robot": kind,
        "checkpoint": checkpoint,
        "control_period_s": float(unwrapped.step_dt),
        "physics_dt_s": float(unwrapped.physics_dt),
        "decimation": int(unwrapped.cfg.decimation),
        "joint_names": names,
        "joint_ids": _joint_ids(kind, names),
        "default_joint_pos": default_joint_pos(env, names),
        "action_scale": action["scale"],
        "action_offset": action["offset"],
        "action_clip": None if clip_actions is None else float(clip_actions),
        "action_target_clip": action["clip"],
        "action_target": "q* = action_offset + action_scale * clip(action, -action_clip, action_clip) (rad)",
        "action_target_filter_alpha": action["filter_alpha"],
        "kp": gains["kp"],
        "kd": gains["kd"],
        "pd_space": "joint (tau = kp (q* - q) - kd qdot per joint; linkage groups: see linkages)",
        "joint_effort_limit_nm": [limits[n].effort_nm for n in names],
        "linkages": linkages,
        "ankle_preset": _ankle_preset(kind, linkages),
        "observation_size": obs_size,
        "observation_layout": layout,
        "policy_io": {
            "input": {"name": "obs", "shape": [1, obs_size], "dtype": "float32"},
            "output": {"name": "actions", "shape": [1, len(names)], "dtype": "float32"},
            "normaliser": "inside the graph (the actor's empirical observation normaliser)",
        },
    }


def trained_ankle_preset(checkpoint: Path) -> str | None:
    """The ankle geometry preset the checkpoint's run was trained with, read from the actuator
    transmissions in its ``params/env.yaml``; ``None`` when the run recorded no config there (e.g. a
    checkpoint copied out of its run folder) or the file cannot be read."""
    import yaml

    from linkage_lab.evaluation.replay import ankle_geometry_preset

    try:
        config = yaml.load((Path(checkpoint).parent / "params" / "env.yaml").read_text(), Loader=_config_loader())
        actuators = config["scene"]["robot"]["actuators"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return None
    names = []
    for actuator in actuators.values() if isinstance(actuators, dict) else ():
        transmissions = actuator.get("transmissions") if isinstance(actuator, dict) else None
        names += [transmissions] if isinstance(transmissions, str) else list(transmissions or ())
    return ankle_geometry_preset(names)


def check_ankle_preset(checkpoint: Path, metadata: dict[str, Any]) -> None:
    """Refuse to describe a Marvin policy with another ankle geometry than its run was trained with.

    Args:
        checkpoint: The checkpoint file (its run folder holds ``params/env.yaml``).
        metadata: The export's :func:`policy_metadata` (``robot``, ``ankle_preset``).

    Raises:
        PolicyLoadError: The run recorded another ankle geometry preset than the export's config uses.
    """
    from linkage_lab.evaluation.policies import PolicyLoadError

    if metadata.get("ankle_preset") is None:
        return
    trained = trained_ankle_preset(checkpoint)
    if trained is not None and trained != metadata["ankle_preset"]:
        raise PolicyLoadError(
            f"{checkpoint} was trained with ankle geometry preset {trained!r}, but this config uses "
            f"{metadata['ankle_preset']!r}: pass the training's overrides (see its params/env.yaml)"
        )


def _joint_ids(robot: str, names: list[str]) -> list[int] | None:
    """The robot's own joint numbering of ``names`` (its ``RobotSpec.joint_ids``), ``None`` without one."""

    spec = get_robot(robot)
    if spec.joint_ids is None:
        return None
    by_name = dict(zip(spec.joint_names, spec.joint_ids, strict=True))
    return [by_name[name] for name in names]


def _ankle_preset(robot: str, linkages: list[dict[str, Any]]) -> str | None:
    """The RSU ankle geometry preset of a robot with RSU ankles (``None`` for others)."""
    from linkage_lab.evaluation.replay import ankle_geometry_preset

    if not get_robot(robot).rsu_ankles:
        return None
    return ankle_geometry_preset((g["transmission"] for g in linkages), robot=robot)


def _term_joint_names(term_cfg: Any, robot_joints: list[str]) -> list[str] | None:
    """Joint order of a term over the robot's joints (``None`` for other terms)."""
    asset_cfg = term_cfg.params.get("asset_cfg")
    function = getattr(term_cfg.func, "__name__", "")
    if asset_cfg is None or getattr(asset_cfg, "name", None) != "robot":
        return None
    joint_ids = getattr(asset_cfg, "joint_ids", slice(None))
    if isinstance(joint_ids, slice):
        return list(robot_joints) if function.startswith("joint_") else None
    return [robot_joints[int(i)] for i in joint_ids]


def _config_loader() -> type:
    """A YAML loader for Isaac Lab's config dumps: Python tuples as lists, other Python objects as ``None``."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("tag:yaml.org,2002:python/tuple", lambda loader, node: loader.construct_sequence(node))
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    return Loader


def _plain(value: Any) -> Any:
    """A config value as JSON (tuples as lists; tensors as lists)."""
    if value is None or isinstance(value, (int, float, str, bool)):
        return value
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)
