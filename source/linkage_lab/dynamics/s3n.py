"""S3N math: actuator and linkage inertia increments of a parallel-link leg (docs/design/s3n.md §1–§3).

All functions are pure torch and batched: matrices are ``(..., n, n)``, vectors ``(..., n)``,
relative angles ``(...)``. ``J`` is the transmission Jacobian (rows = motors, columns = serial
joints), so motor-space matrices pull back to serial coordinates as ``Jᵀ X J``. For the Limit's
parallelogram leg ``J = [[1, 0], [1, 1]]`` and the relative angle is ``α = q₂ᵖ − q₁ᵖ = q₂ˢ``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch

S3NModel = Literal["kin_only", "s3n_act", "s3n_full"]

#: The three serial-simulator models, in order of fidelity.
S3N_MODELS: tuple[str, ...] = ("kin_only", "s3n_act", "s3n_full")

#: ``E_h``: the hip-diagonal part of ``ΔM_act / J̄₂`` (native armature and damping, docs/design/s3n.md §3).
E_HIP = ((1.0, 0.0), (0.0, 0.0))
#: ``E_x``: the off-diagonal part of ``ΔM_act / J̄₂`` (explicit torque, docs/design/s3n.md §3).
E_CROSS = ((0.0, 1.0), (1.0, 0.0))


@dataclass(frozen=True)
class S3NCfg:
    """The model the serial simulator runs and the parameters it needs (docs/design/s3n.md §2).

    The serial link inertia uses the two-link form
    ``M_linkˢ(α) = [[a + 2b cos α, c + b cos α], [c + b cos α, c]]`` and the identified
    motor-space inertia ``M_p(α) = [[M₁₁, M₁₂ cos α], [M₁₂ cos α, M₂₂]]``.
    """

    model: S3NModel = "kin_only"
    """``kin_only`` (per-joint armature ``diag(J̄)``), ``s3n_act`` (adds ``ΔM_act``, ``ΔD_act``) or
    ``s3n_full`` (also adds ``ΔM_link(α)``; needs ``mp_kgm2`` and ``serial_link_kgm2``)."""

    reflected_inertia_kgm2: tuple[float, ...] = (0.0, 0.0)
    """Reflected rotor inertia ``J̄ᵢ = Nᵢ² J_m,i`` per motor (kg·m²); :func:`paper_s3n_cfg` has the paper's."""

    motor_damping_nms_per_rad: tuple[float, ...] = (0.0, 0.0)
    """Reflected viscous damping ``B̄ᵢ = Nᵢ² B_m,i`` per motor (N·m·s/rad); :func:`paper_s3n_cfg` has the paper's."""

    mp_kgm2: tuple[float, float, float] | None = None
    """Identified ``(M₁₁, M₁₂, M₂₂)`` of ``M_p(α)`` (kg·m²), actuator inertia included. ``None``: not
    identified (only ``kin_only`` and ``s3n_act`` are then available)."""

    serial_link_kgm2: tuple[float, float, float] | None = None
    """``(a, b, c)`` of the serial tree's own link inertia ``M_linkˢ(α)`` (kg·m²), i.e. what the
    simulator already integrates without any armature. ``None``: unknown (no ``s3n_full``)."""

    def __post_init__(self) -> None:
        if self.model not in S3N_MODELS:
            raise ValueError(f"unknown S3N model {self.model!r}; expected one of {S3N_MODELS}")
        if len(self.reflected_inertia_kgm2) != len(self.motor_damping_nms_per_rad):
            raise ValueError("reflected_inertia_kgm2 and motor_damping_nms_per_rad need one value per motor")
        if self.model == "s3n_full" and (self.mp_kgm2 is None or self.serial_link_kgm2 is None):
            raise ValueError("model 's3n_full' needs mp_kgm2 (identified M_p) and serial_link_kgm2 (M_link^s)")


def motor_diagonal_in_joint_space(jacobian: torch.Tensor, per_motor: torch.Tensor) -> torch.Tensor:
    """``Jᵀ diag(x) J``: a diagonal motor-space inertia (or damping) seen in serial coordinates."""
    return jacobian.transpose(-1, -2) @ (per_motor.unsqueeze(-1) * jacobian)


def delta_m_act(jacobian: torch.Tensor, reflected_inertia: torch.Tensor) -> torch.Tensor:
    """``ΔM_act = Jᵀ diag(J̄) J − diag(J̄)``: the actuator inertia a per-joint armature misses (kg·m²).

    For ``J = [[1, 0], [1, 1]]`` this is ``[[J̄₂, J̄₂], [J̄₂, 0]]`` (docs/design/s3n.md §1).
    """
    return motor_diagonal_in_joint_space(jacobian, reflected_inertia) - torch.diag_embed(
        reflected_inertia.expand(jacobian.shape[:-1])
    )


