"""How far a bundle's base-velocity estimate is from the truth on the closed chain, by foot model and sensor noise.

The robot side feeds the policy the estimator's output (IMU + leg kinematics + contact), never the truth. This runs
a bundle at fixed walking commands on its robot's closed chain (one run from rest each, ``sim2sim``'s loop) three
ways, each with the model's exact sensors and with the robot config's sensor noise: the bundle's estimator as it is
(each foot measured at its lowest sole corner, a foot planted while its leg's joint torques hold its stance force),
the same by the height band alone (the stance test dropped), and each foot measured at its sole point by the height
band (the estimator file's ``contact_points_m`` dropped too); with ``--stance-force N``, also the corner estimator
with its stance force set to N newtons; and with
``--components``, at one command, with each term of the sensor model alone. Per run it records the estimate's bias
and noise against the truth (base frame, x) and the speed walked.

Run ``python -m linkage_lab_experiments.validation.estimator_sensors --bundle DIR [--command -0.3 ...]
[--stance-force N] [--components] [--out DIR]``; writes ``estimator_sensors.json`` and ``estimator_sensors.png``
and prints the table.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from linkage_lab.arguments import finite_float

SENSORS = ("exact", "robot noise")


def _edited(bundle: Path, folder: Path, name: str, edit: Any) -> Path:
    """A copy of ``bundle`` named ``name`` whose estimator document ``edit`` changed in place."""
    from linkage_lab.deploy.base_velocity import ESTIMATOR_FILE

    copy = folder / name
    shutil.copytree(bundle, copy)
    document = json.loads((copy / ESTIMATOR_FILE).read_text())
    edit(document)
    (copy / ESTIMATOR_FILE).write_text(json.dumps(document))
    return copy


def _band_only(document: dict[str, Any]) -> None:
    """The estimator counts every foot in its height band as planted, whatever its leg holds."""
    document["cfg"].update(stance_force_n=0.0, standing_force_n=0.0)


def _height_band(bundle: Path, folder: Path) -> Path:
    """A copy of ``bundle`` whose estimator drops its stance test: the height band alone."""
    return _edited(bundle, folder, "band_bundle", _band_only)


def _centre_only(bundle: Path, folder: Path) -> Path:
    """A copy of ``bundle`` whose estimator measures every foot at its sole point, by the height band alone."""

    def edit(document: dict[str, Any]) -> None:
        _band_only(document)
        for chain in document["chains"]:
            chain["contact_points_m"] = []

    return _edited(bundle, folder, "centre_bundle", edit)


def _stance_force(bundle: Path, folder: Path, force_n: float) -> Path:
    """A copy of ``bundle`` whose estimator also needs a leg to hold ``force_n`` up to count its foot as planted."""
    return _edited(bundle, folder, "force_bundle", lambda document: document["cfg"].update(stance_force_n=force_n))


def _row(report: dict[str, Any], **labels: Any) -> dict[str, Any]:
    velocity = report["robot_side"]["base_velocity"]
    return {
        **labels,
        "falls": report["falls"],
        "speed_mps": report["tracking"]["mean_forward_speed_mps"],
        "lin_vel_xy_rms_mps": report["tracking"]["lin_vel_xy_rms_mps"],
        "estimate_bias_x_mps": velocity["estimate_bias_mps"]["x"],
        "estimate_noise_x_mps": velocity["estimate_noise_mps"]["x"],
    }


def measure(
    bundle: str | Path,
    commands: Sequence[float],
    duration_s: float,
    components: bool = False,
    stance_force_n: float | None = None,
) -> dict[str, Any]:
    """Run the comparisons (with ``stance_force_n``, also the corner estimator with that stance test on the joint
    torques); returns the ``estimator_sensors.json`` document."""
    from linkage_lab.robots.registry import get_robot
    from linkage_lab.sim2sim.bundle import load_bundle
    from linkage_lab.sim2sim.runner import ROBOT_SENSORS, run_sim2sim
    from linkage_lab.sim2sim.sensors import SensorNoiseModel

    bundle = Path(bundle)
    sensors = get_robot(load_bundle(bundle).robot).config().sensors
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        bundles = {
            "corners, stance test": bundle,
            "corners, height band": _height_band(bundle, Path(tmp)),
            "centre, height band": _centre_only(bundle, Path(tmp)),
        }
        if stance_force_n is not None:
            bundles[f"corners, stance {stance_force_n:g} N"] = _stance_force(bundle, Path(tmp), stance_force_n)
        for command in commands:
            for foot, path in bundles.items():
                for noise in SENSORS:
                    report = run_sim2sim(
                        path, (command, 0.0), duration_s, sensor_noise=ROBOT_SENSORS if noise != "exact" else None
                    )
                    rows.append(_row(report, command_mps=command, foot=foot, sensors=noise))
                    print(_describe(rows[-1]), flush=True)
        parts = []
        if components:
            quiet = {field.name: 0.0 for field in dataclasses.fields(sensors)}
            for term in SensorNoiseModel.TERMS:
                alone = dataclasses.replace(sensors, **{**quiet, term: getattr(sensors, term)})
                report = run_sim2sim(bundle, (commands[0], 0.0), duration_s, sensor_noise=alone)
                parts.append(_row(report, command_mps=commands[0], foot="corners, stance test", sensors=f"{term} only"))
                print(_describe(parts[-1]), flush=True)
    return {
        "bundle": str(bundle),
        "duration_s": duration_s,
        "sensor_model": dataclasses.asdict(sensors),
        "rows": rows,
        "components": parts,
    }


def _describe(row: dict[str, Any]) -> str:
    return (
        f"{row['command_mps']:+.2f} m/s  {row['foot']:20s} {row['sensors']:28s} falls {row['falls']}  "
        f"speed {row['speed_mps']:+.3f}  RMS {row['lin_vel_xy_rms_mps']:.3f}  "
        f"estimate bias {row['estimate_bias_x_mps']:+.3f}  noise {row['estimate_noise_x_mps']:.3f}"
    )


def plot(document: dict[str, Any], path: Path) -> None:
    """Bars of the estimate's bias (x) per command, one per foot model and sensor setting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from linkage_lab.io import save_figure_atomic

    commands = sorted({row["command_mps"] for row in document["rows"]})
    feet = list(dict.fromkeys(row["foot"] for row in document["rows"]))
    variants = [(foot, sensors) for foot in feet for sensors in SENSORS]
    width = 0.8 / len(variants)
    figure, axis = plt.subplots(figsize=(7, 3.5))
    for k, (foot, sensors) in enumerate(variants):
        values = [
            next(
                r["estimate_bias_x_mps"]
                for r in document["rows"]
                if (r["command_mps"], r["foot"], r["sensors"]) == (c, foot, sensors)
            )
            for c in commands
        ]
        offset = (k - (len(variants) - 1) / 2) * width
        axis.bar([i + offset for i in range(len(commands))], values, width, label=f"{foot}, {sensors}")
    axis.axhline(0.0, color="black", linewidth=0.8)
    axis.set_xticks(range(len(commands)), [f"{c:+.1f} m/s" for c in commands])
    axis.set_ylabel("estimate − truth, x (m/s)")
    axis.set_title("Base-velocity estimate on the closed chain")
    axis.legend(fontsize=7)
    figure.tight_layout()
    save_figure_atomic(figure, path)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", required=True, help="an exported bundle (with the estimator's file)")
    parser.add_argument("--command", type=finite_float, nargs="+", default=[-0.3, 0.3, 0.5], help="forward speeds")
    parser.add_argument("--duration", type=finite_float, default=10.0, help="simulated seconds per run (default 10)")
    parser.add_argument("--components", action="store_true", help="also each sensor-noise term alone")
    parser.add_argument(
        "--stance-force", type=finite_float, default=None, metavar="N", help="also the stance test at N newtons"
    )
    parser.add_argument("--out", default="outputs/estimator_sensors", help="output folder")
    args = parser.parse_args(argv)
    from linkage_lab_experiments.results import write_result

    document = measure(args.bundle, args.command, args.duration, args.components, args.stance_force)
    write_result(args.out, "estimator_sensors", document, lambda path: plot(document, path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
