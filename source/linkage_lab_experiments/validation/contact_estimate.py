"""Which ``q̈`` estimate a robot's explicit S3N leg torque should use in contact, argued and measured.

The explicit torque is ``−X_M q̈ₖ`` with ``q̈ₖ`` this step's acceleration, which the drive can only
estimate. ``previous`` takes ``q̈ₖ₋₁``; ``torque_predicted`` adds the jump this step's change of actuator
torque ``Δτ`` makes in a *free* leg, ``M_norm⁻¹ Δτ``. The true jump is ``A Δτ``, with ``A`` the
joint-space block of the whole system's inverse inertia under its contacts (for a free leg
``A ≈ M_norm⁻¹``). Everything else (gravity, Coriolis, the smooth part of ``q̈``) the two estimates share,
so their explicit-torque errors differ only by the jump term:

    previous:          X_M A Δτ                      (misses the jump)
    torque_predicted:  X_M (M_norm⁻¹ − A) Δτ          (predicts the free leg's jump)

``torque_predicted`` is the better estimate exactly when the *jump ratio*
``r = ‖X_M (M_norm⁻¹ − A)‖₂ / ‖X_M A‖₂`` is below 1, i.e. when contact leaves more than about half of the
free leg's jump. :func:`robot_contact_ratios` computes ``r`` on the whole robot (the generated URDF in
MuJoCo, floating base, the task's armature and S3N terms) with the stance feet held by the ground;
:func:`rig_jump_ratio` computes it for the pinned-foot rig of :mod:`linkage_lab_experiments.validation.stance_leg`,
where the closed-chain oracle checks the argument by simulation.

Run ``python -m linkage_lab_experiments.validation.contact_estimate [--robot R]`` for the report (the default robot is
the only one with a leg task, the Limit).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np
import torch

from linkage_lab.arguments import finite_float
from linkage_lab.dynamics.drive import LinkageDrive
from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import S3N_MODELS, two_link_inertia
from linkage_lab.dynamics.serial_leg import LegBody, full_mass_matrix
from linkage_lab.io import strict_json
from linkage_lab.kinematics.transmission import parallelogram_leg
from linkage_lab.robots.assets import generate_urdf
from linkage_lab.robots.registry import get_robot
from linkage_lab_experiments.analysis import pick_robot
from linkage_lab_experiments.analysis.fidelity import FidelityCfg, chirp_targets
from linkage_lab_experiments.validation.isaac_leg import LEG_CAPABILITY, leg_task, task_drive_cfg
from linkage_lab_experiments.validation.stance_leg import (
    RigCfg,
    SerialRigLeg,
    compare_estimates,
    mean_pos_rmse,
    stance_mass_kg,
    winner,
)

#: Stance sets of the whole-robot argument: standing on four feet, and a trot's diagonal pair A.
STANCES: dict[str, tuple[str, ...]] = {"stand": ("fl", "fr", "rl", "rr"), "trot": ("fl", "rr")}
#: How the ground holds a stance foot: ``flat`` (a loaded plate foot: no slip, no rotation) or
#: ``point`` (a point foot: no slip, free to turn about the ankle point).
FOOT_MODELS = ("flat", "point")


def free_leg_inertia(drive: LinkageDrive, serial_link_kgm2: Sequence[float], joint_pos: torch.Tensor) -> np.ndarray:
    """``M_norm(q)`` (kg·m²): the free leg's inertia ``torque_predicted`` divides by, ``(2, 2)``."""
    alpha = joint_pos[..., 1]
    return (two_link_inertia(alpha, *serial_link_kgm2) + drive.inertia_increment(joint_pos))[0].numpy()


def constrained_inverse_inertia(mass_matrix: np.ndarray, constraint_jacobian: np.ndarray | None) -> np.ndarray:
    """``M⁻¹ − M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁺ G M⁻¹``: the inverse inertia under rigid constraints ``G v̇ = 0``.

    The pseudo-inverse tolerates redundant rows (planar legs cannot hold a foot sideways; the base does).
    """
    inverse = np.linalg.inv(mass_matrix)
    if constraint_jacobian is None or len(constraint_jacobian) == 0:
        return inverse
    g_minv = constraint_jacobian @ inverse
    return inverse - g_minv.T @ np.linalg.pinv(g_minv @ constraint_jacobian.T, rcond=1e-10) @ g_minv


