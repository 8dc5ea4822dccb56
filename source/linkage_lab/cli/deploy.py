"""``linkage-lab deploy``: the bundle on a robot over DDS (``run``), the simulated robot (``robot``), a run's report."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import Any

from linkage_lab.arguments import finite_float


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``deploy`` command and its verbs."""
    parser = subparsers.add_parser(
        "deploy",
        help="drive a robot with an exported bundle over DDS, or serve the simulated robot",
        description="The 50 Hz control process for the robot's computer and its simulated counterpart, over "
        "Cyclone DDS with ROS 2's type and topic names (docs/guide/deploy.md).",
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="{run,robot,report}")

    run = verbs.add_parser(
        "run",
        help="run a bundle on the robot that answers on the domain",
        description="Waits for the robot, checks it is the bundle's (robot, motor ids, control period), then: soft "
        "start (>= 2 s to the default pose at reduced gains) -> policy -> damping. Exit status 0: --duration "
        "reached; 2: refused (no robot, or another robot); 5: a safety fault (the reason is printed); 130: Ctrl-C.",
    )
    run.add_argument("--bundle", type=Path, required=True, help="an exported bundle folder (linkage-lab export)")
    run.add_argument("--domain", type=int, default=0, help="DDS domain id (default 0)")
    run.add_argument("--record", type=Path, default=None, metavar="FILE.mcap", help="record the run (MCAP)")
    run.add_argument(
        "--command", dest="velocity_command", default="0,0", metavar="VX[,WZ]", help="initial command (m/s, rad/s)"
    )
    run.add_argument(
        "--duration", type=finite_float, default=None, help="seconds of policy, then damping and exit 0 (default: run)"
    )
    run.add_argument("--lockstep", action="store_true", help="tick on each sample of a lockstep simulated robot")
    run.add_argument("--wait", type=finite_float, default=10.0, help="seconds to wait for the robot (default 10)")
    run.add_argument("--no-keyboard", action="store_true", help="ignore the terminal's keys")
    run.set_defaults(func=_run)

    robot = verbs.add_parser(
        "robot",
        help="serve the robot's closed-chain MuJoCo model on the wire (the counterpart of the Limit's sim_node)",
        description="Publishes per-motor samples and an IMU each control period, runs each motor driver's PD on the "
        "newest targets at the physics rate; hangs on its stand until the first target.",
    )
    robot.add_argument("--robot", required=True, help="a registered robot with a wire: limit or marvin")
    robot.add_argument("--domain", type=int, default=0, help="DDS domain id (default 0)")
    robot.add_argument("--lockstep", action="store_true", help="simulate one period per answered sample (tests)")
    robot.add_argument("--period", type=finite_float, default=0.02, help="control period, s (default 0.02)")
    robot.add_argument("--duration", type=finite_float, default=None, help="robot seconds to serve (default: ever)")
    robot.add_argument("--log", type=Path, default=None, help="write the base's truth per period to this JSON")
    robot.set_defaults(func=_robot)

    report = verbs.add_parser("report", help="a recording's timing table and a PNG of the run")
    report.add_argument("file", type=Path, help="a recording (deploy run --record)")
    report.add_argument("--png", type=Path, default=None, help="the picture (default: beside the recording)")
    report.add_argument("--json", action="store_true", help="print the table as JSON")
    report.set_defaults(func=_report)


def _run(args: argparse.Namespace) -> int:
    from linkage_lab.arguments import parse_command
    from linkage_lab.deploy.runtime import DeployRuntime, Refused, RunSettings

    try:
        vx, wz = parse_command(args.velocity_command)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    settings = RunSettings(
        domain=args.domain,
        lockstep=args.lockstep,
        duration_s=args.duration,
        command=(vx, 0.0, wz),
        wait_s=args.wait,
        record=args.record,
        keyboard=not args.no_keyboard,
    )
    runtime = DeployRuntime(args.bundle, settings)
    try:
        result = runtime.run()
    except Refused as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    print(_timing_line(result.timing))
    return result.exit_code


def _timing_line(timing: dict[str, Any]) -> str:
    period, latency, policy = timing.get("period"), timing.get("latency"), timing.get("policy")
    parts = []
    if period:
        parts.append(f"period p50/p99/max {period['p50_ms']:.1f}/{period['p99_ms']:.1f}/{period['max_ms']:.1f} ms")
    if latency:
        parts.append(f"sample->target p50/p99 {latency['p50_ms']:.1f}/{latency['p99_ms']:.1f} ms")
    if policy:
        parts.append(f"policy step p50 {policy['p50_ms']:.1f} ms")
    parts.append(f"deadline misses {timing.get('deadline_misses', 0)}")
    return "[deploy] " + ", ".join(parts)


def _robot(args: argparse.Namespace) -> int:
    from linkage_lab.deploy.sim_robot import SimulatedRobot
    from linkage_lab.deploy.transport import Bus
    from linkage_lab.robots.registry import MissingCapability, UnknownRobot, get_robot

    try:
        spec = get_robot(args.robot)
        chain = spec.require("closed_chain")()
        wire = spec.extra("deploy_wire")(chain)
    except (UnknownRobot, MissingCapability) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    node = SimulatedRobot(chain, Bus(wire, args.domain), args.period, lockstep=args.lockstep)
    for number in (signal.SIGTERM, signal.SIGINT):  # a stopped node still writes its log
        signal.signal(number, _interrupt)
    mode = "lockstep" if args.lockstep else "real time"
    print(f"[robot] {args.robot} on DDS domain {args.domain}, {1e3 * args.period:g} ms, {mode}", flush=True)
    try:
        reason = node.run(args.duration)
    except KeyboardInterrupt:
        reason = "stopped"
    finally:
        if args.log is not None:
            node.write_log(args.log)
    print(f"[robot] stopped: {reason} at t = {node.data.time:.2f} s", flush=True)
    return 0


def _interrupt(number: int, frame: Any) -> None:
    signal.signal(number, signal.SIG_IGN)  # once: a second signal must not cut the log's write short
    raise KeyboardInterrupt


def _report(args: argparse.Namespace) -> int:
    from linkage_lab.deploy.report import format_table, report

    try:
        table = report(args.file, args.png)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(table, indent=2) if args.json else format_table(table))
    print(f"picture: {table['png']}")
    return 0
