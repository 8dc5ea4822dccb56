"""What training draws from a robot's config: its unmeasured constants (``randomization``) and its sensors' error
(``sensors``)."""

from __future__ import annotations

import math
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
    # The draw above is the feet's. A contact's friction is the larger of its two shapes' in MuJoCo(-Warp), so on the
    # ground's 1.0 every draw below 1.0 would be lost: the ground takes the range's low end, and each env's contact
    # friction is then its feet's draw. (PhysX multiplies the two by default: there the ground's 1.0 passes the draw.)
    events.ground_friction = EventTerm(func=set_ground_friction, mode="startup", params={"friction": low})


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


def set_ground_friction(env: Any, env_ids: Any, friction: float) -> None:
    """Startup event: the friction coefficient of every static shape (the ground) in a Newton scene.

    Newton's MuJoCo solver gives a contact the larger of its two shapes' coefficients; with the ground at the low end of
    the feet's range, the feet's per-env draw is what each contact gets. Other physics backends are left as they are.

    Raises:
        ValueError: ``friction`` is not a positive finite number.
    """
    if not math.isfinite(friction) or friction <= 0.0:
        raise ValueError(f"the ground's friction must be a positive finite number, got {friction}")
    manager = env.sim.physics_manager
    if not hasattr(manager, "get_model") or not hasattr(manager, "add_model_change"):
        return
    from newton import ModelFlags

    model = manager.get_model()
    mu = model.shape_material_mu.numpy()
    mu[model.shape_body.numpy() < 0] = friction
    model.shape_material_mu.assign(mu)
    manager.add_model_change(ModelFlags.SHAPE_PROPERTIES)
