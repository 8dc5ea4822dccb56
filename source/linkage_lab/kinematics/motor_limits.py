"""Per-motor torque saturation, shared by the actuator models and the ankle library."""

from __future__ import annotations

from typing import Literal

import torch

SaturationMode = Literal["clip", "scale"]


def saturate_motor_torque(
    motor_torque: torch.Tensor, limit_nm: torch.Tensor | float, mode: SaturationMode = "clip"
) -> torch.Tensor:
    """Bring motor torques inside ``|τ_i| ≤ T_i``.

    ``clip`` saturates each motor on its own (what motor drivers do): the applied joint torque
    ``Jᵀ τ`` may change direction. ``scale`` multiplies the whole motor-torque vector by
    ``min(1, min_i T_i / |τ_i|)``, which keeps the direction of the joint torque.

    Args:
        motor_torque: Motor torques, ``(..., n)`` (N·m).
        limit_nm: Per-motor limit ``T`` (N·m), a scalar or broadcastable to ``motor_torque``.
        mode: ``"clip"`` or ``"scale"``.

    Returns:
        The saturated torques, same shape as ``motor_torque``.
    """
    limit = torch.as_tensor(limit_nm, dtype=motor_torque.dtype, device=motor_torque.device)
    if mode == "clip":
        return torch.maximum(torch.minimum(motor_torque, limit), -limit)
    if mode == "scale":
        ratio = motor_torque.abs() / limit
        worst = ratio.amax(dim=-1, keepdim=True)
        return motor_torque / worst.clamp(min=1.0)
    raise ValueError(f"unknown saturation mode {mode!r}; expected 'clip' or 'scale'")
