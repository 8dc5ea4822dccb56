"""S3N math (docs/design/s3n.md §1–§3) against matrices worked out by hand."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
import torch

from linkage_lab.cli.main import main
from linkage_lab.dynamics.s3n import (
    E_CROSS,
    E_HIP,
    S3NCfg,
    d_norm,
    delta_d_act,
    delta_m_act,
    delta_m_link,
    explicit_s3n_torque,
    integrated_inertia,
    m_act_norm,
    m_norm,
    mp_matrix,
    paper_s3n_cfg,
    serial_link_from_90deg,
    split_native_explicit,
    two_link_inertia,
)

pytestmark = pytest.mark.unit

J_LEG = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)


def t(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def test_delta_m_act_parallelogram_is_j2_times_eh_plus_ex():
    # Jᵀ diag(0.01, 0.03) J = [[0.04, 0.03], [0.03, 0.03]]; minus diag(0.01, 0.03).
    result = delta_m_act(J_LEG, t([0.01, 0.03]))
    torch.testing.assert_close(result, t([[0.03, 0.03], [0.03, 0.0]]))
    torch.testing.assert_close(result, 0.03 * (t(E_HIP) + t(E_CROSS)))


def test_delta_d_act_has_the_same_structure():
    torch.testing.assert_close(delta_d_act(J_LEG, t([0.5, 0.0972])), t([[0.0972, 0.0972], [0.0972, 0.0]]))


def test_delta_m_act_general_jacobian():
    # J = [[2, 0], [1, 3]], J̄ = (1, 2): diag(J̄) J = [[2, 0], [2, 6]]; Jᵀ (that) = [[6, 6], [6, 18]].
    result = delta_m_act(t([[2.0, 0.0], [1.0, 3.0]]), t([1.0, 2.0]))
    torch.testing.assert_close(result, t([[5.0, 6.0], [6.0, 16.0]]))


def test_mp_and_two_link_forms():
    alpha = t(math.pi / 3)  # cos = 0.5
    torch.testing.assert_close(
        mp_matrix(alpha, 0.04793, 0.005413, 0.02368), t([[0.04793, 0.0027065], [0.0027065, 0.02368]])
    )
    torch.testing.assert_close(
        two_link_inertia(alpha, 0.02438, 0.005413, 0.00232), t([[0.029793, 0.0050265], [0.0050265, 0.00232]])
    )


def test_serial_link_from_90deg_reads_a_and_c():
    assert serial_link_from_90deg([[0.02438, 0.00232], [0.00232, 0.00232]], 0.005413) == (
        0.02438,
        0.005413,
        0.00232,
    )
    with pytest.raises(ValueError):
        serial_link_from_90deg([[0.02438, 0.001], [0.001, 0.00232]], 0.005413)


def test_paper_matrices_at_90_degrees():
    alpha = t(math.pi / 2)
    m_link = t([[0.02438, 0.00232], [0.00232, 0.00232]])
    reflected = t([0.0162, 0.0162])
    m_p = mp_matrix(alpha, 0.04793, 0.005413, 0.02368)
    # M_act,norm = M_link + [[J̄₁ + J̄₂, J̄₂], [J̄₂, J̄₂]] = [[0.05678, 0.01852], [0.01852, 0.01852]].
    torch.testing.assert_close(m_act_norm(m_link, J_LEG, reflected), t([[0.05678, 0.01852], [0.01852, 0.01852]]))
    # Jᵀ M_p J at cos α = 0: [[M₁₁ + M₂₂, M₂₂], [M₂₂, M₂₂]] = [[0.07161, 0.02368], [0.02368, 0.02368]].
    torch.testing.assert_close(delta_m_link(m_p, m_link, J_LEG, reflected), t([[0.01483, 0.00516], [0.00516, 0.00516]]))
    torch.testing.assert_close(m_norm(m_link, J_LEG, reflected, m_p), t([[0.07161, 0.02368], [0.02368, 0.02368]]))
    torch.testing.assert_close(m_norm(m_link, J_LEG, reflected), t([[0.05678, 0.01852], [0.01852, 0.01852]]))


def test_d_norm_adds_delta_d_act():
    d_serial = t([[0.0972, 0.0], [0.0, 0.0972]])
    torch.testing.assert_close(d_norm(d_serial, J_LEG, t([0.0972, 0.0972])), t([[0.1944, 0.0972], [0.0972, 0.0972]]))


def test_integrated_inertia_paper_preset_at_60_degrees():
    alpha, cfg = t(math.pi / 3), paper_s3n_cfg()
    # M_link(60°) with b = M₁₂: [[0.02438 + 0.005413, 0.00232 + 0.0027065], [., 0.00232]].
    expected = {
        "kin_only": [[0.045993, 0.0050265], [0.0050265, 0.01852]],
        "s3n_act": [[0.062193, 0.0212265], [0.0212265, 0.01852]],
        "s3n_full": [[0.077023, 0.0263865], [0.0263865, 0.02368]],
    }
    for model, matrix in expected.items():
        torch.testing.assert_close(integrated_inertia(replace(cfg, model=model), alpha, J_LEG), t(matrix))


def test_split_recombines_and_matches_eh_ex():
    increment = delta_m_act(J_LEG, t([0.0162, 0.0162]))
    native, explicit = split_native_explicit(increment)
    torch.testing.assert_close(native, t([0.0162, 0.0]))
    torch.testing.assert_close(explicit, 0.0162 * t(E_CROSS))
    torch.testing.assert_close(torch.diag_embed(native) + explicit, increment)
    # The hip's native share is J̄₂ E_h: hip armature J̄₁ + J̄₂, knee J̄₂ (docs/design/s3n.md §3).
    torch.testing.assert_close(
        torch.diag(t([0.0162, 0.0162])) + torch.diag_embed(native), t([[0.0324, 0.0], [0.0, 0.0162]])
    )


def test_explicit_torque_by_hand():
    # τ = −J̄₂ E_x q̈ − B̄₂ E_x q̇ with J̄₂ = 0.03, B̄₂ = 0.1, q̈ = (1, 2), q̇ = (3, 4):
    # −0.03 (2, 1) − 0.1 (4, 3) = (−0.46, −0.33).
    torque = explicit_s3n_torque(0.03 * t(E_CROSS), 0.1 * t(E_CROSS), t([1.0, 2.0]), t([3.0, 4.0]))
    torch.testing.assert_close(torque, t([-0.46, -0.33]))


def test_functions_are_batched():
    alpha = torch.linspace(-1.0, 1.0, 12, dtype=torch.float64).reshape(4, 3)
    reflected = t([0.0162, 0.0162])
    jac = J_LEG.expand(4, 3, 2, 2)
    result = delta_m_link(
        mp_matrix(alpha, 0.04793, 0.005413, 0.02368),
        two_link_inertia(alpha, 0.02438, 0.005413, 0.00232),
        jac,
        reflected,
    )
    assert result.shape == (4, 3, 2, 2)
    # b = M₁₂: ΔM_link is the same at every α.
    torch.testing.assert_close(result, t([[0.01483, 0.00516], [0.00516, 0.00516]]).expand(4, 3, 2, 2))


def test_cfg_validation():
    with pytest.raises(ValueError):
        S3NCfg(model="s3n_full")
    with pytest.raises(ValueError):
        S3NCfg(model="bogus")


def test_cli_table_json(capsys):
    assert main(["s3n", "table", "--preset", "paper", "--alpha-deg", "90", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["alpha_deg"] == 90.0
    expected = {
        "kin_only": [[0.04058, 0.00232], [0.00232, 0.01852]],
        "s3n_act": [[0.05678, 0.01852], [0.01852, 0.01852]],
        "s3n_full": [[0.07161, 0.02368], [0.02368, 0.02368]],
    }
    for model, matrix in expected.items():
        torch.testing.assert_close(t(result[model]), t(matrix))


def test_cli_table_text_and_limit_preset(capsys):
    assert main(["s3n", "table", "--preset", "limit", "--alpha-deg", "-60"]) == 0
    out = capsys.readouterr().out
    assert "placeholder" in out and "s3n_full" in out
