"""``linkage-lab ankle``: the parallel ankle's design report (docs/design/ankle_linkage.md §7)."""

from __future__ import annotations

import argparse
from pathlib import Path

from linkage_lab.arguments import finite_float
from linkage_lab.io import strict_json

#: The pictures ``--plot DIR`` writes.
PLOT_FILES = ("transmission_map.png", "torque_diamond.png")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``ankle`` command and its sub-commands."""
    parser = subparsers.add_parser("ankle", help="Marvin's parallel (2-RSU) ankle: design report.")
    commands = parser.add_subparsers(dest="ankle_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: _print_help(parser))

    report = commands.add_parser(
        "report",
        help="Rod lengths, crank swing, transmission, J, torque capacities and rod forces over the range.",
    )
    report.add_argument("--preset", default="marvin", help="geometry preset (default: marvin)")
    report.add_argument("--motor", default=None, help="motor model, e.g. rs03, rs06, rs04 (default: the preset's)")
    report.add_argument(
        "--demand",
        nargs=2,
        type=finite_float,
        default=(60.0, 30.0),
        metavar=("PITCH", "ROLL"),
        help="rod-force sizing demand in N·m, taken with all four signs (default: 60 30)",
    )
    report.add_argument(
        "--pose",
        nargs=2,
        type=finite_float,
        default=None,
        metavar=("PITCH", "ROLL"),
        help="pose of the torque diamond in deg, inside the joint range (default: the worst-transmission pose)",
    )
    report.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    report.add_argument(
        "--plot",
        type=Path,
        default=None,
        metavar="DIR",
        help="write transmission_map.png and torque_diamond.png into DIR (files of those names there need --force)",
    )
    report.add_argument("--force", action="store_true", help="replace the PNGs --plot writes")
    report.set_defaults(func=run_report)


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def run_report(args: argparse.Namespace) -> int:
    """Compute and print the report; write the plots when ``--plot`` is given."""
    from linkage_lab.cli.main import CliError
    from linkage_lab.config import ConfigError
    from linkage_lab.evaluation import ankle_plots
    from linkage_lab.kinematics import ankle_report
    from linkage_lab.kinematics.rsu_ankle import UnreachablePoseError
    from linkage_lab.robots.ankles import load_ankle_geometry

    if args.plot is not None:
        existing = [args.plot / name for name in PLOT_FILES if (args.plot / name).exists()]
        if existing and not args.force:
            raise CliError(f"{', '.join(map(str, existing))} already exist; pass --force to replace them")
    try:
        geometry = load_ankle_geometry(args.preset, motor=args.motor)
        # The diamond is for the hardware: a pose the joints cannot take is an error, not a study.
        range_error = None if args.pose is None else ankle_report.pose_range_error(geometry, tuple(args.pose))
        if range_error is not None:
            raise CliError(f"--pose: {range_error}")
        demand = (float(args.demand[0]), float(args.demand[1]))
        report = ankle_report.compute_report(geometry, demand_nm=demand)
        worst = report["worst_transmission"]
        pose = tuple(args.pose) if args.pose is not None else (worst["pitch_deg"], worst["roll_deg"])
        diamond = ankle_report.diamond_at_pose(geometry, pose, demand)
    except (ConfigError, UnreachablePoseError) as exc:
        raise CliError(str(exc)) from exc

    written = []
    if args.plot is not None:
        data = ankle_report.survey(geometry)
        map_png, diamond_png = (args.plot / name for name in PLOT_FILES)
        written.append(ankle_plots.plot_transmission_map(data, report, map_png))
        written.append(ankle_plots.plot_torque_diamond(geometry, diamond, diamond_png))

    if args.json:
        print(strict_json(report, indent=None))
    else:
        print(ankle_report.format_report(report, diamond))
        for path in written:
            print(f"  wrote {path}")
    return 0
