"""``linkage-lab sim2sim``: an exported bundle run on the robot's closed-chain MuJoCo model, as the robot runs it."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any

from linkage_lab.arguments import finite_float
from linkage_lab.cli.video_option import add_video_argument, check_video_file, video_exit
from linkage_lab.io import strict_json


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sim2sim`` command."""
    parser = subparsers.add_parser(
        "sim2sim",
        help="run an exported bundle on the robot's closed-chain MuJoCo model (sim-to-sim) and report eval metrics",
        description="policy.onnx runs through onnxruntime at the bundle's control period on what the robot senses "
        "(IMU, motor encoders -> joint estimates through the bundle's FK, the base-velocity estimator from IMU + "
        "leg kinematics); its "
        "actions go through the bundle's robot-side code to motor-level PD at physics rate on the closed-chain "
        "model. Writes outputs/sim2sim/<bundle>_<policy>[_sprint]/sim2sim.json.",
    )
    parser.add_argument("--bundle", type=Path, required=True, help="an exported bundle folder (linkage-lab export)")
    parser.add_argument(
        "--command",
        dest="velocity_command",
        default=None,
        metavar="VX[,WZ]",
        help="velocity command held for the run, m/s and rad/s (default 0.3,0; with --sprint the race's command)",
    )
    parser.add_argument(
        "--duration", type=finite_float, default=None, help="simulated seconds (default 10; --sprint: the race)"
    )
    parser.add_argument(
        "--policy",
        choices=("bundle", "scripted"),
        default="bundle",
        help="bundle: its policy.onnx (default); scripted: the robot's scripted gait (--sprint: its sprint gait) "
        "through the bundle's robot-side conversion",
    )
    parser.add_argument("--sprint", action="store_true", help="the 10 m sprint (docs/design/gait.md §4), refereed")
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="the bundle task's acceptance sweep on the closed chain: --episodes runs per fixed command (--duration "
        "each, default 20 s), pooled and judged by the task's targets; writes <out>/sweep.json (eval --sweep's "
        "layout), sweep.png and <out>/<case>/<run>/sim2sim.json; exit status 3 when it misses a target",
    )
    parser.add_argument(
        "--reality-gap",
        action="store_true",
        help="the acceptance commands on the closed chain under each condition of the stress set (the estimator, "
        "20 and 40 ms latency, motors 20 %% weaker or stronger, friction 0.5, kicked starts; --episodes runs each, "
        "default 2); writes <out>/reality_gap.json, .md and .png; exit status 3 when a condition misses a target",
    )
    parser.add_argument(
        "--episodes",
        type=int,
        default=None,
        help="with --sweep: runs per command, the first from rest, the others with the base kicked at the start "
        "(up to 0.25 m/s and 0.25 rad/s, seeded; default 4)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the sensor noise's draws and, with --sweep / --reality-gap, of the start kicks (default 0)",
    )
    parser.add_argument(
        "--sensor-noise",
        choices=("robot", "none"),
        default="robot",
        help="robot: the controller reads the IMU and encoders with the noise and gyro bias of the robot config's "
        "sensors section, as training observes them (default); none: the model's exact sensors",
    )
    parser.add_argument(
        "--obs-delay-ms",
        type=finite_float,
        default=0.0,
        metavar="MS",
        help="the policy acts on a sensor sample this old (rounded to the model's physics step; default 0)",
    )
    parser.add_argument(
        "--action-delay-ms",
        type=finite_float,
        default=0.0,
        metavar="MS",
        help="the drives apply the policy's targets this much later (rounded to the physics step; default 0)",
    )
    parser.add_argument(
        "--io-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the robot's sim2sim robot side, e.g. ankle_mode=motor_pd for Marvin",
    )
    parser.add_argument("--out", type=Path, default=None, help="output folder (default outputs/sim2sim/<name>)")
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a previous sim2sim output in the output folder, and an existing --video file",
    )
    parser.add_argument("--json", action="store_true", help="print sim2sim.json to stdout")
    add_video_argument(parser)
    parser.set_defaults(func=_sim2sim)


def _delays_s(args: argparse.Namespace) -> tuple[float, float]:
    """``(observation, action)`` delays in s from the options in ms."""
    return args.obs_delay_ms / 1000.0, args.action_delay_ms / 1000.0


def _sensor_noise(args: argparse.Namespace) -> str | None:
    """``--sensor-noise``: the robot's model, or ``None`` for the model's exact sensors."""
    return None if args.sensor_noise == "none" else args.sensor_noise


