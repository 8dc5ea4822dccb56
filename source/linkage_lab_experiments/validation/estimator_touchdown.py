"""Where a bundle's leg odometry goes wrong on the closed chain: each planted foot's implied base velocity, by the
number of control ticks its foot has been down.

The estimator takes a foot that its stance test passes to stand still, so the base moves opposite to the foot's
velocity relative to the base. A foot that lands still moving, or skids while it loads, breaks that. This runs a
bundle at fixed walking commands on its robot's closed chain with the model's exact sensors, the policy fed the
simulator's true velocity (so every run walks the same gait whatever the estimate reads; the estimator still runs),
and records every control tick, per foot: the velocity the foot implies (world x, minus the truth: the foot's own
skid, with the sign flipped), whether the estimator's stance test counted it, and whether the model has it touching
the floor. The errors are then grouped by how many ticks in a row the foot has been down (by the stance test, and by
the model's contacts), with the feet's touchdowns per second and their mean contact time.

The two wrappers below read the estimator's measurements and the run's contacts as the loop makes them; they call the
library's own code and change nothing it computes.

``--variants`` then runs the two remedies, each on and off: a foot counted from its second update down (the
estimator's ``settle_updates`` 1, against 0) and the accelerometer read as its mean over the control period (the
closed chain's IMU, against the period's last sample). Each variant runs twice per command: the policy on the
simulator's truth with exact sensors (the estimate's own error, the gait the same in every variant) and the policy on
the estimate with the robot's sensor noise (what the acceptance runs), one run from rest per noise seed.

Run ``python -m linkage_lab_experiments.validation.estimator_touchdown --bundle DIR [--command -0.3 0.3 ...]
[--variants] [--seeds N] [--out DIR]``; writes ``estimator_touchdown.json`` and ``estimator_touchdown.png`` and
prints the tables.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

from linkage_lab.arguments import finite_float

#: Ticks in a row a foot has been down, grouped: 1, 2, 3 and 4 or more.
TICK_GROUPS = (1, 2, 3, 4)
#: Ticks from the start of each run left out (the robot settling from rest).
SETTLE_TICKS = 50


@contextlib.contextmanager
def estimator_ticks(ticks: list[dict[str, Any]]) -> Iterator[None]:
    """Append one record per estimator update to ``ticks``: per foot, the base velocity it implies (world), whether
    it passed the estimator's contact rule (band and stance test), the upward ground force its leg's torques imply
    (world z, N; NaN without torques), and the model's contacts and true base velocity at that tick."""
    from linkage_lab.deploy.base_velocity import BaseVelocityEstimator
    from linkage_lab.sim2sim import runner
    from linkage_lab.sim2sim.metrics import feet_in_contact
    from linkage_lab.sim2sim.sensors import quat_to_matrix

    measure, sense = BaseVelocityEstimator._foot_measurements, runner._Run.sense
    state: dict[str, Any] = {}

    def sensed(run: Any) -> Any:
        sensors = sense(run)
        state["run"] = run
        state["truth_w"] = quat_to_matrix(sensors.quat_wxyz) @ np.asarray(sensors.base_lin_vel_b, dtype=float)
        return sensors

    def measured(estimator: Any, joint_pos: Any, joint_vel: Any, gyro_b: Any, rotation: Any, joint_torque: Any = None):
        used, planted = measure(estimator, joint_pos, joint_vel, gyro_b, rotation, joint_torque)
        down_b = rotation.T @ np.array([0.0, 0.0, -1.0])
        implied, force = [], []
        for chain in estimator.chains:
            point, relative = chain.foot_point(joint_pos, joint_vel, down_b)
            implied.append(-rotation @ (relative + np.cross(gyro_b, point)))
            held = (
                np.nan if joint_torque is None else (rotation @ chain.ground_force(joint_pos, joint_torque, down_b))[2]
            )
            force.append(held)
        run = state["run"]
        ticks.append(
            {
                "implied_w": np.array(implied),
                "ground_force_n": np.array(force, dtype=float),
                "counted": np.asarray(planted, dtype=bool),
                "contact": np.asarray(feet_in_contact(run.data, run.feet), dtype=bool).ravel(),
                "truth_w": state["truth_w"].copy(),
            }
        )
        return used, planted

    with (
        mock.patch.object(runner._Run, "sense", sensed),
        mock.patch.object(BaseVelocityEstimator, "_foot_measurements", measured),
    ):
        yield


