"""``linkage-lab bench``: env throughput and ankle-library timings."""

from __future__ import annotations

import argparse
import json


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``bench`` command."""
    parser = subparsers.add_parser("bench", help="benchmarks (env throughput, ankle library)")
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
    env.add_argument("--json", action="store_true", help="print one JSON object")
    env.set_defaults(func=_bench_env, accepts_overrides=True)

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
        variants[name] = [token for token in body.split(",") if token]
    return variants or {"default": []}


def _bench_env(args: argparse.Namespace, overrides: list[str]) -> int:
    from linkage_lab.bench.env_bench import format_rows, run_variants
    from linkage_lab.cli.main import CliError
    from linkage_lab.runtime import OverrideError, validate_overrides
    from linkage_lab.tasks.registry import UnknownTaskError, require_task

    try:
        require_task(args.task)
        variants = _parse_variants(args.variant)
        for name in variants:
            variants[name] = validate_overrides(variants[name] + overrides)
    except (UnknownTaskError, OverrideError) as exc:
        raise CliError(str(exc)) from exc
    rows = run_variants(args.task, args.num_envs, variants, args.steps, args.warmup, args.rounds, not args.json)
    print(json.dumps({"results": rows}, indent=2) if args.json else format_rows(rows))
    return 0


def _bench_ankle(args: argparse.Namespace) -> int:
    from linkage_lab.kinematics.ankle_bench import format_report, run

    result = run(num_ankles=args.num_ankles, repeats=args.repeats)
    print(json.dumps(result, indent=2) if args.json else format_report(result))
    return 0
