"""rsl-rl PPO runner config for the Limit's velocity task."""

from __future__ import annotations

from isaaclab.utils import configclass

from linkage_lab.tasks.velocity.agents import LinkageVelocityPPORunnerCfg


@configclass
class LimitFlatPPORunnerCfg(LinkageVelocityPPORunnerCfg):
    """PPO for ``LinkageLab-Velocity-Flat-Limit``."""

    experiment_name = "limit_flat"
    # About 13 min on one core of a 2-core CPU at the task's 256 envs (1.8 M env steps).
    max_iterations = 300
