"""The S3N explicit torque with and without its actuator acceleration bound, against the closed-chain oracle.

A finite-difference ``q̈`` taken one step late turns a touchdown's impulse into an explicit torque the next
step; on the Limit's trot it peaked at 13-14 N·m, above the 10 N·m motors.
``LinkageDriveCfg.explicit_acceleration_limit="actuator"`` bounds the ``q̈`` by what the leg's motors can give
each joint. This runs the task's S3N-Act leg drive on the pinned-foot stance rig and the free swing rig of
:mod:`linkage_lab_experiments.validation.stance_leg` under stepped targets (a touchdown every 0.25 s: a jump
of the targets that the drives slam into) and a chirp, with the bound off and on, and reports per joint the
explicit torque's median and peak and the tracking error against the closed-chain oracle (which has the rotors
physically).

Run ``python -m linkage_lab_experiments.validation.explicit_bound [--robot R]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from linkage_lab.arguments import finite_float
from linkage_lab.io import strict_json
from linkage_lab.robots.registry import get_robot
from linkage_lab_experiments.analysis import pick_robot

#: Stepped targets: ±``STEP_RAD`` on hip and knee about the reference pose, flipping every ``STEP_PERIOD_S``.
STEP_RAD = 0.15
STEP_PERIOD_S = 0.25
BOUNDS = ("none", "actuator")


def stepped_targets(reference: Sequence[float], duration_s: float, dt: float) -> np.ndarray:
    """Serial targets per physics step (rad), ``(T, 2)``: the reference ± :data:`STEP_RAD`, alternating."""
    steps = int(round(duration_s / dt))
    sign = np.where((np.arange(steps) * dt // STEP_PERIOD_S) % 2 == 0, 1.0, -1.0)
    return np.asarray(reference, dtype=float)[None, :] + STEP_RAD * sign[:, None] * np.array([[1.0, -1.0]])


def explicit_torque(run) -> np.ndarray:
    """The explicit S3N torque of each step (N·m), ``(T, 2)``: the total joint torque less ``Jᵀ τ_m``."""
    from linkage_lab.kinematics.transmission import PARALLELOGRAM_LEG_JACOBIAN

    jacobian = np.asarray(PARALLELOGRAM_LEG_JACOBIAN, dtype=float)
    return run.joint_torque - run.motor_torque @ jacobian


def run_bound_experiment(
    duration_s: float = 2.0, robot: str | None = None, reflected_inertia_kgm2: float | None = None
) -> dict:
    """Each bound on each rig and target set: explicit-torque median and peak, and the RMSE against the oracle.

    ``reflected_inertia_kgm2`` replaces both motors' rotor inertia (e.g. the S3N paper's 0.0162, the Limit's former
    placeholder, whose explicit torques are four times larger); ``None``: the robot config's."""
    from linkage_lab_experiments.analysis.fidelity import FidelityCfg, chirp_targets
    from linkage_lab_experiments.validation.isaac_leg import LEG_CAPABILITY, leg_task, task_drive_cfg
    from linkage_lab_experiments.validation.stance_leg import (
        RigCfg,
        rmse,
        run_oracle_rig,
        run_serial_rig,
        stance_mass_kg,
    )

    robot = pick_robot(LEG_CAPABILITY, robot)
    _, dt = leg_task(robot)
    drive = task_drive_cfg("s3n_act", dt, robot)
    if reflected_inertia_kgm2 is not None:
        drive = replace(drive, s3n=replace(drive.s3n, reflected_inertia_kgm2=(reflected_inertia_kgm2,) * 2))
    reference = tuple(drive.reference_joint_pos_rad)
    chirp = FidelityCfg(
        duration_s=duration_s,
        timestep_s=dt,
        chirp_amplitude_rad=0.2,
        chirp_band_hz=(0.1, 10.0),
        operating_pose_rad=reference,
    )
    targets = {"steps": stepped_targets(reference, duration_s, dt), "chirp": chirp_targets(chirp)[1]}
    body = get_robot(robot).extra("leg_body")()
    load = stance_mass_kg(robot)
    rigs = {"stance": RigCfg("stance", load), "swing": RigCfg("swing", load)}
    rows = []
    for rig_name, rig in rigs.items():
        for target_name, joint_targets in targets.items():
            oracle = run_oracle_rig(drive, body, joint_targets, dt, rig)
            for bound in BOUNDS:
                run = run_serial_rig(replace(drive, explicit_acceleration_limit=bound), body, joint_targets, dt, rig)
                explicit = np.abs(explicit_torque(run))
                rows.append(
                    {
                        "rig": rig_name,
                        "targets": target_name,
                        "bound": bound,
                        "explicit_median_nm": np.median(explicit, axis=0).tolist(),
                        "explicit_peak_nm": explicit.max(axis=0).tolist(),
                        **rmse(run, oracle),
                    }
                )
    return {
        "settings": {
            "robot": robot,
            "physics_dt_s": dt,
            "duration_s": duration_s,
            "carriage_mass_kg": load,
            "reflected_inertia_kgm2": list(drive.s3n.reflected_inertia_kgm2),
            "motor_peak_torque_nm": list(drive.motor_peak_torque_nm),
        },
        "rows": rows,
    }


def format_bound_report(report: dict) -> str:
    """A plain-text table of :func:`run_bound_experiment`'s report."""
    settings = report["settings"]
    lines = [
        f"S3N-Act explicit torque, {settings['robot']} leg, dt {settings['physics_dt_s'] * 1e3:g} ms, rotors "
        f"{settings['reflected_inertia_kgm2']} kg·m², motors {settings['motor_peak_torque_nm']} N·m; stance: foot "
        f"pinned, {settings['carriage_mass_kg']:.2f} kg carriage",
        f"{'rig':7s} {'targets':7s} {'bound':9s} {'|explicit| median h, k':>24s} {'peak h, k (N·m)':>18s} "
        f"{'pos RMSE h, k (rad)':>22s} {'tau RMSE h, k (N·m)':>22s}",
    ]
    for row in report["rows"]:
        (mh, mk), (ph, pk) = row["explicit_median_nm"], row["explicit_peak_nm"]
        (qh, qk), (th, tk) = row["pos_rmse"], row["tau_rmse"]
        lines.append(
            f"{row['rig']:7s} {row['targets']:7s} {row['bound']:9s} {mh:11.3f} {mk:11.3f}  {ph:8.2f} {pk:8.2f}  "
            f"{qh:10.5f} {qk:10.5f}  {th:10.4f} {tk:10.4f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table (``--json``: one object)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--robot", default=None, help="robot (default: the only one with a leg task)")
    parser.add_argument(
        "--reflected-inertia",
        type=finite_float,
        default=None,
        help="both motors' rotor inertia, kg·m² (default: config)",
    )
    args = parser.parse_args(argv)
    report = run_bound_experiment(robot=args.robot, reflected_inertia_kgm2=args.reflected_inertia)
    print(strict_json(report, indent=None) if args.json else format_bound_report(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