def delta_d_act(jacobian: torch.Tensor, viscous_damping: torch.Tensor) -> torch.Tensor:
    """``ΔD_act = Jᵀ diag(B̄) J − diag(B̄)`` (N·m·s/rad); same structure as :func:`delta_m_act`."""
    return delta_m_act(jacobian, viscous_damping)


def mp_matrix(alpha: torch.Tensor, m11: float, m12: float, m22: float) -> torch.Tensor:
    """``M_p(α) = [[M₁₁, M₁₂ cos α], [M₁₂ cos α, M₂₂]]`` (kg·m²), shape ``(..., 2, 2)``."""
    coupling = m12 * torch.cos(alpha)
    return torch.stack(
        [
            torch.stack([torch.full_like(alpha, m11), coupling], dim=-1),
            torch.stack([coupling, torch.full_like(alpha, m22)], dim=-1),
        ],
        dim=-2,
    )


def two_link_inertia(alpha: torch.Tensor, a: float, b: float, c: float) -> torch.Tensor:
    """Serial two-link inertia ``[[a + 2b cos α, c + b cos α], [c + b cos α, c]]`` (kg·m²).

    For point-like links ``a = I₁ + I₂ + m₂ l₁²``, ``b = m₂ l₁ l_c2``, ``c = I₂`` (inertias about
    the joints), with ``α`` the relative (knee) angle.
    """
    cos_alpha = torch.cos(alpha)
    off = c + b * cos_alpha
    return torch.stack(
        [
            torch.stack([a + 2.0 * b * cos_alpha, off], dim=-1),
            torch.stack([off, torch.full_like(alpha, c)], dim=-1),
        ],
        dim=-2,
    )


def serial_link_from_90deg(m_link_90: Sequence[Sequence[float]], coupling_b: float) -> tuple[float, float, float]:
    """``(a, b, c)`` of :func:`two_link_inertia` from its value at ``α = 90°`` and a coupling ``b``.

    At ``cos α = 0`` the two-link form is ``[[a, c], [c, c]]``, so ``a`` and ``c`` are read off; ``b``
    is invisible there and must come from elsewhere (the presets take ``b = M₁₂`` of the
    identified ``M_p``).

    Raises:
        ValueError: The matrix's off-diagonal and knee entries differ, so it is not of that form.
    """
    (m11, m12), (m21, m22) = m_link_90
    if abs(m12 - m21) > 1e-12 or abs(m12 - m22) > 1e-9:
        raise ValueError(f"M_link^s(90 deg) = {m_link_90} is not of the form [[a, c], [c, c]]")
    return float(m11), float(coupling_b), float(m22)


def m_act_norm(m_link_serial: torch.Tensor, jacobian: torch.Tensor, reflected_inertia: torch.Tensor) -> torch.Tensor:
    """``M_act,normˢ = M_s + ΔM_act = M_linkˢ + Jᵀ diag(J̄) J`` (kg·m²)."""
    return m_link_serial + motor_diagonal_in_joint_space(jacobian, reflected_inertia)


def delta_m_link(
    m_p: torch.Tensor, m_link_serial: torch.Tensor, jacobian: torch.Tensor, reflected_inertia: torch.Tensor
) -> torch.Tensor:
    """``ΔM_link(α) = Jᵀ M_p(α) J − M_act,normˢ(α)`` (kg·m²): the residual linkage inertia.

    ``M_p`` already contains the actuator inertia, which is why ``M_act,norm`` is subtracted.
    """
    pulled_back = jacobian.transpose(-1, -2) @ m_p @ jacobian
    return pulled_back - m_act_norm(m_link_serial, jacobian, reflected_inertia)


def m_norm(
    m_link_serial: torch.Tensor,
    jacobian: torch.Tensor,
    reflected_inertia: torch.Tensor,
    m_p: torch.Tensor | None = None,
) -> torch.Tensor:
    """``M_normˢ = M_s + ΔM_act + ΔM_link`` (kg·m²), ``M_s = M_linkˢ + diag(J̄)``.

    Without ``m_p`` (S3N-Act) ``ΔM_link`` is zero and the result is ``M_act,normˢ``; with it the
    result equals ``Jᵀ M_p J``.
    """
    normalised = m_act_norm(m_link_serial, jacobian, reflected_inertia)
    if m_p is not None:
        normalised = normalised + delta_m_link(m_p, m_link_serial, jacobian, reflected_inertia)
    return normalised


