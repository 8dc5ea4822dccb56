"""What training draws from a robot's config: its unmeasured constants (``randomization``) and its sensors' error
(``sensors``)."""

from __future__ import annotations

from typing import Any

from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.utils.noise import NoiseModelWithAdditiveBiasCfg
from isaaclab.utils.noise import UniformNoiseCfg as Unoise
from isaaclab_tasks.core.velocity import mdp

from linkage_lab.typed_config import Randomization, SensorNoise

#: Actor observation term → the :class:`SensorNoise` field of its white noise.
_WHITE_NOISE_FIELDS = {
    "base_ang_vel": "gyro_noise_radps",
    "projected_gravity": "gravity_noise",
    "joint_pos": "joint_pos_noise_rad",
    "joint_vel": "joint_vel_noise_radps",
}


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


def apply_sensor_noise(policy: Any, sensors: SensorNoise) -> None:
    """Set the noise of the actor's sensor terms in ``policy`` (an observation group) from a robot's ``sensors``.

    Each term gets uniform white noise of its half-width; the gyro also gets a bias per axis drawn at every reset of
    the env and held for its episode (none when ``gyro_bias_radps`` is 0).

    Raises:
        ValueError: ``policy`` lacks one of the sensor terms (a renamed term would otherwise keep its old noise).
    """
    for term_name, field in _WHITE_NOISE_FIELDS.items():
        term = getattr(policy, term_name, None)
        if term is None:
            raise ValueError(f"the actor has no {term_name!r} term to give the robot's {field} to")
        half_width = getattr(sensors, field)
        term.noise = Unoise(n_min=-half_width, n_max=half_width)
    if sensors.gyro_bias_radps > 0.0:
        bias = sensors.gyro_bias_radps
        # "abs": a reset sets the bias to a new draw. Isaac Lab's default operation ("add") would add each reset's draw
        # to the last, a random walk that outgrows the range episode by episode.
        policy.base_ang_vel.noise = NoiseModelWithAdditiveBiasCfg(
            noise_cfg=policy.base_ang_vel.noise, bias_noise_cfg=Unoise(n_min=-bias, n_max=bias, operation="abs")
        )
