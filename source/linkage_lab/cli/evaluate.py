"""``linkage-lab eval``: bounded headless evaluation of a checkpoint, an ONNX file or another policy type."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from linkage_lab.cli.video_option import add_video_argument, check_video_file, video_recorder, write_video


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``eval`` command."""
    parser = subparsers.add_parser(
        "eval",
        help="evaluate a policy for N episodes (headless, bounded): eval.json and ankle-replay plots",
        description="Runs until N episodes have ended or the step cap, then writes DIR/eval.json (and, for "
        "robots with linkage ankles, the ankle-torque replay plots). Trailing key=value tokens are hydra "
        "overrides, e.g. presets=box env.commands.base_velocity.ranges.lin_vel_x=[0.5,0.5].",
    )
    parser.add_argument("--task", required=True, help="task id, e.g. LinkageLab-Velocity-Flat-Marvin")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--checkpoint",
        default=None,
        help="rsl-rl checkpoint: a model_<it>.pt, a run folder, 'latest' (the task's latest run) or 'pretrained' "
        "(the policy shipped for the task under policies/<task>/)",
    )
    source.add_argument("--onnx", type=Path, default=None, help="an exported policy.onnx")
    parser.add_argument(
        "--policy",
        default=None,
        help="policy type: checkpoint, onnx, or another registered type (default: from --checkpoint/--onnx)",
    )
    parser.add_argument("--episodes", type=int, default=10, help="completed episodes to collect (default 10)")
    parser.add_argument("--num-envs", type=int, default=8, help="parallel envs (default 8)")
    parser.add_argument(
        "--seed", type=int, default=0, help="env seed (commands, pushes, randomisation; default 0): runs repeat exactly"
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help="control-step cap (default: enough for the episodes even if none ends early)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output folder (default <run>/eval or outputs/eval/<task>); new, empty, or a previous eval output",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a previous eval output in the output folder, and an existing --video file",
    )
    parser.add_argument("--device", default=None, help="cpu, cuda:0, ... (default: picked automatically)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--sweep",
        action="store_true",
        help="evaluate once per fixed command (the acceptance sweep) and write DIR/sweep.json with the targets; "
        "exit status 3 when it misses a target",
    )
    add_command_cases_argument(parser, "--sweep")
    add_video_argument(parser)
    parser.set_defaults(func=_eval, accepts_overrides=True)


def add_command_cases_argument(parser: argparse.ArgumentParser, of: str) -> None:
    """``--command VX[,WZ]`` (repeatable): the fixed commands of a sweep, stored as ``commands``."""
    parser.add_argument(
        "--command",
        dest="commands",  # not "command": that is the sub-command's name
        action="append",
        default=None,
        metavar="VX[,WZ]",
        help=f"a fixed command of {of} (repeatable; default: the task's acceptance commands)",
    )


#: Namespace entries the request carries itself (or the parser's own), not passed on as loader options.
_REQUEST_FIELDS = {"task", "checkpoint", "onnx", "force", "func", "accepts_overrides", "command", "sweep", "commands"}


def _eval(args: argparse.Namespace, overrides: list[str]) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.evaluation.evaluate import EVAL_COMMAND, EvalRequest, default_out_dir, evaluate
    from linkage_lab.evaluation.policies import POLICY_LOADERS
    from linkage_lab.evaluation.sweep import SWEEP_COMMAND, format_table, parse_case, task_acceptance
    from linkage_lab.evaluation.sweep_output import run_sweep
    from linkage_lab.exit_codes import MISSED, verdict_exit
    from linkage_lab.outputs import check_output_dir

    policy = args.policy or ("checkpoint" if args.checkpoint else "onnx" if args.onnx else None)
    if policy is None:
        raise CliError("give a policy: --checkpoint PATH|latest, --onnx FILE or --policy NAME")
    if policy not in POLICY_LOADERS:
        raise CliError(f"unknown policy type {policy!r}; known: {', '.join(sorted(POLICY_LOADERS))}")
    if policy == "checkpoint" and not args.checkpoint:
        raise CliError("--policy checkpoint needs --checkpoint PATH|latest")
    if policy == "onnx" and args.onnx is None:
        raise CliError("--policy onnx needs --onnx FILE")
    if args.episodes < 1 or args.num_envs < 1 or (args.max_steps is not None and args.max_steps < 1):
        raise CliError("--episodes, --num-envs and --max-steps must be positive")
    if args.commands and not args.sweep:
        raise CliError("--command is a case of --sweep; pin a single command with env.commands.base_velocity.ranges")
    if args.sweep and args.video:
        raise CliError("--video records one rollout; it cannot be combined with --sweep")
    try:
        cases = [parse_case(c) for c in args.commands] if args.commands else None
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    # Everything a user can get wrong is checked here, before the simulation is built.
    checkpoint = _checked_policy_file(args, policy, overrides)
    recorder = video_recorder(args.video)
    request = EvalRequest(
        task=args.task,
        policy=policy,
        checkpoint=checkpoint,
        onnx=args.onnx,
        episodes=args.episodes,
        num_envs=args.num_envs,
        max_steps=args.max_steps,
        out_dir=args.out,
        overrides=tuple(overrides),
        device=args.device,
        progress=not args.no_progress,
        force=args.force,
        # Every option reaches the policy loader, so a new policy type can add its own flags.
        options={k: v for k, v in vars(args).items() if k not in _REQUEST_FIELDS},
        on_step=recorder,
        seed=args.seed,
    )
    if args.sweep:
        if args.out is None:
            request = replace(request, out_dir=_default_sweep_dir(request))
        cases = cases or list(task_acceptance(args.task).cases)
        check_output_dir(request.out_dir, SWEEP_COMMAND, args.force)
        out_dir, sweep = run_sweep(request, cases)
        print(format_table(sweep))
        print(f"report: {out_dir / 'sweep.json'}")
        if sweep["summary"]["passed"] is False:
            print(f"verdict: missed; exit status {MISSED}")
        return verdict_exit(sweep["summary"]["passed"])
    check_output_dir(default_out_dir(request), EVAL_COMMAND, args.force)
    check_video_file(args.video, args.force)
    out_dir, report = evaluate(request)
    print(format_summary(report))
    print(f"report: {out_dir / 'eval.json'}")
    return write_video(recorder, args.video, progress=not args.no_progress)