def jump_ratio(true_jump: np.ndarray, free_inertia: np.ndarray, explicit_inertia: np.ndarray) -> float:
    """``r = ‖X (M_norm⁻¹ − A)‖₂ / ‖X A‖₂``; ``torque_predicted`` beats ``previous`` when ``r < 1``.

    Args:
        true_jump: ``A`` (1/(kg·m²)), the leg's block of the constrained inverse inertia, ``(2, 2)``.
        free_inertia: ``M_norm`` (kg·m²), ``(2, 2)``.
        explicit_inertia: ``X_M`` (kg·m²), the inertia applied as explicit torque, ``(2, 2)``.
    """
    predicted = np.linalg.inv(free_inertia)
    return float(
        np.linalg.norm(explicit_inertia @ (predicted - true_jump), 2) / np.linalg.norm(explicit_inertia @ true_jump, 2)
    )


#: Jump ratios this close to 1 (relative) call a tie: the estimates' RMSEs then differ by a few per cent.
TIE_BAND = 0.1


def ratio_verdict(r: float) -> str:
    """``torque_predicted`` for ``r < 1``, ``previous`` for ``r > 1``, ``tie`` within :data:`TIE_BAND` of 1."""
    if abs(r - 1.0) < TIE_BAND:
        return "tie"
    return "torque_predicted" if r < 1.0 else "previous"


def _reference_pose(drive_cfg: LinkageDriveCfg) -> torch.Tensor:
    return torch.tensor([drive_cfg.reference_joint_pos_rad], dtype=torch.float64)


def rig_jump_ratio(drive_cfg: LinkageDriveCfg, body: LegBody, rig: RigCfg, dt: float = 0.005) -> float:
    """``r`` of the serial leg on ``rig`` (stance: the carriage's mass on a pinned foot) at the reference pose."""
    import mujoco

    drive = LinkageDrive(drive_cfg, parallelogram_leg())
    pose = _reference_pose(drive_cfg)
    leg = SerialRigLeg(body, drive.native_armature(), drive.native_damping(), dt, rig, pose[0].tolist())
    model, data = leg.model, leg.data
    explicit = drive.explicit_inertia(pose)[0].numpy()
    mass = full_mass_matrix(model, data)
    mass[np.ix_(leg.dofs, leg.dofs)] += explicit
    constraint = None
    if rig.phase == "stance":
        jacobian = np.zeros((3, model.nv))
        mujoco.mj_jacSite(model, data, jacobian, None, model.site("foot").id)
        constraint = jacobian[[0, 2]]
    true_jump = constrained_inverse_inertia(mass, constraint)[np.ix_(leg.dofs, leg.dofs)]
    return jump_ratio(true_jump, free_leg_inertia(drive, drive_cfg.s3n.serial_link_kgm2, pose), explicit)


