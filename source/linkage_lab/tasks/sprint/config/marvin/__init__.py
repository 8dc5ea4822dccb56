"""Marvin's sprint: ``LinkageLab-Sprint-Marvin``."""

from __future__ import annotations

import gymnasium as gym

gym.register(
    id="LinkageLab-Sprint-Marvin",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.env_cfg:MarvinSprintEnvCfg",
        "rsl_rl_cfg_entry_point": "linkage_lab.tasks.velocity.config.marvin.agents:MarvinFlatPPORunnerCfg",
        "default_agent": "rsl_rl",
    },
)
