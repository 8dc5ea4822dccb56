"""``linkage-lab assets``: generate the robots' URDF and USD from their configs."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``assets`` command."""
    parser = subparsers.add_parser("assets", help="build robot descriptions (URDF, USD) from configs/robots")
    sub = parser.add_subparsers(dest="assets_command", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="generate assets/<robot>/ (skips robots already up to date)")
    build.add_argument("robots", nargs="*", help="robots to build (default: all)")
    build.add_argument("--force", action="store_true", help="rebuild even when up to date")
    build.set_defaults(func=_build)
    check = sub.add_parser("check", help="exit 1 when any robot's assets are out of date with its config")
    check.set_defaults(func=_check)


def _build(args: argparse.Namespace) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.robots.assets import asset_paths, build_robot, buildable_robots

    robots = args.robots or buildable_robots()
    unknown = sorted(set(robots) - set(buildable_robots()))
    if unknown:
        raise CliError(f"unknown robot(s) {', '.join(unknown)}; known: {', '.join(buildable_robots())}")
    for robot in robots:
        info = build_robot(robot, force=args.force)
        state = "built" if info["rebuilt"] else "up to date"
        print(f"{robot}: {state} -> {asset_paths(robot)['dir']}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from linkage_lab.robots.assets import buildable_robots, staleness

    stale = 0
    for robot in buildable_robots():
        reasons = staleness(robot)
        print(f"{robot}: {'up to date' if not reasons else 'STALE: ' + '; '.join(reasons)}")
        stale += bool(reasons)
    return 1 if stale else 0