def robot_contact_ratios(drive_cfg: LinkageDriveCfg, robot: str | None = None) -> dict:
    """``r`` of each leg of the whole robot at its standing pose, per stance set and foot model.

    The robot is a quadruped whose config has ``joint_table.leg_order``, ``{leg}_{hip,knee,ankle}``
    joints, a ``{leg}_shank`` link after the ankle and ``s3n.ankle_armature_kgm2``.

    The model is the generated URDF in MuJoCo with a floating base; hip/knee armature is the drive's
    native armature, the ankle's the config's, and each leg's ``X_M`` is added to its block of the
    mass matrix (the inertia the explicit torque stands for).

    Returns:
        ``{stance: {foot_model: {leg: {"r", "jump_fraction": [2 eigenvalues of A M_norm], "in_stance"}}}}``.
    """
    import mujoco

    robot = pick_robot("leg_body", robot)
    config = get_robot(robot).config()
    spec = mujoco.MjSpec.from_string(generate_urdf(robot))
    spec.worldbody.first_body().add_freejoint()
    model = spec.compile()
    data = mujoco.MjData(model)
    drive = LinkageDrive(drive_cfg, parallelogram_leg())
    pose = _reference_pose(drive_cfg)
    native = drive.native_armature().tolist()
    explicit = drive.explicit_inertia(pose)[0].numpy()
    # The leg's config: its joint table, standing pose and ankle armature (the Limit's schema).
    legs = config.joint_table.leg_order
    standing = config.control.standing_pose_rad
    armature = {"hip": native[0], "knee": native[1], "ankle": config.s3n.ankle_armature_kgm2}
    dofs = {}
    for leg in legs:
        for joint in ("hip", "knee", "ankle"):
            index = model.joint(f"{leg}_{joint}").id
            data.qpos[model.jnt_qposadr[index]] = standing[joint]
            model.dof_armature[model.jnt_dofadr[index]] = armature[joint]
        dofs[leg] = [int(model.jnt_dofadr[model.joint(f"{leg}_{j}").id]) for j in ("hip", "knee")]
    mujoco.mj_forward(model, data)
    mass = full_mass_matrix(model, data)
    for leg in legs:
        mass[np.ix_(dofs[leg], dofs[leg])] += explicit
    free = free_leg_inertia(drive, drive_cfg.s3n.serial_link_kgm2, pose)

    def foot_rows(leg: str, foot_model: str) -> np.ndarray:
        # The link after the ankle joint carries the foot; its origin is the ankle point.
        body = model.body(f"{leg}_shank").id
        linear, angular = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        mujoco.mj_jac(model, data, linear, angular, data.xpos[body], body)
        return np.vstack([linear, angular]) if foot_model == "flat" else linear

    result: dict = {}
    for stance, feet in STANCES.items():
        result[stance] = {}
        for foot_model in FOOT_MODELS:
            inverse = constrained_inverse_inertia(mass, np.vstack([foot_rows(leg, foot_model) for leg in feet]))
            result[stance][foot_model] = {
                leg: _leg_entry(inverse[np.ix_(dofs[leg], dofs[leg])], free, explicit, leg in feet) for leg in legs
            }
    return result


def _leg_entry(true_jump: np.ndarray, free: np.ndarray, explicit: np.ndarray, in_stance: bool) -> dict:
    """``r``, and the fraction of the free leg's jump that is left: the eigenvalues of ``A M_norm``."""
    fraction = np.sort(np.linalg.eigvals(true_jump @ free).real)
    return {"r": jump_ratio(true_jump, free, explicit), "jump_fraction": fraction.tolist(), "in_stance": in_stance}


def contact_winner(ratios: dict, foot_model: str = "flat") -> str | None:
    """The estimate that wins for every stance leg of :func:`robot_contact_ratios` with ``foot_model``.

    Returns:
        The common :func:`ratio_verdict` of every stance leg, ``None`` when they disagree (or tie).
    """
    verdicts = {
        ratio_verdict(entry["r"])
        for per_foot in ratios.values()
        for entry in per_foot[foot_model].values()
        if entry["in_stance"]
    }
    return verdicts.pop() if len(verdicts) == 1 and "tie" not in verdicts else None