def _io_options(tokens: list[str]) -> dict[str, Any]:
    from linkage_lab.cli.main import CliError

    options: dict[str, Any] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise CliError(f"--io-option must be KEY=VALUE, got {token!r}")
        options[key] = value
    return options


def _sim2sim(args: argparse.Namespace) -> int:
    from linkage_lab.arguments import parse_command
    from linkage_lab.cli.main import CliError
    from linkage_lab.outputs import OutputWriteError, check_output_dir
    from linkage_lab.sim2sim.bundle import BundleError, load_bundle
    from linkage_lab.sim2sim.robot_side import resolve_robot
    from linkage_lab.sim2sim.runner import SIM2SIM_COMMAND, default_out_dir, run_sim2sim, write_report

    # Everything a user can get wrong is checked before the simulation is built.
    try:
        command = None if args.velocity_command is None else parse_command(args.velocity_command)
    except ValueError as exc:
        raise CliError(f"--command: {exc}") from None
    if args.duration is not None and not args.duration > 0:
        raise CliError(f"--duration must be positive, got {args.duration}")
    try:
        bundle = load_bundle(args.bundle)
        resolve_robot(bundle)
    except BundleError as exc:
        raise CliError(str(exc)) from None
    if args.obs_delay_ms < 0 or args.action_delay_ms < 0:
        raise CliError("--obs-delay-ms and --action-delay-ms must be >= 0")
    if args.episodes is not None and not (args.sweep or args.reality_gap):
        raise CliError("--episodes is a setting of --sweep and --reality-gap")
    if args.episodes is not None and args.episodes < 1:
        raise CliError(f"--episodes must be at least 1, got {args.episodes}")
    if args.sweep:
        if args.sprint or args.velocity_command is not None or args.video is not None or args.policy != "bundle":
            raise CliError(
                "--sweep runs the bundle's policy at the task's own commands: drop --sprint, --command, "
                "--video and --policy"
            )
        return _closed_chain_sweep(args, bundle)
    if args.reality_gap:
        if args.sprint or args.velocity_command is not None or args.video is not None or args.policy != "bundle":
            raise CliError(
                "--reality-gap runs the bundle's policy at the task's own commands: drop --sprint, --command, "
                "--video and --policy"
            )
        return _reality_gap(args, bundle)
    out = args.out or default_out_dir(bundle.path, args.policy, args.sprint)
    check_output_dir(out, SIM2SIM_COMMAND, args.force)
    check_video_file(args.video, args.force)
    duration = args.duration if args.duration is not None or args.sprint else 10.0
    if command is None and not args.sprint:
        command = (0.3, 0.0)
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        try:
            report = run_sim2sim(
                bundle,
                command,
                duration,
                sprint=args.sprint,
                policy=args.policy,
                video=args.video,
                progress=not args.json,
                io_options=_io_options(args.io_option),
                delays_s=_delays_s(args),
                sensor_noise=_sensor_noise(args),
                noise_seed=args.seed,
            )
        except (BundleError, TypeError) as exc:
            raise CliError(str(exc)) from None
    failure = None
    try:
        path = write_report(report, out, force=args.force)
    except OutputWriteError as exc:
        failure, path = exc, None
    if args.json:
        print(strict_json(report))
    else:
        _print_summary(report, path)
    if failure is not None:
        raise CliError(str(failure))
    return video_exit(report.get("video"))


def _reality_gap(args: argparse.Namespace, bundle: Any) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.outputs import check_output_dir
    from linkage_lab.sim2sim.reality_gap import (
        REALITY_GAP_EPISODES,
        REALITY_GAP_FILE,
        format_reality_gap,
        run_reality_gap,
        write_reality_gap,
    )
    from linkage_lab.sim2sim.runner import SIM2SIM_COMMAND, default_out_dir
    from linkage_lab.sim2sim.sweep import describe_case

    out = args.out or default_out_dir(bundle.path, "reality_gap", False)
    check_output_dir(out, SIM2SIM_COMMAND, args.force)
    stream = sys.stderr if args.json else sys.stdout
    try:
        document = run_reality_gap(
            bundle,
            episodes=args.episodes if args.episodes is not None else REALITY_GAP_EPISODES,
            duration_s=args.duration,
            seed=args.seed,
            sensor_noise=_sensor_noise(args),
            on_row=lambda name, row: print(f"{name:14s}" + describe_case(row), file=stream, flush=True),
        )
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None
    return _write_verdict(
        args, out, document, lambda folder: write_reality_gap(folder, document), format_reality_gap, REALITY_GAP_FILE
    )