def _streaks(down: np.ndarray) -> np.ndarray:
    """Per tick and foot, how many ticks in a row the foot has been down (0 while up)."""
    streak = np.zeros(down.shape, dtype=int)
    for t in range(down.shape[0]):
        streak[t] = np.where(down[t], (streak[t - 1] if t else 0) + 1, 0)
    return streak


def summarise(ticks: Sequence[dict[str, Any]], control_period_s: float) -> dict[str, Any]:
    """The implied error (foot's implied base velocity − truth, world x, m/s) grouped by ticks down, by the stance
    test and by the model's contacts; the touchdowns per second and mean contact time per foot."""
    error = np.array([t["implied_w"][:, 0] - t["truth_w"][0] for t in ticks])
    counted = np.array([t["counted"] for t in ticks])
    contact = np.array([t["contact"] for t in ticks])
    groups: dict[str, list[dict[str, Any]]] = {}
    for name, down in (("stance_test", counted), ("model_contact", contact)):
        streak = _streaks(down)
        rows = []
        for group in TICK_GROUPS:
            mask = streak >= group if group == TICK_GROUPS[-1] else streak == group
            rows.append(
                {
                    "ticks_down": group if group < TICK_GROUPS[-1] else f"{group}+",
                    "share": float(mask.mean()),
                    "mean_error_x_mps": float(error[mask].mean()) if mask.any() else None,
                    "std_error_x_mps": float(error[mask].std()) if mask.any() else None,
                }
            )
        groups[name] = rows
    seconds = len(ticks) * control_period_s
    # Contact periods, one already under way at the first tick included.
    periods = (contact[1:] & ~contact[:-1]).sum(axis=0) + contact[0]
    return {
        "ticks": len(ticks),
        "counted_error_x_mps": float(error[counted].mean()) if counted.any() else None,
        "by_ticks_down": groups,
        "touchdowns_per_s": [float(n / seconds) for n in periods],
        "mean_contact_s": [
            float(contact[:, k].sum() * control_period_s / max(int(n), 1)) for k, n in enumerate(periods)
        ],
    }


#: The remedies compared by ``--variants``: (name, the estimator's settle_updates, the IMU's mean over the period).
VARIANTS = (
    ("last sample, from landing", 0, False),
    ("last sample, settled", 1, False),
    ("period mean, from landing", 0, True),
    ("period mean, settled", 1, True),
)


@contextlib.contextmanager
def _variant(bundle: Path, folder: Path, name: str, settle_updates: int, imu_mean: bool) -> Iterator[Path]:
    """A copy of ``bundle`` whose estimator leaves a landing foot out for ``settle_updates`` updates, run (inside
    the context) with the closed chain's IMU averaging over the period or giving its last sample."""
    import json
    import shutil

    from linkage_lab.deploy.base_velocity import ESTIMATOR_FILE
    from linkage_lab.sim2sim import runner
    from linkage_lab.sim2sim.sensors import ImuAverage

    copy = folder / name.replace(",", "").replace(" ", "_")
    shutil.copytree(bundle, copy)
    document = json.loads((copy / ESTIMATOR_FILE).read_text())
    document["cfg"]["settle_updates"] = settle_updates
    document["cfg"]["settling_noise_scale"] = None  # a settling foot is left out, whatever the bundle says
    (copy / ESTIMATOR_FILE).write_text(json.dumps(document))
    with mock.patch.object(runner, "ImuAverage", ImuAverage if imu_mean else lambda steps: ImuAverage(1)):
        yield copy


