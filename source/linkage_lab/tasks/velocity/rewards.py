"""Reward terms of the project's velocity tasks (beyond Isaac Lab's), pure torch on the env's state.

Progress terms pay for motion in the commanded direction, linearly and up to the command:
``clip(v · ĉ, 0, |c|) / |c|``. Isaac Lab's Gaussian tracking kernel gives a robot that stands still
at a backward or turning command a sizeable share of its reward and almost no slope to climb (a
0.25 m/s kernel at a −0.3 m/s command: 24 % standing, 53 % at −0.1 m/s); the progress term gives
standing nothing and each bit of motion the same slope, and pays nothing beyond the command, so it
adds no reason to overshoot. Commands below a threshold earn nothing (that is the standing case,
which the Gaussian kernel rewards).
"""

from __future__ import annotations

import torch


def velocity_progress(command: torch.Tensor, velocity: torch.Tensor, min_command: float) -> torch.Tensor:
    """``clip(v · ĉ, 0, |c|) / |c|`` per env for ``|c| ≥ min_command``, else 0 (``(num_envs, d)`` inputs)."""
    norm = command.norm(dim=-1)
    along = (velocity * command).sum(-1) / norm.clamp_min(1e-9)
    progress = torch.minimum(along.clamp_min(0.0), norm) / norm.clamp_min(1e-9)
    return torch.where(norm >= min_command, progress, torch.zeros_like(progress))


def lin_vel_progress(env, command_name: str, min_command_mps: float = 0.1) -> torch.Tensor:
    """:func:`velocity_progress` of the base's planar velocity (base frame) on the planar command."""
    command = env.command_manager.get_command(command_name)[:, :2]
    velocity = env.scene["robot"].data.root_lin_vel_b.torch[:, :2]
    return velocity_progress(command, velocity, min_command_mps)


def yaw_rate_progress(env, command_name: str, min_command_radps: float = 0.1) -> torch.Tensor:
    """:func:`velocity_progress` of the base's yaw rate on the yaw-rate command."""
    command = env.command_manager.get_command(command_name)[:, 2:3]
    velocity = env.scene["robot"].data.root_ang_vel_b.torch[:, 2:3]
    return velocity_progress(command, velocity, min_command_radps)
