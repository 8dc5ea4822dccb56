"""The heading a yaw-rate command asks for: its integral since the episode began, held near the robot's."""

from __future__ import annotations

import math

import torch


def wrap_angle(angle_rad: torch.Tensor) -> torch.Tensor:
    """``angle`` wrapped into ``(−π, π]`` (rad)."""
    return torch.atan2(torch.sin(angle_rad), torch.cos(angle_rad))


class HeadingReference:
    """Per env, the heading ``ψ_ref`` a yaw-rate command has asked for, and the robot's error from it.

    ``ψ_ref`` starts at the robot's heading on the first :meth:`step` after a :meth:`reset` and then
    integrates the command, ``ψ_ref ← ψ_ref + ω_cmd dt``. The error is ``e = wrap(ψ_ref − ψ)``. A robot
    that fell behind by more than ``max_error_rad`` drags the reference along (``ψ_ref = ψ ± e_max``), so
    a lost heading is not owed back in full, as a wound-up integral would ask.

    A biped's yaw rate swings with every step (Marvin: 0.5 rad/s RMS at a zero command), which an
    instantaneous yaw-rate error counts as if it were steering; the heading error averages that swing
    out and keeps what makes a robot leave its lane: a turn that was not asked for.

    Args:
        num_envs: Number of environments.
        max_error_rad: ``e_max``, the largest error the reference keeps (rad, positive, below π).
        device: Torch device.

    Raises:
        ValueError: ``max_error_rad`` outside ``(0, π)``.
    """

    def __init__(self, num_envs: int, max_error_rad: float, device: torch.device | str = "cpu"):
        if not (math.isfinite(max_error_rad) and 0.0 < max_error_rad < math.pi):
            raise ValueError(f"max_error_rad must lie in (0, pi), got {max_error_rad!r}")
        self.max_error_rad = float(max_error_rad)
        self.reference_rad = torch.zeros(num_envs, device=device)
        self._fresh = torch.ones(num_envs, dtype=torch.bool, device=device)

    def reset(self, env_ids: torch.Tensor | slice | None = None) -> None:
        """A new episode starts in ``env_ids`` (None: all): the next step takes the robot's heading."""
        self._fresh[slice(None) if env_ids is None else env_ids] = True

    def step(self, heading_rad: torch.Tensor, yaw_rate_command_radps: torch.Tensor, dt_s: float) -> torch.Tensor:
        """The error ``wrap(ψ_ref − ψ)`` at this step, then the reference advanced by ``ω_cmd dt``.

        Args:
            heading_rad: ``(num_envs,)`` the robot's heading ``ψ`` (rad, yaw about world +z).
            yaw_rate_command_radps: ``(num_envs,)`` the commanded yaw rate ``ω_cmd`` (rad/s).
            dt_s: Control period (s).

        Returns:
            ``(num_envs,)`` heading error (rad, + = the reference is to the robot's left).
        """
        heading = heading_rad.to(self.reference_rad.dtype)
        self.reference_rad = torch.where(self._fresh, heading, self.reference_rad)
        self._fresh[:] = False
        error = wrap_angle(self.reference_rad - heading)
        limit = self.max_error_rad
        error = error.clamp(-limit, limit)
        self.reference_rad = wrap_angle(heading + error + yaw_rate_command_radps.to(heading.dtype) * dt_s)
        return error
