"""rsl-rl PPO runner config for Marvin's velocity (and sprint) tasks."""

from __future__ import annotations

from isaaclab.utils import configclass

from linkage_lab.tasks.velocity.agents import LinkageVelocityPPORunnerCfg


@configclass
class MarvinFlatPPORunnerCfg(LinkageVelocityPPORunnerCfg):
    """PPO for ``LinkageLab-Velocity-Flat-Marvin``; a humanoid needs more iterations than a quadruped."""

    experiment_name = "marvin_flat"
    max_iterations = 1500
