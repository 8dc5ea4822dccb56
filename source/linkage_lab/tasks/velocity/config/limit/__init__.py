"""The Limit quadruped's velocity tasks: ``LinkageLab-Velocity-Flat-Limit`` and its gait-clock variant."""

from __future__ import annotations

import gymnasium as gym

gym.register(
    id="LinkageLab-Velocity-Flat-Limit",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.env_cfg:LimitFlatEnvCfg",
        "rsl_rl_cfg_entry_point": f"{__name__}.agents:LimitFlatPPORunnerCfg",
        "default_agent": "rsl_rl",
        "acceptance_entry_point": f"{__name__}.acceptance:LIMIT_ACCEPTANCE",
    },
)

gym.register(
    id="LinkageLab-Velocity-Flat-Limit-Clock",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.env_cfg:LimitClockFlatEnvCfg",
        "rsl_rl_cfg_entry_point": f"{__name__}.agents:LimitFlatPPORunnerCfg",
        "default_agent": "rsl_rl",
        "acceptance_entry_point": f"{__name__}.acceptance:LIMIT_ACCEPTANCE",
    },
)
