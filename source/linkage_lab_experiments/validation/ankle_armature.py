"""Which armature a robot's serial (2-RSU) ankle should carry, measured against the closed-chain oracle.

The robot (default: the only one with the ``ankle_drive_cfg`` extra, Marvin) provides its ankle parts,
geometry and the task's ankle drive through its registry extras.


The two RS03 rotors reach the foot through the linkage, so their inertia in ``(pitch, roll)`` is
``Jᵀ(q) diag(J̄) J(q)`` (docs/design/s3n.md §5). At neutral ``J ≈ [[1.02, −0.67], [0.96, 0.67]]`` makes its pitch
entry about ``2 J̄``: a serial ankle that gives each joint one motor's ``J̄`` has half the pitch inertia.
Models of the serial ankle (all with the task's PD, diamond limits and 5 ms step):

* ``motor``: per-joint armature ``J̄`` (one motor per joint; the ``motor_armature`` preset);
* ``neutral_diagonal``: per-joint armature ``diag(Jᵀ diag(J̄) J)`` at neutral, held constant;
* ``reflected``: that native diagonal plus the pose-dependent rest, ``Jᵀ(q) diag(J̄) J(q) − diag``, as an
  explicit torque on the low-passed acceleration (the ``reflected_armature`` preset);
* ``reflected_unfiltered``: the same on the raw previous-step acceleration (the paper's recipe).

Each follows a chirp on both joints about several poses of the range, against
:class:`~linkage_lab_experiments.validation.ankle_oracle.AnkleOracle` driven by the same PD and limits, and holds
every pose of a grid over the range after a kick (the explicit loop must not limit-cycle anywhere).
Run ``python -m linkage_lab_experiments.validation.ankle_armature`` for the report.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import torch

from linkage_lab.arguments import finite_float
from linkage_lab.dynamics.drive import LinkageDrive
from linkage_lab.dynamics.drive_cfg import LinkageDriveCfg
from linkage_lab.dynamics.s3n import S3NCfg
from linkage_lab.io import strict_json
from linkage_lab.kinematics.transmission import Transmission
from linkage_lab.robots.registry import get_robot
from linkage_lab_experiments.analysis import pick_robot
from linkage_lab_experiments.analysis.leg_run import LegRun, drive_loop
from linkage_lab_experiments.validation.ankle_oracle import AnkleOracle, AnkleOracleCfg, SerialAnkle, ankle_parts

#: The serial ankle's armature models, from the task's old default to the pose-dependent ones.
ARMATURE_MODELS = ("motor", "neutral_diagonal", "reflected", "reflected_unfiltered")
#: Operating poses ``(pitch, roll)`` (rad) the chirp is centred on: neutral and four corners well
#: inside the ±0.698 / ±0.349 rad range (the chirp adds ±0.2 / ±0.1 rad).
POSES = ((0.0, 0.0), (0.45, 0.2), (-0.45, -0.2), (0.45, -0.2), (-0.45, 0.2))


def ankle_geometry(robot: str | None = None):
    """The robot's ankle geometry (its ``ankle_geometry`` extra; ``None``: the only robot with one)."""

    return get_robot(pick_robot("ankle_geometry", robot)).extra("ankle_geometry")()


def ankle_drive_cfgs(
    dt: float = 0.005, side: str = "left", robot: str | None = None
) -> tuple[dict[str, LinkageDriveCfg], Transmission]:
    """The task's drive of one ankle (diamond limits, the ankle gains) under each armature model.

    Args:
        dt: Physics step (s).
        side: ``left`` or ``right``.
        robot: ``None``: the only robot with the ``ankle_drive_cfg`` extra.

    Returns:
        ``{model: drive config}`` and the ankle's transmission.
    """

    build = get_robot(pick_robot("ankle_drive_cfg", robot)).extra("ankle_drive_cfg")
    configs = {}
    for model, reflected in (("motor", False), ("reflected", True)):
        configs[model], transmission = build(reflected, dt, side)
    neutral = LinkageDrive(configs["reflected"], transmission).native_armature()
    diagonal = replace(configs["motor"].s3n, reflected_inertia_kgm2=tuple(neutral.tolist()))
    configs["neutral_diagonal"] = replace(configs["motor"], s3n=diagonal)
    configs["reflected_unfiltered"] = replace(configs["reflected"], accel_filter_time_constant_s=None)
    return {model: configs[model] for model in ARMATURE_MODELS}, transmission


def ankle_chirp(pose: Sequence[float], duration_s: float, dt: float) -> np.ndarray:
    """Targets ``(pitch, roll)`` per step (rad): 0.2 / 0.1 rad linear chirps, 0.1–10 Hz, about ``pose``."""
    time = np.arange(int(round(duration_s / dt))) * dt
    phase = 2.0 * np.pi * (0.1 * time + (10.0 - 0.1) * time**2 / (2.0 * duration_s))
    return np.asarray(pose, dtype=float) + np.outer(np.sin(phase), [0.2, 0.1])


