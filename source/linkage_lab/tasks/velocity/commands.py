"""A velocity command that asks for one motion at a time: walk straight, turn on the spot, or both.

Isaac Lab's :class:`~isaaclab.envs.mdp.UniformVelocityCommand` samples the forward speed and the
yaw rate independently, so nearly every command combines the two. A robot whose legs are planar
turns by a different motion than it walks with (its stance feet must slide sideways), and a short
CPU budget spent mostly on combined commands teaches neither pure motion well. This term draws each
command as the uniform one does, then zeroes the yaw rate (walk straight) or the forward speed
(turn on the spot) of a configured share of the envs.

A component is only zeroed where zero lies inside its range: an evaluation that pins the command
(``lin_vel_x=[0.3,0.3]``, ``ang_vel_z=[0,0]``) gets exactly the pinned command, as with the
uniform term.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields

import torch
from isaaclab.envs.mdp import UniformVelocityCommand, UniformVelocityCommandCfg
from isaaclab.utils import configclass


class SplitVelocityCommand(UniformVelocityCommand):
    """:class:`UniformVelocityCommand` with a share of straight-only and of turn-only commands."""

    cfg: SplitVelocityCommandCfg

    def _resample_command(self, env_ids: Sequence[int]):
        super()._resample_command(env_ids)
        ranges = self.cfg.ranges
        num = len(range(self.num_envs)[env_ids]) if isinstance(env_ids, slice) else len(env_ids)
        draw = torch.rand(num, device=self.device)
        straight = draw < self.cfg.rel_straight_envs
        turning = (draw >= self.cfg.rel_straight_envs) & (draw < self.cfg.rel_straight_envs + self.cfg.rel_turning_envs)
        command = self.vel_command_b[env_ids]
        if ranges.ang_vel_z[0] <= 0.0 <= ranges.ang_vel_z[1]:
            command[:, 2] = torch.where(straight, 0.0, command[:, 2])
        if ranges.lin_vel_x[0] <= 0.0 <= ranges.lin_vel_x[1]:
            command[:, 0] = torch.where(turning, 0.0, command[:, 0])
        if ranges.lin_vel_y[0] <= 0.0 <= ranges.lin_vel_y[1]:
            command[:, 1] = torch.where(turning, 0.0, command[:, 1])
        self.vel_command_b[env_ids] = command


@configclass
class SplitVelocityCommandCfg(UniformVelocityCommandCfg):
    """Configuration of :class:`SplitVelocityCommand`; the rest of the envs keep the combined command."""

    class_type: type = SplitVelocityCommand

    rel_straight_envs: float = 0.5
    """Share of resampled commands whose yaw rate is zero (walk straight)."""

    rel_turning_envs: float = 0.3
    """Share of resampled commands whose forward (and sideways) speed is zero (turn on the spot)."""

    def __post_init__(self):
        for name in ("rel_straight_envs", "rel_turning_envs"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {value}")
        if self.rel_straight_envs + self.rel_turning_envs > 1.0:
            raise ValueError(
                f"rel_straight_envs + rel_turning_envs must be at most 1, got "
                f"{self.rel_straight_envs} + {self.rel_turning_envs}"
            )


def recast_command_cfg(command: UniformVelocityCommandCfg, cfg_type: type, **settings) -> UniformVelocityCommandCfg:
    """A ``cfg_type`` (a :class:`UniformVelocityCommandCfg` subclass) with every setting of ``command`` it
    knows, and ``settings`` on top (its class type stays ``cfg_type``'s)."""
    known = {f.name for f in fields(cfg_type)} - {"class_type", *settings}
    values = {f.name: getattr(command, f.name) for f in fields(command) if f.name in known}
    return cfg_type(**values, **settings)


def split_command_cfg(
    command: UniformVelocityCommandCfg, rel_straight_envs: float, rel_turning_envs: float
) -> SplitVelocityCommandCfg:
    """A :class:`SplitVelocityCommandCfg` with every setting of ``command`` and the given shares."""
    return recast_command_cfg(
        command, SplitVelocityCommandCfg, rel_straight_envs=rel_straight_envs, rel_turning_envs=rel_turning_envs
    )
