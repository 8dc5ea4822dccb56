"""Stability of the explicit S3N torques at the Limit task's physics steps (5 ms and 2.5 ms).

The explicit torque ``−X_M q̈_prev`` feeds the last step's acceleration back through the native
inertia: ``q̈ₖ ≈ −M_native⁻¹ X_M q̈ₖ₋₁ + …``, which diverges once that loop gain reaches 1. The legs
here are the Limit's serial tree (:class:`TorchSerialLeg`, semi-implicit Euler), 16 at once.
"""

from __future__ import annotations

import pytest
import torch

from linkage_lab.dynamics.drive import LinkageDrive
from linkage_lab.dynamics.s3n import two_link_inertia
from linkage_lab.dynamics.serial_leg import TorchSerialLeg
from linkage_lab.kinematics.transmission import parallelogram_leg
from linkage_lab.robots.limit.s3n import leg_body, leg_drive_cfg

pytestmark = pytest.mark.unit

STANDING = torch.tensor([0.6, -1.2], dtype=torch.float64)
#: The S3N paper's rotors (N²J_m) and the gains the Limit ran on them: the setting the paper's split and the
#: acceleration estimates below were measured in (the Limit's own rotors are a quarter of that, its gains 60 / 1.2).
PAPER_SETTING = {"joint_kp": (20.0, 20.0), "joint_kd": (0.5, 0.5)}
PAPER_ROTOR_KGM2 = (0.0162, 0.0162)


def paper_setting_cfg(model: str, **overrides):
    """The Limit's leg drive with the S3N paper's rotors and the gains it ran on them."""
    from dataclasses import replace

    cfg = leg_drive_cfg(model, **PAPER_SETTING, **overrides)
    return replace(cfg, s3n=replace(cfg.s3n, reflected_inertia_kgm2=PAPER_ROTOR_KGM2))


def hold_standing_pose(drive: LinkageDrive, dt: float, duration_s: float = 1.0, legs: int = 16) -> torch.Tensor:
    """Start legs off the standing pose with random rates and hold the pose with the drive.

    Returns:
        The largest joint speed over all legs at each step (rad/s); cut short once it blows up.
    """
    gen = torch.Generator().manual_seed(0)
    start = STANDING + 0.2 * (2.0 * torch.rand(legs, 2, dtype=torch.float64, generator=gen) - 1.0)
    leg = TorchSerialLeg(leg_body(), drive.native_armature(), drive.native_damping(), start)
    leg.joint_vel = torch.randn(legs, 2, dtype=torch.float64, generator=gen)
    target = STANDING.expand(legs, 2)
    speeds = []
    for _ in range(int(duration_s / dt)):
        out = drive.compute(target, torch.zeros_like(target), leg.joint_pos, leg.joint_vel, dt)
        leg.step(out.joint_torque, dt)
        speeds.append(leg.joint_vel.abs().max().nan_to_num(nan=float("inf")))
        if speeds[-1] > 1e4:
            break
    return torch.stack(speeds)


def assert_settles(speeds: torch.Tensor) -> None:
    """Bounded, and the last fifth of the run is calm compared with the start."""
    assert torch.isfinite(speeds).all() and speeds.max() < 20.0
    early, late = speeds[: len(speeds) // 5].max(), speeds[-len(speeds) // 5 :].max()
    assert late < 0.1 and late < 0.05 * early


def loop_gain(drive: LinkageDrive, knee_angles: torch.Tensor) -> torch.Tensor:
    body = leg_body()
    pose = torch.stack([torch.full_like(knee_angles, 0.6), knee_angles], dim=-1)
    return drive.explicit_loop_gain(pose, two_link_inertia(knee_angles, *body.serial_link_kgm2()))


@pytest.mark.parametrize("dt", [0.005, 0.0025])
@pytest.mark.parametrize("model", ["kin_only", "s3n_act", "s3n_full"])
def test_default_configuration_is_stable(model, dt):
    drive = LinkageDrive(leg_drive_cfg(model), parallelogram_leg())
    assert_settles(hold_standing_pose(drive, dt))
    assert loop_gain(drive, torch.linspace(-1.57, 1.57, 31, dtype=torch.float64)).max() < 0.8


def test_paper_split_with_the_papers_mp_diverges_and_low_pass_stabilises():
    # The paper's M_p (its heavier leg) on the Limit's light serial tree leaves a large ΔM_link;
    # put all of it in the explicit torque (the paper's split) and the loop gain exceeds 1.
    from dataclasses import replace

    def with_paper_mp(**overrides):
        cfg = paper_setting_cfg("s3n_full", explicit_split="paper", **overrides)
        return replace(cfg, s3n=replace(cfg.s3n, mp_kgm2=(0.04793, 0.005413, 0.02368)))

    paper = LinkageDrive(with_paper_mp(), parallelogram_leg())
    assert loop_gain(paper, torch.tensor([-1.2], dtype=torch.float64)).item() > 1.2
    assert hold_standing_pose(paper, 0.005, duration_s=0.5).max() > 1e4

    filtered_cfg = with_paper_mp(accel_filter_time_constant_s=0.01)
    assert_settles(hold_standing_pose(LinkageDrive(filtered_cfg, parallelogram_leg()), 0.005))


def _track_step(cfg, dt: float, reference: bool) -> torch.Tensor:
    """Response to a 0.3 rad step after 0.1 s of holding still (so the drive has a history): the
    serial tree + S3N, or the exact full-inertia leg."""
    body = leg_body()
    drive = LinkageDrive(cfg, parallelogram_leg())
    a, b, c = body.serial_link_kgm2()
    q = STANDING.clone().unsqueeze(0)
    qd = torch.zeros_like(q)
    leg = TorchSerialLeg(body, drive.native_armature(), drive.native_damping(), q)
    history = []
    for step in range(int(0.6 / dt)):
        target = STANDING + (0.3 if step * dt >= 0.1 else 0.0)
        out = drive.compute(target.unsqueeze(0), torch.zeros_like(q), q, qd, dt)
        if reference:
            # M_act,norm = M_link + Jᵀ diag(J̄) J (constant increment: no extra Coriolis), D = Jᵀ diag(B̄) J.
            inertia = two_link_inertia(q[..., 1], a, b, c) + drive.inertia_increment(q)
            leg.joint_pos, leg.joint_vel = q, qd
            bias = leg.acceleration(torch.zeros_like(q))  # −M_native⁻¹(C + G + D_native q̇)
            native = two_link_inertia(q[..., 1], a, b, c) + torch.diag_embed(drive.native_armature())
            forces = out.actuator_joint_torque + (native @ bias.unsqueeze(-1)).squeeze(-1)
            forces = forces - (drive.explicit_damping(q) @ qd.unsqueeze(-1)).squeeze(-1)
            acc = torch.linalg.solve(inertia, forces.unsqueeze(-1)).squeeze(-1)
            qd = qd + dt * acc
            q = q + dt * qd
        else:
            leg.step(out.joint_torque, dt)
            q, qd = leg.joint_pos, leg.joint_vel
        history.append(q.clone())
    return torch.cat(history)


@pytest.mark.parametrize("dt", [0.005, 0.0025])
def test_torque_predicted_acceleration_tracks_the_exact_model_better(dt):
    errors = {}
    for estimate in ("previous", "torque_predicted"):
        cfg = paper_setting_cfg("s3n_act", acceleration_estimate=estimate)
        exact = _track_step(cfg, dt, reference=True)
        serial = _track_step(cfg, dt, reference=False)
        errors[estimate] = (serial - exact).pow(2).mean().sqrt().item()
    assert errors["torque_predicted"] < 0.5 * errors["previous"]
