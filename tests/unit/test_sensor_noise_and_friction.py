"""A robot's ``sensors`` and ``randomization`` reach its task: sensor noise, the gyro's bias held, the floor."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest
import torch

from linkage_lab.robots.limit.config import limit_config
from linkage_lab.robots.marvin.config import marvin_config
from linkage_lab.runtime import resolve_configs
from linkage_lab.tasks.velocity.randomization import apply_sensor_noise
from linkage_lab.typed_config import SensorNoise

pytestmark = pytest.mark.unit

#: Isaac Lab's velocity task's observation noise (base_ang_vel +-0.2, projected_gravity +-0.05, joint_pos +-0.01,
#: joint_vel +-1.5), no bias.
_ISAAC_LAB_DEFAULTS = SensorNoise(
    gyro_noise_radps=0.2,
    gyro_bias_radps=0.0,
    gravity_noise=0.05,
    joint_pos_noise_rad=0.01,
    joint_vel_noise_radps=1.5,
    encoder_rate_noise_radps=0.1,  # not an observation noise: what a closed-chain run's drivers read
)


def _half_width(noise) -> float:
    assert noise.n_min == -noise.n_max
    return noise.n_max


@pytest.mark.parametrize(
    ("task", "robot_config"),
    [("LinkageLab-Velocity-Flat-Limit", limit_config), ("LinkageLab-Velocity-Flat-Marvin-Residual", marvin_config)],
)
def test_each_task_corrupts_its_actor_by_its_robot_config(task, robot_config):
    sensors = robot_config().sensors
    policy = resolve_configs(task, [], "cpu")[0].observations.policy
    gyro = policy.base_ang_vel.noise
    if sensors.gyro_bias_radps > 0.0:
        assert _half_width(gyro.bias_noise_cfg) == sensors.gyro_bias_radps
        gyro = gyro.noise_cfg
    assert _half_width(gyro) == sensors.gyro_noise_radps
    assert _half_width(policy.projected_gravity.noise) == sensors.gravity_noise
    assert _half_width(policy.joint_pos.noise) == sensors.joint_pos_noise_rad
    assert _half_width(policy.joint_vel.noise) == sensors.joint_vel_noise_radps


def test_marvin_keeps_the_noise_its_shipped_lineage_was_trained_under():
    # A change here retrains Marvin (the encoders' rate noise excepted: training does not use it).
    assert marvin_config().sensors == _ISAAC_LAB_DEFAULTS


def test_the_gyro_bias_is_held_through_an_episode_and_redrawn_at_reset():
    from isaaclab.utils import instantiate

    sensors = SensorNoise(
        gyro_noise_radps=0.05,
        gyro_bias_radps=0.02,
        gravity_noise=0.0,
        joint_pos_noise_rad=0.0,
        joint_vel_noise_radps=0,
        encoder_rate_noise_radps=0,
    )
    policy = NS(base_ang_vel=NS(), projected_gravity=NS(), joint_pos=NS(), joint_vel=NS())
    apply_sensor_noise(policy, sensors)
    num_envs, steps = 64, 400
    torch.manual_seed(0)
    model = instantiate(policy.base_ang_vel.noise, num_envs=num_envs, device="cpu")
    model.reset()
    truth = torch.zeros(num_envs, 3)
    readings = torch.stack([model(truth) for _ in range(steps)])  # (steps, envs, 3)
    bias = readings.mean(dim=0)
    white = readings - bias
    # The white part: uniform in +-0.05 (its RMS 0.05 / sqrt(3)); the bias: one draw per env and axis in +-0.02.
    assert float(white.abs().max()) <= 0.05 + 0.02 / steps**0.5 * 4
    assert float(white.pow(2).mean().sqrt()) == pytest.approx(0.05 / 3**0.5, rel=0.03)
    assert float(bias.abs().max()) <= 0.02 + 0.05 / steps**0.5 * 4
    assert float(bias.std()) > 0.005  # drawn, not zero
    # A reset of some envs redraws theirs only.
    model.reset(env_ids=torch.arange(num_envs // 2))
    after = torch.stack([model(truth) for _ in range(steps)]).mean(dim=0)
    moved = (after - bias).abs().amax(dim=1)
    assert float(moved[num_envs // 2 :].max()) < 0.01  # the noise of two means only (0.002 RMS)
    assert float(moved[: num_envs // 2].max()) > 0.01
    # Redrawn, not added to the last draw: the bias stays in its range however many resets there are.
    for _ in range(20):
        model.reset()
    held = torch.stack([model(truth) for _ in range(steps)]).mean(dim=0)
    assert float(held.abs().max()) <= 0.02 + 0.05 / steps**0.5 * 4


def test_no_bias_means_plain_white_noise_and_a_missing_term_is_an_error():
    sensors = _ISAAC_LAB_DEFAULTS
    policy = NS(base_ang_vel=NS(), projected_gravity=NS(), joint_pos=NS(), joint_vel=NS())
    apply_sensor_noise(policy, sensors)
    assert _half_width(policy.base_ang_vel.noise) == 0.2 and not hasattr(policy.base_ang_vel.noise, "bias_noise_cfg")
    with pytest.raises(ValueError, match="'joint_vel'"):
        apply_sensor_noise(NS(base_ang_vel=NS(), projected_gravity=NS(), joint_pos=NS()), sensors)


def test_the_ground_friction_event_refuses_a_friction_no_floor_has():
    from linkage_lab.tasks.velocity.randomization import set_ground_friction

    for friction in (0.0, -0.4, float("nan")):
        with pytest.raises(ValueError, match="ground's friction"):
            set_ground_friction(NS(sim=NS(physics_manager=NS())), None, friction)