def _closed_chain_sweep(args: argparse.Namespace, bundle: Any) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.evaluation.sweep import SWEEP_FILE, format_table
    from linkage_lab.outputs import check_output_dir
    from linkage_lab.sim2sim.runner import SIM2SIM_COMMAND, default_out_dir
    from linkage_lab.sim2sim.sweep import (
        SWEEP_DURATION_S,
        SWEEP_EPISODES,
        describe_case,
        run_closed_chain_sweep,
        write_closed_chain_sweep,
    )

    out = args.out or default_out_dir(bundle.path, "sweep", False)
    check_output_dir(out, SIM2SIM_COMMAND, args.force)

    def progress(row: dict[str, Any]) -> None:
        print(describe_case(row), file=sys.stderr if args.json else sys.stdout, flush=True)

    try:
        sweep, reports = run_closed_chain_sweep(
            bundle,
            duration_s=args.duration if args.duration is not None else SWEEP_DURATION_S,
            io_options=_io_options(args.io_option),
            on_case=progress,
            episodes=args.episodes if args.episodes is not None else SWEEP_EPISODES,
            seed=args.seed,
            delays_s=_delays_s(args),
            sensor_noise=_sensor_noise(args),
        )
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None
    return _write_verdict(
        args, out, sweep, lambda folder: write_closed_chain_sweep(folder, sweep, reports), format_table, SWEEP_FILE
    )


def _write_verdict(
    args: argparse.Namespace, out: Any, document: dict[str, Any], write: Any, table: Any, filename: str
) -> int:
    """Write a judged document's output folder, print it (``--json``: the JSON) and return its verdict's exit."""
    from linkage_lab.cli.main import CliError
    from linkage_lab.exit_codes import MISSED, verdict_exit
    from linkage_lab.outputs import OutputWriteError, write_output
    from linkage_lab.sim2sim.runner import SIM2SIM_COMMAND

    try:
        write_output(out, SIM2SIM_COMMAND, write, args.force)
    except OutputWriteError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print(strict_json(document))
    else:
        print(table(document))
        print(f"report: {Path(out) / filename}")
    if document["summary"]["passed"] is False:
        print(f"verdict: missed; exit status {MISSED}", file=sys.stderr if args.json else sys.stdout)
    return verdict_exit(document["summary"]["passed"])


def _print_summary(report: dict[str, Any], path: Path | None) -> None:
    from linkage_lab.evaluation.metrics import joint_stop_line

    tracking, torques = report["tracking"], report["motor_torques"]
    command = report["command"]
    print(
        f"sim2sim {report['robot']} ({report['policy']['type']}, {report['robot_side'].get('ankle_mode', 'wire')}): "
        f"{report['ended_reason']} after {report['simulated_s']:.2f} s, command {command['lin_vel_x_mps']:.2f} m/s"
    )
    speed, lin, yaw = (tracking[k] for k in ("mean_forward_speed_mps", "lin_vel_xy_rms_mps", "yaw_rate_rms_radps"))
    if speed is not None:
        print(f"  mean forward speed {speed:.3f} m/s, lin-vel RMS {lin:.3f} m/s, yaw-rate RMS {yaw:.3f} rad/s")
    print(
        f"  falls {report['falls']}"
        + (f" (at {report['fall']['time_s']:.2f} s, {report['fall']['by']})" if report["fall"] else "")
    )
    print(
        f"  motors: worst peak {torques['worst_peak_ratio']:.2f} of peak torque, any motor saturated "
        f"{100 * torques['any_saturated_fraction']:.1f} % of physics steps"
    )
    stop_line = joint_stop_line(report.get("joint_stops"))
    if stop_line:
        print(stop_line)
    if report["sprint"] is not None:
        race = report["sprint"]
        race_time = "-" if race["time"] is None else f"{race['time']:.2f} s"
        print(
            f"  sprint: {race['ended_reason']}, time {race_time}, distance {race['distance_m']:.2f} m, "
            f"average {race['average_speed_mps']:.3f} m/s, max lateral {race['max_lateral_offset_m']:.3f} m"
        )
    print(f"  real-time factor {report['realtime_factor']:.2f}")
    if "video" in report:
        print(f"  {report['video']}")
    if path is not None:
        print(f"  report: {path}")
