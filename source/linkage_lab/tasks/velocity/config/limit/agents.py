"""rsl-rl PPO runner config for the Limit's velocity task."""

from __future__ import annotations

from isaaclab.utils import configclass

from linkage_lab.tasks.velocity.agents import LinkageVelocityPPORunnerCfg


@configclass
class LimitFlatPPORunnerCfg(LinkageVelocityPPORunnerCfg):
    """PPO for ``LinkageLab-Velocity-Flat-Limit``."""

    experiment_name = "limit_flat"
    # 3.7 M env steps at the task's 256 envs: about 20 min on a 2-core CPU with the envs split over two
    # simulation processes (2.0 s an iteration). Backward walking appears between 420 iterations
    # (the 15 min: forward only, sweep RMS 0.078 / 0.092 m/s at 0.3 / 0.5) and 600 (-0.31 m/s at -0.3).
    max_iterations = 600
