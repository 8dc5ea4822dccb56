"""Training events that draw a robot's unmeasured constants from its config's ``randomization`` ranges."""

from __future__ import annotations

from typing import Any

from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab_tasks.core.velocity import mdp

from linkage_lab.typed_config import Randomization


def randomize_constants(events: Any, ranges: Randomization) -> None:
    """Set ``events`` (a velocity task's event config) to draw, per env at startup: every joint's armature (scale)
    and friction (added), every joint's PD gains (scale), and the feet's ground friction."""
    joints = SceneEntityCfg("robot", joint_names=".*")
    for name, parameter, values, operation in (
        ("joint_armature", "armature_distribution_params", ranges.armature_scale, "scale"),
        ("joint_friction", "friction_distribution_params", ranges.joint_friction_nm, "add"),
    ):
        params = {"asset_cfg": joints, parameter: tuple(values), "operation": operation}
        setattr(events, name, EventTerm(func=mdp.randomize_joint_parameters, mode="startup", params=params))
    events.motor_gains = EventTerm(
        func=mdp.randomize_actuator_gains,
        mode="startup",
        params={
            "asset_cfg": joints,
            "stiffness_distribution_params": tuple(ranges.motor_gain_scale),
            "damping_distribution_params": tuple(ranges.motor_gain_scale),
            "operation": "scale",
            "distribution": "uniform",
        },
    )
    low, high = ranges.ground_friction
    events.physics_material.params.update(
        static_friction_range=(low, high), dynamic_friction_range=(0.75 * low, 0.75 * high)
    )