def compare(bundle: str | Path, commands: Sequence[float], duration_s: float, seeds: int) -> list[dict[str, Any]]:
    """The estimate's error and the walk, per variant and command, both ways (module docstring)."""
    import tempfile

    from linkage_lab.sim2sim.runner import ROBOT_SENSORS, run_sim2sim

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, settle, imu_mean in VARIANTS:
            for command in commands:
                for mode, velocity, noise in (
                    ("truth-fed, exact", "truth", None),
                    ("estimate-fed, noise", "estimate", ROBOT_SENSORS),
                ):
                    runs = []
                    for seed in range(seeds):
                        with _variant(
                            Path(bundle), Path(tmp), f"{name} {seed} {command} {mode}", settle, imu_mean
                        ) as copy:
                            report = run_sim2sim(
                                copy,
                                (command, 0.0),
                                duration_s,
                                sensor_noise=noise,
                                noise_seed=seed,
                                io_options={"base_velocity": velocity},
                            )
                        estimate = report["robot_side"]["base_velocity"]
                        runs.append(
                            (
                                report["falls"],
                                report["tracking"]["mean_forward_speed_mps"],
                                report["tracking"]["lin_vel_xy_rms_mps"],
                                estimate["estimate_bias_mps"]["x"],
                                estimate["estimate_noise_mps"]["x"],
                                estimate["mean_feet_used"],
                            )
                        )
                    falls, speed, rms, bias, noise_x, feet = np.array(runs, dtype=float).T
                    rows.append(
                        {
                            "variant": name,
                            "settle_updates": settle,
                            "imu_period_mean": imu_mean,
                            "command_mps": command,
                            "run": mode,
                            "runs": seeds,
                            "falls": int(falls.sum()),
                            "speed_mps": float(speed.mean()),
                            "lin_vel_xy_rms_mps": float(rms.mean()),
                            "estimate_bias_x_mps": float(bias.mean()),
                            "estimate_noise_x_mps": float(noise_x.mean()),
                            "mean_feet_used": float(feet.mean()),
                        }
                    )
                    print(_describe_variant(rows[-1]), flush=True)
    return rows


def _describe_variant(row: dict[str, Any]) -> str:
    return (
        f"{row['command_mps']:+.2f} m/s  {row['variant']:26s} {row['run']:20s} falls {row['falls']}  "
        f"speed {row['speed_mps']:+.3f}  RMS {row['lin_vel_xy_rms_mps']:.3f}  estimate bias "
        f"{row['estimate_bias_x_mps']:+.3f}  noise {row['estimate_noise_x_mps']:.3f}  feet {row['mean_feet_used']:.2f}"
    )


def measure(bundle: str | Path, commands: Sequence[float], duration_s: float) -> dict[str, Any]:
    """One run per command; returns the ``estimator_touchdown.json`` document."""
    from linkage_lab.sim2sim.bundle import load_bundle
    from linkage_lab.sim2sim.runner import run_sim2sim

    loaded = load_bundle(Path(bundle))
    rows = []
    for command in commands:
        ticks: list[dict[str, Any]] = []
        with estimator_ticks(ticks):
            report = run_sim2sim(
                loaded, (command, 0.0), duration_s, sensor_noise=None, io_options={"base_velocity": "truth"}
            )
        row = {
            "command_mps": command,
            "falls": report["falls"],
            "speed_mps": report["tracking"]["mean_forward_speed_mps"],
            "estimate_bias_x_mps": report["robot_side"]["base_velocity"]["estimate_bias_mps"]["x"],
            **summarise(ticks[SETTLE_TICKS:], loaded.control_period_s),
        }
        rows.append(row)
        print(_describe(row), flush=True)
    return {"bundle": str(bundle), "duration_s": duration_s, "settle_ticks": SETTLE_TICKS, "rows": rows}


def _describe(row: dict[str, Any]) -> str:
    def cells(name: str) -> str:
        return "  ".join(
            f"{g['ticks_down']}: {g['mean_error_x_mps']:+.3f} ({g['share']:.2f})"
            for g in row["by_ticks_down"][name]
            if g["mean_error_x_mps"] is not None
        )

    return (
        f"{row['command_mps']:+.2f} m/s  speed {row['speed_mps']:+.3f}  estimate bias {row['estimate_bias_x_mps']:+.3f}"
        f"  touchdowns/s {' '.join(f'{n:.1f}' for n in row['touchdowns_per_s'])}"
        f"  contact {' '.join(f'{s * 1000:.0f}' for s in row['mean_contact_s'])} ms\n"
        f"    implied error by ticks down (share), stance test:  {cells('stance_test')}\n"
        f"    implied error by ticks down (share), model contact: {cells('model_contact')}"
    )


