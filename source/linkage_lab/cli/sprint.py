"""``linkage-lab sprint``: one headless 10 m race of Marvin (docs/design/gait.md §4)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from linkage_lab.cli.video_option import add_video_argument, check_video_file, video_recorder, write_video
from linkage_lab.io import strict_json


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sprint`` command."""
    parser = subparsers.add_parser(
        "sprint",
        help="run Marvin's 10 m sprint headless and write metrics.json",
        description="Trailing key=value tokens are hydra overrides of the race's env, e.g. the action term a "
        "policy was trained with: env.actions.joint_pos.turn_per_yaw_rate_s=0.5.",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--checkpoint",
        default=None,
        help="rsl-rl checkpoint, as in eval: a model_<it>.pt, a run folder, 'latest' or 'pretrained' (the shipped "
        "policy of the task the race is built on)",
    )
    source.add_argument("--onnx", default=None, help="an exported policy.onnx")
    parser.add_argument(
        "--policy",
        default=None,
        choices=POLICY_TYPES,
        help="policy type, as in eval (default: from --checkpoint/--onnx, else scripted: the robot's sprint gait)",
    )
    parser.add_argument("--ankle", choices=("box", "diamond"), default="box", help="ankle torque limits (default box)")
    parser.add_argument(
        "--out",
        default=None,
        help="output folder (default outputs/sprint/<policy>_<ankle>); new, empty, or a previous sprint output",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a previous sprint output in the output folder, and an existing --video file",
    )
    parser.add_argument("--device", default=None, help="cpu, cuda:0, ... (default: picked automatically)")
    parser.add_argument("--gait", default=None, help="JSON object of gait parameter overrides for --policy scripted")
    parser.add_argument("--json", action="store_true", help="print metrics.json")
    add_video_argument(parser)
    parser.set_defaults(func=_sprint, accepts_overrides=True)


#: What ``--policy`` names: the policy's type, as in ``eval``.
POLICY_TYPES = ("scripted", "checkpoint", "onnx")


def policy_spec(args: argparse.Namespace) -> str:
    """The race's policy from ``--policy``/``--checkpoint``/``--onnx``: ``scripted``, a checkpoint or an ONNX path.

    Raises:
        CliError: The type and the source disagree (``--policy checkpoint`` without ``--checkpoint``, ...).
    """
    from linkage_lab.cli.main import CliError

    kind = args.policy or ("onnx" if args.onnx else "checkpoint" if args.checkpoint else "scripted")
    given = {"checkpoint": args.checkpoint, "onnx": args.onnx}
    if kind == "scripted":
        if args.checkpoint or args.onnx:
            raise CliError("--policy scripted races the robot's sprint gait: it takes no --checkpoint or --onnx")
        return "scripted"
    if not given[kind]:
        raise CliError(f"--policy {kind} needs --{kind}")
    return str(given[kind])


def _sprint(args: argparse.Namespace, env_overrides: list[str] | None = None) -> int:
    from linkage_lab.outputs import OutputWriteError, check_output_dir
    from linkage_lab.paths import REPO_ROOT
    from linkage_lab.runtime import validate_overrides
    from linkage_lab.sprint.runner import SPRINT_COMMAND, run_race, write_race

    # Everything a user can get wrong is checked here, before the simulation is built.
    args.policy = policy_spec(args)
    overrides = _gait_overrides(args)
    env_overrides = validate_overrides(env_overrides or ())
    _check_policy(args, env_overrides)
    name = "scripted" if args.policy == "scripted" else Path(args.policy).stem
    out = Path(args.out) if args.out else REPO_ROOT / "outputs" / "sprint" / f"{name}_{args.ankle}"
    check_output_dir(out, SPRINT_COMMAND, args.force)
    check_video_file(args.video, args.force)
    # Isaac Lab prints its configuration tables to stdout: with --json keep stdout for the JSON.
    recorder = video_recorder(args.video)
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        record = run_race(
            args.policy,
            args.ankle,
            args.device,
            overrides,
            progress=not args.json,
            on_step=recorder,
            env_overrides=env_overrides,
        )
    failure = None
    try:
        files = write_race(record, out, force=args.force)
    except OutputWriteError as exc:
        # The race is finished: show it, and where its files went, then fail.
        failure = exc
        files = {} if exc.fallback is None else {p.name: p for p in sorted(exc.fallback.iterdir())}
    if args.json:
        print(strict_json(record.metrics))
    else:
        _print_summary(record, args.ankle, files)
    status = write_video(recorder, args.video, progress=not args.json, stream=sys.stderr if args.json else None)
    if failure is not None:
        from linkage_lab.cli.main import CliError

        raise CliError(str(failure))
    return status


