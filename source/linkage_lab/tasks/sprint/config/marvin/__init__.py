"""Marvin's sprints: ``LinkageLab-Sprint-Marvin`` and ``LinkageLab-Sprint-Marvin-Residual``.

``policy_task`` names the velocity task whose policies race here (same observations and actions);
``sprint_rules_entry_point`` the race's rules (the referee's :class:`~linkage_lab.sprint.rules.SprintCfg`).
"""

from __future__ import annotations

import gymnasium as gym

#: Marvin's sprint tasks, the preferred first for ``--checkpoint pretrained``.
SPRINT_TASKS = ("LinkageLab-Sprint-Marvin-Residual", "LinkageLab-Sprint-Marvin")
#: Where scripted and ONNX policies race.
DEFAULT_SPRINT_TASK = "LinkageLab-Sprint-Marvin"

gym.register(
    id="LinkageLab-Sprint-Marvin",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.env_cfg:MarvinSprintEnvCfg",
        "sprint_rules_entry_point": f"{__name__}.env_cfg:marvin_sprint_rules",
        "rsl_rl_cfg_entry_point": "linkage_lab.tasks.velocity.config.marvin.agents:MarvinFlatPPORunnerCfg",
        "default_agent": "rsl_rl",
        "robot": "marvin",
        "policy_task": "LinkageLab-Velocity-Flat-Marvin",
    },
)

gym.register(
    id="LinkageLab-Sprint-Marvin-Residual",
    entry_point="isaaclab.envs:ManagerBasedRLEnv",
    disable_env_checker=True,
    kwargs={
        "env_cfg_entry_point": f"{__name__}.env_cfg:MarvinResidualSprintEnvCfg",
        "sprint_rules_entry_point": f"{__name__}.env_cfg:marvin_sprint_rules",
        "rsl_rl_cfg_entry_point": (
            "linkage_lab.tasks.velocity.config.marvin.residual_agents:MarvinResidualPPORunnerCfg"
        ),
        "default_agent": "rsl_rl",
        "robot": "marvin",
        "policy_task": "LinkageLab-Velocity-Flat-Marvin-Residual",
    },
)
