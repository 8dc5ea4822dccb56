"""``linkage-lab bench``: env throughput, PPO training throughput and ankle-library timings."""

from __future__ import annotations

import argparse
from pathlib import Path

from linkage_lab.io import strict_json


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``bench`` command."""
    parser = subparsers.add_parser("bench", help="benchmarks (env and PPO throughput, ankle library)")
    sub = parser.add_subparsers(dest="bench_command", metavar="WHAT", required=True)

    env = sub.add_parser(
        "env",
        help="env-steps/s with zero actions, warm (after kernel compilation), each variant in a fresh process",
        description="Trailing key=value tokens are hydra overrides applied to every variant.",
    )
    env.add_argument("--task", required=True, help="task id, e.g. LinkageLab-Velocity-Flat-Limit")
    env.add_argument("--num-envs", type=int, nargs="+", default=[64], help="one or more env counts (default 64)")
    env.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:OVERRIDES",
        help="a named variant with comma-separated overrides, e.g. diamond:ankle=diamond (repeatable); "
        "ratios are relative to the first",
    )
    env.add_argument("--steps", type=int, default=200, help="timed env steps per measurement (default 200)")
    env.add_argument("--warmup", type=int, default=30, help="untimed steps before timing (default 30)")
    env.add_argument("--rounds", type=int, default=1, help="interleaved repetitions; the median is reported")
    env.add_argument(
        "--profile",
        action="store_true",
        help="instead: where an env step goes (physics kernels by group, launches, actuators, managers) at each "
        "env count; writes outputs/bench/profile_<task>.json and .png",
    )
    env.add_argument("--out", type=Path, default=None, help="with --profile: output folder (default outputs/bench)")
    env.add_argument("--json", action="store_true", help="print one JSON object")
    env.set_defaults(func=_bench_env, accepts_overrides=True)

    physics = sub.add_parser(
        "physics",
        help="the task's env-steps/s against plain MuJoCo (mujoco.rollout, 1 and 2 threads) on the same robot",
        description="The distance to the physics: the task with zero actions (a fresh process) and the robot's "
        "generated URDF stepped by plain MuJoCo with the task's physics step, substeps, armature and servo gains, "
        "from the standing pose, measured one after the other. Writes outputs/bench/physics_<task>.json.",
    )
    physics.add_argument("--task", required=True, help="task id, e.g. LinkageLab-Velocity-Flat-Limit")
    physics.add_argument("--num-envs", type=int, nargs="+", default=[64, 256], help="env counts (default 64 256)")
    physics.add_argument("--steps", type=int, default=200, help="timed env steps per measurement (default 200)")
    physics.add_argument("--json", action="store_true", help="print one JSON object")
    physics.set_defaults(func=_bench_physics)

    train = sub.add_parser(
        "train",
        help="PPO iterations/s with collection vs update time per iteration, each env count in a fresh process",
        description="Trains the task's own agent config without logging: warm-up iterations, then timed ones "
        "(the rsl-rl runner's own collection and update times). Writes outputs/bench/train_<task>.json and .png. "
        "Trailing key=value tokens are hydra overrides.",
    )
    train.add_argument("--task", required=True, help="task id, e.g. LinkageLab-Velocity-Flat-Limit")
    train.add_argument(
        "--num-envs", type=int, nargs="+", default=[64, 256, 1024], help="env counts (default 64 256 1024)"
    )
    train.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1],
        help="simulation process counts to compare at each env count, as train --workers (default 1)",
    )
    train.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:OVERRIDES",
        help="a named variant with comma-separated overrides (repeatable), as bench env --variant",
    )
    train.add_argument("--iterations", type=int, default=5, help="timed PPO iterations per env count (default 5)")
    train.add_argument("--warmup", type=int, default=2, help="untimed iterations before timing (default 2)")
    train.add_argument("--out", type=Path, default=None, help="output folder (default outputs/bench)")
    train.add_argument("--json", action="store_true", help="print one JSON object")
    train.set_defaults(func=_bench_train, accepts_overrides=True)

    video = sub.add_parser("video", help="seconds per frame of the rollout video renderer (MuJoCo offscreen)")
    video.add_argument("--robot", default="limit", help="robot whose URDF to render (default limit)")
    video.add_argument("--frames", type=int, default=100, help="frames per size (default 100)")
    video.add_argument(
        "--size", nargs="+", default=["320x240", "640x480"], metavar="WxH", help="frame sizes (default 320x240 640x480)"
    )
    video.add_argument("--json", action="store_true", help="print one JSON object")
    video.set_defaults(func=_bench_video)

    deploy = sub.add_parser(
        "deploy",
        help="the deploy runtime against the simulated robot in real time: loop timing and the walk vs sim2sim",
    )
    deploy.add_argument("--bundle", type=Path, required=True, help="an exported bundle (e.g. policies/<task>/bundle)")
    deploy.add_argument("--seconds", type=float, default=60.0, help="seconds of policy (default 60)")
    deploy.add_argument("--command", dest="velocity_command", default="0.3", metavar="VX[,WZ]", help="m/s, rad/s")
    deploy.add_argument("--domain", type=int, default=77, help="DDS domain of the measurement (default 77)")
    deploy.add_argument("--out", type=Path, default=None, help="keep the recording, PNG and result JSON here")
    deploy.set_defaults(func=_bench_deploy)

    ankle = sub.add_parser("ankle", help="IK+Jacobian and FK timings for a batch of ankles")
    ankle.add_argument("--num-ankles", type=int, default=8192, help="batch size (default 8192 = 4096 envs x 2)")
    ankle.add_argument("--repeats", type=int, default=50)
    ankle.add_argument("--json", action="store_true", help="print one JSON object")
    ankle.set_defaults(func=_bench_ankle)


def _parse_variants(specs: list[str]) -> dict[str, list[str]]:
    from linkage_lab.cli.main import CliError

    variants: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, body = spec.partition(":")
        if not sep or not name:
            raise CliError(f"--variant {spec!r}: expected NAME:key=value[,key=value...]")
        variants[name] = [token for token in _top_level_split(body) if token]
    return variants or {"default": []}


def _top_level_split(text: str) -> list[str]:
    """``text`` split at the commas outside brackets: ``a=1,b=[0,4]`` is ``["a=1", "b=[0,4]"]``."""
    tokens, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"[": 1, "(": 1, "{": 1, "]": -1, ")": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            tokens.append(text[start:index])
            start = index + 1
    tokens.append(text[start:])
    return tokens


def _bench_env(args: argparse.Namespace, overrides: list[str]) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.runtime import OverrideError, validate_overrides
    from linkage_lab.tasks.registry import UnknownTaskError, require_task
    from linkage_lab_experiments.bench.env_bench import format_rows, run_variants

    try:
        require_task(args.task)
        variants = _parse_variants(args.variant)
        for name in variants:
            variants[name] = validate_overrides(variants[name] + overrides)
    except (UnknownTaskError, OverrideError) as exc:
        raise CliError(str(exc)) from exc
    if args.profile:
        return _profile_env(args, overrides)
    rows = run_variants(args.task, args.num_envs, variants, args.steps, args.warmup, args.rounds, not args.json)
    print(strict_json({"results": rows}) if args.json else format_rows(rows))
    return 0


def _profile_env(args: argparse.Namespace, overrides: list[str]) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.paths import REPO_ROOT
    from linkage_lab_experiments.bench.env_bench import run_profiles
    from linkage_lab_experiments.bench.step_profile import format_table, write_results

    if args.variant:
        raise CliError("--profile profiles the task as configured: give overrides instead of --variant")
    try:
        rows = run_profiles(args.task, args.num_envs, args.steps, args.warmup, overrides, not args.json)
    except RuntimeError as exc:
        raise CliError(str(exc)) from exc
    json_path, png_path = write_results(rows, args.out or REPO_ROOT / "outputs" / "bench", f"profile_{args.task}")
    print(strict_json({"results": rows}) if args.json else format_table(rows))
    print(f"results: {json_path}\nchart: {png_path}")
    return 0


def _bench_physics(args: argparse.Namespace) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.io import write_json_atomic
    from linkage_lab.paths import REPO_ROOT
    from linkage_lab.tasks.registry import require_task
    from linkage_lab_experiments.bench.physics_bench import compare, format_comparison

    require_task(args.task)
    if args.steps < 1 or any(n < 1 for n in args.num_envs):
        raise CliError("--steps and --num-envs must be positive")
    rows = compare(args.task, args.num_envs, args.steps)
    out = write_json_atomic(REPO_ROOT / "outputs" / "bench" / f"physics_{args.task}.json", {"results": rows})
    print(strict_json({"results": rows}) if args.json else format_comparison(rows))
    print(f"results: {out}")
    return 0


def _bench_train(args: argparse.Namespace, overrides: list[str]) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.paths import REPO_ROOT
    from linkage_lab.runtime import OverrideError, validate_overrides
    from linkage_lab.tasks.registry import UnknownTaskError, require_task
    from linkage_lab_experiments.bench.train_bench import format_table, run_train_bench, write_results

    if min(args.num_envs) < 1 or min(args.workers) < 1 or args.iterations < 1 or args.warmup < 0:
        raise CliError("--num-envs, --workers and --iterations must be positive, --warmup not negative")
    if max(args.workers) > min(args.num_envs):
        raise CliError(f"--workers {max(args.workers)} needs at least that many envs (--num-envs {min(args.num_envs)})")
    try:
        require_task(args.task)
        overrides = validate_overrides(overrides)
        variants = {name: validate_overrides(tokens) for name, tokens in _parse_variants(args.variant).items()}
    except (UnknownTaskError, OverrideError) as exc:
        raise CliError(str(exc)) from exc
    try:
        result = run_train_bench(
            args.task, args.num_envs, args.iterations, args.warmup, overrides, not args.json, args.workers, variants
        )
    except RuntimeError as exc:
        raise CliError(str(exc)) from exc
    json_path, png_path = write_results(result, args.out or REPO_ROOT / "outputs" / "bench")
    if args.json:
        print(strict_json(result))
        return 0
    print(format_table(result))
    print(f"results: {json_path}\nchart: {png_path}")
    return 0


def _bench_deploy(args: argparse.Namespace) -> int:
    from linkage_lab.arguments import parse_command
    from linkage_lab.cli.main import CliError
    from linkage_lab.io import write_json_atomic
    from linkage_lab_experiments.bench.deploy_bench import format_bench, run_deploy_bench

    try:
        command = parse_command(args.velocity_command)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if not args.seconds > 0:
        raise CliError("--seconds must be positive")
    result = run_deploy_bench(args.bundle, args.seconds, command, args.domain, args.out)
    print(format_bench(result))
    if args.out is not None:
        print(f"result: {write_json_atomic(args.out / 'deploy_bench.json', result)}")
    return 0


def _bench_video(args: argparse.Namespace) -> int:
    from linkage_lab.cli.main import CliError
    from linkage_lab.evaluation.offscreen import RenderUnavailable
    from linkage_lab.evaluation.video import VideoError
    from linkage_lab_experiments.bench.video_bench import format_rows, run_video_bench

    sizes = []
    for text in args.size:
        width, sep, height = text.lower().partition("x")
        if not (sep and width.isdigit() and height.isdigit()) or int(width) % 2 or int(height) % 2:
            raise CliError(f"--size {text}: expected WxH with even numbers, e.g. 640x480")
        sizes.append((int(width), int(height)))
    if args.frames < 1:
        raise CliError("--frames must be positive")
    try:
        rows = run_video_bench(args.robot, args.frames, sizes)
    except (VideoError, RenderUnavailable, KeyError, FileNotFoundError) as exc:
        raise CliError(exc.args[0] if isinstance(exc, KeyError) else str(exc)) from exc
    print(strict_json({"results": rows}) if args.json else format_rows(rows))
    return 0


def _bench_ankle(args: argparse.Namespace) -> int:
    from linkage_lab_experiments.analysis.ankle_bench import format_report, run

    result = run(num_ankles=args.num_ankles, repeats=args.repeats)
    print(strict_json(result) if args.json else format_report(result))
    return 0