def d_norm(d_serial: torch.Tensor, jacobian: torch.Tensor, viscous_damping: torch.Tensor) -> torch.Tensor:
    """``D_normˢ = D_s + ΔD_act`` (N·m·s/rad), ``D_s = diag(B̄)`` plus any joint damping of the tree."""
    return d_serial + delta_d_act(jacobian, viscous_damping)


def split_native_explicit(increment: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Split an inertia (or damping) increment into the simulator's share and an explicit share.

    The simulator takes only per-joint (diagonal) armature and damping, so the diagonal goes to
    it and the rest becomes an explicit torque. For ``ΔM_act = J̄₂ (E_h + E_x)`` this returns
    ``(J̄₂ · diag(E_h), J̄₂ E_x)`` (docs/design/s3n.md §3).

    Returns:
        ``(native, explicit)``: the diagonal ``(..., n)`` and ``increment − diag(native)``.
    """
    native = torch.diagonal(increment, dim1=-2, dim2=-1)
    return native, increment - torch.diag_embed(native)


def explicit_s3n_torque(
    explicit_inertia: torch.Tensor,
    explicit_damping: torch.Tensor | None,
    joint_acc: torch.Tensor,
    joint_vel: torch.Tensor,
) -> torch.Tensor:
    """``τ = −X_M q̈ − X_D q̇`` (N·m), e.g. ``τ_act,off + τ_res`` with the previous step's ``q̈``, ``q̇``."""
    torque = -(explicit_inertia @ joint_acc.unsqueeze(-1)).squeeze(-1)
    if explicit_damping is not None:
        torque = torque - (explicit_damping @ joint_vel.unsqueeze(-1)).squeeze(-1)
    return torque


def integrated_inertia(cfg: S3NCfg, alpha: torch.Tensor, jacobian: torch.Tensor) -> torch.Tensor:
    """The total serial inertia the simulator integrates under ``cfg.model`` (kg·m²), ``(..., 2, 2)``.

    ``kin_only``: ``M_s = M_linkˢ + diag(J̄)``; ``s3n_act``: ``M_s + ΔM_act``; ``s3n_full``:
    ``M_s + ΔM_act + ΔM_link = Jᵀ M_p J``. Needs ``cfg.serial_link_kgm2``.
    """
    if cfg.serial_link_kgm2 is None:
        raise ValueError("integrated_inertia needs cfg.serial_link_kgm2")
    reflected = torch.as_tensor(cfg.reflected_inertia_kgm2, dtype=alpha.dtype, device=alpha.device)
    m_link = two_link_inertia(alpha, *cfg.serial_link_kgm2)
    if cfg.model == "kin_only":
        return m_link + torch.diag_embed(reflected.expand(m_link.shape[:-1]))
    m_p = mp_matrix(alpha, *cfg.mp_kgm2) if cfg.model == "s3n_full" else None
    return m_norm(m_link, jacobian.to(alpha.dtype), reflected, m_p)


#: The S3N paper's identified and CAD values for its own quadruped leg (docs/design/s3n.md §4).
PAPER_REFLECTED_INERTIA_KGM2 = (0.0162, 0.0162)
PAPER_VISCOUS_DAMPING_NMS_PER_RAD = (0.0972, 0.0972)
PAPER_MP_KGM2 = (0.04793, 0.005413, 0.02368)
PAPER_SERIAL_LINK_90DEG_KGM2 = ((0.02438, 0.00232), (0.00232, 0.00232))


def paper_s3n_cfg(model: S3NModel = "s3n_full") -> S3NCfg:
    """The paper's leg (docs/design/s3n.md §4) as an :class:`S3NCfg`.

    The paper gives the serial link inertia only at ``α = 90°``. We take the two-link form of
    :func:`two_link_inertia`, read ``a`` and ``c`` off the 90° value and set the coupling
    ``b = M₁₂``: the cos α coupling of a parallelogram leg is the shank's ``m₂ l₁ l_c2`` in either
    coordinate set, and the CAD model's is assumed to equal the identified one. With this choice
    ``ΔM_link`` does not depend on ``α``.
    """
    return S3NCfg(
        model=model,
        reflected_inertia_kgm2=PAPER_REFLECTED_INERTIA_KGM2,
        motor_damping_nms_per_rad=PAPER_VISCOUS_DAMPING_NMS_PER_RAD,
        mp_kgm2=PAPER_MP_KGM2,
        serial_link_kgm2=serial_link_from_90deg(PAPER_SERIAL_LINK_90DEG_KGM2, PAPER_MP_KGM2[1]),
    )