def _gait_overrides(args: argparse.Namespace) -> dict[str, Any] | None:
    """``--gait`` parsed and checked (keys, value ranges, leg reach), or ``None``."""
    from linkage_lab.cli.main import CliError

    if not args.gait:
        return None
    if args.policy != "scripted":
        raise CliError("--gait applies to --policy scripted only")
    try:
        overrides = json.loads(args.gait)
    except json.JSONDecodeError as exc:
        raise CliError(f"--gait is not valid JSON: {exc}") from exc
    if not isinstance(overrides, dict):
        raise CliError(
            f"--gait must be a JSON object of gait parameters, e.g. '{{\"step_length_m\": 0.18}}'; got {args.gait}"
        )
    from linkage_lab.robots.registry import get_robot
    from linkage_lab.sprint.runner import race_task
    from linkage_lab.tasks.registry import task_spec

    # The scripted gait races on the default sprint task; its registration names the robot whose gait it is.
    robot = task_spec(race_task(args.policy)).kwargs["robot"]
    try:
        get_robot(robot).require("sprint_gait")(**overrides)
    except ValueError as exc:  # unknown keys, values out of range, a trajectory out of the leg's reach
        raise CliError(f"--gait: {exc}") from exc
    return overrides


def _check_policy(args: argparse.Namespace, env_overrides: list[str] | tuple[str, ...] = ()) -> None:
    """Check a checkpoint or ONNX policy against the sizes of the race's env as it will be built (its ankles and the
    overrides, e.g. a term left out for a policy trained before it); the scripted gait needs nothing."""
    from linkage_lab.evaluation.policies import read_checkpoint, resolve_checkpoint
    from linkage_lab.evaluation.policy_check import check_checkpoint_sizes, check_onnx_file, task_sizes
    from linkage_lab.runtime import resolve_configs
    from linkage_lab.sprint.runner import policy_task_of, race_task

    if args.policy == "scripted":
        return
    task = race_task(args.policy)
    env_cfg, agent_cfg = resolve_configs(task, [f"presets={args.ankle}", *env_overrides], args.device)
    sizes = task_sizes(env_cfg, agent_cfg)
    if args.policy.endswith(".onnx"):
        check_onnx_file(Path(args.policy), sizes)
        return
    checkpoint = resolve_checkpoint(args.policy, policy_task_of(task), agent_cfg.experiment_name)
    # Sprint policies are trained on another task (the velocity task), so only the sizes are checked.
    check_checkpoint_sizes(checkpoint, read_checkpoint(checkpoint, None), sizes, task)


def _print_summary(record: Any, ankle: str, files: dict[str, Path]) -> None:
    m = record.metrics
    print(f"sprint ({record.info['policy']}, {ankle} ankles): {m['ended_reason']}")
    race_time = "-" if m["time"] is None else f"{m['time']:.2f}"
    print(f"  time {race_time} s, distance {m['distance_m']:.2f} m, average {m['average_speed_mps']:.3f} m/s")
    print(
        f"  max lateral offset {m['max_lateral_offset_m']:.3f} m, fell: {m['fell']}, duration {m['duration_s']:.2f} s"
    )
    overall = m["ankle_replay"].get("overall", {})
    if overall:
        outside = overall.get("fraction_outside", float("nan"))
        print(f"  ankle torque outside the real feasible set: {outside:.1%} of control steps")
    for key, path in files.items():
        print(f"  {key}: {path}")
