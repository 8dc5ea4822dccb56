"""The motors' DC torque–speed line, the one model of it: the drive (torch) and the closed-chain model (numpy) use it.

``τ ≤ T_s (1 − ω/ω₀)`` and ``τ ≥ −T_s (1 + ω/ω₀)``, each side clamped to ``[0, T]`` in magnitude (Isaac Lab's
``DCMotor``: ``T_s`` its ``saturation_effort``, ``T`` its effort limit): the back-EMF line runs from the stall torque
``T_s`` at rest to 0 at the no-load speed ``ω₀``, and the driver's torque limit ``T`` caps it; braking keeps ``T``.
Without a stall torque the line starts at ``T`` itself (``T_s = T``). Works on numpy arrays and torch tensors
alike (imports neither): the torch-free robot side uses it too.
"""

from __future__ import annotations

from typing import Any


def dc_torque_bounds(
    peak_nm: Any, motor_vel: Any, no_load_speed_rads: Any, stall_torque_nm: Any = None
) -> tuple[Any, Any]:
    """Magnitudes ``(positive, negative)`` of the torque a motor can give at speed ``motor_vel``: the torque lies
    in ``[−negative, positive]``.

    Args:
        peak_nm: Peak torque ``T`` per motor (N·m).
        motor_vel: Motor speed ``ω`` (rad/s), broadcastable with the others.
        no_load_speed_rads: No-load speed ``ω₀`` per motor (rad/s).
        stall_torque_nm: Stall torque ``T_s`` per motor (N·m), where the back-EMF line starts; ``None``: ``T``.
    """
    ratio = motor_vel / no_load_speed_rads
    stall = peak_nm if stall_torque_nm is None else stall_torque_nm
    return _clamp(stall * (1.0 - ratio), peak_nm), _clamp(stall * (1.0 + ratio), peak_nm)


def _clamp(value: Any, high: Any) -> Any:
    """``value`` clamped to ``[0, high]``, in its own array library."""
    if hasattr(value, "clamp"):  # a torch tensor
        return value.clamp(min=0.0).minimum(high)
    return value.clip(0.0, high)  # a numpy array