def run_serial_ankle(
    drive_cfg: LinkageDriveCfg, transmission: Transmission, targets: np.ndarray, dt: float, robot: str | None = None
) -> LegRun:
    """The serial ankle under :class:`LinkageDrive` (armature and explicit torque of its model)."""
    cross, foot = ankle_parts(robot)
    drive = LinkageDrive(drive_cfg, transmission)
    ankle = SerialAnkle(cross, foot, drive.native_armature().tolist(), dt)
    ankle.reset(targets[0])
    return drive_loop(drive, targets, dt, ankle.state, lambda out: ankle.step(out.joint_torque[0].numpy()))


def run_oracle_ankle(
    drive_cfg: LinkageDriveCfg, transmission: Transmission, targets: np.ndarray, dt: float, robot: str | None = None
) -> LegRun:
    """The closed-chain ankle, its motors under ``drive_cfg``'s PD and limits (no model terms: the
    oracle carries the rotors' inertia itself, ``J̄`` = the config's motor armature)."""
    cross, foot = ankle_parts(robot)
    motor_inertia = float(drive_cfg.s3n.reflected_inertia_kgm2[0])
    oracle = AnkleOracle(AnkleOracleCfg(ankle_geometry(robot), cross, foot, motor_inertia, timestep_s=dt))
    start = torch.as_tensor(targets[:1], dtype=torch.float64)
    oracle.reset(targets[0], transmission.motor_position(start)[0].numpy())
    bare = S3NCfg(model="kin_only", reflected_inertia_kgm2=(0.0, 0.0), motor_damping_nms_per_rad=(0.0, 0.0))
    drive = LinkageDrive(replace(drive_cfg, s3n=bare), transmission)
    closure = []

    def apply(out) -> None:
        oracle.step(out.motor_torque[0].numpy())
        closure.append(oracle.closure_error_m())

    run = drive_loop(drive, targets, dt, oracle.state, apply)
    run.info["max_closure_error_m"] = float(max(closure))
    return run


def _rmse(run: LegRun, reference: LegRun) -> dict:
    return {
        "pos_rmse": np.sqrt(np.mean((run.joint_pos - reference.joint_pos) ** 2, axis=0)).tolist(),
        "tau_rmse": np.sqrt(np.mean((run.actuator_torque - reference.actuator_torque) ** 2, axis=0)).tolist(),
    }


def explicit_loop_gain(
    drive_cfg: LinkageDriveCfg, transmission: Transmission, grid: int = 9, robot: str | None = None
) -> float:
    """The largest per-step gain of the explicit-torque loop over the ankle's range (< 1: stable)."""
    cross, foot = ankle_parts(robot)
    drive = LinkageDrive(drive_cfg, transmission)
    ankle = SerialAnkle(cross, foot, drive.native_armature().tolist(), 0.005)
    geometry = ankle_geometry(robot)
    poses = [
        (p, r)
        for p in np.linspace(*geometry.pitch_range_rad, grid)
        for r in np.linspace(*geometry.roll_range_rad, grid)
    ]
    pose = torch.tensor(poses, dtype=torch.float64)
    links = torch.as_tensor(np.stack([ankle.link_inertia(p) for p in poses]))
    return float(drive.explicit_loop_gain(pose, links).max())


def unstable_poses(
    drive_cfg: LinkageDriveCfg,
    transmission: Transmission,
    grid: tuple[int, int] = (7, 5),
    duration_s: float = 1.0,
    robot: str | None = None,
) -> list[list[float]]:
    """Poses of a grid over the range (both limits included) where the serial ankle, kicked off its
    target by (0.02, −0.01) rad for 20 ms, still moves in the last 0.2 s (a step changes by > 1e-4 rad)."""
    geometry = ankle_geometry(robot)
    dt = 0.005
    unstable = []
    for pitch in np.linspace(*geometry.pitch_range_rad, grid[0]):
        for roll in np.linspace(*geometry.roll_range_rad, grid[1]):
            targets = np.tile([pitch, roll], (int(round(duration_s / dt)), 1))
            targets[1:5] += (0.02, -0.01)
            run = run_serial_ankle(drive_cfg, transmission, targets, dt, robot)
            if not np.all(np.abs(np.diff(run.joint_pos[-int(0.2 / dt) :], axis=0)) <= 1e-4):
                unstable.append([float(pitch), float(roll)])
    return unstable


