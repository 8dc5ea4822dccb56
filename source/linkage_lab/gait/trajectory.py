"""Foot trajectory over a leg's phase, and the step-size ramp at the start of walking."""

from __future__ import annotations

import torch

from linkage_lab.gait.phase import as_tensor


def foot_trajectory(
    leg_phase: torch.Tensor,
    step_length_m: torch.Tensor | float,
    step_height_m: torch.Tensor | float,
    double_support_margin: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Foot position over one cycle, relative to its neutral point under the hip.

    ``x(ψ) = −(S/2) cos ψ`` and ``h(ψ) = H · max(0, sin ψ − c) / (1 − c)``: during swing
    (``ψ ∈ [0, π)``) the foot moves from ``−S/2`` to ``+S/2`` and lifts only while
    ``sin ψ > c``; during stance it slides back from ``+S/2`` to ``−S/2`` on the ground.

    Args:
        leg_phase: Leg phase ``ψ`` (rad), any shape.
        step_length_m: Step length ``S`` (m), broadcastable to ``leg_phase``.
        step_height_m: Step height ``H`` (m), broadcastable to ``leg_phase``.
        double_support_margin: ``c ∈ [0, 1)`` (unitless); larger ``c`` gives a longer double support.

    Returns:
        ``(x, h)``: forward offset of the foot (m, + forward) and its lift (m, ≥ 0).
    """
    forward = -0.5 * as_tensor(step_length_m, leg_phase) * torch.cos(leg_phase)
    return forward, as_tensor(step_height_m, leg_phase) * lift_fraction(leg_phase, double_support_margin)


def lift_fraction(leg_phase: torch.Tensor, double_support_margin: float) -> torch.Tensor:
    """The foot's lift over ``H``, ``max(0, sin ψ − c) / (1 − c)`` (unitless, 0 on the ground, 1 at the top)."""
    if not 0.0 <= double_support_margin < 1.0:
        raise ValueError(f"double_support_margin must be in [0, 1), got {double_support_margin}")
    return (torch.sin(leg_phase) - double_support_margin).clamp(min=0.0) / (1.0 - double_support_margin)


def step_ramp(time_since_start_s: torch.Tensor, ramp_time_s: float) -> torch.Tensor:
    """Step-size scale that rises linearly from 0 to 1 over ``ramp_time_s`` (unitless).

    Args:
        time_since_start_s: Time since stepping started (s), ``≥ 0``.
        ramp_time_s: Duration of the ramp (s); ``0`` means no ramp (scale 1 at once).
    """
    if ramp_time_s <= 0.0:
        return torch.ones_like(time_since_start_s)
    return (time_since_start_s / ramp_time_s).clamp(0.0, 1.0)
