"""Gait phase: the master phase φ(t), per-leg phase offsets and the swing/stance split."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch

TWO_PI = 2.0 * math.pi

#: Biped phase offsets (rad): the right leg runs on φ, the left leg half a cycle later.
BIPED_PHASE_OFFSETS: dict[str, float] = {"right": 0.0, "left": math.pi}


def as_tensor(value: torch.Tensor | float, like: torch.Tensor | None = None) -> torch.Tensor:
    """``value`` as a floating tensor, with the dtype and device of ``like`` when given."""
    if like is None:
        tensor = torch.as_tensor(value)
        return tensor if tensor.is_floating_point() else tensor.to(torch.get_default_dtype())
    return torch.as_tensor(value, dtype=like.dtype, device=like.device)


def stepping_time(time_s: torch.Tensor | float, start_time_s: torch.Tensor | float = 0.0) -> torch.Tensor:
    """Time since stepping started, ``max(0, t − t₀)`` (s); zero before the start."""
    time = as_tensor(time_s)
    return (time - as_tensor(start_time_s, time)).clamp(min=0.0)


def gait_phase(
    time_s: torch.Tensor | float,
    frequency_hz: torch.Tensor | float,
    start_time_s: torch.Tensor | float = 0.0,
) -> torch.Tensor:
    """Master phase ``φ(t) = 2π f (t − t₀)``, wrapped to ``[0, 2π)`` (rad).

    Before ``t₀`` the phase is held at 0: the robot stands in its crouch until stepping starts.

    Args:
        time_s: Current time ``t`` (s), a scalar or ``(num_envs,)``.
        frequency_hz: Gait frequency ``f`` (cycles/s), a scalar or ``(num_envs,)``.
        start_time_s: Start of stepping ``t₀`` (s), a scalar or ``(num_envs,)``.

    Returns:
        ``φ`` in ``[0, 2π)``, broadcast over the inputs.
    """
    elapsed = stepping_time(time_s, start_time_s)
    return wrap_phase(TWO_PI * as_tensor(frequency_hz, elapsed) * elapsed)


def wrap_phase(phase: torch.Tensor) -> torch.Tensor:
    """Phase wrapped to ``[0, 2π)`` (rad)."""
    return torch.remainder(phase, TWO_PI)


def leg_phases(phase: torch.Tensor, offsets: Sequence[float] | Mapping[str, float]) -> torch.Tensor:
    """Per-leg phases ``ψ_i = φ + offset_i``, wrapped to ``[0, 2π)`` (rad).

    Args:
        phase: Master phase ``φ``, shape ``(...)``.
        offsets: Per-leg offsets (rad), in leg order; a mapping is read in its insertion order.

    Returns:
        ``ψ``, shape ``(..., num_legs)``.
    """
    values = list(offsets.values()) if isinstance(offsets, Mapping) else list(offsets)
    return wrap_phase(phase.unsqueeze(-1) + as_tensor(values, phase))


def is_swing(leg_phase: torch.Tensor) -> torch.Tensor:
    """True where a leg swings, ``ψ mod 2π ∈ [0, π)``; stance is ``[π, 2π)``."""
    return wrap_phase(leg_phase) < math.pi
