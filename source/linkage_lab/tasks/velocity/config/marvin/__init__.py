"""Marvin's velocity tasks: ``LinkageLab-Velocity-Flat-Marvin`` and its ``-Residual`` variant (gait prior)."""

from __future__ import annotations

import gymnasium as gym

gym.register(
    id="LinkageLab-Velocity-Flat-Marvin",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.env_cfg:MarvinFlatEnvCfg",
        "rsl_rl_cfg_entry_point": f"{__name__}.agents:MarvinFlatPPORunnerCfg",
        "default_agent": "rsl_rl",
        "acceptance_entry_point": f"{__name__}.acceptance:MARVIN_ACCEPTANCE",
    },
)

gym.register(
    id="LinkageLab-Velocity-Flat-Marvin-Residual",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.residual_env_cfg:MarvinResidualFlatEnvCfg",
        "rsl_rl_cfg_entry_point": f"{__name__}.residual_agents:MarvinResidualPPORunnerCfg",
        "default_agent": "rsl_rl",
        "acceptance_entry_point": f"{__name__}.acceptance:MARVIN_RESIDUAL_ACCEPTANCE",
    },
)
