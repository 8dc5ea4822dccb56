"""The Limit quadruped's velocity task: ``LinkageLab-Velocity-Flat-Limit``."""

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
