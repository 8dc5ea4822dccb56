"""rsl-rl PPO runner config for the Limit's velocity task."""

from __future__ import annotations

from isaaclab.utils import configclass

from linkage_lab.tasks.velocity.agents import LinkageVelocityPPORunnerCfg


@configclass
class LimitFlatPPORunnerCfg(LinkageVelocityPPORunnerCfg):
    """PPO for ``LinkageLab-Velocity-Flat-Limit``."""

    experiment_name = "limit_flat"
    # 2.6 M env steps at the task's 256 envs: about 15 min on a 2-core CPU, the envs split over two
    # simulation processes (`linkage-lab bench train --workers 1 2`: 2.0 s an iteration against 3.3 s).
    max_iterations = 420