def _default_sweep_dir(request) -> Path:
    """``<run dir>/sweep`` for a checkpoint, else ``<repo>/outputs/sweep/<task>``."""
    from linkage_lab.paths import REPO_ROOT

    if request.policy == "checkpoint" and request.checkpoint is not None:
        return Path(request.checkpoint).resolve().parent / "sweep"
    return REPO_ROOT / "outputs" / "sweep" / request.task


def _checked_policy_file(args: argparse.Namespace, policy: str, overrides: list[str]) -> Path | None:
    """Check the task, overrides and the policy file against the task's sizes; the resolved checkpoint.

    Raises:
        UnknownTaskError, OverrideError: Bad task id or override.
        PolicyLoadError: The checkpoint or ONNX file is missing, unreadable or of other sizes.
    """
    from linkage_lab.evaluation.policies import read_checkpoint, resolve_checkpoint
    from linkage_lab.evaluation.policy_check import check_checkpoint_sizes, check_onnx_file, task_sizes
    from linkage_lab.runtime import resolve_configs

    env_cfg, agent_cfg = resolve_configs(args.task, overrides, args.device)
    if policy == "onnx":
        check_onnx_file(args.onnx, task_sizes(env_cfg, agent_cfg))
    if policy != "checkpoint":
        return None
    checkpoint = resolve_checkpoint(args.checkpoint, args.task, agent_cfg.experiment_name)
    state = read_checkpoint(checkpoint, args.task)
    check_checkpoint_sizes(checkpoint, state, task_sizes(env_cfg, agent_cfg), args.task)
    return checkpoint


def format_summary(report: dict) -> str:
    """A few lines of ``eval.json`` for the terminal."""
    from linkage_lab.evaluation.metrics import joint_stop_line

    def num(value, fmt: str = ".3f") -> str:
        return "n/a" if value is None else format(value, fmt)

    length = report["episode_length"]
    tracking = report.get("tracking") or {}
    lines = [
        f"{report['task']}: {report['episodes']} episodes in {report['steps']} steps "
        f"× {report['num_envs']} envs "
        f"(stopped by {report['stopped_by']})",
        f"  return {num(report['return']['mean'])} ± {num(report['return']['std'])}, "
        f"length {num(length['mean_s'], '.2f')} s, fall rate {num(report['fall_rate'], '.2f')}",
        f"  tracking RMS: v_xy {num(tracking.get('lin_vel_xy_rms_mps'))} m/s, "
        f"yaw rate {num(tracking.get('yaw_rate_rms_radps'))} rad/s; "
        f"mean forward speed {num(tracking.get('mean_forward_speed_mps'))} m/s",
    ]
    if not report["episodes"]:
        lines.append(
            f"  no episode ended within {report['steps']} steps: the figures above are n/a; raise --max-steps "
            "or shorten the episodes (env.episode_length_s=...)"
        )
    stop_line = joint_stop_line(report.get("joint_stops"))
    if stop_line:
        lines.append(stop_line)
    replay = report.get("ankle_replay")
    if replay:
        overall = replay["overall"]
        lines.append(
            f"  ankle replay: {num(overall['fraction_outside'], '.1%')} of steps outside the motors' peak, "
            f"worst |τ_m|/T_peak {num(overall['worst_ratio'], '.2f')}, "
            f"{num(overall['fraction_above_rated'], '.1%')} above rated"
        )
    return "\n".join(lines)
