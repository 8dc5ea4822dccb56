"""``linkage-lab sprint``: one headless 10 m race of Marvin (gait.md §4)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sprint`` command."""
    parser = subparsers.add_parser("sprint", help="run Marvin's 10 m sprint headless and write metrics.json")
    parser.add_argument(
        "--policy",
        default="scripted",
        help="scripted (default), a checkpoint .pt or 'latest', or an .onnx file",
    )
    parser.add_argument("--ankle", choices=("box", "diamond"), default="box", help="ankle torque limits (default box)")
    parser.add_argument("--out", default=None, help="output folder (default outputs/sprint/<policy>_<ankle>)")
    parser.add_argument("--device", default=None, help="cpu, cuda:0, ... (default: picked automatically)")
    parser.add_argument("--gait", default=None, help="JSON object of gait parameter overrides for --policy scripted")
    parser.add_argument("--json", action="store_true", help="print metrics.json")
    parser.set_defaults(func=_sprint)


def _sprint(args: argparse.Namespace) -> int:
    from pathlib import Path

    from linkage_lab.cli.main import CliError
    from linkage_lab.evaluation.policies import PolicyLoadError
    from linkage_lab.paths import REPO_ROOT
    from linkage_lab.sprint.runner import run_race, write_race

    overrides = None
    if args.gait:
        try:
            overrides = json.loads(args.gait)
        except json.JSONDecodeError as exc:
            raise CliError(f"--gait is not valid JSON: {exc}") from exc
        if args.policy != "scripted":
            raise CliError("--gait applies to --policy scripted only")
    name = "scripted" if args.policy == "scripted" else Path(args.policy).stem
    out = Path(args.out) if args.out else REPO_ROOT / "outputs" / "sprint" / f"{name}_{args.ankle}"
    try:
        # Isaac Lab prints its configuration tables to stdout: with --json keep stdout for the JSON.
        with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
            record = run_race(args.policy, args.ankle, args.device, overrides, progress=not args.json)
    except (PolicyLoadError, FileNotFoundError, TypeError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    files = write_race(record, out)
    if args.json:
        print(json.dumps(record.metrics, indent=2))
        return 0
    m = record.metrics
    print(f"sprint ({record.info['policy']}, {args.ankle} ankles): {m['ended_reason']}")
    race_time = "-" if m["time"] is None else f"{m['time']:.2f}"
    print(f"  time {race_time} s, distance {m['distance_m']:.2f} m, average {m['average_speed_mps']:.3f} m/s")
    print(
        f"  max lateral offset {m['max_lateral_offset_m']:.3f} m, fell: {m['fell']}, duration {m['duration_s']:.2f} s"
    )
    overall = m["ankle_replay"].get("overall", {})
    if overall:
        print(f"  ankle torque outside the real feasible set: {overall.get('fraction_outside')} of control steps")
    for key, path in files.items():
        print(f"  {key}: {path}")
    return 0
