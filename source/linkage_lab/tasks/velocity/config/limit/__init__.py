"""The Limit quadruped's velocity tasks: ``LinkageLab-Velocity-Flat-Limit`` and its gait-clock variant."""

from __future__ import annotations

import gymnasium as gym

for _task_id, _env_cfg in (
    ("LinkageLab-Velocity-Flat-Limit", "LimitFlatEnvCfg"),
    ("LinkageLab-Velocity-Flat-Limit-Clock", "LimitClockFlatEnvCfg"),
):
    gym.register(
        id=_task_id,
        entry_point="isaaclab.envs:ManagerBasedRLEnv",
        disable_env_checker=True,
        kwargs={
            "env_cfg_entry_point": f"{__name__}.env_cfg:{_env_cfg}",
            "rsl_rl_cfg_entry_point": f"{__name__}.agents:LimitFlatPPORunnerCfg",
            "default_agent": "rsl_rl",
            "acceptance_entry_point": f"{__name__}.acceptance:LIMIT_ACCEPTANCE",
        },
    )