def run_contact_experiment(
    duration_s: float = 4.0, sweep_masses_kg: Sequence[float] | None = None, robot: str | None = None
) -> dict:
    """The task's leg drives (the three models) in swing and stance against the oracle, the rig
    sweep that checks the jump-ratio argument by simulation, and the whole robot's ratios.

    Args:
        duration_s: Length of the chirp (s): 0.2 rad, 0.1–10 Hz about the standing pose, as
            ``s3n validate --isaac``, at the task's 5 ms physics step.
        sweep_masses_kg: Carriage masses of the rig sweep (kg); ``None``: 1 kg, the trot load and 8 kg.
        robot: The robot (registry extras ``leg_task``, ``task_leg_drive_cfg``, ``leg_body``,
            ``stance_mass_kg``); ``None``: the only one with a leg task.

    Returns:
        JSON-ready ``{"settings", "rmse", "rig_sweep", "robot_ratios", "contact_winner", "task_default"}``.
    """

    robot = pick_robot(LEG_CAPABILITY, robot)
    _, dt = leg_task(robot)
    drives = {model: task_drive_cfg(model, dt, robot) for model in S3N_MODELS}
    chirp = FidelityCfg(
        duration_s=duration_s,
        timestep_s=dt,
        chirp_amplitude_rad=0.2,
        chirp_band_hz=(0.1, 10.0),
        operating_pose_rad=tuple(drives["kin_only"].reference_joint_pos_rad),
    )
    _, targets = chirp_targets(chirp)
    body = get_robot(robot).extra("leg_body")()
    trot_load = stance_mass_kg(robot)
    rigs = {"swing": RigCfg("swing", trot_load), "stance": RigCfg("stance", trot_load)}
    rmse = compare_estimates(drives, body, targets, dt, rigs)
    sweep = []
    for mass in sweep_masses_kg or (1.0, trot_load, 8.0):
        rig = RigCfg("stance", mass)
        per_estimate = compare_estimates({"s3n_act": drives["s3n_act"]}, body, targets, dt, {"stance": rig})
        per_estimate = per_estimate["stance"]["s3n_act"]
        r = rig_jump_ratio(drives["s3n_act"], body, rig, dt)
        sweep.append(
            {
                "carriage_mass_kg": mass,
                "r": r,
                "winner_by_ratio": ratio_verdict(r),
                "winner_by_simulation": winner(per_estimate),
                "pos_rmse": {estimate: mean_pos_rmse(entry) for estimate, entry in per_estimate.items()},
            }
        )
    ratios = robot_contact_ratios(drives["s3n_act"], robot)
    return {
        "settings": {
            "robot": robot,
            "duration_s": duration_s,
            "chirp_amplitude_rad": chirp.chirp_amplitude_rad,
            "chirp_band_hz": list(chirp.chirp_band_hz),
            "physics_dt_s": dt,
            "carriage_mass_kg": trot_load,
        },
        "rmse": rmse,
        "rig_sweep": sweep,
        "robot_ratios": ratios,
        "contact_winner": contact_winner(ratios),
        "task_default": drives["s3n_act"].acceleration_estimate,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print the rig experiment (RMSE vs the oracle) and the jump ratios; ``--json`` for one object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--duration", type=finite_float, default=4.0, help="chirp length (s)")
    parser.add_argument("--robot", default=None, help="robot (default: the only one with a leg task)")
    args = parser.parse_args(argv)
    report = run_contact_experiment(duration_s=args.duration, robot=args.robot)
    print(strict_json(report, indent=None) if args.json else format_contact_report(report))
    return 0


def format_contact_report(report: dict) -> str:
    """Plain-text tables of :func:`run_contact_experiment`'s report."""
    settings = report["settings"]
    lines = [
        f"S3N q̈ estimate in contact: {settings['robot']} leg, chirp {settings['chirp_amplitude_rad']} rad "
        f"{settings['chirp_band_hz'][0]}-{settings['chirp_band_hz'][1]} Hz over {settings['duration_s']:g} s, "
        f"dt {settings['physics_dt_s'] * 1e3:g} ms, the task's drive; stance: foot pinned, "
        f"{settings['carriage_mass_kg']:.2f} kg carriage",
        f"{'rig':7s} {'model':9s} {'estimate':17s} {'pos RMSE hip, knee (rad)':>26s} {'tau RMSE hip, knee (N·m)':>26s}",
    ]
    for rig, models in report["rmse"].items():
        for model, estimates in models.items():
            for estimate, entry in estimates.items():
                (ph, pk), (th, tk) = entry["pos_rmse"], entry["tau_rmse"]
                lines.append(f"{rig:7s} {model:9s} {estimate:17s} {ph:12.5f} {pk:12.5f}   {th:11.4f} {tk:11.4f}")
    lines.append("rig sweep (s3n_act): carriage kg, jump ratio r, winner by r, winner by simulation (pos RMSE)")
    for entry in report["rig_sweep"]:
        lines.append(
            f"  {entry['carriage_mass_kg']:5.2f} kg  r {entry['r']:5.2f}  {entry['winner_by_ratio']:17s} "
            f"{entry['winner_by_simulation']:17s} (previous {entry['pos_rmse']['previous']:.5f}, "
            f"torque_predicted {entry['pos_rmse']['torque_predicted']:.5f} rad)"
        )
    lines.append(
        f"whole {settings['robot']} at the standing pose, per leg (stance legs *): "
        "jump ratio r (fraction of the free leg's jump left)"
    )
    for stance, per_foot in report["robot_ratios"].items():
        for foot_model, legs in per_foot.items():
            cells = "  ".join(
                "{}{} {:5.2f} ({:.2f}-{:.2f})".format(leg, "*" if e["in_stance"] else " ", e["r"], *e["jump_fraction"])
                for leg, e in legs.items()
            )
            lines.append(f"  {stance:6s} {foot_model:6s} {cells}")
    lines.append(f"winner in contact (flat foot): {report['contact_winner']}; task default: {report['task_default']}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