def compare_armatures(
    duration_s: float = 4.0, dt: float = 0.005, poses: Sequence = POSES, robot: str | None = None
) -> dict:
    """RMSE of each armature model against the oracle at each pose, their means, and the loop gain.

    Returns:
        JSON-ready ``{"settings", "poses": [{"pose", model: {pos_rmse, tau_rmse}}], "mean": {model:
        {pos_rmse, tau_rmse}}, "neutral_armature_kgm2": {model: [pitch, roll]}, "unstable_poses": {model:
        [[pitch, roll], ...]}, "loop_gain", "best", "max_closure_error_m"}``; ``best`` is the model with
        the smallest mean position RMSE among those stable at every pose of the grid.
    """
    robot = pick_robot("ankle_drive_cfg", robot)
    configs, transmission = ankle_drive_cfgs(dt, robot=robot)
    per_pose, closure = [], 0.0
    for pose in poses:
        targets = ankle_chirp(pose, duration_s, dt)
        oracle = run_oracle_ankle(configs["motor"], transmission, targets, dt, robot)
        closure = max(closure, oracle.info["max_closure_error_m"])
        entry: dict = {"pose": list(pose)}
        for model, cfg in configs.items():
            entry[model] = _rmse(run_serial_ankle(cfg, transmission, targets, dt, robot), oracle)
        per_pose.append(entry)
    mean = {
        model: {
            key: np.mean([entry[model][key] for entry in per_pose], axis=0).tolist() for key in ("pos_rmse", "tau_rmse")
        }
        for model in configs
    }
    unstable = {model: unstable_poses(cfg, transmission, robot=robot) for model, cfg in configs.items()}
    return {
        "settings": {
            "robot": robot,
            "duration_s": duration_s,
            "physics_dt_s": dt,
            "chirp_rad": [0.2, 0.1],
            "chirp_band_hz": [0.1, 10.0],
        },
        "poses": per_pose,
        "mean": mean,
        "neutral_armature_kgm2": {
            model: LinkageDrive(cfg, transmission).native_armature().tolist() for model, cfg in configs.items()
        },
        "unstable_poses": unstable,
        "loop_gain": explicit_loop_gain(configs["reflected_unfiltered"], transmission, robot=robot),
        "best": min(
            (model for model in mean if not unstable[model]), key=lambda model: float(np.mean(mean[model]["pos_rmse"]))
        ),
        "max_closure_error_m": closure,
    }


def format_armature_report(result: dict) -> str:
    """Plain-text tables of :func:`compare_armatures`."""
    settings = result["settings"]
    band = settings["chirp_band_hz"]
    lines = [
        f"{settings['robot']} ankle armature vs the closed-chain oracle: chirp {settings['chirp_rad'][0]} / "
        f"{settings['chirp_rad'][1]} rad (pitch / roll), {band[0]}-{band[1]} Hz over {settings['duration_s']:g} s "
        f"about each pose, dt {settings['physics_dt_s'] * 1e3:g} ms, task PD, diamond limits",
        "{:20s} {:21s} {:>27s} {:>27s}".format(
            "pose (pitch, roll)", "model", "pos RMSE pitch, roll (rad)", "tau RMSE pitch, roll (N·m)"
        ),
    ]
    rows = [(f"({e['pose'][0]:+.2f}, {e['pose'][1]:+.2f})", e) for e in result["poses"]] + [("mean", result["mean"])]
    for label, entry in rows:
        for model in ARMATURE_MODELS:
            (pp, pr), (tp, tr) = entry[model]["pos_rmse"], entry[model]["tau_rmse"]
            lines.append(f"{label:20s} {model:21s} {pp:13.5f} {pr:13.5f} {tp:13.3f} {tr:13.3f}")
    armature = result["neutral_armature_kgm2"]
    lines += [
        "native armature (pitch, roll) kg·m²: "
        + "; ".join(f"{model} ({a[0]:.4f}, {a[1]:.4f})" for model, a in armature.items()),
        "poses of a 7 x 5 grid over the range where a kicked hold does not settle: "
        + "; ".join(f"{model} {len(poses)}" for model, poses in result["unstable_poses"].items()),
        f"largest explicit-loop gain (unfiltered q̈) over the range: {result['loop_gain']:.3f} (>= 1: unstable)",
        f"largest loop-closure error of the oracle: {result['max_closure_error_m']:.1e} m",
        f"best (mean position RMSE, stable over the whole range): {result['best']}",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print :func:`compare_armatures`'s report (``--json``: one object)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--duration", type=finite_float, default=4.0, help="chirp length per pose (s)")
    parser.add_argument("--robot", default=None, help="robot (default: the only one with an ankle drive)")
    args = parser.parse_args(argv)
    result = compare_armatures(args.duration, robot=args.robot)
    print(strict_json(result, indent=None) if args.json else format_armature_report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
