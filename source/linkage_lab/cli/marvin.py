"""``linkage-lab marvin``: checks of the Marvin humanoid's design (docs/design/robots.md §2.5)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from linkage_lab.arguments import finite_float
from linkage_lab.io import strict_json

#: Command-line flag → ``StepUpPoseCfg`` field; ``None`` defaults mean "keep the pose's value".
_POSE_FLAGS = {
    "step_height": "step_height_m",
    "tread": "tread_m",
    "stance_width": "stance_width_m",
    "swing_clearance": "swing_clearance_m",
    "swing_knee": "swing_knee_rad",
    "com_margin": "com_margin_m",
    "max_ankle_pitch": "max_stance_ankle_pitch_rad",
    "stance": "stance_side",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``marvin`` command and its sub-commands."""
    parser = subparsers.add_parser("marvin", help="Marvin humanoid design checks (stair step-up).")
    commands = parser.add_subparsers(dest="marvin_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: _print_help(parser))

    step_up = commands.add_parser(
        "step-up",
        help="Stance-ankle torque standing on one foot on a stair step vs. the linkage's capacity.",
        description=(
            "Quasi-static step-up: the stance foot on the step carries the robot, the trailing foot "
            "touches the lower floor one tread behind. Flags override --pose-json, which overrides "
            "the defaults."
        ),
    )
    pose = step_up.add_argument_group("pose")
    pose.add_argument("--step-height", type=finite_float, default=None, help="step rise in m (default: 0.18)")
    pose.add_argument(
        "--tread", type=finite_float, default=None, help="trailing ankle behind the stance ankle, m (default: 0.28)"
    )
    pose.add_argument(
        "--stance-width",
        type=finite_float,
        default=None,
        help="lateral distance between the ankles in m (default: twice the hip offset)",
    )
    pose.add_argument(
        "--swing-clearance",
        type=finite_float,
        default=None,
        help="trailing foot above the lower floor in m (default: 0, touching)",
    )
    pose.add_argument(
        "--swing-knee", type=finite_float, default=None, help="trailing knee bend in rad (default: 0, straight)"
    )
    pose.add_argument(
        "--com-margin",
        type=finite_float,
        default=None,
        help="distance the COM keeps inside the sole's edges in m (default: 0.02)",
    )
    pose.add_argument(
        "--max-ankle-pitch",
        type=finite_float,
        default=None,
        help="largest stance ankle dorsiflexion in rad (default: the joint limit)",
    )
    pose.add_argument("--stance", choices=("left", "right"), default=None, help="leg on the step (default: left)")
    pose.add_argument(
        "--pose-json",
        default=None,
        metavar="JSON",
        help="pose parameters as a JSON object or a path to a JSON file (StepUpPoseCfg field names)",
    )
    step_up.add_argument("--preset", default="marvin", help="ankle linkage preset (default: marvin)")
    step_up.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    step_up.set_defaults(func=run_step_up)


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _pose_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Pose fields from ``--pose-json`` and then the explicit flags."""
    from linkage_lab.cli.main import CliError

    overrides: dict[str, Any] = {}
    if args.pose_json is not None:
        text = args.pose_json
        if not text.lstrip().startswith("{"):
            path = Path(text)
            if not path.is_file():
                raise CliError(f"--pose-json: {text!r} is neither a JSON object nor a file")
            text = path.read_text()
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CliError(f"--pose-json: not valid JSON: {exc}") from exc
        if not isinstance(loaded, dict):
            raise CliError("--pose-json: expected a JSON object")
        overrides.update(loaded)
    overrides.update(
        {field: getattr(args, flag) for flag, field in _POSE_FLAGS.items() if getattr(args, flag) is not None}
    )
    return overrides


def run_step_up(args: argparse.Namespace) -> int:
    """Solve the step-up pose, run the check and print it."""
    import dataclasses

    from linkage_lab.cli.main import CliError
    from linkage_lab.config import ConfigError
    from linkage_lab.kinematics.rsu_ankle import UnreachablePoseError
    from linkage_lab.robots.ankles import ankle_pair, ankle_robot
    from linkage_lab.robots.registry import get_robot
    from linkage_lab.statics.step_up import format_step_up, step_up_check
    from linkage_lab.statics.step_up_pose import StepUpPoseCfg, StepUpPoseError

    overrides = _pose_overrides(args)
    fields = {f.name for f in dataclasses.fields(StepUpPoseCfg)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise CliError(f"unknown pose parameters {unknown}; choices: {', '.join(sorted(fields))}")
    try:
        cfg = StepUpPoseCfg(**overrides)
        model = get_robot(ankle_robot()).description_model()
        result = step_up_check(model, ankle_pair(args.preset), cfg)
    except (TypeError, ValueError, StepUpPoseError, ConfigError, UnreachablePoseError) as exc:
        raise CliError(str(exc)) from exc
    print(strict_json(result, indent=None) if args.json else format_step_up(result))
    return 0
