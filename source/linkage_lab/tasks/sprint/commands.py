"""The race's velocity command with lane keeping: the heading target points back at the lane's centre line.

Isaac Lab's heading command holds a fixed heading. A policy that follows yaw-rate commands loosely
then drifts sideways at the right heading and leaves its lane. This term keeps Isaac Lab's heading
controller (``ω_z = clip(K · wrap(ψ* − ψ))``) and moves its target every step to
``ψ* = −atan(y / L)``, ``y`` the torso's offset left of its env origin's line, ``L`` the look-ahead:
a pure-pursuit steering law towards the centre line (:mod:`linkage_lab.sprint.lane`).
"""

from __future__ import annotations

from isaaclab.envs.mdp import UniformVelocityCommand, UniformVelocityCommandCfg
from isaaclab.utils import configclass

from linkage_lab.sprint.lane import lane_heading_target
from linkage_lab.tasks.velocity.commands import recast_command_cfg


class LaneKeepingVelocityCommand(UniformVelocityCommand):
    """:class:`UniformVelocityCommand` whose heading envs steer towards the lane's centre line."""

    cfg: LaneKeepingVelocityCommandCfg

    def _update_command(self):
        offset = self.robot.data.root_pos_w.torch[:, 1] - self._env.scene.env_origins[:, 1]
        self.heading_target[:] = lane_heading_target(offset, self.cfg.lookahead_m)
        super()._update_command()


@configclass
class LaneKeepingVelocityCommandCfg(UniformVelocityCommandCfg):
    """Configuration of :class:`LaneKeepingVelocityCommand` (``heading_command`` must be on)."""

    class_type: type = LaneKeepingVelocityCommand

    lookahead_m: float = 1.0
    """Distance ahead (m) at which the heading target meets the lane's centre line."""

    def __post_init__(self):
        if not self.lookahead_m > 0.0:
            raise ValueError(f"lookahead_m must be positive, got {self.lookahead_m}")


def lane_keeping_cfg(command: UniformVelocityCommandCfg, lookahead_m: float) -> LaneKeepingVelocityCommandCfg:
    """A :class:`LaneKeepingVelocityCommandCfg` with every setting of ``command`` and the look-ahead."""
    return recast_command_cfg(command, LaneKeepingVelocityCommandCfg, lookahead_m=lookahead_m)
