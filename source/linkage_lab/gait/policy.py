"""The scripted gaits as a policy: observations in, the task's actions out.

It has the call signature of an exported policy (``policy(obs) -> actions``) so evaluation and the
sprint run it like a learned one. What a learned policy gets in its observation, this one reads
from the robot's own sensors as a real robot would: the IMU (orientation, pitch rate) and the
base position (odometry) of the articulation, plus its own clock. Nothing here imports Isaac Lab;
the env is only read.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from linkage_lab.gait.biped import BipedGait, BipedGaitCfg, TorsoState
from linkage_lab.gait.trot import TrotGait, TrotGaitCfg


def quat_xyzw_to_rpy(quat: torch.Tensor) -> torch.Tensor:
    """Roll, pitch, yaw (rad) of ``(x, y, z, w)`` quaternions, ``(..., 3)`` (ZYX convention)."""
    x, y, z, w = quat.unbind(-1)
    roll = torch.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = torch.asin((2 * (w * y - z * x)).clamp(-1.0, 1.0))
    yaw = torch.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return torch.stack((roll, pitch, yaw), dim=-1)


def gait_targets(
    gait: BipedGait | TrotGait,
    time_s: float | torch.Tensor,
    start_delay_s: float,
    torso: TorsoState | None = None,
    lane_y_m: Any = None,
    forward_speed_mps: float | torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """Joint targets by name of either gait: the biped reads the ``torso`` (and holds ``lane_y_m``),
    the trot follows ``forward_speed_mps``."""
    if isinstance(gait, BipedGait):
        return gait.joint_targets(time_s, torso, start_delay_s, lane_y_m)
    array = gait.joint_targets(time_s, forward_speed_mps, start_delay_s)
    return dict(zip(gait.cfg.joint_names, array.unbind(-1), strict=True))


class ScriptedPolicy:
    """A phase-based gait driving a task's joint-position actions.

    Args:
        env: The (wrapped or bare) Isaac Lab env; read only.
        gait: A :class:`BipedGait` or :class:`TrotGait` (a robot's own: ``RobotSpec.scripted_gait``).
        forward_speed_mps: The trot's forward speed; ``None`` follows the env's velocity command (m/s).
        start_delay_s: Time the robot holds its crouch before stepping (s).
    """

    def __init__(
        self,
        env: Any,
        gait: BipedGait | TrotGait,
        forward_speed_mps: float | None = None,
        start_delay_s: float = 0.5,
    ):
        self.env = env.unwrapped
        self.robot = self.env.scene["robot"]
        term = self.env.action_manager.get_term("joint_pos")
        self.joint_names = list(term._joint_names)
        self._scale = torch.as_tensor(term._scale, device=self.env.device, dtype=torch.float32)
        self._offset = torch.as_tensor(term._offset, device=self.env.device, dtype=torch.float32)
        self.gait = gait
        self.forward_speed_mps = forward_speed_mps
        self.start_delay_s = start_delay_s
        num_envs = self.env.num_envs
        self.time_s = torch.zeros(num_envs, device=self.env.device, dtype=torch.float64)
        self.lane_y_m = torch.zeros(num_envs, device=self.env.device, dtype=torch.float64)
        self._needs_start = torch.ones(num_envs, dtype=torch.bool, device=self.env.device)

    def reset(self, dones: torch.Tensor | None = None) -> None:
        """Restart the clock (and lane) of the envs in ``dones`` (all when ``None``)."""
        ids = slice(None) if dones is None else dones.bool()
        self.time_s[ids] = 0.0
        self._needs_start[ids] = True

    def _torso(self) -> TorsoState:
        data = self.robot.data
        rpy = quat_xyzw_to_rpy(data.root_quat_w.torch.to(torch.float64))
        pitch_rate = data.root_ang_vel_b.torch[:, 1].to(torch.float64)
        pos = (data.root_pos_w.torch - self.env.scene.env_origins).to(torch.float64)
        if self._needs_start.any():
            self.lane_y_m = torch.where(self._needs_start, pos[:, 1], self.lane_y_m)
            self._needs_start[:] = False
        # Velocity in the heading frame (yaw only), from the world-frame base velocity (odometry).
        vel = data.root_lin_vel_w.torch[:, :2].to(torch.float64)
        cos_yaw, sin_yaw = torch.cos(rpy[:, 2]), torch.sin(rpy[:, 2])
        forward = cos_yaw * vel[:, 0] + sin_yaw * vel[:, 1]
        lateral = -sin_yaw * vel[:, 0] + cos_yaw * vel[:, 1]
        return TorsoState(rpy[:, 0], rpy[:, 1], rpy[:, 2], pitch_rate, pos[:, 0], pos[:, 1], forward, lateral)

    def joint_targets(self) -> torch.Tensor:
        """Joint position targets (rad) in the action term's joint order, ``(num_envs, n)``."""
        if isinstance(self.gait, BipedGait):
            targets = gait_targets(self.gait, self.time_s, self.start_delay_s, self._torso(), self.lane_y_m)
        else:
            speed = self.forward_speed_mps
            if speed is None:
                speed = self.env.command_manager.get_command("base_velocity")[:, 0].to(torch.float64)
            targets = gait_targets(self.gait, self.time_s, self.start_delay_s, forward_speed_mps=speed)
        return torch.stack([targets[name] for name in self.joint_names], dim=-1).to(torch.float32)

    def actions_for(self, joint_targets: torch.Tensor) -> torch.Tensor:
        """The actions that ask for ``joint_targets`` (rad, action-term joint order): ``(q* − offset) / scale``."""
        return (joint_targets - self._offset) / self._scale

    def __call__(self, obs: torch.Tensor | None = None) -> torch.Tensor:
        """Actions for this control step: ``(target − offset) / scale``; advances the clock."""
        actions = self.actions_for(self.joint_targets())
        self.time_s += self.env.step_dt
        return actions


def describe(gait: BipedGait | TrotGait) -> dict[str, Any]:
    """The gait's parameters as plain numbers (for metrics files)."""
    cfg: BipedGaitCfg | TrotGaitCfg = gait.cfg
    out: dict[str, Any] = {"gait": type(gait).__name__}
    for key, value in vars(cfg).items():
        if _is_number(value):
            out[key] = value
        elif isinstance(value, dict) and value and all(_is_number(v) for v in value.values()):
            out[key] = dict(value)  # e.g. the stance sag compensation per joint
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
