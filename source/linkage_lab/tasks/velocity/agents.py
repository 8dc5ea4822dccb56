"""The rsl-rl PPO runner config shared by the project's velocity tasks (robots set the deltas)."""

from __future__ import annotations

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlMLPModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg

from linkage_lab.tasks.velocity.base_env_cfg import ACTION_CLIP


@configclass
class LinkageVelocityPPORunnerCfg(RslRlOnPolicyRunnerCfg):
    """PPO for flat-ground velocity tracking: 3 × 128 ELU actor and critic, normalised observations."""

    num_steps_per_env = 24
    max_iterations = 500
    save_interval = 50
    experiment_name = "velocity_flat"
    clip_actions = ACTION_CLIP
    obs_groups = {"actor": ["policy"], "critic": ["policy"]}
    actor = RslRlMLPModelCfg(
        hidden_dims=[128, 128, 128],
        activation="elu",
        obs_normalization=True,
        distribution_cfg=RslRlMLPModelCfg.GaussianDistributionCfg(init_std=1.0),
    )
    critic = RslRlMLPModelCfg(hidden_dims=[128, 128, 128], activation="elu", obs_normalization=True)
    algorithm = RslRlPpoAlgorithmCfg(
        value_loss_coef=1.0,
        use_clipped_value_loss=True,
        clip_param=0.2,
        entropy_coef=0.01,
        num_learning_epochs=5,
        num_mini_batches=4,
        learning_rate=1.0e-3,
        schedule="adaptive",
        gamma=0.99,
        lam=0.95,
        desired_kl=0.01,
        max_grad_norm=1.0,
    )