def plot(document: dict[str, Any], path: Path) -> None:
    """Top: bars of the implied error per ticks down, one panel per command, stance test and model contact side by
    side. Below, with the variants: the estimate's bias and the walk's lin-vel RMS per variant, estimate-fed with
    sensor noise."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from linkage_lab.io import save_figure_atomic

    rows, variants = document["rows"], document.get("variants")
    columns = max(len(rows), 2)
    figure, axes = plt.subplots(
        2 if variants else 1, columns, figsize=(3.6 * columns, 6.6 if variants else 3.3), squeeze=False
    )
    for axis, row in zip(axes[0], rows, strict=False):
        for k, name in enumerate(("stance_test", "model_contact")):
            groups = row["by_ticks_down"][name]
            values = [g["mean_error_x_mps"] or 0.0 for g in groups]
            axis.bar([i + (k - 0.5) * 0.4 for i in range(len(groups))], values, 0.4, label=name.replace("_", " "))
        axis.axhline(0.0, color="black", linewidth=0.8)
        axis.set_xticks(range(len(TICK_GROUPS)), [str(g["ticks_down"]) for g in row["by_ticks_down"]["stance_test"]])
        axis.set_xlabel("control ticks the foot has been down")
        axis.set_title(f"{row['command_mps']:+.1f} m/s (bias {row['estimate_bias_x_mps']:+.3f})", fontsize=9)
    axes[0][0].set_ylabel("implied − true base velocity, x (m/s)")
    axes[0][0].legend(fontsize=7)
    for axis in axes[0][len(rows) :]:
        axis.axis("off")
    if variants:
        shown = [v for v in variants if v["run"].startswith("estimate-fed")]
        commands = sorted({v["command_mps"] for v in shown})
        names = [name for name, _, _ in VARIANTS]
        width = 0.8 / len(names)
        for axis, key, label in (
            (axes[1][0], "estimate_bias_x_mps", "estimate − truth, x (m/s)"),
            (axes[1][1], "lin_vel_xy_rms_mps", "lin-vel RMS (m/s)"),
        ):
            for k, name in enumerate(names):
                values = [
                    next(v[key] for v in shown if (v["variant"], v["command_mps"]) == (name, c)) for c in commands
                ]
                offset = (k - (len(names) - 1) / 2) * width
                axis.bar([i + offset for i in range(len(commands))], values, width, label=name)
            axis.axhline(0.0, color="black", linewidth=0.8)
            axis.set_xticks(range(len(commands)), [f"{c:+.1f} m/s" for c in commands])
            axis.set_ylabel(label)
            axis.set_title("policy on the estimate, sensor noise", fontsize=9)
        axes[1][0].legend(fontsize=7)
        for axis in axes[1][2:]:
            axis.axis("off")
    figure.tight_layout()
    save_figure_atomic(figure, path)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", required=True, help="an exported bundle (with the estimator's file)")
    parser.add_argument("--command", type=finite_float, nargs="+", default=[-0.3, 0.3], help="forward speeds (m/s)")
    parser.add_argument("--duration", type=finite_float, default=10.0, help="simulated seconds per run (default 10)")
    parser.add_argument("--variants", action="store_true", help="also compare the remedies (module docstring)")
    parser.add_argument("--seeds", type=int, default=2, help="with --variants: runs per case, one per noise seed")
    parser.add_argument("--out", default="outputs/estimator_touchdown", help="output folder")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be at least 1, got {args.seeds}")
    from linkage_lab_experiments.results import write_result

    document = measure(args.bundle, args.command, args.duration)
    if args.variants:
        document["variants"] = compare(args.bundle, args.command, args.duration, args.seeds)
    write_result(args.out, "estimator_touchdown", document, lambda path: plot(document, path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
